"""The ``tpu-ps`` system in ``cxlsim run``: the analytic TPU / parameter-server step model
(:func:`cxlsim.systems.tpu_ps.tpu_ps_step`) driven by the same analysed input streams as every other
system, at the accelerator count of ``topology.gpus_count`` (the chips; SPEC §12).

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

Timeline (:class:`TpuPsResult`): lanes ``tensorcore`` (MLPs), ``ici.allreduce``, and
``sparsecore`` / ``ici.a2a`` (tables in HBM) or ``ps.cpu`` / ``network`` (parameter servers), and
``checkpoint.epoch`` (the amortised share). Pipelined, step N's period holds N's MLPs and
all-reduce beside N−1's embedding update (gradients in first) and N+1's lookup (vectors out
last); serial, one after another: N's lookup, MLPs, all-reduce, update. Each interval carries the
batch whose work it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cxlsim.engine.trace import TraceRecorder
from cxlsim.errors import ConfigError
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.result import RunResult
from cxlsim.systems.sampling import Sampling, decide
from cxlsim.systems.streams import StreamSet
from cxlsim.systems.tpu_ps import declare_unused, tpu_ps_step
from cxlsim.workloads.catalog import Workload

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
    tables = streams.layout.row_base.size
    per_table = rows.size // tables
    if per_table % chips:
        raise ValueError(f"{per_table} lookups per table do not split over {chips} chips")
    out = np.empty((chips, tables), dtype=np.int64)
    for t in range(tables):
        a = np.sort(rows[t * per_table:(t + 1) * per_table].reshape(chips, -1), axis=1)
        out[:, t] = 1 + np.count_nonzero(a[:, 1:] != a[:, :-1], axis=1)
    return out.tolist()


def workload_params(wl: Workload) -> dict[str, Any]:
    """The step model's view of a workload (per-chip batch, full-size tables, dense parameters; the
    top MLP as DLRM builds it, the interaction's outputs first: :attr:`Workload.top_network`)."""
    return {"batch_size": wl.params.batch_size, "tables": wl.params.tables, "dim": wl.params.dim,
            "bottom_mlp": wl.bottom_widths, "top_mlp": wl.top_network, "embedding_B": wl.embedding_bytes,
            "mlp_params_count": sum(wl.mlp_params.values())}


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


@dataclass
class TpuPsResult(RunResult):
    """A tpu-ps run: :class:`RunResult` plus each measured step (the step model's dict) and its
    timeline, drawn from the steps (nothing is re-simulated)."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    _trace: TraceRecorder | None = None

    @property
    def chips(self) -> int:
        return self.steps[0]["chips"] if self.steps else 1

    @property
    def trace(self) -> TraceRecorder:
        if self._trace is None:
            tr = TraceRecorder()
            hbm = self.steps[0]["placement"] == "hbm"
            for lane in ("tensorcore", "ici.allreduce") if self.chips > 1 else ("tensorcore",):
                tr.declare_lane(lane)
            for lane in ("sparsecore", "ici.a2a") if hbm else ("ps.cpu", "network"):
                if lane != "ici.a2a" or self.chips > 1:
                    tr.declare_lane(lane)
            contention = self.config.tpu_ps.as_dict()["contention_factor"]
            for n, step in zip(self.measured, self.steps, strict=True):
                draw_step(tr, step, n, self.batch_span(n)[0], contention)
            self._trace = tr
        return self._trace

    def batch_span(self, n: int) -> tuple[float, float]:
        """Start and end (ns) of measured step ``n`` (the first measured step starts at 0)."""
        i = n - self.measured.start
        if not 0 <= i < len(self.steps):
            raise IndexError(f"step {n} was not measured")
        start = float(sum(s["step_ns"] for s in self.steps[:i]))
        return start, start + self.steps[i]["step_ns"]

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["devices"] = {"tpu_chips": self.chips, "parameter_servers": self.steps[-1]["activity"].servers}
        return d


def simulate_tpu_ps(cfg: SystemConfig, wl: Workload, streams: StreamSet, group: int | None = None,
                    rule: Sampling | None = None) -> TpuPsResult:
    """Per-step times of ``cfg`` (model ``tpu_ps``) over the measured batches, on
    ``topology.gpus_count`` chips (``streams`` hold every chip's samples; with ``group``, the
    symmetry reduction's: that many chips' samples, whose distinct ids per chip and table are
    tiled over every chip, :func:`cxlsim.systems.symmetry.chips_group`). ``rule`` ``auto``
    (:mod:`cxlsim.systems.sampling`): steps are timed from the first until the rule is met, and
    the result's configuration holds the counts it chose."""
    wp = workload_params(wl)
    sp = cfg.tpu_ps
    chips = cfg.topology.gpus_count
    for key in cfg.topology:
        if key not in ("gpus_count", "symmetry"):
            cfg.topology.skip(key, NOT_APPLICABLE)

    def ids(n: int) -> list[list[int]]:
        if group is None:
            return unique_ids_per_chip(streams, n, chips)
        return np.tile(np.asarray(unique_ids_per_chip(streams, n, group)), (chips // group, 1)).tolist()

    rule = rule or cfg.sampling
    times, parts, steps = [], [], []

    def step_at(n: int) -> dict[str, Any]:
        try:
            return tpu_ps_step(wp, sp, ids(n), chips)
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
    for step in measured:
        times.append(step["step_ns"])
        parts.append(critical_path_ns(step, sp.pipelining, sp.contention_factor if sp.pipelining else 1.0))
        steps.append(step)
    last = steps[-1]
    declare_unused(sp, last["placement"], chips)
    extra = {"tpu_ps": {"placement": last["placement"], "pipelined": last["pipelined"], "chips": chips,
                        "load_imbalance": float(np.mean([s["load_imbalance"] for s in steps])),
                        "rpc_pairs_per_server": last["rpc_pairs_per_server"],
                        "transfer_bytes_per_chip": float(np.mean([s["transfer_bytes_per_chip"] for s in steps]))},
             "symmetry": {"reduced": True, "groups": chips // group, "group_chips": group} if group else {"reduced": False}}
    return TpuPsResult(cfg, wl, np.asarray(times), parts, np.zeros(len(times)), 0, None, None, extra, steps=steps,
                       sampling=rule)
