"""Simulate one system on one workload: streams → machine → op graph → executor → :class:`RunResult`.

Every system configuration names its simulation model (``model:``, resolved through
:data:`~cxlsim.systems.models.SYSTEM_MODELS`): ``dataflow`` (:data:`DATAFLOW`: the op graph on the
executor, below) or ``tpu_ps`` (the analytic TPU / parameter-server step model,
:data:`cxlsim.systems.tpu_ps_run.TPU_PS`), or one a third party declares. Both take the same analysed input
streams and return the same :class:`RunResult` (per measured batch its time, critical-path
breakdown and :class:`~cxlsim.systems.activity.BatchActivity`).

Contract: the same (configuration, workload, seed, batch count) gives the same numbers. The run
simulates ``warmup_batches`` + ``batches`` + 1 batches (the last one only up to its begin, which
closes the last measured batch) and reports the measured ones.

``batches: auto`` (:mod:`cxlsim.systems.sampling`): the op graph holds the most batches the rule
may need and the executor asks the rule, as each batch begins, whether the batches so far meet
it; the run stops there, so nothing is re-simulated. The result's configuration holds the counts
the rule chose (``batches``, ``warmup_batches``) and ``result.sampling`` the rule and interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from cxlsim.config.bounds import MAX_RUN_LOOKUPS, MAX_SEED, check_bound
from cxlsim.engine.executor import Executor
from cxlsim.engine.trace import TraceRecorder
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems import axes
from cxlsim.systems.activity import batch_activity
from cxlsim.systems.config import SystemConfig, load_system
from cxlsim.systems.critical_path import breakdown
from cxlsim.systems.dataflow import build_graph
from cxlsim.systems.graph import DeviceGraph, build_devices
from cxlsim.systems.machine import TrainingMachine
from cxlsim.systems.models import SYSTEM_MODELS, SimulationModel
from cxlsim.systems.provision import check_provision
from cxlsim.systems.result import RunResult
from cxlsim.systems.sampling import AUTO, Sampling, decide, parse_ci, rule_for
from cxlsim.systems.scale import reduces, settle
from cxlsim.systems.streams import StreamSet, stream_set
from cxlsim.systems.symmetry import (
    Reduction,
    SymmetryRefused,
    located_refusal,
    plan,
    representative_streams,
)
from cxlsim.systems.topology import Fabric, Placement
from cxlsim.workloads.catalog import Workload, load_workload
from cxlsim.workloads.layout import TableLayout
from cxlsim.workloads.trace import check_trace_length

Sets = Mapping[str, Any] | list[tuple[str, Any]] | None
SetOrigins = Mapping[str, tuple[str, str]] | None  # set key -> (file or option, key path there)


def load_config(system: str, sets: Sets = None, set_origins: SetOrigins = None) -> SystemConfig:
    """Load ``configs/<system>.yaml`` (or a path) with dotted-key overrides (``set_origins``:
    where each came from, if not ``--set``: :func:`~cxlsim.systems.config.load_system`)."""
    items = list(sets.items()) if isinstance(sets, Mapping) else list(sets or [])
    return load_system(system, items, set_origins)


def configure(system: str | SystemConfig, workload: str | None = None, batches: int | str | None = None,
              seed: int | None = None, warmup: int | str | None = None, sets: Sets = None,
              ci: float | None = None, set_origins: SetOrigins = None) -> SystemConfig:
    """The configuration a run uses: ``system`` (a name, a path or a loaded config) with ``sets``,
    then the explicit arguments (which win over the file and ``sets``). ``batches="auto"`` makes
    the warm-up ``auto`` too unless ``warmup`` is given; ``ci`` (a fraction) is auto's target."""
    cfg = system if isinstance(system, SystemConfig) else load_config(system, sets, set_origins)
    changes: dict[str, Any] = {}
    if batches is not None:
        if batches != AUTO and batches < 1:
            raise InputError(f"--batches must be >= 1 or auto, got {batches}")
        changes["batches"] = batches
        if batches == AUTO and warmup is None:
            changes["warmup_batches"] = AUTO
    if warmup is not None:
        if warmup != AUTO and warmup < 0:
            raise InputError(f"--warmup must be >= 0 or auto, got {warmup}")
        changes["warmup_batches"] = warmup
    if ci is not None:
        if changes.get("batches", cfg.batches) != AUTO:
            raise InputError("--ci is the target of --batches auto; a fixed --batches N measures N batches")
        changes["batches_ci_fraction"] = parse_ci(ci)
    if seed is not None:
        if not 0 <= seed <= MAX_SEED:
            raise InputError(f"--seed must be within 0..{MAX_SEED:,} (cxlsim/config/bounds.py), got {seed:,}")
        changes["seed"] = seed
    if workload is not None:
        changes["workload"] = workload
    cfg = replace(cfg, **changes) if changes else cfg
    cfg.sampling  # noqa: B018 - validates the combination (warm-up auto needs batches auto)
    return cfg


def scale_out(devices: DeviceGraph, streams: StreamSet,
              reduction: Reduction | None = None) -> tuple[int, int, Fabric | None, Placement | None]:
    """The GPUs and memory devices of a system's topology, its switch tree (CXL systems with more
    than one device) and where the tables live (more than one memory device); topology
    parameters that do not apply are declared so (:meth:`~cxlsim.config.params.ParamSet.skip`).
    With a ``reduction``: the representative group's devices, on a tree of the same shape."""
    cfg = devices.config
    topo, p = cfg.topology, cfg.pipeline
    gpus, mems = topo.gpus_count, topo.cxl_mems_count
    if reduction is not None:
        gpus, mems = reduction.group_gpus, reduction.group_mems
    if mems > 1 and not axes.of(p, "embedding_engine").on_device:
        raise ConfigError("topology", "cxl_mems_count", f"{cfg.name}'s embeddings run on the host CPU over one memory "
                          "pool; memory devices with their own logic need pipeline.embedding_engine: ndp")
    fabric = placement = None
    if mems > 1:
        placement = Placement.of(streams.layout, mems, topo.tables_policy)
    else:
        topo.skip("tables_policy", "one memory device holds every table")
    if devices.has("fabric_link"):
        fabric = Fabric.of(devices, gpus, mems)
    else:
        for key in ("fanout_count", "attach_policy"):
            topo.skip(key, "the data moves by software over PCIe, not over a switch tree")
    return gpus, mems, fabric, placement


def dataflow_reduction(cfg: SystemConfig, wl: Workload) -> tuple[Reduction | None, int]:
    """The op-graph systems' symmetry reduction (:func:`cxlsim.systems.symmetry.plan`) and its GPUs."""
    try:
        reduction = plan(cfg, TableLayout.from_workload(wl))
    except SymmetryRefused as exc:
        raise located_refusal(cfg, exc) from None
    return reduction, reduction.group_gpus if reduction else cfg.topology.gpus_count


def simulate(system: str | SystemConfig, workload: str | None = None, batches: int | str | None = None,
             seed: int | None = None, warmup: int | str | None = None, sets: Sets = None,
             workload_sets: Mapping[str, Any] | None = None, trace: bool = True,
             ci: float | None = None, set_origins: SetOrigins = None, stats: bool = False) -> RunResult:
    """Simulate ``system`` on ``workload`` (default: the system's) and return a :class:`RunResult`
    (timing only: ``energy`` stays ``None``; :func:`cxlsim.api.simulate` prices it). ``stats``: the
    machine also collects statistics (:class:`~cxlsim.systems.activity.AccessStats`; an op-graph
    model only; the timing is the same).
    ``batches``/``warmup``: counts or ``"auto"`` (module docstring), ``ci`` auto's target;
    ``set_origins``: where each of ``sets`` came from, if not ``--set`` (errors name it)."""
    cfg = configure(system, workload, batches, seed, warmup, sets, ci, set_origins)
    overrides = {**cfg.workload_overrides, **(workload_sets or {})}
    # where a workload error points: the system's workload_overrides, or the caller's workload_sets
    origin = ("--set", "") if workload_sets else (cfg.workload_overrides_where, "workload_overrides.")
    try:
        wl = load_workload(cfg.workload, overrides, *origin)  # per GPU (data-parallel: the batch size is each GPU's)
    except ConfigError as exc:  # an override's error names the input that gave it
        raise (exc if workload_sets else cfg.blame(exc)) from None
    rule = rule_for(cfg, wl)
    model = SYSTEM_MODELS.get(cfg.model, cfg.source, "model")
    cfg = model.settle(cfg, wl)
    reduction, gpus = model.reduce(cfg, wl)
    # the input streams hold every GPU's samples (a reduced run: its group's): a global batch of gpus × batch_size
    try:
        global_wl = wl if gpus == 1 else load_workload(cfg.workload, {**overrides, "batch_size": wl.params.batch_size * gpus},
                                                       cfg.source, f"topology.gpus_count ({gpus}) × ")
        total = rule.max_total  # one more batch closes the last measured one
        many = cfg.origin_of("topology.gpus_count", "batches") if gpus > 1 else (cfg.source, "batches")
        check_bound(*many, total * global_wl.lookups_per_batch, MAX_RUN_LOOKUPS,
                    f"embedding lookups in {total} batches of {global_wl.name} on {gpus} GPU(s)",
                    "lookups one run holds in memory")
    except ConfigError as exc:
        raise ConfigError(exc.where, exc.key, exc.message + _lookup_bound_fix(cfg, wl, reduction, rule)) from None
    if rule.batches != AUTO:  # a trace too short for a fixed count is refused before anything runs
        check_trace_length(global_wl, total)
    streams = stream_set(global_wl, cfg.seed, total)
    return model.run(cfg, wl, streams, reduction, rule, trace, **({"stats": True} if stats else {}))


def _lookup_bound_fix(cfg: SystemConfig, wl: Workload, reduction: Any, rule: Sampling) -> str:
    """What fixes a run refused by the bound on the lookups it holds (``MAX_RUN_LOOKUPS``): the
    ``--set`` that reduces it to one group of identical devices, where it runs in full detail
    (the streams then hold that group's samples only), else fewer batches or a smaller batch."""
    gpus = cfg.topology.as_dict()["gpus_count"]
    symmetry = cfg.topology.as_dict()["symmetry"]
    if reduction is None and gpus > 1 and not reduces(symmetry, gpus):
        return ("; simulate one group of identical GPUs and CXL-MEMs in detail and the rest analytically: "
                "--set topology.symmetry=on (docs/scale-out.md, 'Symmetry')")
    group = reduction.group_gpus if reduction is not None else gpus
    per_batch = group * wl.lookups_per_batch
    fits = MAX_RUN_LOOKUPS // per_batch - 1 - (rule.warmup if isinstance(rule.warmup, int) else 0)
    if fits >= 1 and rule.batches != AUTO:
        return f"; measure fewer batches: --batches {fits} (or --set batches={fits})"
    smaller = MAX_RUN_LOOKUPS // (group * wl.lookups_per_sample * (rule.max_total))
    return f"; a smaller per-GPU batch: --set workload_overrides.batch_size={max(1, smaller)}"


def simulate_dataflow(cfg: SystemConfig, wl: Workload, streams: StreamSet, reduction: Reduction | None,
                      rule: Sampling, trace: bool = True, stats: bool = False) -> RunResult:
    """Time ``cfg``'s op graph on the executor over ``streams`` (module docstring)."""
    total = rule.max_total
    devices = build_devices(cfg)
    gpus, mems, fabric, placement = scale_out(devices, streams, reduction)
    system_fabric = None
    if reduction is not None:
        if devices.has("fabric_link"):
            system_fabric = Fabric.of(devices, reduction.gpus, reduction.mems)
        gpus, mems = reduction.group_gpus, reduction.group_mems
    check_provision(devices, wl, reduction.mems if reduction else mems)
    device_streams = None
    if reduction is not None:
        device_streams = representative_streams(reduction, wl, cfg.topology.tables_policy, cfg.seed, total)
    machine = TrainingMachine(devices, streams, gpus, mems, fabric, placement, reduction, system_fabric,
                              device_streams, run_batches=total, stats=stats)
    ex = Executor(TraceRecorder(enabled=trace))
    build_graph(ex, machine, cfg.pipeline, total)

    def times(k: int) -> np.ndarray:  # batches 0 … k−1 are complete as batch k begins
        return np.diff([ex.records[("begin", i)].start_ns for i in range(k + 1)])

    # the closing batch is needed only up to its begin
    stopped = ex.run(until_batch=total - 1, stop=(lambda k: decide(times(k), rule).stop) if rule.auto else None)
    if rule.auto:
        chosen = decide(times(stopped), rule)
        cfg = replace(cfg, warmup_batches=chosen.warmup, batches=chosen.batches)
    measured = range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches)
    spans = {n: (ex.records[("begin", n)].start_ns, ex.records[("begin", n + 1)].start_ns) for n in measured}
    walks = [breakdown(ex.records, ("begin", n), ("begin", n + 1)) for n in measured]
    parts = [w[0] for w in walks]
    cpu = machine.cpu.params
    activity = batch_activity(ex, machine.ledgers, spans, cpu.cores_count, cpu.threads_count, measured,
                              reduction.groups if reduction else 1)
    times = np.asarray([a.wall_ns for a in activity])
    raw = np.asarray([a.raw_stall_ns for a in activity])
    gap = max((a.mlp_log_gap_batches for a in activity), default=0)
    extra = {"symmetry": {**reduction.summary(), "mem_devices": [d.device for d in device_streams]}
             if reduction else {"reduced": False}}
    return RunResult(cfg, wl, times, parts, raw, gap, ex, machine, extra, activity=activity, devices=devices,
                     sampling=rule, critical_paths=[w[1] for w in walks])


#: ``model: dataflow``: the op graph over device models on the executor (entry point
#: ``cxlsim.system_models``: ``dataflow``).
DATAFLOW = SimulationModel(dataflow_reduction, simulate_dataflow, settle, pipeline=True)
