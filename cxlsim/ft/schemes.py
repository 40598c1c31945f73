"""Failure-tolerance schemes, each a configuration (``kind`` + parameters) of one contract.

Contract of a scheme (times in s, sizes in bytes; see :mod:`cxlsim.ft.simulator`):

- ``interval_s``: work between checkpoints (``math.inf``: none); ``slowdown`` σ ≥ 1: steady
  wall/work ratio of training with the scheme on; ``handles_notices``: acts on preemption notices;
- ``checkpoint(state) -> CheckpointCost``; ``on_valid(state)`` when it becomes durable;
  ``on_abort(state)`` when it is cancelled (stall interrupted or background write lost);
- ``recover(state, event) -> Recovery``;
- ``peak_capacity_bytes``, ``throughput_during_recovery`` and ``details()`` (scheme figures).

- class attributes: ``SCHEMA`` (its parameters, a :class:`~cxlsim.config.params.Schema`: part of
  the scenario file format) and ``INTERVAL_KEY`` (the parameter that sets its checkpoint interval
  in hours, if any: the scenario's event bound counts its checkpoints).

Kinds are the names of the entry-point group ``cxlsim.ft_schemes``
(:data:`~cxlsim.ft.scenario.FT_SCHEMES`); a scenario's ``schemes:`` list picks kinds and sets
parameters. The built-ins are declared in cxlsim's pyproject.toml like a third party's: full,
partial, CPR, ECRec and TPU epochs here; Check-N-Run and the undo log in the homes of the
persistence schemes they scale up (:mod:`cxlsim.axes.persistence.cnr.ft`,
:mod:`cxlsim.axes.persistence.undo.ft`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.ft import formulas as F
from cxlsim.ft.access import AccessProcess
from cxlsim.ft.access import from_scenario as access_from_scenario
from cxlsim.ft.failures import HOUR_S, Event
from cxlsim.ft.scenario import FT_SCHEMES, Scenario
from cxlsim.ft.simulator import CheckpointCost, Recovery, RunState
from cxlsim.ft.storage import Storage
from cxlsim.ft.storage import from_scenario as storage_from_scenario
from cxlsim.rng import stream
from cxlsim.units import GB

#: CPR-MFU counter size per row (reference: 4-byte counters).
MFU_COUNTER_B = 4


# ============================================================================ context
@dataclass
class Context:
    """What schemes share in one scenario run."""

    scenario: Scenario
    storage: Storage
    t_total_s: float
    t_fail_s: float
    expected_resumes: float
    _access: AccessProcess | None = None

    @property
    def access(self) -> AccessProcess:
        if self._access is None:
            self._access = access_from_scenario(self.scenario.access, self.scenario.seed)
        return self._access

    @property
    def m(self) -> ParamSet:
        return self.scenario.model

    @property
    def emb_state_B(self) -> float:
        """Embedding rows plus their optimizer state."""
        return self.m.embedding_GB * GB * (1.0 + self.m.optimizer_state_factor)

    @property
    def dense_state_B(self) -> float:
        return self.m.dense_GB * GB * (1.0 + self.m.optimizer_state_factor)

    @property
    def model_B(self) -> float:
        return self.emb_state_B + self.dense_state_B

    @property
    def rows_total(self) -> float:
        return self.m.embedding_GB * GB / self.m.row_B

    @property
    def o_res_s(self) -> float:
        return self.scenario.failures.reschedule_s

    def reschedule_s(self, ev: Event) -> float:
        return ev.duration_s if ev.kind == "preemption" else self.o_res_s


def build_context(sc: Scenario) -> Context:
    f, it = sc.failures, sc.interruptions
    t_total = sc.job.duration_h * HOUR_S
    if f.process_policy == "uniform-count":
        t_fail = t_total / f.count if f.count else math.inf
        failures = float(f.count)
    elif f.process_policy == "none":
        t_fail, failures = math.inf, 0.0
    else:
        t_fail = f.mtbf_h * HOUR_S
        failures = t_total / t_fail
    resumes = failures + len(sc.trace)
    for mean_h in (it.preemption_mean_interval_h, it.temporary_error_mean_interval_h):
        if mean_h > 0:
            resumes += sc.job.duration_h / mean_h
    if not math.isfinite(t_fail):
        t_fail = t_total / max(resumes, 1.0) if resumes else 1e12
    return Context(sc, storage_from_scenario(sc.storage, sc.path), t_total, t_fail, resumes)


# ============================================================================ base
class Scheme:
    """Shared behaviour: full-model checkpoints, full recovery (roll back to the last valid one)."""

    kind = ""
    SCHEMA = Schema("ft.scheme", ())
    INTERVAL_KEY: str | None = None
    handles_notices = False

    def __init__(self, label: str, p: ParamSet, ctx: Context) -> None:
        self.label, self.p, self.ctx = label, p, ctx
        self.interval_s = math.inf
        self.slowdown = 1.0
        self.peak_capacity_bytes = 0.0
        self.throughput_during_recovery = 0.0
        self.recovery_reads_B: list[float] = []

    # checkpoints
    def checkpoint(self, st: RunState) -> CheckpointCost:
        b = self.ctx.model_B
        self.peak_capacity_bytes = max(self.peak_capacity_bytes, 2 * b if st.has_valid_checkpoint else b)
        return CheckpointCost(self.ctx.storage.storage_write_s(b), 0.0, b)

    def on_valid(self, st: RunState) -> None:
        pass

    def on_abort(self, st: RunState) -> None:
        pass

    # recovery
    def recover_full(self, st: RunState, ev: Event, read_B: float | None = None) -> Recovery:
        if not st.has_valid_checkpoint:
            return Recovery(st.work_s, self.ctx.reschedule_s(ev), 0.0)
        read_B = self.ctx.model_B if read_B is None else read_B
        self.recovery_reads_B.append(read_B)
        return Recovery(st.work_s - st.last_valid_work_s, self.ctx.reschedule_s(ev),
                        self.ctx.storage.storage_read_s(read_B))

    def recover(self, st: RunState, ev: Event) -> Recovery:
        return self.recover_full(st, ev)

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if math.isfinite(self.interval_s):
            out["interval_h"] = self.interval_s / HOUR_S
        return out

    def summary(self) -> str:
        """One short line for the table."""
        return f"T_save {self.interval_s / HOUR_S:.3g} h" if math.isfinite(self.interval_s) else ""


#: A checkpoint interval of ``full`` and ``partial`` (0: Eq. 1's optimum).
INTERVAL = Param("interval_h", float, "checkpoint interval (0 = optimal sqrt(2·O_save·T_fail))", default=0.0, minimum=0)


def _o_save(ctx: Context) -> float:
    return ctx.storage.storage_write_s(ctx.model_B)


# ============================================================================ full / partial
class Full(Scheme):
    """Full recovery: every node reloads the last checkpoint and recomputes lost work."""

    kind = "full"
    SCHEMA = Schema("ft.scheme.full", (INTERVAL,))
    INTERVAL_KEY = "interval_h"

    def __init__(self, label, p, ctx):
        super().__init__(label, p, ctx)
        self.interval_s = p.interval_h * HOUR_S if p.interval_h > 0 else F.optimal_full_interval_s(_o_save(ctx), ctx.t_fail_s)

    def details(self):
        return {**super().details(), "o_save_s": _o_save(self.ctx),
                "o_load_s": self.ctx.storage.storage_read_s(self.ctx.model_B),
                "optimal_interval_h": F.optimal_full_interval_s(_o_save(self.ctx), self.ctx.t_fail_s) / HOUR_S}


class Partial(Scheme):
    """Partial recovery: only the failed shards reload; lost updates (PLS) instead of lost time.
    Whole-job events (preemption, temporary error, every shard failed) need full recovery."""

    kind = "partial"
    SCHEMA = Schema("ft.scheme.partial", (INTERVAL,))
    INTERVAL_KEY = "interval_h"

    def __init__(self, label, p, ctx):
        super().__init__(label, p, ctx)
        self.interval_s = p.interval_h * HOUR_S if p.interval_h > 0 else F.optimal_full_interval_s(_o_save(ctx), ctx.t_fail_s)

    def _whole(self, ev: Event) -> bool:
        return ev.whole_job or len(ev.shards) >= self.ctx.m.emb_shards_count

    def recover(self, st, ev):
        if self._whole(ev):
            return self.recover_full(st, ev)
        n = self.ctx.m.emb_shards_count
        last = st.last_valid_work_s if st.has_valid_checkpoint else 0.0
        pls = F.pls_increment(st.work_s, last, st.total_work_s, n, len(ev.shards))
        read_B = self.ctx.emb_state_B * len(ev.shards) / n
        self.recovery_reads_B.append(read_B)
        return Recovery(0.0, self.ctx.reschedule_s(ev), self.ctx.storage.storage_read_s(read_B) if st.has_valid_checkpoint else 0.0, pls)

    def details(self):
        n = self.ctx.m.emb_shards_count
        return {**super().details(), "expected_pls": F.expected_pls(self.interval_s, self.ctx.t_fail_s, n)
                * max(1, round(self.ctx.scenario.failures.shards_fraction * n))}


# ============================================================================ CPR
class Cpr(Partial):
    """CPR: interval from a target PLS, benefit check against full recovery, prioritised saving."""

    kind = "cpr"
    INTERVAL_KEY = None  # its interval follows from a target PLS
    SCHEMA = Schema("ft.scheme.cpr", (
        Param("target_pls_fraction", float, "target portion of lost samples", default=0.1, minimum=0, maximum=1,
              exclusive_minimum=True),
        Param("priority_policy", str, "rows saved first", default="none", choices=("none", "mfu", "ssu", "scar")),
        Param("r_fraction", float, "save r·N rows every r·T_save (prioritised policies)", default=0.125,
              minimum=0, maximum=1, exclusive_minimum=True),
        Param("ssu_period_count", int, "SSU keeps every n-th access", default=2, minimum=1),
        Param("scar_update_sigma", float, "log-normal spread of per-row update size (SCAR ranks by change)",
              default=0.2, minimum=0),
    ))

    def __init__(self, label, p, ctx):
        Scheme.__init__(self, label, p, ctx)
        n = ctx.m.emb_shards_count
        n_f = min(n, max(1, round(ctx.scenario.failures.shards_fraction * n)))
        # a failure wiping n_f of N_emb shards is one shard of an (N_emb/n_f)-shard model: the
        # reference's one-shard formulas apply with N_emb/n_f (exactly the reference for n_f = 1)
        self.decision = F.cpr_decision(
            ctx.t_total_s, ctx.t_fail_s, _o_save(ctx), ctx.storage.storage_read_s(ctx.model_B),
            ctx.storage.storage_read_s(n_f / n * ctx.emb_state_B), ctx.o_res_s, p.target_pls_fraction, n / n_f)
        self.partial = self.decision["recovery"] == "partial"
        self.policy = p.priority_policy if self.partial else "none"
        base = self.decision["interval_s"]
        self.r = p.r_fraction if self.policy != "none" else 1.0
        self.interval_s = self.r * base
        if self.policy != "none":
            acc = ctx.access
            self.rows = acc.rows
            self.since = np.zeros(acc.rows)          # accesses since each row was last saved
            self.change = np.zeros(acc.rows)         # SCAR: accumulated update magnitude
            self.ssu: list[int] = []                 # SSU: duplicate-free sub-sampled row list
            self.rng = stream(ctx.scenario.seed, f"ft.cpr.{label}")
            self.update_scale = np.exp(stream(ctx.scenario.seed, "ft.cpr.update-scale").normal(0.0, p.scar_update_sigma, acc.rows))
            self.shard_of = np.arange(acc.rows) % n
            self.slot = 0

    def checkpoint(self, st):
        if self.policy == "none":
            return super().checkpoint(st)
        acc = self.ctx.access
        self.slot = int(round(st.work_s / self.interval_s))
        counts = acc.counts(self.interval_s, self.slot)
        self.since += counts
        self.change += counts * self.update_scale
        keep = max(1, int(self.r * self.rows))
        if self.policy == "mfu":
            chosen = np.argpartition(-self.since, keep - 1)[:keep]
        elif self.policy == "scar":
            chosen = np.argpartition(-self.change, keep - 1)[:keep]
        else:  # ssu: every ssu_period-th access enters the list; overflow drops random entries
            sampled = acc.thinned_rows(self.interval_s, self.slot, self.p.ssu_period_count, f"ssu.{self.label}")
            pool = np.union1d(np.asarray(self.ssu, dtype=np.int64), sampled)
            if pool.size > keep:
                pool = self.rng.choice(pool, size=keep, replace=False)
            chosen, self.ssu = pool, []
        self.since[chosen] = 0.0
        self.change[chosen] = 0.0
        b = self.r * self.ctx.emb_state_B + self.ctx.dense_state_B
        self.peak_capacity_bytes = max(self.peak_capacity_bytes, self.ctx.model_B + b)
        return CheckpointCost(self.ctx.storage.storage_write_s(b), 0.0, b)

    def recover(self, st, ev):
        if not self.partial:
            return self.recover_full(st, ev)
        if self.policy == "none" or self._whole(ev):
            rec = super().recover(st, ev)
            if self.policy != "none":
                self.since[:] = 0.0
                self.change[:] = 0.0
            return rec
        acc = self.ctx.access
        slot_next = int(round(st.last_valid_work_s / self.interval_s)) + 1 if st.has_valid_checkpoint else 1
        phi = (st.work_s - (slot_next - 1) * self.interval_s) / self.interval_s
        partial_counts = phi * acc.counts(self.interval_s, slot_next)
        failed = np.isin(self.shard_of, np.asarray(ev.shards))
        lost_accesses = float((self.since[failed] + partial_counts[failed]).sum())
        pls = lost_accesses / (acc.accesses_per_s * st.total_work_s)
        # failed rows revert to their saved values: their pre-failure accesses are already lost
        self.since[failed] = -partial_counts[failed]
        self.change[failed] = -partial_counts[failed] * self.update_scale[failed]
        n = self.ctx.m.emb_shards_count
        read_B = self.ctx.emb_state_B * len(ev.shards) / n
        self.recovery_reads_B.append(read_B)
        return Recovery(0.0, self.ctx.reschedule_s(ev), self.ctx.storage.storage_read_s(read_B), pls)

    def details(self):
        d = {k: (v / HOUR_S if k.endswith("_s") and "overhead" not in k else v) for k, v in self.decision.items()}
        d = {(k[:-2] + "_h" if k.endswith("_s") and "overhead" not in k else k): v for k, v in d.items()}
        out = {"recovery": self.decision["recovery"], "interval_h": self.interval_s / HOUR_S,
               "priority_policy": self.policy, "r_fraction": self.r, **d}
        n = self.ctx.m.emb_shards_count
        if self.partial:
            n_f = min(n, max(1, round(self.ctx.scenario.failures.shards_fraction * n)))
            out["expected_pls"] = F.expected_pls(self.decision["interval_s"], self.ctx.t_fail_s, n / n_f)
        row_B = self.ctx.m.row_B
        out["tracking_memory_fraction"] = {"none": 0.0, "mfu": MFU_COUNTER_B / row_B,
                                           "ssu": self.r * MFU_COUNTER_B / row_B, "scar": 1.0}[self.policy]
        return out

    def summary(self):
        s = f"{self.decision['recovery']}, T_save {self.interval_s / HOUR_S:.3g} h"
        return s + (f", {self.policy} r={self.r:g}" if self.policy != "none" else "")


# ============================================================================ ECRec
class EcRec(Scheme):
    """ECRec: k+1 erasure-coded embeddings (rotated sum parity), replicated dense parameters,
    difference propagation, degraded reads and background reconstruction; optional backup
    checkpoints for events beyond one lost server per stripe."""

    kind = "ecrec"
    SCHEMA = Schema("ft.scheme.ecrec", (
        Param("k_count", int, "data units per parity unit", default=2, minimum=1),
        Param("servers_count", int, "parameter servers", default=5, minimum=2),
        Param("nic_GBps", float, "server NIC bandwidth (25 Gbps = 3.125 GB/s)", default=3.125, minimum=0, exclusive_minimum=True),
        Param("unique_rows_per_step_count", int, "distinct rows a step updates (8,900 per 2048-sample batch)",
              default=8900, minimum=0),
        Param("overlap_fraction", float, "share of the extra traffic hidden behind compute", default=0.0, minimum=0, maximum=1),
        Param("two_phase_commit", bool, "per-iteration two-phase commit", default=False),
        Param("rtt_us", float, "network round trip added by the commit", default=100.0, minimum=0),
        Param("reconstruction_share_fraction", float, "NIC share given to background reconstruction",
              default=0.5, minimum=0, maximum=1, exclusive_minimum=True),
        Param("backup_interval_h", float, "backup checkpoints for unrecoverable events (0 = none)", default=0.0, minimum=0),
    ), checks=(lambda v: ("k_count", f"k + 1 must not exceed servers_count ({v['servers_count']})")
               if v["k_count"] + 1 > v["servers_count"] else None,))
    INTERVAL_KEY = "backup_interval_h"

    def __init__(self, label, p, ctx):
        super().__init__(label, p, ctx)
        k, n = p.k_count, p.servers_count
        self.k, self.n = k, n
        self.interval_s = p.backup_interval_h * HOUR_S if p.backup_interval_h > 0 else math.inf
        nic_Bps = p.nic_GBps * GB
        base_update_B = p.unique_rows_per_step_count * ctx.m.row_B
        extra_B = (F.ecrec_update_traffic_factor(k) - 1.0) * base_update_B + ctx.m.dense_GB * GB
        self.extra_per_step_B = extra_B
        exposed = extra_B / (n * nic_Bps) * (1.0 - p.overlap_fraction)
        if p.two_phase_commit:
            exposed += p.rtt_us * 1e-6
        self.exposed_per_step_s = exposed
        self.slowdown = 1.0 + exposed / ctx.scenario.job.step_s
        self.memory_factor = F.ecrec_memory_factor(k)
        self.coded_B = ctx.emb_state_B * self.memory_factor
        self.redundancy_B = ctx.emb_state_B / k + ctx.dense_state_B
        lost_server_B = self.coded_B / n + ctx.dense_state_B
        self.rebuild_s = k * lost_server_B / (nic_Bps * p.reconstruction_share_fraction)
        self.throughput_during_recovery = F.ecrec_degraded_throughput(n, k) * max(
            0.0, 1.0 - p.reconstruction_share_fraction * k / (n - 1))
        self.peak_capacity_bytes = self.redundancy_B
        self.steps = ctx.t_total_s / ctx.scenario.job.step_s
        self.fallbacks = 0

    def checkpoint(self, st):
        cost = super().checkpoint(st)
        self.peak_capacity_bytes = max(self.peak_capacity_bytes, self.redundancy_B + 2 * self.ctx.model_B)
        return cost

    def recover(self, st, ev):
        failed_servers = max(1, round(len(ev.shards) / self.ctx.m.emb_shards_count * self.n))
        if ev.whole_job or failed_servers > 1 or st.degraded_until_s > st.now_s:
            self.fallbacks += 1
            return self.recover_full(st, ev)
        # no pause: the replacement starts (O_res) and rebuilds set by set under locks while
        # degraded reads serve the lost rows
        return Recovery(0.0, 0.0, 0.0, 0.0, self.ctx.reschedule_s(ev) + self.rebuild_s,
                        self.throughput_during_recovery)

    def details(self):
        return {
            **super().details(), "k": self.k, "servers": self.n, "memory_factor": self.memory_factor,
            "coded_memory_bytes": self.coded_B, "dense_replicas": 2,
            "update_traffic_factor": F.ecrec_update_traffic_factor(self.k),
            "extra_traffic_per_step_bytes": self.extra_per_step_B,
            "exposed_per_step_ms": self.exposed_per_step_s * 1e3,
            "two_phase_commit": self.p.two_phase_commit,
            "rebuild_s": self.rebuild_s, "fallbacks_to_backup": self.fallbacks,
            "fault_tolerance_traffic_bytes": self.extra_per_step_B * self.steps,
        }

    def summary(self):
        return f"k={self.k}, mem x{self.memory_factor:.3g}, rebuild {self.rebuild_s / 60:.3g} min"


# ============================================================================ TPU epochs
class TpuEpoch(Scheme):
    """TPU/PS interruptions: drain + checkpoint at every epoch end; a failure retrains the epoch;
    a preemption notice ends the epoch early (kept if the checkpoint commits in time)."""

    kind = "tpu-epoch"
    SCHEMA = Schema("ft.scheme.tpu-epoch", (
        Param("epoch_h", float, "epoch length (a checkpoint at each end)", default=1.0, minimum=0, exclusive_minimum=True),
        Param("drain_s", float, "time to drain in-flight work before the checkpoint", default=60.0, minimum=0),
        Param("use_notices", bool, "end the epoch early on a preemption notice", default=True),
    ))
    INTERVAL_KEY = "epoch_h"

    def __init__(self, label, p, ctx):
        super().__init__(label, p, ctx)
        self.interval_s = p.epoch_h * HOUR_S
        self.handles_notices = p.use_notices
        self.early = 0

    def checkpoint(self, st):
        cost = super().checkpoint(st)
        if abs(st.work_s % self.interval_s) > 1e-6 and abs(st.work_s % self.interval_s - self.interval_s) > 1e-6:
            self.early += 1
        return CheckpointCost(self.p.drain_s + cost.stall_s, 0.0, cost.bytes_written)

    def details(self):
        return {**super().details(), "drain_s": self.p.drain_s, "uses_notices": self.handles_notices,
                "early_checkpoints": self.early}

    def summary(self):
        return f"epoch {self.interval_s / HOUR_S:.3g} h" + (", notices" if self.handles_notices else "")


# ============================================================================ building
def build_scheme(label: str, kind: str, params: ParamSet, ctx: Context) -> Scheme:
    """Scheme ``kind`` (a name of :data:`~cxlsim.ft.scenario.FT_SCHEMES`) labelled ``label``."""
    return FT_SCHEMES.get(kind)(label, params, ctx)
