"""The workload parameters (declared once, validated at load) and Criteo Kaggle's table sizes.

Counts carry no unit suffix (``batch_size``, ``tables``, ``dim`` are numbers of things); MLPs are
written as in the paper's Table 3 (``"13-8192-2048-32"``: input width first).
"""

from __future__ import annotations

from typing import Any

from cxlsim.config.bounds import PLAUSIBLE_BAG_SIZE, PLAUSIBLE_BATCH_SIZE, PLAUSIBLE_TABLES
from cxlsim.config.params import Param, Schema
from cxlsim.workloads.interactions import registry as interactions

#: Criteo Kaggle's 26 categorical cardinalities (PyTorch DLRM benchmark utilities;
#: [criteo-kaggle], [dlrm-repo]): 33,762,577 rows in all.
CRITEO_KAGGLE_ROWS: tuple[int, ...] = (
    1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194, 27, 14992,
    5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572,
)

#: How table sizes are given: ``uniform`` (``rows_per_table`` each), ``criteo-kaggle`` (Criteo
#: Kaggle's cardinalities × ``criteo_rows_factor``), ``per_table`` (``table_rows``, one per table).
ROWS_PROFILES = ("uniform", "criteo-kaggle", "per_table")
#: How many lookups a bag (one sample's lookups in one table) makes (docs/workloads.md, "Readings the
#: paper leaves open"): ``fixed``, every bag ``lookups_per_table``; ``dlrm_uniform``, the open-source
#: DLRM benchmark's generator without ``--num-indices-per-lookup-fixed``: ``round(max(1, r·min(rows, L)))``
#: with ``r`` uniform in [0, 1) ([dlrm-repo], ``dlrm_data_pytorch.py``); ``per_table``, every bag of
#: table ``t`` ``table_bag_sizes[t]`` (MLPerf DLRM-DCNv2's multi-hot sizes), ``lookups_per_table``
#: then the largest of them (the bound every buffer is sized by).
BAG_SIZES = ("fixed", "dlrm_uniform", "per_table")
#: Bytes per MLP parameter for each ``mlp_param_width``.
MLP_PARAM_WIDTHS = {"fp32": 4, "fp16": 2}


def parse_widths(text: str) -> tuple[int, ...] | None:
    """``"13-512-16"`` -> ``(13, 512, 16)``; None if malformed (fewer than two positive widths)."""
    try:
        widths = tuple(int(part) for part in text.split("-"))
    except ValueError:
        return None
    if len(widths) < 2 or any(w < 1 for w in widths):
        return None
    return widths


def _check_mlp(key: str):
    def check(values: dict[str, Any]) -> tuple[str, str] | None:
        if parse_widths(values[key]) is None:
            return key, f"expected layer widths like 13-512-256-16, got {values[key]!r}"
        return None

    return check


def _check_bottom_input(values: dict[str, Any]) -> tuple[str, str] | None:
    widths = parse_widths(values["bottom_mlp"])
    if widths is not None and widths[0] != values["dense_features"]:
        return "bottom_mlp", f"input width {widths[0]} differs from dense_features={values['dense_features']}"
    return None


def bottom_output(values: dict[str, Any]) -> int | None:
    """The bottom MLP's output width, or None if its widths are malformed."""
    widths = parse_widths(values["bottom_mlp"])
    return None if widths is None else widths[-1]


def build_interaction(values: Any) -> Any:
    """The workload's interaction (:mod:`cxlsim.workloads.interactions`) built from validated
    ``values`` (a mapping: ``interaction``, ``tables``, ``dim``, ``bottom_mlp`` and the
    interaction's own parameters)."""
    cls = interactions.get(values["interaction"])
    return cls.build(values["tables"], values["dim"], bottom_output(values), values)


def _check_interaction(values: dict[str, Any]) -> tuple[str, str] | None:
    if bottom_output(values) is None:
        return None
    return build_interaction(values).problem()


def _check_per_table(key: str, mode_key: str, mode: str) -> Any:
    def check(values: dict[str, Any]) -> tuple[str, str] | None:
        given = values[key]
        if values[mode_key] != mode:
            if given:
                return key, f"applies only with {mode_key}: {mode} (it is {values[mode_key]})"
            return None
        if len(given) != values["tables"]:
            return key, f"{mode_key}: {mode} needs one value per table: {len(given)} given, tables={values['tables']}"
        return None

    return check


def _check_bag_bound(values: dict[str, Any]) -> tuple[str, str] | None:
    sizes = values["table_bag_sizes"]
    if values["bag_size"] == "per_table" and sizes and values["lookups_per_table"] != max(sizes):
        return "lookups_per_table", (f"with bag_size: per_table it is the largest bag, max(table_bag_sizes) = "
                                     f"{max(sizes)}, got {values['lookups_per_table']}")
    return None


def interaction_params() -> tuple[Param, ...]:
    """The workload parameters the registered interactions declare (their ``PARAMS``), once each."""
    out: dict[str, Param] = {}
    for name in interactions.names():
        for p in interactions.get(name).PARAMS:
            if p.name in out and out[p.name] != p:
                raise ValueError(f"interaction {name!r} declares workload parameter {p.name!r} differently "
                                 "from another interaction")
            out[p.name] = p
    return tuple(out.values())


WORKLOAD_SCHEMA = Schema(
    "workload",
    (
        Param("batch_size", int, "samples per training batch", minimum=1, plausible=PLAUSIBLE_BATCH_SIZE),
        Param("tables", int, "embedding tables", minimum=1, plausible=PLAUSIBLE_TABLES),
        Param("lookups_per_table", int, "lookups per table per sample: every bag's (bag_size: fixed) or the most "
              "a bag draws (bag_size: dlrm_uniform, DLRM's --num-indices-per-lookup; bag_size: per_table, "
              "max(table_bag_sizes))", minimum=1, plausible=PLAUSIBLE_BAG_SIZE),
        Param("dim", int, "embedding dimension (fp32 elements per row)", minimum=1),
        Param("dense_features", int, "dense features per sample (bottom-MLP input)", minimum=1),
        Param("bottom_mlp", str, "bottom MLP layer widths, input first (Table 3 notation)"),
        Param("top_mlp", str, "top MLP layer widths after the interaction (DLRM's --arch-mlp-top and Table 3 "
              "notation: DLRM prepends the interaction's output width)"),
        Param("interaction", str, "how the bottom MLP's output and the pooled vectors meet before the top MLP: "
              "a registered interaction (cxlsim/workloads/interactions/: dot, cat, dcn, ...)", default="dot",
              choices=interactions.names),
        Param("rows_profile", str, "how table sizes are given", default="uniform", choices=ROWS_PROFILES),
        Param("rows_per_table", int, "rows of every table (rows_profile: uniform)", default=1, minimum=1),
        Param(
            "criteo_rows_factor", float,
            "multiplier on Criteo Kaggle's cardinalities, repeated over the tables (rows_profile: criteo-kaggle)",
            default=1.0, minimum=0, exclusive_minimum=True,
        ),
        Param("table_rows", tuple, "rows of each table, one per table (rows_profile: per_table)", default=(),
              minimum=1, item=int),
        Param("popularity_exponent", float, "power-law exponent s of per-table row popularity (P(rank k) ~ k^-s)",
              default=1.1, minimum=0),
        Param("reuse_prev_fraction", float,
              "generator knob: fraction of lookup positions copied from the previous batch",
              default=0.0, minimum=0, maximum=1),
        Param("bag_size", str, "lookups a bag draws: fixed (lookups_per_table each) or dlrm_uniform "
              "(round(max(1, r min(rows, lookups_per_table))), r uniform in [0, 1): the DLRM benchmark's default)",
              default="fixed", choices=BAG_SIZES),
        Param("table_bag_sizes", tuple, "lookups of every bag of each table, one per table (bag_size: per_table: "
              "fixed multi-hot sizes)", default=(), minimum=1, item=int,
              plausible=PLAUSIBLE_BAG_SIZE),
        Param("bag_dedup", bool, "a bag keeps only its distinct rows, ascending (the DLRM benchmark's np.unique)",
              default=False),
        Param("mlp_param_width", str, "width of the MLP parameters as the checkpoint pulls and logs them "
              "(MLP log, redo record, checkpoint area); gradients and pooled vectors stay fp32",
              default="fp32", choices=tuple(MLP_PARAM_WIDTHS)),
        Param("learning_rate", float, "SGD learning rate of the embedding update", default=0.1,
              minimum=0, exclusive_minimum=True),
        Param("trace", str, "embedding-access trace (.npz, or .pt with torch) driving the index stream instead of the "
              "generator: it sets the tables' rows, the bags and the batch size (docs/workloads.md, 'Traces'); "
              "empty: the generator", default=""),
        *interaction_params(),
    ),
    checks=(_check_mlp("bottom_mlp"), _check_mlp("top_mlp"), _check_bottom_input, _check_interaction,
            _check_per_table("table_rows", "rows_profile", "per_table"),
            _check_per_table("table_bag_sizes", "bag_size", "per_table"), _check_bag_bound),
)
