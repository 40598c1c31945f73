"""The workload catalog: ``workloads/<name>.yaml`` (RM1–RM4) and user files.

A workload file::

    version: 1
    description: RM1 ...
    source: note for values that carry none of their own     # optional
    params:
      dim: {value: 32, source: "paper Table 3"}
      batch_size: 512                                        # the file's `source:` applies

Contract: :func:`load_workload` returns a :class:`Workload` whose ``params`` passed
:data:`~cxlsim.workloads.schema.WORKLOAD_SCHEMA`; every value has a non-empty source. Search path:
:func:`~cxlsim.config.catalog.catalog_roots` ``("workloads")`` — the shipped ``workloads/`` (package
data) then ``$CXLSIM_PATH/workloads`` (later folders shadow by name).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cxlsim.config.bounds import MAX_RUN_LOOKUPS, MAX_TABLES, check_bound
from cxlsim.config.catalog import catalog_file, catalog_roots
from cxlsim.config.params import ParamSet, unknown_key_message
from cxlsim.config.yamlio import check_version, read_yaml
from cxlsim.errors import ConfigError
from cxlsim.workloads.interactions import registry as interactions
from cxlsim.workloads.layout import ELEMENT_B
from cxlsim.workloads.schema import (
    CRITEO_KAGGLE_ROWS,
    MLP_PARAM_WIDTHS,
    WORKLOAD_SCHEMA,
    build_interaction,
    interaction_params,
    parse_widths,
)
from cxlsim.workloads.trace import read_trace, workload_values

FILE_KEYS = {"version", "description", "source", "params"}


def mlp_param_count(widths: tuple[int, ...]) -> int:
    """Weights plus biases of a fully connected stack ``widths[0] -> ... -> widths[-1]``."""
    return sum(a * b + b for a, b in zip(widths[:-1], widths[1:], strict=True))


@dataclass(frozen=True)
class Workload:
    """A resolved workload: validated ``params`` plus derived sizes."""

    name: str
    description: str
    params: ParamSet
    path: str

    def __getattr__(self, key: str) -> Any:  # w.batch_size etc. read params
        if key.startswith("_") or key in ("name", "description", "params", "path"):
            raise AttributeError(key)
        return getattr(self.params, key)

    @property
    def rows_per_table(self) -> tuple[int, ...]:
        return self.rows_per_table_scaled(1.0)

    def rows_per_table_scaled(self, row_scale: float = 1.0) -> tuple[int, ...]:
        """Rows of each table, multiplied by ``row_scale`` in (0, 1] (at least 1 row each)."""
        if not 0 < row_scale <= 1:
            raise ValueError(f"row_scale must be in (0, 1], got {row_scale!r}")
        p = self.params
        if p.rows_profile == "uniform":
            base = [p.rows_per_table] * p.tables
        elif p.rows_profile == "per_table":
            base = list(p.table_rows)
        else:
            kaggle = CRITEO_KAGGLE_ROWS
            base = [max(1, round(kaggle[t % len(kaggle)] * p.criteo_rows_factor)) for t in range(p.tables)]
        return tuple(max(1, round(r * row_scale)) for r in base)

    @property
    def bottom_widths(self) -> tuple[int, ...]:
        return parse_widths(self.params.bottom_mlp)  # type: ignore[return-value]

    @property
    def top_widths(self) -> tuple[int, ...]:
        """The top MLP's layer widths after the interaction, as DLRM's ``--arch-mlp-top`` and Table 3
        write them (DLRM prepends the interaction's output width: :attr:`top_network`)."""
        return parse_widths(self.params.top_mlp)  # type: ignore[return-value]

    @property
    def top_network(self) -> tuple[int, ...]:
        """The top MLP as DLRM builds it: the interaction's outputs, then :attr:`top_widths`."""
        return (self.interaction_width, *self.top_widths)

    @property
    def row_B(self) -> int:
        return self.params.dim * ELEMENT_B

    @property
    def embedding_bytes(self) -> int:
        """fp32 bytes of all embedding tables at full size."""
        return sum(self.rows_per_table) * self.row_B

    @property
    def interaction(self) -> Any:
        """The workload's interaction (``interaction``: :mod:`cxlsim.workloads.interactions`), built
        for its tables, dim and bottom-MLP output."""
        return build_interaction(self.params)

    @property
    def mlp_params(self) -> dict[str, int]:
        """Parameter counts (weights + biases) of the bottom MLP, the interaction (its own trainable
        tensors: none for dot and cat) and the top MLP: the dense, MLP-side parameters."""
        return {"bottom": mlp_param_count(self.bottom_widths),
                "interaction": sum(e for _, e in self.interaction.parameter_tensors()),
                "top": mlp_param_count(self.top_network)}

    @property
    def mlp_param_count(self) -> int:
        """All MLP-side parameters (:attr:`mlp_params` summed): what the checkpoint pulls and logs
        and the GPUs all-reduce."""
        return sum(self.mlp_params.values())

    @property
    def interaction_width(self) -> int:
        """Outputs of the interaction per sample (the top MLP's input; dot: pairwise dots of
        (tables + 1) vectors plus the bottom-MLP output; docs/workloads.md)."""
        return self.interaction.output_width()

    @property
    def max_bag_sizes(self) -> tuple[int, ...]:
        """The most lookups a bag of each table draws (before de-duplication): ``lookups_per_table``
        for ``fixed`` and ``dlrm_uniform`` (the generator's bound), ``table_bag_sizes`` for
        ``per_table``. A buffer of one sample's lookups of table ``t`` is sized by entry ``t``."""
        p = self.params
        if p.bag_size == "per_table":
            return tuple(int(v) for v in p.table_bag_sizes)
        return (int(p.lookups_per_table),) * int(p.tables)

    def table_lookups(self, t: int) -> int:
        """The most lookups a bag of table ``t`` makes (:attr:`max_bag_sizes`)."""
        return self.max_bag_sizes[t]

    @property
    def lookups_per_sample(self) -> int:
        """The most lookups one sample makes over all tables (Σ :attr:`max_bag_sizes`; ``tables ×
        lookups_per_table`` unless ``bag_size: per_table``): a bound for sizing."""
        return sum(self.max_bag_sizes)

    @property
    def batch_correlation(self) -> float:
        """Lag-1 correlation of consecutive batches' costs that the input stream implies:
        ``reuse_prev_fraction``. A lookup position keeps the previous batch's row with that
        probability and draws independently otherwise, so a per-batch sum over positions has
        lag-``l`` correlation ``reuse_prev_fraction**l`` (:mod:`cxlsim.workloads.generator`);
        batch-time intervals use it (:mod:`cxlsim.systems.sampling`)."""
        return float(self.params.reuse_prev_fraction)

    @property
    def lookups_per_batch(self) -> int:
        """The most lookups a batch makes (every bag its table's largest, :attr:`lookups_per_sample`):
        a bound for sizing."""
        return self.params.batch_size * self.lookups_per_sample

    @property
    def mlp_param_B(self) -> int:
        """Bytes per MLP parameter as the checkpoint pulls and logs them (``mlp_param_width``)."""
        return MLP_PARAM_WIDTHS[self.params.mlp_param_width]

    def bag_draws_pmf(self, rows: int, table: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Distribution of the draws a bag of table ``table`` (``rows`` rows) makes, before any
        de-duplication: ``(sizes, probabilities)``. ``fixed``: ``L`` always; ``per_table``:
        ``table_bag_sizes[table]`` always. ``dlrm_uniform``
        (:func:`~cxlsim.workloads.generator.dlrm_bag_sizes`, ``x = min(rows, L)``): ``round(max(1,
        r x))`` is 1 for ``r x < 1.5``, ``j`` for ``r x`` in ``[j − ½, j + ½)`` (``2 ≤ j < x``) and
        ``x`` for ``[x − ½, x)``: probabilities ``1.5/x``, ``1/x`` and ``0.5/x`` (``x = 1``: 1 always);
        the mean is ``x/2 + 1/(2x)``."""
        L = self.params.lookups_per_table
        if self.params.bag_size == "fixed":
            return np.array([L], np.int64), np.array([1.0])
        if self.params.bag_size == "per_table":
            return np.array([self.table_lookups(table)], np.int64), np.array([1.0])
        x = min(int(rows), L)
        if x == 1:
            return np.array([1], np.int64), np.array([1.0])
        probs = np.full(x, 1.0 / x)
        probs[0], probs[-1] = 1.5 / x, 0.5 / x
        return np.arange(1, x + 1, dtype=np.int64), probs

    def mean_bag_draws(self, row_scale: float = 1.0) -> float:
        """Mean draws per bag over the tables (before de-duplication; :meth:`bag_draws_pmf`)."""
        rows = self.rows_per_table_scaled(row_scale)
        means = [float(s @ p) for s, p in (self.bag_draws_pmf(n, t) for t, n in enumerate(rows))]
        return sum(means) / len(means)

    def mean_table_power(self, q: float) -> float:
        """``E[q^K]`` for a bag's draws ``K`` (:meth:`bag_draws_pmf`), averaged over the tables: the
        probability that a bag misses a set each draw misses with probability ``q``."""
        pmfs = (self.bag_draws_pmf(n, t) for t, n in enumerate(self.rows_per_table))
        vals = [float(p @ q ** s.astype(np.float64)) for s, p in pmfs]
        return sum(vals) / len(vals)


def workload_path(name: str) -> Path:
    """Path of catalog workload ``name`` (later search folders shadow earlier ones)."""
    found = catalog_file("workloads", f"{name}.yaml")
    if found is None:
        known = list_workloads()
        hint = unknown_key_message(name, known)[len("unknown key"):]
        raise ConfigError(name, "", f"no such workload (known: {', '.join(known) or 'none'}){hint}")
    return found


def list_workloads() -> list[str]:
    """Names of all catalog workloads, sorted."""
    names: set[str] = set()
    for root in catalog_roots("workloads"):
        if root.is_dir():
            names.update(p.stem for p in root.glob("*.yaml"))
    return sorted(names)


def load_workload(
    name_or_path: str | Path,
    overrides: Mapping[str, Any] | None = None,
    overrides_where: str = "--set",
    overrides_prefix: str = "",
) -> Workload:
    """Load and validate a workload by catalog name (``rm1``) or YAML path; apply ``overrides``
    (parameter name -> value, source ``overrides_where``; an error in them names the key
    ``overrides_prefix + name``, e.g. ``workload_overrides.batch_size`` of a system file)."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        path = p
    else:
        path = workload_path(str(name_or_path))
    where = str(path)
    doc = read_yaml(path)
    check_version(doc, where)
    for key in doc:
        if key == "inherits":
            raise ConfigError(where, key, "workloads cannot inherit (systems can): copy the workload's file and "
                              "change its params, or give the changes as workload_overrides in a system file or "
                              "--set workload_overrides.KEY=VALUE")
        if key not in FILE_KEYS:
            raise ConfigError(where, key, unknown_key_message(key, FILE_KEYS))
    params = doc.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(where, "params", "expected a mapping of parameter: value")
    file_source = doc.get("source")
    declared = WORKLOAD_SCHEMA.by_name()
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, entry in params.items():
        kp = f"params.{key}"
        if key not in declared:
            raise ConfigError(where, kp, unknown_key_message(key, declared))
        source = None
        if isinstance(entry, dict):
            for k in entry:
                if k not in ("value", "source"):
                    raise ConfigError(where, f"{kp}.{k}", unknown_key_message(k, ("value", "source")))
            if "value" not in entry:
                raise ConfigError(where, kp, "expected a value or {value: ..., source: ...}")
            entry, source = entry["value"], entry.get("source")
        source = source or file_source
        if not source:
            raise ConfigError(where, kp, "no source: give `source:` for the value or the file")
        values[key] = entry
        sources[key] = str(source)
    checked = WORKLOAD_SCHEMA.validate(values, sources, where, "params.")
    file_checked = checked
    if overrides:
        values = dict(checked)
        sources = dict(checked.sources)
        for key, value in overrides.items():
            if key not in declared:
                raise ConfigError(overrides_where, overrides_prefix + key, unknown_key_message(key, declared))
            values[key] = value
            sources[key] = f"override ({overrides_where})"
        checked = WORKLOAD_SCHEMA.validate(values, sources, overrides_where, overrides_prefix)
    given = {k: (where, f"params.{k}") for k in params if k not in (overrides or {})}
    given_over = {k: (overrides_where, overrides_prefix + k) for k in overrides or {}}
    check_applies(file_checked, given)  # the file's keys against its own choices
    check_applies(checked, given_over)
    if checked.trace:  # the trace gives the tables their rows
        checked = apply_trace(checked, "batch_size" in (overrides or {}), overrides_where if overrides else where,
                              overrides_prefix if overrides else "params.")
    else:
        check_rows_given(checked, {**given, **given_over}, (where, "params.rows_per_table"))
    check_size(checked, overrides_where if overrides else where, overrides_prefix if overrides else "params.")
    return Workload(path.stem, str(doc.get("description", "")), checked, where)


def apply_trace(p: ParamSet, batch_given: bool, where: str, prefix: str) -> ParamSet:
    """``p`` with the values its trace sets (:func:`~cxlsim.workloads.trace.workload_values`: rows,
    bags, and the batch size unless ``batch_given``), each sourced to the trace file; the trace is
    read and validated here, so a bad one is refused at load (exit 2, naming the file and key)."""
    trace = read_trace(p.trace)
    values = workload_values(trace, int(p.tables), int(p.batch_size) if batch_given else None)
    sources = {**p.sources, **{k: f"trace ({trace.path})" for k in values}}
    return WORKLOAD_SCHEMA.validate({**p.as_dict(), **values}, sources, where, prefix)


#: Parameters read only under one choice of another: parameter -> (the choosing key, its value).
APPLIES_WITH = {"rows_per_table": ("rows_profile", "uniform"), "criteo_rows_factor": ("rows_profile", "criteo-kaggle")}


def check_applies(p: ParamSet, given: Mapping[str, tuple[str, str]]) -> None:
    """Refuse a parameter in ``given`` (name -> (file or option, key path there)) that ``p``'s
    choices leave unread: a table-size key of another ``rows_profile``, an interaction's parameter
    (``cross_layers``) under another interaction; it would change nothing (unrecorded reads)."""
    v = p.as_dict()
    for key, (mode_key, mode) in APPLIES_WITH.items():
        if key in given and v[mode_key] != mode:
            raise ConfigError(*given[key], f"applies only with {mode_key}: {mode} (it is {v[mode_key]}), so it "
                              "would change nothing")
    own = {q.name for q in interactions.get(v["interaction"]).PARAMS}
    for q in interaction_params():
        if q.name in given and q.name not in own:
            raise ConfigError(*given[q.name], f"interaction {v['interaction']} does not read it (a parameter of "
                              "another interaction), so it would change nothing")


def check_rows_given(p: ParamSet, given: Mapping[str, tuple[str, str]], missing_at: tuple[str, str]) -> None:
    """Refuse uniform tables whose size nobody gave (``rows_per_table``'s default is 1 row: a
    workload switched to ``rows_profile: uniform`` without it would run on 1-row tables); the error
    names where ``rows_profile`` was set, else ``missing_at``."""
    if p.as_dict()["rows_profile"] == "uniform" and "rows_per_table" not in given:
        raise ConfigError(*given.get("rows_profile", missing_at), "uniform tables need rows_per_table "
                          "(the rows of every table); none is given")


def check_size(p: ParamSet, where: str, prefix: str) -> None:
    """Refuse a workload too large for one run (:mod:`cxlsim.config.bounds`): more tables than
    ``MAX_TABLES``, or one batch of more lookups than a whole run may hold (unrecorded reads: a
    check, not a model's)."""
    v = p.as_dict()
    check_bound(where, f"{prefix}tables", v["tables"], MAX_TABLES, "embedding tables", "tables in one workload")
    per_sample = sum(v["table_bag_sizes"]) if v["bag_size"] == "per_table" else v["tables"] * v["lookups_per_table"]
    check_bound(where, f"{prefix}batch_size", v["batch_size"] * per_sample,
                MAX_RUN_LOOKUPS, "embedding lookups in one batch (batch_size × the lookups of a sample: tables × "
                "lookups_per_table, or Σ table_bag_sizes)",
                "lookups one run holds in memory")
