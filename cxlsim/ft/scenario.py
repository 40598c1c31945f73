"""Failure-tolerance scenarios: YAML files in ``configs/ft/``, validated section by section.

A scenario is given by path or, for the catalog's, by name (``side-by-side``: ``configs/ft/`` of the
shipped catalog or of a ``$CXLSIM_PATH`` folder, found through
:func:`~cxlsim.config.catalog.catalog_roots`).

A scenario file::

    version: 1
    name: side-by-side
    description: ...
    seed: 7
    job:           {duration_h, samples_per_s, step_s}
    model:         {embedding_GB, dense_GB, optimizer_state_factor, row_B, emb_shards_count, nodes_count}
    storage:       {write_GBps, read_GBps, latency_s, network_GBps, device_name, devices_count}
    failures:      {process_policy, mtbf_h, gamma_shape_factor, count, shards_fraction, reschedule_s, ...}
    interruptions: {preemption_mean_interval_h, preemption_notice_s, ..., permanent_hold_s}
    trace:         [{at_h, kind, shards_fraction, notice_s, duration_s}, ...]   # explicit events
    access:        {source_name, workload_name, rows_sampled_count, zipf_exponent, ...}
    schemes:       [{name, kind, <kind's parameters>}, ...]

Every section has a :class:`~cxlsim.config.params.Schema`; unknown keys and bad values raise a
one-line :class:`~cxlsim.errors.ConfigError` naming the file and the key path
(``schemes[2].interval_h``). Scheme kinds are the names of :data:`FT_SCHEMES` (the entry-point
group ``cxlsim.ft_schemes``); each kind's class declares its parameters (``SCHEMA``) beside its
behaviour (:mod:`cxlsim.ft.schemes`). A scenario whose expected interruptions plus
checkpoints (:func:`expected_events`) exceed :data:`~cxlsim.config.bounds.MAX_FT_EVENTS` is refused
at load, naming the key that contributes most (a tiny ``mtbf_h`` or ``interval_h``), instead of
running for hours; the simulator counts the same events as it runs and stops at the bound too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.config.bounds import MAX_FT_EVENTS, MAX_SEED, check_bound
from cxlsim.config.catalog import catalog_roots
from cxlsim.config.params import Param, ParamSet, Schema, unknown_key_message
from cxlsim.config.yamlio import apply_sets, check_version, read_yaml
from cxlsim.errors import ConfigError
from cxlsim.plugins import Registry

EVENT_KINDS = ("failure", "preemption", "transient-hold", "permanent-hold", "temporary-error")

JOB = Schema("ft.job", (
    Param("duration_h", float, "failure-free training time T_total", minimum=0, exclusive_minimum=True),
    Param("samples_per_s", float, "global training throughput (samples/s; PLS is a ratio of samples)",
          default=100_000.0, minimum=0, exclusive_minimum=True),
    Param("step_s", float, "failure-free time of one training step (batch)", default=0.1,
          minimum=0, exclusive_minimum=True),
))

MODEL = Schema("ft.model", (
    Param("embedding_GB", float, "embedding tables (FP32 rows)", minimum=0, exclusive_minimum=True),
    Param("dense_GB", float, "dense (MLP) parameters", default=0.01, minimum=0),
    Param("optimizer_state_factor", float,
          "optimizer-state bytes per parameter byte saved with the model (momentum: 1, plain SGD: 0)",
          default=0.0, minimum=0),
    Param("row_B", int, "bytes of one embedding row (dimension × 4 for FP32)", default=256, minimum=4),
    Param("emb_shards_count", int, "embedding parameter-server shards N_emb", default=8, minimum=1),
    Param("nodes_count", int, "training nodes (GPUs/hosts that snapshot their share in parallel)",
          default=8, minimum=1),
))

STORAGE = Schema("ft.storage", (
    Param("write_GBps", float, "aggregate checkpoint write bandwidth of the storage/DFS", default=2.0,
          minimum=0, exclusive_minimum=True),
    Param("read_GBps", float, "aggregate checkpoint read bandwidth", default=4.0, minimum=0,
          exclusive_minimum=True),
    Param("latency_s", float, "fixed cost per checkpoint save or load (open/commit/metadata)",
          default=1.0, minimum=0),
    Param("network_GBps", float, "network cap between trainers and storage (0 = none)", default=0.0,
          minimum=0),
    Param("device_name", str, "optional device preset (e.g. ssd/intel-750) whose bandwidth "
          "replaces write_GBps/read_GBps, × devices_count", default=""),
    Param("devices_count", int, "storage devices striped together", default=1, minimum=1),
))

FAILURES = Schema("ft.failures", (
    Param("process_policy", str, "how failure times are drawn",
          default="exponential", choices=("exponential", "gamma", "uniform-count", "none")),
    Param("mtbf_h", float, "mean time between failures T_fail", default=28.0, minimum=0,
          exclusive_minimum=True),
    Param("gamma_shape_factor", float, "shape of gamma inter-failure times (1 = exponential)",
          default=1.0, minimum=0, exclusive_minimum=True),
    Param("count", int, "uniform-count: failures at uniformly random times in [0, duration_h]",
          default=2, minimum=0),
    Param("shards_fraction", float, "fraction of embedding shards a failure wipes (at least one)",
          default=0.125, minimum=0, maximum=1),
    Param("reschedule_s", float, "O_res: time to reschedule/restart the failed nodes", default=300.0,
          minimum=0),
    Param("horizon_factor", float, "events are drawn up to this × duration_h of wall time",
          default=4.0, minimum=1),
))

INTERRUPTIONS = Schema("ft.interruptions", (
    Param("preemption_mean_interval_h", float, "mean time between preemptions (0 = none)", default=0.0, minimum=0),
    Param("preemption_notice_s", float, "notice given before a preemption", default=600.0, minimum=0),
    Param("preemption_downtime_s", float, "time until the preempted job runs again", default=900.0, minimum=0),
    Param("transient_hold_mean_interval_h", float, "mean time between transient holds (0 = none)", default=0.0, minimum=0),
    Param("transient_hold_s", float, "duration of a transient hold (input not yet available)", default=600.0, minimum=0),
    Param("permanent_hold_mean_interval_h", float, "mean time between permanent-error holds (0 = none)", default=0.0, minimum=0),
    Param("permanent_hold_s", float, "time until a person clears a permanent-error hold", default=14400.0, minimum=0),
    Param("temporary_error_mean_interval_h", float, "mean time between temporary (network) errors (0 = none)", default=0.0, minimum=0),
))

TRACE_EVENT = Schema("ft.trace", (
    Param("at_h", float, "wall-clock time of the event", minimum=0),
    Param("kind", str, "event kind", default="failure", choices=EVENT_KINDS),
    Param("shards_fraction", float, "fraction of shards a failure wipes (default: failures.shards_fraction)",
          default=-1.0, minimum=-1, maximum=1),
    Param("notice_s", float, "preemption notice (default: interruptions.preemption_notice_s)", default=-1.0, minimum=-1),
    Param("duration_s", float, "hold/downtime duration (default from interruptions)", default=-1.0, minimum=-1),
))

ACCESS = Schema("ft.access", (
    Param("source_name", str, "row access statistics: own seeded power-law process, or the workload "
          "generator's popularity model", default="powerlaw", choices=("powerlaw", "workload")),
    Param("workload_name", str, "workload preset for source_name=workload", default="rm1"),
    Param("rows_sampled_count", int, "rows of the representative sample the access process simulates",
          default=65536, minimum=64),
    Param("zipf_exponent", float, "power-law popularity exponent ([fbgemm], [torchrec]: 1.05-1.2 common)",
          default=1.05, minimum=0),
    Param("modified_fraction", float, "fraction of rows touched per calibration interval "
          "(Check-N-Run: about 26 % per 30 minutes)", default=0.26, minimum=0, maximum=1,
          exclusive_minimum=True),
    Param("calibration_interval_h", float, "interval the modified fraction refers to", default=0.5,
          minimum=0, exclusive_minimum=True),
))

TOP_KEYS = ("version", "name", "description", "seed", "job", "model", "storage", "failures",
            "interruptions", "trace", "access", "schemes")
SECTIONS = {"job": JOB, "model": MODEL, "storage": STORAGE, "failures": FAILURES,
            "interruptions": INTERRUPTIONS, "access": ACCESS}


def _adopt(kind: str, cls: Any) -> None:
    cls.kind = kind


#: The scheme kinds a scenario's ``schemes:`` may name: the entry-point group ``cxlsim.ft_schemes``
#: (behaviour and parameters, ``SCHEMA``: :mod:`cxlsim.ft.schemes`).
FT_SCHEMES = Registry("cxlsim.ft_schemes", "ft scheme kind", _adopt)


def expected_events(parts: dict[str, ParamSet], n_trace: int,
                    schemes: list[tuple[str, str, ParamSet]]) -> dict[str, float]:
    """Expected interruptions plus checkpoints the scenario simulates, by the key that sets them
    (every scheme sees every interruption; a scheme checkpoints at most once per interval of the
    events' horizon, ``failures.horizon_factor`` × ``job.duration_h``)."""
    f, it = parts["failures"], parts["interruptions"]
    horizon_h = f.as_dict()["horizon_factor"] * parts["job"].as_dict()["duration_h"]
    fd, itd = f.as_dict(), it.as_dict()
    n = len(schemes)
    out: dict[str, float] = {"trace": float(n_trace * n)}
    if fd["process_policy"] in ("exponential", "gamma"):
        out["failures.mtbf_h"] = n * horizon_h / fd["mtbf_h"]
    elif fd["process_policy"] == "uniform-count":
        out["failures.count"] = float(n * fd["count"])
    for key, mean_h in itd.items():
        if key.endswith("_mean_interval_h") and mean_h > 0:
            out[f"interruptions.{key}"] = n * horizon_h / mean_h
    for i, (_, kind, p) in enumerate(schemes):
        key = FT_SCHEMES.get(kind).INTERVAL_KEY
        interval_h = p.as_dict()[key] if key else 0.0
        if interval_h > 0:
            out[f"schemes[{i}].{key}"] = horizon_h / interval_h
    return out


def check_work(parts: dict[str, ParamSet], n_trace: int, schemes: list[tuple[str, str, ParamSet]],
               where: str) -> None:
    """Refuse a scenario whose expected events exceed :data:`~cxlsim.config.bounds.MAX_FT_EVENTS`,
    naming the key that contributes most (reads are unrecorded: a check, not a model's read)."""
    work = expected_events(parts, n_trace, schemes)
    key = max(work, key=work.__getitem__)
    check_bound(where, key, sum(work.values()), MAX_FT_EVENTS,
                f"expected interruptions and checkpoints over {len(schemes)} scheme(s), most set by this key",
                "events one scenario simulates")


@dataclass(frozen=True)
class Scenario:
    """A validated scenario: one ParamSet per section, the explicit trace and the schemes."""

    name: str
    description: str
    path: str
    seed: int
    job: ParamSet
    model: ParamSet
    storage: ParamSet
    failures: ParamSet
    interruptions: ParamSet
    access: ParamSet
    trace: tuple[ParamSet, ...]
    schemes: tuple[tuple[str, str, ParamSet], ...]  # (label, kind, params)
    resolved: dict[str, Any]


def list_scenarios() -> list[str]:
    """Names of the catalog scenarios (``configs/ft/*.yaml`` of every catalog root), sorted."""
    names: set[str] = set()
    for root in catalog_roots("configs"):
        if (root / "ft").is_dir():
            names.update(p.stem for p in (root / "ft").glob("*.yaml"))
    return sorted(names)


def scenario_path(name_or_path: str | Path) -> Path:
    """A scenario file: an existing path as given, else a bare name (``side-by-side``) looked up
    in ``configs/ft/`` of the catalog roots (the shipped scenarios, then ``$CXLSIM_PATH``'s; later
    roots shadow earlier ones)."""
    p = Path(name_or_path)
    if p.is_file() or p.suffix in (".yaml", ".yml") or len(p.parts) != 1:
        return p
    found = None
    for root in catalog_roots("configs"):
        candidate = root / "ft" / f"{p.name}.yaml"
        if candidate.is_file():
            found = candidate
    if found is None:
        known = list_scenarios()
        hint = unknown_key_message(p.name, known)[len("unknown key"):]
        raise ConfigError(str(p), "", f"no such scenario (known: {', '.join(known) or 'none'}){hint}")
    return found


def load_scenario(path: str | Path, sets: list[tuple[str, Any]] | None = None) -> Scenario:
    """Read, override (``--set``) and validate a scenario: a YAML path, or the name of a catalog
    scenario (:func:`scenario_path`)."""
    path = scenario_path(path)
    where = str(path)
    doc = read_yaml(path)
    if not sets:
        return parse_scenario(doc, where)
    try:
        return parse_scenario(apply_sets(doc, sets), where)
    except ConfigError as exc:  # a value the --set gave: name the option, not the file
        if exc.where == where and any(exc.key == k or exc.key.startswith((k + ".", k + "[")) for k, _ in sets):
            raise ConfigError("--set", exc.key, exc.message) from None
        raise


def parse_scenario(doc: dict[str, Any], where: str) -> Scenario:
    check_version(doc, where)
    for key in doc:
        if key not in TOP_KEYS:
            raise ConfigError(where, key, unknown_key_message(key, TOP_KEYS))
    seed = doc.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(where, "seed", f"expected a whole number within 0..{MAX_SEED} (cxlsim/config/bounds.py), "
                          f"got {seed!r}")
    for key in ("name", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise ConfigError(where, key, f"expected text, got {doc[key]!r}")
    parts: dict[str, ParamSet] = {}
    for sec, schema in SECTIONS.items():
        raw = doc.get(sec, {}) or {}
        if not isinstance(raw, dict):
            raise ConfigError(where, sec, f"expected a mapping, got {type(raw).__name__}")
        if sec == "job" and "duration_h" not in raw:
            raise ConfigError(where, "job.duration_h", "missing required parameter (failure-free training time)")
        if sec == "model" and "embedding_GB" not in raw:
            raise ConfigError(where, "model.embedding_GB", "missing required parameter (embedding tables)")
        parts[sec] = schema.validate(raw, {}, where, prefix=f"{sec}.")
    trace_raw = doc.get("trace", []) or []
    if not isinstance(trace_raw, list):
        raise ConfigError(where, "trace", "expected a list of events")
    trace = []
    for i, ev in enumerate(trace_raw):
        if not isinstance(ev, dict):
            raise ConfigError(where, f"trace[{i}]", "expected a mapping {at_h, kind, ...}")
        if "at_h" not in ev:
            raise ConfigError(where, f"trace[{i}].at_h", "missing event time")
        trace.append(TRACE_EVENT.validate(ev, {}, where, prefix=f"trace[{i}]."))
    schemes_raw = doc.get("schemes")
    if not isinstance(schemes_raw, list) or not schemes_raw:
        raise ConfigError(where, "schemes", "expected a non-empty list of schemes")
    schemes = []
    labels: set[str] = set()
    for i, sch in enumerate(schemes_raw):
        key = f"schemes[{i}]"
        if not isinstance(sch, dict):
            raise ConfigError(where, key, "expected a mapping {name, kind, ...}")
        sch = dict(sch)
        kind = sch.pop("kind", None)
        if not isinstance(kind, str) or kind not in FT_SCHEMES:
            raise ConfigError(where, f"{key}.kind", f"must be one of {', '.join(FT_SCHEMES)}; got {kind!r} "
                              f"(entry-point group {FT_SCHEMES.group})")
        label = sch.pop("name", kind)
        if not isinstance(label, str) or label in labels:
            raise ConfigError(where, f"{key}.name", f"scheme names must be distinct text, got {label!r}")
        labels.add(label)
        schemes.append((label, kind, FT_SCHEMES.get(kind).SCHEMA.validate(sch, {}, where, prefix=f"{key}.")))
    check_work(parts, len(trace), schemes, where)
    resolved = {
        "name": doc.get("name", Path(where).stem), "seed": seed,
        **{sec: dict(p) for sec, p in parts.items()},
        "trace": [dict(t) for t in trace],
        "schemes": [{"name": lab, "kind": k, **dict(p)} for lab, k, p in schemes],
    }
    return Scenario(
        name=str(doc.get("name", Path(where).stem)), description=str(doc.get("description", "")),
        path=where, seed=seed, trace=tuple(trace), schemes=tuple(schemes), resolved=resolved, **parts,
    )
