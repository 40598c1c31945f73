"""The ``tpu-ps`` system in ``cxlsim run``: the analytic TPU / parameter-server step model
(:func:`cxlsim.systems.tpu_ps.tpu_ps_step`) driven by the same analysed input streams as every other
system, at the accelerator count of ``topology.gpus_count`` (the chips; docs/design.md#scale-out).

The streams hold every chip's samples (chips × batch_size per step, as for data-parallel GPUs);
chip c trains samples ``[c·B, (c+1)·B)`` of each step and deduplicates its own ids. The other
topology keys (CXL-MEMs, the switch tree, table placement over CXL-MEMs) do not apply and are
declared so: overriding them is refused with that reason.

Critical-path attribution (sums to the step time exactly): without sparse/dense pipelining the
step is the sum of its parts; with pipelining it is the longer side × the contention factor, so
that side's parts (× the factor) are charged and the hidden side is not (the sparse side is the
sparse transfer and the embedding work, the dense side the MLPs and the all-reduce, charged to
``transfer``). The epoch checkpoint, amortised over the epoch's steps, is charged as
``checkpoint``.

Result: a :class:`~cxlsim.systems.result.RunResult` as every system's: per measured step a
:class:`~cxlsim.systems.activity.BatchActivity` with the step's wall time and start, each lane's busy
time in its period (the lanes below, as the timeline draws them), the work it ran (:data:`STEPS`), and
what each device role did (``usage``, :func:`~cxlsim.systems.tpu_ps.step_usage`: chips, HBM,
interconnect, parameter servers, NICs, hosts), which :mod:`cxlsim.energy.model` prices through the
families' hooks; ``extra`` holds the model's own figures (``tpu_ps``: placement, load imbalance,
RPCs, transfer bytes; ``devices``: chips and parameter servers; ``symmetry``).

Timeline (``RunResult.timeline``, drawn as the steps are timed when the run keeps a trace): lanes
``tensorcore`` (MLPs), ``ici.allreduce``, and ``sparsecore`` / ``ici.a2a`` (tables in HBM) or
``ps.cpu`` / ``network`` (parameter servers), and
``checkpoint.epoch`` (the amortised share). Pipelined, step N's period holds N's MLPs and
all-reduce beside N−1's embedding update (gradients in first) and N+1's lookup (vectors out
last); serial, one after another: N's lookup, MLPs, all-reduce, update. Each interval carries the
batch whose work it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from cxlsim.engine.trace import TraceRecorder
from cxlsim.errors import ConfigError
from cxlsim.systems.activity import BatchActivity
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.graph import build_devices
from cxlsim.systems.models import SimulationModel
from cxlsim.systems.result import RunResult
from cxlsim.systems.sampling import Sampling, decide, rule_for
from cxlsim.systems.streams import StreamSet
from cxlsim.systems.symmetry import SymmetryRefused, chips_group, located_refusal
from cxlsim.systems.tpu_ps import TPU_PS_ROLES, TPU_PS_SCHEMA, declare_unused, tpu_ps_step
from cxlsim.workloads.catalog import Workload
from cxlsim.workloads.interactions import weight_macs_per_sample

#: Topology keys the tpu-ps model has no use for, and why.
NOT_APPLICABLE = "the tpu-ps model has no CXL-MEMs or switch tree (its chips are topology.gpus_count)"


def unique_ids_per_table(streams: StreamSet, n: int) -> list[int]:
    """Distinct rows of each table touched by batch ``n`` (all its samples)."""
    rows = streams.batch(n).unique_rows
    edges = np.append(streams.layout.row_base, streams.layout.total_rows)
    return np.diff(np.searchsorted(rows, edges)).astype(int).tolist()


def unique_ids_per_chip(streams: StreamSet, n: int, chips: int) -> list[list[int]]:
    """``chips × tables``: distinct rows of each table in each chip's share of batch ``n`` (chip c
    holds samples ``[c·B, (c+1)·B)``; lookups are table-major, each table's bags in sample order)."""
    if chips == 1:
        return [unique_ids_per_table(streams, n)]
    rows = streams.batch(n).lookup_rows
    base = streams.layout.row_base
    tables = base.size
    # table-major lookups: table t's are those with rows in [row_base[t], row_base[t + 1]) (per-table
    # bag sizes give each table its own count)
    starts = _table_starts(rows, base)
    out = np.empty((chips, tables), dtype=np.int64)
    for t in range(tables):
        per_table = int(starts[t + 1] - starts[t])
        if per_table % chips:
            raise ValueError(f"{per_table} lookups of table {t} do not split over {chips} chips")
        a = np.sort(rows[starts[t]:starts[t + 1]].reshape(chips, -1), axis=1)
        out[:, t] = 1 + np.count_nonzero(a[:, 1:] != a[:, :-1], axis=1)
    return out.tolist()


def _table_starts(rows: np.ndarray, row_base: np.ndarray) -> np.ndarray:
    """Where each table's lookups start in table-major ``rows`` (and the end): ``tables + 1`` offsets."""
    table_of = np.searchsorted(row_base, rows, side="right") - 1
    return np.concatenate(([0], np.cumsum(np.bincount(table_of, minlength=row_base.size))))


def workload_params(wl: Workload) -> dict[str, Any]:
    """The step model's view of a workload (per-chip batch, full-size tables, dense parameters --
    the interaction's included --; the top MLP as DLRM builds it, the interaction's outputs first:
    :attr:`Workload.top_network`; the interaction's MACs against its own parameters per sample)."""
    return {"batch_size": wl.params.batch_size, "tables": wl.params.tables, "dim": wl.params.dim,
            "bottom_mlp": wl.bottom_widths, "top_mlp": wl.top_network, "embedding_B": wl.embedding_bytes,
            "mlp_params_count": sum(wl.mlp_params.values()),
            "interaction_macs": weight_macs_per_sample(wl.interaction)}


def critical_path_ns(step: dict, pipelined: bool, contention: float) -> dict[str, float]:
    """Charges per Figure-11 category for one step (see module docstring)."""
    b = step["breakdown"]
    out = {k: 0.0 for k in ("b_mlp", "t_mlp", "transfer", "embedding", "checkpoint")}
    out["checkpoint"] = b["checkpoint"]
    if not pipelined:
        for k in ("b_mlp", "t_mlp", "transfer", "embedding"):
            out[k] = b[k]
    elif step["sparse_ns"] >= step["dense_ns"]:
        out["transfer"], out["embedding"] = step["sparse_transfer_ns"] * contention, b["embedding"] * contention
    else:
        out["b_mlp"], out["t_mlp"] = b["b_mlp"] * contention, b["t_mlp"] * contention
        out["transfer"] = step["allreduce_ns"] * contention
    out["idle"] = 0.0
    return out


def draw_step(trace: TraceRecorder, step: dict, n: int, t0: float, contention: float) -> None:
    """Record step ``n``'s period, starting at ``t0`` (ns), on ``trace`` (module docstring)."""
    b = step["breakdown"]
    hbm = step["placement"] == "hbm"
    engine, wire = ("sparsecore", "ici.a2a") if hbm else ("ps.cpu", "network")
    half = step["sparse_transfer_ns"] / 2  # ids and vectors out, gradients back
    piped = step["pipelined"]
    k = contention if piped else 1.0

    def lay(lane: str, t: float, ns: float, label: str, batch: int, category: str) -> float:
        trace.record(lane, t, t + ns * k, label, batch, category)
        return t + ns * k

    def lookup(t: float, m: int) -> float:
        t = lay(engine, t, step["lookup_ns"], f"lookup {m}", m, "embedding")
        return lay(wire, t, half, f"vectors {m}", m, "transfer")

    def update(t: float, m: int) -> float:
        t = lay(wire, t, half, f"gradients {m}", m, "transfer")
        return lay(engine, t, step["update_ns"], f"update {m}", m, "embedding")

    def dense(t: float) -> float:
        t = lay("tensorcore", t, b["b_mlp"], f"bottom MLP {n}", n, "b_mlp")
        t = lay("tensorcore", t, b["t_mlp"], f"top MLP {n}", n, "t_mlp")
        return lay("ici.allreduce", t, step["allreduce_ns"], f"all-reduce {n}", n, "transfer")

    if piped:
        dense(t0)
        lookup(update(t0, n - 1), n + 1)
    else:
        update(dense(lookup(t0, n)), n)
    end = t0 + step["step_ns"]
    trace.record("checkpoint.epoch", end - b["checkpoint"], end, f"epoch checkpoint (amortised) {n}", n, "checkpoint")


def lanes_of(step: dict) -> tuple[str, ...]:
    """The timeline's lanes of a run whose steps are like ``step`` (module docstring)."""
    chips, hbm = step["chips"], step["placement"] == "hbm"
    dense = ("tensorcore", "ici.allreduce") if chips > 1 else ("tensorcore",)
    sparse = ("sparsecore", "ici.a2a") if hbm else ("ps.cpu", "network")
    return dense + tuple(lane for lane in sparse if lane != "ici.a2a" or chips > 1)


def lane_busy_ns(step: dict, contention: float) -> dict[str, float]:
    """Busy time of each lane in step ``step``'s period (ns), as :func:`draw_step` draws it."""
    b = step["breakdown"]
    k = contention if step["pipelined"] else 1.0
    hbm = step["placement"] == "hbm"
    busy = {"tensorcore": (b["b_mlp"] + b["t_mlp"]) * k,
            "sparsecore" if hbm else "ps.cpu": b["embedding"] * k,
            "checkpoint.epoch": b["checkpoint"]}
    if step["sparse_transfer_ns"]:
        busy["ici.a2a" if hbm else "network"] = step["sparse_transfer_ns"] * k
    if step["allreduce_ns"]:
        busy["ici.allreduce"] = step["allreduce_ns"] * k
    return busy


#: The work a tpu-ps step runs (:attr:`BatchActivity.steps`; the all-reduce on more than one chip).
STEPS = frozenset({"lookup", "b_mlp", "t_mlp", "allreduce", "update", "checkpoint"})


def step_activity(step: dict, n: int, start_ns: float, contention: float) -> BatchActivity:
    """Step ``step`` (batch ``n``, beginning at ``start_ns``) as the activity record every system
    gives (module docstring): no media, links or memory-device logic of the op-graph systems."""
    return BatchActivity.analytic(n, step["step_ns"], step["usage"], start_ns, lane_busy_ns(step, contention),
                                  STEPS if step["chips"] > 1 else STEPS - {"allreduce"})


def chips_reduction(cfg: SystemConfig, wl: Workload) -> tuple[int | None, int]:
    """The chips a symmetry-reduced run draws samples for (:func:`cxlsim.systems.symmetry.chips_group`),
    or ``None``, and the chips the input streams hold."""
    try:
        group = chips_group(cfg.topology.gpus_count, cfg.topology.symmetry, cfg.name)
    except SymmetryRefused as exc:
        raise located_refusal(cfg, exc) from None
    return group, group or cfg.topology.gpus_count


def simulate_tpu_ps(cfg: SystemConfig, wl: Workload, streams: StreamSet, group: int | None = None,
                    rule: Sampling | None = None, trace: bool = True) -> RunResult:
    """Per-step times of ``cfg`` (model ``tpu_ps``) over the measured batches, on
    ``topology.gpus_count`` chips (``streams`` hold every chip's samples; with ``group``, the
    symmetry reduction's: that many chips' samples, whose distinct ids per chip and table are
    tiled over every chip, :func:`cxlsim.systems.symmetry.chips_group`). ``rule`` ``auto``
    (:mod:`cxlsim.systems.sampling`): steps are timed from the first until the rule is met, and
    the result's configuration holds the counts it chose. ``trace``: draw the timeline (module
    docstring)."""
    wp = workload_params(wl)
    sp = cfg.model_params
    graph = build_devices(cfg)  # the roles' models, built once, as for every system
    chips = cfg.topology.gpus_count
    for key in cfg.topology:
        if key not in ("gpus_count", "symmetry"):
            cfg.topology.skip(key, NOT_APPLICABLE)

    def ids(n: int) -> list[list[int]]:
        if group is None:
            return unique_ids_per_chip(streams, n, chips)
        return np.tile(np.asarray(unique_ids_per_chip(streams, n, group)), (chips // group, 1)).tolist()

    rule = rule or rule_for(cfg, wl)
    times, parts = [], []

    def step_at(n: int) -> dict[str, Any]:
        try:
            return tpu_ps_step(wp, sp, graph, ids(n), chips)
        except ConfigError as exc:  # name the configuration the key came from
            raise ConfigError(cfg.source, exc.key, exc.message) from None

    if rule.auto:  # every step from the first, until the rule is met
        every: list[dict[str, Any]] = []
        while True:
            every.append(step_at(len(every)))
            chosen = decide(np.asarray([s["step_ns"] for s in every]), rule)
            if chosen.stop:
                break
        cfg = replace(cfg, warmup_batches=chosen.warmup, batches=chosen.batches)
        measured = every[chosen.warmup:chosen.warmup + chosen.batches]
    else:
        measured = [step_at(n) for n in range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches)]
    contention = sp.contention_factor if sp.pipelining else 1.0
    timeline = TraceRecorder(enabled=trace)
    for lane in lanes_of(measured[0]):
        timeline.declare_lane(lane)
    activity, t0 = [], 0.0
    for n, step in enumerate(measured, start=cfg.warmup_batches):
        times.append(step["step_ns"])
        parts.append(critical_path_ns(step, sp.pipelining, contention))
        activity.append(step_activity(step, n, t0, contention))
        draw_step(timeline, step, n, t0, contention)
        t0 += step["step_ns"]
    last = measured[-1]
    declare_unused(sp, graph, last["placement"], chips)
    extra = {"tpu_ps": {"placement": last["placement"], "pipelined": last["pipelined"], "chips": chips,
                        "load_imbalance": float(np.mean([s["load_imbalance"] for s in measured])),
                        "rpc_pairs_per_server": last["rpc_pairs_per_server"],
                        "transfer_bytes_per_chip": float(np.mean([s["transfer_bytes_per_chip"] for s in measured]))},
             "devices": {"tpu_chips": chips, "parameter_servers": last["servers"]},
             "symmetry": {"reduced": True, "groups": chips // group, "group_chips": group} if group else {"reduced": False}}
    return RunResult(cfg, wl, np.asarray(times), parts, np.zeros(len(times)), 0, None, None, extra, activity=activity,
                     devices=graph, sampling=rule, timeline=timeline)


#: ``model: tpu_ps`` (entry point ``cxlsim.system_models``: ``tpu_ps``): no dataflow pipeline; its
#: parameters under ``tpu_ps:``; the roles of :data:`~cxlsim.systems.tpu_ps.TPU_PS_ROLES`.
TPU_PS = SimulationModel(chips_reduction, simulate_tpu_ps, pipeline=False, params_key="tpu_ps",
                         params_schema=TPU_PS_SCHEMA, roles=TPU_PS_ROLES)
