"""The workload parameters (declared once, validated at load) and Criteo Kaggle's table sizes.

Counts carry no unit suffix (``batch_size``, ``tables``, ``dim`` are numbers of things); MLPs are
written as in the paper's Table 3 (``"13-8192-2048-32"``: input width first).
"""

from __future__ import annotations

from typing import Any

from cxlsim.config.params import Param, Schema

#: Criteo Kaggle's 26 categorical cardinalities (PyTorch DLRM benchmark utilities;
#: reference/workloads.md): 33,762,577 rows in all.
CRITEO_KAGGLE_ROWS: tuple[int, ...] = (
    1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194, 27, 14992,
    5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572,
)

ROWS_PROFILES = ("uniform", "criteo-kaggle")
#: How many lookups a bag (one sample's lookups in one table) makes (docs/workloads.md, "Readings the
#: paper leaves open"): ``fixed``, every bag ``lookups_per_table``; ``dlrm_uniform``, the open-source
#: DLRM benchmark's generator without ``--num-indices-per-lookup-fixed``: ``round(max(1, r·min(rows, L)))``
#: with ``r`` uniform in [0, 1) (shared/reference/cxl-measurements.md §8).
BAG_SIZES = ("fixed", "dlrm_uniform")
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


def _check_bottom_output(values: dict[str, Any]) -> tuple[str, str] | None:
    widths = parse_widths(values["bottom_mlp"])
    if widths is not None and widths[-1] != values["dim"]:
        return "bottom_mlp", f"output width {widths[-1]} must equal dim={values['dim']} (dot interaction)"
    return None


WORKLOAD_SCHEMA = Schema(
    "workload",
    (
        Param("batch_size", int, "samples per training batch", minimum=1),
        Param("tables", int, "embedding tables", minimum=1),
        Param("lookups_per_table", int, "lookups per table per sample: every bag's (bag_size: fixed) or the most "
              "a bag draws (bag_size: dlrm_uniform, DLRM's --num-indices-per-lookup)", minimum=1),
        Param("dim", int, "embedding dimension (fp32 elements per row)", minimum=1),
        Param("dense_features", int, "dense features per sample (bottom-MLP input)", minimum=1),
        Param("bottom_mlp", str, "bottom MLP layer widths, input first (Table 3 notation)"),
        Param("top_mlp", str, "top MLP layer widths after the dot interaction (DLRM's --arch-mlp-top and Table 3 "
              "notation: DLRM prepends the interaction's output width)"),
        Param("rows_profile", str, "how table sizes are given", default="uniform", choices=ROWS_PROFILES),
        Param("rows_per_table", int, "rows of every table (rows_profile: uniform)", default=1, minimum=1),
        Param(
            "criteo_rows_factor", float,
            "multiplier on Criteo Kaggle's cardinalities, repeated over the tables (rows_profile: criteo-kaggle)",
            default=1.0, minimum=0, exclusive_minimum=True,
        ),
        Param("popularity_exponent", float, "power-law exponent s of per-table row popularity (P(rank k) ~ k^-s)",
              default=1.1, minimum=0),
        Param("reuse_prev_fraction", float,
              "generator knob: fraction of lookup positions copied from the previous batch",
              default=0.0, minimum=0, maximum=1),
        Param("bag_size", str, "lookups a bag draws: fixed (lookups_per_table each) or dlrm_uniform "
              "(round(max(1, r min(rows, lookups_per_table))), r uniform in [0, 1): the DLRM benchmark's default)",
              default="fixed", choices=BAG_SIZES),
        Param("bag_dedup", bool, "a bag keeps only its distinct rows, ascending (the DLRM benchmark's np.unique)",
              default=False),
        Param("mlp_param_width", str, "width of the MLP parameters as the checkpoint pulls and logs them "
              "(MLP log, redo record, checkpoint area); gradients and pooled vectors stay fp32",
              default="fp32", choices=tuple(MLP_PARAM_WIDTHS)),
        Param("learning_rate", float, "SGD learning rate of the embedding update", default=0.1,
              minimum=0, exclusive_minimum=True),
    ),
    checks=(_check_mlp("bottom_mlp"), _check_mlp("top_mlp"), _check_bottom_input, _check_bottom_output),
)
