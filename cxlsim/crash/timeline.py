"""When each protocol step runs: the timing model's op spans for the functional run's batches.

The spans come from :func:`cxlsim.simulate` on the same system configuration and the same scaled
workload and seed (so the timing model serves exactly the index streams the functional run uses),
without warm-up. With several CXL-MEMs (docs/design.md#scale-out) the spans keep the executor's
names (device ``d``'s steps are ``<step>.<d>``, device 0 keeps the plain name) and a batch's update
is complete when every device's update has ended. A step's writes are spread over its span in issue
order (:func:`spread_writes`): data writes first, each acknowledged ``write_latency_ns`` after
issue; then, after a fence (every data write acknowledged), the flag that covers them, acknowledged
at the step's end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.systems import axes
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.run import simulate

#: The timing model reports the relaxed MLP log gap once per batch, at the end of the batch's MLP
#: logging: a crash earlier in the batch still sees the previous MLP log (one batch older), and the
#: embedding log of the next batch may already be flagged (the relaxed lookup runs it a batch early),
#: so the allowed gap is the reported maximum plus 2.
RELAXED_GAP_SLACK = 2

#: Ops whose spans the crash points and step labels use: every shared dataflow step but the
#: all-reduce, and the persistence scheme's own (its ``STEPS``).
STEP_NAMES = ("begin", "config", "b_fwd", "lookup", "correction", "pooled", "t_mlp", "grads", "b_bwd",
              "update", "mlp_opt")


@dataclass
class Timeline:
    """Op spans (ns) of batches 0 … N−1 and what the persistence protocol needs from them."""

    spans: dict[tuple[str, int], tuple[float, float]]
    n_batches: int
    update_end: np.ndarray  # (N,) end of each batch's embedding update
    redo_end: np.ndarray | None  # (N,) end of each redo record (commit flag acknowledged)
    mlp_fraction: list[tuple[float, float]] | None  # relaxed MLP log: (done before, done after) per batch
    mlp_gap_bound: int  # allowed MLP log gap, in batches (0 unless relaxed; see from_simulation)
    mems: int = 1  # CXL-MEMs (memory devices), each with its own steps and logs
    #: relaxed MLP log of CXL-MEMs 1 … mems−1 (device 0's is ``mlp_fraction``)
    more_mlp_fraction: tuple[list[tuple[float, float]], ...] = ()
    #: (N,) when each batch completed: every device's update and every GPU's MLP optimizer step
    #: ended (None: at its update's end)
    batch_end: np.ndarray | None = None
    #: the device models that timed the run (None: a timeline pinned by hand)
    devices: DeviceGraph | None = None

    def span(self, name: str, n: int, d: int = 0) -> tuple[float, float]:
        """Span of step ``name`` of batch ``n`` on memory device ``d``."""
        return self.spans[(name + sfx(d), n)]

    def mlp_fractions(self, d: int) -> list[tuple[float, float]] | None:
        """Relaxed MLP log of device ``d``: (fraction done before, after) its logging, per batch."""
        return self.mlp_fraction if d == 0 else self.more_mlp_fraction[d - 1]

    def has(self, name: str, n: int) -> bool:
        return (name, n) in self.spans

    def completed_updates(self, t: float) -> int:
        """The last batch whose update ended by ``t`` on every device (all its writes durable; −1
        if none)."""
        return int(np.searchsorted(self.update_end, t, side="right")) - 1

    def completed_batches(self, t: float) -> int:
        """The last batch that completed by ``t``: its update (every device) and its MLP optimizer
        step (every GPU) ended (−1 if none). Without the relaxed MLP log the optimizer step waits
        for the batch's MLP logs, so a batch whose update ended before its MLP log was flagged is not
        complete (docs/design.md#batch-aware-undo-log: the update does not wait for the MLP log)."""
        end = self.update_end if self.batch_end is None else self.batch_end
        return int(np.searchsorted(end, t, side="right")) - 1

    def committed_records(self, t: float) -> int:
        """The last batch whose redo record was committed by ``t`` (−1 if none)."""
        if self.redo_end is None:
            return -1
        return int(np.searchsorted(self.redo_end, t, side="right")) - 1

    def active(self, t: float) -> list[str]:
        """Labels of the ops running at ``t`` (started at or before, ending after)."""
        return [f"{k[0]} {k[1]}" for k, (s, e) in sorted(self.spans.items(), key=lambda kv: kv[1])
                if s <= t < e or s == e == t]

    @property
    def end_ns(self) -> float:
        return max(e for _, e in self.spans.values())


def from_simulation(cfg: SystemConfig, workload_sets: dict, n_batches: int, seed: int) -> Timeline:
    """Simulate ``cfg`` (its workload with ``workload_sets``) for ``n_batches`` batches, no warm-up."""
    res = simulate(cfg, batches=n_batches, warmup=0, seed=seed, workload_sets=workload_sets, trace=False)
    rec = res.executor.records
    p = cfg.pipeline
    scheme = axes.of(p, "persistence")
    commit = scheme.COMMIT_STEP
    names = set(STEP_NAMES) | set(scheme.STEPS)
    spans = {k: (r.start_ns, r.end_ns) for k, r in rec.items() if k[1] < n_batches and k[0].split(".")[0] in names}
    mems = res.machine.mems

    def last_end(step: str) -> np.ndarray:  # per batch, the latest end over the devices
        return np.array([max(rec[(step + sfx(d), n)].end_ns for d in range(mems)) for n in range(n_batches)])

    update_end = last_end("update")
    gpus = getattr(res.machine, "gpus", 1)
    opt_end = np.array([max(rec[("mlp_opt" + sfx(g), n)].end_ns for g in range(gpus)) for n in range(n_batches)])
    batch_end = np.maximum.accumulate(np.maximum(update_end, opt_end))
    redo_end = last_end(commit) if commit is not None else None
    fractions: list = [None]
    gap = 0
    if scheme.spreads_mlp_log(p):
        fractions = [relaxed_mlp_fractions(res, n_batches, d) for d in range(mems)]
        gaps = [a.mlp_log_gap_batches for a in res.activity if a.batch < n_batches]
        gap = (max(gaps) if gaps else n_batches) + RELAXED_GAP_SLACK
    return Timeline(spans, n_batches, update_end, redo_end, fractions[0], gap, mems, tuple(fractions[1:]), batch_end,
                    res.devices)


def relaxed_mlp_fractions(res, n_batches: int, d: int = 0) -> list[tuple[float, float]]:
    """Fraction of device ``d``'s MLP log (its shard) done before and after each batch's relaxed
    MLP logging.

    Replays the timing model's rule (:meth:`TrainingMachine._mlp_log`): copy at the pull rate only
    until the source GPU's interaction/top-MLP step of the batch ends; a complete log restarts at 0.
    """
    m = res.machine
    side = m.sides[d]
    rec = res.executor.records
    shard = side.mlp_B
    rate = m.pull_mlp_ns(shard, d) / shard  # ns per byte; the machine keeps no per-batch bytes
    done = 0.0
    out = []
    for n in range(n_batches):
        t = rec[("mlp_log" + sfx(d), n)].start_ns
        window_end = rec[("t_mlp" + sfx(side.source_gpu), n)].end_ns
        left = shard - done
        before = done
        if window_end > t and left > 0:
            done += min(left, (window_end - t) / rate)
        after = done
        if done >= shard - 1e-6:
            after, done = shard, 0.0
        out.append((before / shard, after / shard))
    return out


def spread_writes(start: float, end: float, k: int, latency: float, flag: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """Issue times of ``k`` data writes over ``[start, end]`` and the flag's issue time.

    Data writes are evenly spaced from ``start``; with a flag, the last data write is acknowledged
    by ``end − latency``, when the flag is issued (a fence), so the flag is acknowledged at ``end``.
    A span too short for that is stretched: writes never overlap their fence. Returns
    ``(issue (k,), ack (k,), flag_issue)`` (flag_issue is nan without a flag).
    """
    last_issue = end - latency * (2 if flag else 1)
    last_issue = max(last_issue, start)
    if k > 1:
        issue = start + (last_issue - start) * np.arange(k) / (k - 1)
    else:
        issue = np.full(k, start, np.float64)
    ack = issue + latency
    flag_issue = float("nan")
    if flag:
        flag_issue = max(end - latency, float(ack.max()) if k else start)
    return issue, ack, flag_issue
