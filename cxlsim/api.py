"""Python API: load a system configuration and simulate it.

    import cxlsim
    cfg = cxlsim.load_config("cxl-b", sets={"pipeline.relaxed_lookup": False})
    result = cxlsim.simulate("cxl", workload="rm1", batches=10)
    result.batch_time_ms["mean"], result.breakdown_ms, result.to_dict()

Contract: the same (configuration, workload, seed, batch count) gives the same numbers.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cxlsim.config.yamlio import parse_set
from cxlsim.engine.trace import TraceRecorder
from cxlsim.errors import InputError
from cxlsim.provenance import provenance
from cxlsim.systems.config import SystemConfig, load_system
from cxlsim.systems.critical_path import CATEGORIES, breakdown
from cxlsim.systems.dataflow import build_graph
from cxlsim.systems.executor import Executor
from cxlsim.systems.machine import TrainingMachine
from cxlsim.systems.streams import stream_set
from cxlsim.workloads.catalog import Workload, load_workload


def load_config(system: str, sets: Mapping[str, Any] | list[tuple[str, Any]] | None = None) -> SystemConfig:
    """Load ``configs/<system>.yaml`` (or a path) with dotted-key overrides."""
    items = list(sets.items()) if isinstance(sets, Mapping) else list(sets or [])
    return load_system(system, items)


@dataclass
class RunResult:
    """One simulation: per-batch times and breakdowns over the measured batches, and the trace."""

    config: SystemConfig
    workload: Workload
    batch_times_ns: np.ndarray
    breakdowns_ns: list[dict[str, float]]
    raw_stall_ns: np.ndarray
    mlp_log_gap_batches: int
    executor: Executor | None  # None for the analytic tpu-ps model
    machine: TrainingMachine | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def trace(self) -> TraceRecorder:
        if self.executor is None:
            raise InputError(f"system {self.config.name!r} (model {self.config.model}) is analytic: it has no timeline")
        return self.executor.trace

    @property
    def batch_time_ms(self) -> dict[str, float]:
        t = self.batch_times_ns / 1e6
        return {"mean": float(t.mean()), "p50": float(np.percentile(t, 50)), "p99": float(np.percentile(t, 99))}

    @property
    def breakdown_ms(self) -> dict[str, float]:
        keys = list(CATEGORIES) + (["idle"] if any(b["idle"] > 1e-6 for b in self.breakdowns_ns) else [])
        return {k: float(np.mean([b[k] for b in self.breakdowns_ns]) / 1e6) for k in keys}

    def batch_span(self, n: int) -> tuple[float, float]:
        """Start and end (ns) of batch ``n`` (absolute batch number, warm-up included)."""
        r = self.trace and self.executor.records
        return r[("begin", n)].start_ns, r[("begin", n + 1)].start_ns

    def to_dict(self) -> dict[str, Any]:
        cfg = self.config
        bt = self.batch_time_ms
        resolved = cfg.resolved()
        resolved["workload_params"] = dict(self.workload.params)
        from cxlsim.energy import energy_per_batch, provisioned_modules

        analytic = self.machine is None  # tpu-ps: no device-level activity, so no energy accounting
        resolved["provisioned_modules"] = {} if analytic else provisioned_modules(cfg, self.workload)
        return {
            "system": cfg.name,
            "workload": self.workload.name,
            "batches": int(self.batch_times_ns.size),
            "batch_time_ms": bt,
            "breakdown_ms": self.breakdown_ms,
            "raw_stall_ms": float(self.raw_stall_ns.mean() / 1e6),
            "mlp_log_gap_batches": int(self.mlp_log_gap_batches),
            "throughput_samples_per_s": float(self.workload.params.batch_size / (bt["mean"] / 1e3)),
            "energy_J_per_batch": None if analytic else energy_per_batch(self),
            **self.extra,
            "config": resolved,
            "seed": cfg.seed,
            **provenance(),
        }


def simulate(
    system: str | SystemConfig,
    workload: str | None = None,
    batches: int | None = None,
    seed: int | None = None,
    warmup: int | None = None,
    sets: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
    workload_sets: Mapping[str, Any] | None = None,
    trace: bool = True,
) -> RunResult:
    """Simulate ``system`` on ``workload`` (default: the system's) and return a :class:`RunResult`."""
    cfg = system if isinstance(system, SystemConfig) else load_config(system, sets)
    replace: dict[str, Any] = {}
    if batches is not None:
        if batches < 1:
            raise InputError(f"--batches must be >= 1, got {batches}")
        replace["batches"] = batches
    if warmup is not None:
        if warmup < 0:
            raise InputError(f"--warmup must be >= 0, got {warmup}")
        replace["warmup_batches"] = warmup
    if seed is not None:
        replace["seed"] = seed
    if workload is not None:
        replace["workload"] = workload
    if replace:
        cfg = _replace(cfg, **replace)
    wl = load_workload(cfg.workload, {**cfg.workload_overrides, **(workload_sets or {})})
    total = cfg.warmup_batches + cfg.batches + 1  # one more batch closes the last measured one
    streams = stream_set(wl, cfg.seed, total)
    if cfg.model == "tpu_ps":
        from cxlsim.systems.tpu_ps_run import simulate_tpu_ps

        return simulate_tpu_ps(cfg, wl, streams)
    machine = TrainingMachine(cfg, streams)
    ex = Executor(TraceRecorder(enabled=trace))
    build_graph(ex, machine, cfg.pipeline, total)
    ex.run(until_batch=total - 1)  # the closing batch is needed only up to its begin
    measured = range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches)
    times, parts, raw = [], [], []
    for n in measured:
        t0 = ex.records[("begin", n)].start_ns
        t1 = ex.records[("begin", n + 1)].start_ns
        charges, _ = breakdown(ex.records, ("begin", n), ("begin", n + 1))
        times.append(t1 - t0)
        parts.append(charges)
        raw.append(machine.stats.get(("lookup", n), {}).get("raw_stall_ns", 0.0))
    gaps = [machine.mlp_log.gaps.get(n, 0) for n in measured]
    return RunResult(cfg, wl, np.asarray(times), parts, np.asarray(raw), max(gaps) if gaps else 0, ex, machine)


def _replace(cfg: SystemConfig, **changes: Any) -> SystemConfig:
    from dataclasses import replace

    return replace(cfg, **changes)


def simulate_from_args(args: argparse.Namespace) -> RunResult:
    """``cxlsim run``/``timeline`` arguments → :func:`simulate`."""
    system = args.config or args.system
    if not system:
        raise InputError("name a system with --system (e.g. --system cxl) or give --config FILE")
    sets = parse_set(args.set)
    return simulate(system, workload=args.workload, batches=args.batches, seed=args.seed,
                    warmup=getattr(args, "warmup", None), sets=sets, trace=True)
