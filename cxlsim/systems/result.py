"""What one simulation measured: :class:`RunResult`.

Contract: a :class:`RunResult` holds, for the measured batches (warm-up excluded), each batch's time
(ns), its Figure-11 critical-path breakdown (ns by category, summing to the batch time), its
read-after-write stall (ns), the relaxed MLP log gap, each measured batch's typed
:class:`~cxlsim.systems.activity.BatchActivity`, the executor (records and trace) and the machine
that timed it (an analytic model, ``tpu-ps``, has neither: its activity records what its devices did
and its ``timeline`` the intervals it drew). ``energy`` is the energy per measured batch when a caller priced it
(:func:`cxlsim.api.simulate` does; :func:`cxlsim.systems.run.simulate` does not), ``None`` otherwise.
:meth:`RunResult.to_dict` is the stable ``cxlsim run --json`` document (docs/commands.md); beside the counts
(``batches``, ``warmup_batches``) it states how they were picked (``batches_mode``: ``auto`` or
``fixed``, ``sampling``: the rule) and the 95 % confidence interval of the mean batch time
(``batch_time_ci95_ms``: its half-width; ``batch_time_ci95_fraction``: relative to the mean;
null with one batch), :mod:`cxlsim.systems.sampling`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cxlsim.engine.executor import Executor
from cxlsim.engine.trace import TraceRecorder
from cxlsim.errors import InputError
from cxlsim.provenance import provenance
from cxlsim.systems.activity import BatchActivity
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.critical_path import CATEGORIES
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.provision import provisioned_modules
from cxlsim.systems.sampling import Sampling, rule_for
from cxlsim.systems.sampling import summary as sampling_summary
from cxlsim.workloads.catalog import Workload

if TYPE_CHECKING:
    from cxlsim.systems.machine import TrainingMachine


@dataclass
class RunResult:
    """One simulation: per-batch times and breakdowns over the measured batches, and the trace."""

    config: SystemConfig
    workload: Workload
    batch_times_ns: np.ndarray
    breakdowns_ns: list[dict[str, float]]
    raw_stall_ns: np.ndarray
    mlp_log_gap_batches: int
    executor: Executor | None  # None for an analytic model (tpu-ps)
    machine: TrainingMachine | None  # None for an analytic model
    extra: dict[str, Any] = field(default_factory=dict)  # the model's own figures (to_dict's top-level keys)
    activity: list[BatchActivity] = field(default_factory=list)  # per measured batch
    devices: DeviceGraph | None = None  # the models that timed the run
    energy: dict[str, Any] | None = None  # {"total": J, "by_component": {...}} per measured batch
    sampling: Sampling | None = None  # how the batch counts were picked (None: the config's fixed counts)
    timeline: TraceRecorder | None = None  # an analytic model's drawn intervals (op-graph runs: the executor's trace)
    #: per measured batch, the ops on its critical path in time order (the gates the Figure-11
    #: breakdown charged, :func:`cxlsim.systems.critical_path.breakdown`; empty for an analytic model)
    critical_paths: list[list[tuple[str, int]]] = field(default_factory=list)

    @property
    def measured(self) -> range:
        """Batch numbers of the measured batches."""
        cfg = self.config
        return range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches)

    @property
    def trace(self) -> TraceRecorder:
        """Busy intervals by lane: the executor's, or those an analytic model drew (``timeline``)."""
        trace = self.executor.trace if self.executor is not None else self.timeline
        if trace is None:
            raise InputError(f"system {self.config.name!r} (model {self.config.model}) drew no timeline")
        return trace

    @property
    def batch_time_ms(self) -> dict[str, float]:
        t = self.batch_times_ns / 1e6
        return {"mean": float(t.mean()), "p50": float(np.percentile(t, 50)), "p99": float(np.percentile(t, 99))}

    @property
    def breakdown_ms(self) -> dict[str, float]:
        keys = list(CATEGORIES) + (["idle"] if any(b["idle"] > 1e-6 for b in self.breakdowns_ns) else [])
        return {k: float(np.mean([b[k] for b in self.breakdowns_ns]) / 1e6) for k in keys}

    @property
    def accelerators(self) -> int:
        """Accelerators training data-parallel, each on ``batch_size`` samples per batch (GPUs,
        or the tpu-ps model's chips: ``topology.gpus_count`` either way)."""
        return self.config.topology.gpus_count

    @property
    def samples_per_batch(self) -> int:
        """Samples one batch trains over the whole system (every accelerator's batch)."""
        return self.workload.params.batch_size * self.accelerators

    @property
    def samples_per_J(self) -> float | None:
        """Samples trained per joule of the whole system (None until the energy is priced)."""
        if not self.energy or not self.energy["total"]:
            return None
        return float(self.samples_per_batch / self.energy["total"])

    def utilisation(self) -> dict[str, float]:
        """Busy share of the measured batches' wall time of every resource, highest first: each
        lane (GPUs, near-data and checkpointing logic, the host, every link direction a transfer
        held), its busy intervals clipped to the measured span; and each memory device's media
        (the measured batches' media bytes at its per-module read and write bandwidth, over its
        modules: an estimate of bank time, which the batches' attribution can push past 1). A
        symmetry-reduced run adds the trunks it loads analytically
        (:meth:`~cxlsim.systems.machine.TrainingMachine.trunk_busy_ns`). An analytic model (no
        executor): each lane's busy time in the measured batches' activity."""
        if not self.activity:
            return {}
        t0 = self.batch_span(self.measured.start)[0]
        t1 = self.batch_span(self.measured.stop - 1)[1]
        wall = t1 - t0
        busy: dict[str, float] = {}
        if self.executor is None:
            for a in self.activity:
                for lane, ns in a.lane_busy_ns.items():
                    busy[lane] = busy.get(lane, 0.0) + ns
            return dict(sorted(((k, v / wall) for k, v in busy.items()), key=lambda kv: -kv[1]))
        for rec in self.executor.records.values():
            if rec.op.lane == "batch" or rec.end_ns != rec.end_ns:
                continue
            ns = max(0.0, min(rec.end_ns, t1) - max(rec.start_ns, t0))
            for lane in (rec.op.lane, *rec.op.holds):
                busy[lane] = busy.get(lane, 0.0) + ns
        trunks = getattr(self.machine, "trunk_busy_ns", dict)()  # a reduced run's analytic trunks
        for lane, ns in trunks.items():
            busy[lane] = busy.get(lane, 0.0) + ns * len(self.activity)
        for a in self.activity:
            for key, tr in a.media.items():
                mem = self.machine.memories.get(key)
                if mem is None:
                    continue
                p = mem.model.params
                ns = ((tr.media_read_B / p.read_bw_GBps + tr.media_write_B / p.write_bw_GBps)
                      / (mem.modules * mem.devices))
                busy[f"media.{key}"] = busy.get(f"media.{key}", 0.0) + ns
        return dict(sorted(((k, v / wall) for k, v in busy.items()), key=lambda kv: -kv[1]))

    @property
    def host_llc(self) -> dict[str, float] | None:
        """The host's last-level cache over the measured batches (None where the run has none:
        the host runs no embedding operator, or its CPU preset's ``llc_capacity_B`` is 0):
        ``hit_fraction`` of the lines every op touched through it (lookup, update, a host
        checkpoint agent's reads), ``lookup_hit_fraction`` of the embedding lookup's, and the
        dirty bytes it wrote back to the memory below per batch (``writeback_MB_per_batch``)."""
        if self.machine is None or getattr(self.machine, "llc", None) is None:
            return None
        lines = sum(a.llc_lines for a in self.activity)
        look = sum(a.llc_lookup_lines for a in self.activity)
        return {
            "hit_fraction": float(sum(a.llc_hits for a in self.activity) / lines) if lines else None,
            "lookup_hit_fraction": float(sum(a.llc_lookup_hits for a in self.activity) / look) if look else None,
            "writeback_MB_per_batch": float(sum(a.llc_writeback_B for a in self.activity) / 1e6
                                            / max(1, len(self.activity))),
        }

    @property
    def media_accesses_per_batch(self) -> float | None:
        """Requests the memory devices' media models served per measured batch, every memory
        together (None where no batch served any: the analytic tpu-ps model)."""
        if not any(a.media for a in self.activity):
            return None
        return float(sum(tr.accesses for a in self.activity for tr in a.media.values()) / len(self.activity))

    @property
    def table_tiers(self) -> dict[str, float] | None:
        """The share of the table memory's accesses each tier served, by role, over the measured
        batches (``pipeline.table_placement``: host DRAM, ``host_dram``, and the table memory); None
        for an analytic model. With ``single`` placement, the table memory alone (1.0); a table
        memory that also holds the checkpoint counts the checkpoint's accesses too."""
        p = self.config.pipeline
        if p is None or not any(a.media for a in self.activity):
            return None
        roles = ([] if p.table_placement == "single" else ["host_dram"]) + [p.tables_on]
        n = {r: sum(tr.accesses for a in self.activity for k, tr in a.media.items() if k.split(".")[0] == r)
             for r in roles}
        total = sum(n.values())
        return {r: (v / total if total else 0.0) for r, v in n.items()}

    def batch_span(self, n: int) -> tuple[float, float]:
        """Start and end (ns) of batch ``n`` (absolute batch number: warm-up included where an
        executor ran the batches, else a measured batch, from its activity)."""
        if self.executor is None:
            i = n - self.measured.start
            if not 0 <= i < len(self.activity):
                raise IndexError(f"batch {n} was not measured")
            a = self.activity[i]
            return a.start_ns, a.start_ns + a.wall_ns
        r = self.executor.records
        return r[("begin", n)].start_ns, r[("begin", n + 1)].start_ns

    @property
    def sampling_rule(self) -> Sampling:
        """How the batch counts were picked (a run's own rule; else the config's fixed counts), with
        the workload's batch-time correlation and the schedule's period (:func:`rule_for`)."""
        return self.sampling or rule_for(self.config, self.workload)

    def to_dict(self) -> dict[str, Any]:
        """The ``cxlsim run --json`` document (stable keys, docs/commands.md); ``extra``'s keys are the
        model's own and come last (``symmetry``; tpu-ps: ``tpu_ps``, and ``devices`` as its chips
        and parameter servers in place of GPUs and CXL-MEMs)."""
        cfg = self.config
        bt = self.batch_time_ms
        resolved = cfg.resolved()
        resolved["workload_params"] = self.workload.params.as_dict()
        util = self.utilisation()
        mems = self.machine.system_mems if self.machine is not None else 0  # an analytic model: no memory devices
        resolved["provisioned_modules"] = provisioned_modules(self.devices, self.workload, mems)
        return {
            "system": cfg.name,
            "workload": self.workload.name,
            "platform": cfg.platform,
            "batches": int(self.batch_times_ns.size),
            "batch_time_ms": bt,
            **sampling_summary(self.batch_times_ns, self.sampling_rule, cfg.warmup_batches),
            "breakdown_ms": self.breakdown_ms,
            "raw_stall_ms": float(self.raw_stall_ns.mean() / 1e6),
            "mlp_log_gap_batches": int(self.mlp_log_gap_batches),
            "accelerators": self.accelerators,
            "throughput_samples_per_s": float(self.samples_per_batch / (bt["mean"] / 1e3)),
            "throughput_samples_per_s_per_accelerator": float(self.samples_per_batch / self.accelerators
                                                              / (bt["mean"] / 1e3)),
            "energy_J_per_batch": self.energy,
            "samples_per_J": self.samples_per_J,
            "devices": {"gpus": self.accelerators, "cxl_mems": self.config.topology.cxl_mems_count},
            "utilisation": util,
            "media_accesses_per_batch": self.media_accesses_per_batch,
            "host_llc": self.host_llc,
            "table_tiers": self.table_tiers,
            "bottleneck": next(({"resource": k, "utilisation": v} for k, v in util.items()), None),
            **self.extra,
            "config": resolved,
            "seed": cfg.seed,
            **provenance(),
        }
