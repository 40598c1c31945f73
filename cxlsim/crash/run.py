"""A crash-test campaign: reference run, protocol, crash points, recovery, summary.

    from cxlsim.crash import prepare, run_points
    cr = prepare("cxl", workload="rm1", n_batches=6, seed=1)
    report = run_points(cr, n_points=2000)
    report.summary  # the `cxlsim crashtest --json` object

:func:`prepare` simulates the system for the step spans (timing model, scaled workload), runs the
fault-free reference once and builds the protocol's write events; :func:`run_points` crashes the run
at every point (in time order, so the durable image only moves forward), and :func:`replay` redoes
one point in detail.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cxlsim.crash.checker import Checker, PointResult
from cxlsim.crash.options import (
    DEFAULT_BATCHES,
    DEFAULT_SCALE,
    MAX_DEFAULT_BATCHES,
    MLP_LOG_MARGIN_BATCHES,
)
from cxlsim.crash.points import crash_instants, end_ns, split_windows
from cxlsim.crash.protocols import Protocol, build_protocol, check_campaign
from cxlsim.crash.recovery import RecoveryCost
from cxlsim.crash.reference import Reference, run_reference
from cxlsim.crash.resume import input_stream, resume_to_end
from cxlsim.crash.scale import global_batch, mlp_elements, scaled_workload
from cxlsim.crash.timeline import Timeline, from_simulation
from cxlsim.errors import InputError
from cxlsim.systems.config import SystemConfig, load_system
from cxlsim.systems.graph import build_devices
from cxlsim.systems.scale import settle
from cxlsim.workloads.catalog import Workload


@dataclass
class CrashRun:
    """Everything a campaign needs, built once by :func:`prepare`."""

    cfg: SystemConfig
    workload: Workload  # scaled; one global batch (every GPU's samples)
    scale: float
    seed: int
    bug: str | None
    timeline: Timeline
    reference: Reference
    protocol: Protocol
    checker: Checker
    setup_s: dict[str, float]

    @property
    def n_batches(self) -> int:
        return self.reference.n_batches


@dataclass
class CrashReport:
    summary: dict[str, Any]
    results: list[PointResult]
    points_s: float  # wall time of the crash points (after setup)
    resumed: int = 0
    details: dict[str, Any] = field(default_factory=dict)


def prepare(system: str | SystemConfig, workload: str | None = None, scale: float = DEFAULT_SCALE,
            n_batches: int | None = None, seed: int | None = None, bug: str | None = None,
            sets: list[tuple[str, Any]] | None = None, timeline: Timeline | None = None) -> CrashRun:
    """Build a campaign for ``system`` (name, path or config) on ``workload`` at ``scale``.
    ``timeline`` replaces the timing model's step spans (to pin a schedule in tests). ``n_batches``
    None: :data:`DEFAULT_BATCHES`, or, where the MLP log is spread over batches, enough for one to
    complete (:func:`default_batches`)."""
    if not 0 < scale <= 1:
        raise InputError(f"--scale must be in (0, 1], got {scale}")
    auto = n_batches is None
    n_batches = DEFAULT_BATCHES if auto else n_batches
    if n_batches < 1:
        raise InputError(f"--batches must be >= 1, got {n_batches}")
    cfg = system if isinstance(system, SystemConfig) else load_system(system, sets)
    changes: dict[str, Any] = {}
    if workload is not None:
        changes["workload"] = workload
    if seed is not None:
        changes["seed"] = seed
    if changes:
        cfg = replace(cfg, **changes)
    if cfg.pipeline is None:  # an analytic model (tpu-ps): no pipeline, so no persistence scheme
        raise InputError(f"system {cfg.name!r} is an analytic model without a byte-level persistence protocol; "
                         "crashtest runs the dataflow systems that persist (ssd, pmem, pcie, cxl-d, cxl-b, cxl)")
    mems = cfg.topology.cxl_mems_count
    check_campaign(cfg, bug, mems)  # before the timing model: refusals cost nothing
    wl, extra = scaled_workload(cfg.workload, cfg.workload_overrides, scale)
    cfg = settle(cfg, wl)  # the settings the topology derives, as the timing run takes them
    wl = global_batch(cfg.workload, {**cfg.workload_overrides, **extra}, wl, cfg.topology.gpus_count)
    t0 = time.perf_counter()
    tl = timeline or from_simulation(cfg, extra, n_batches, cfg.seed)
    if auto and timeline is None and tl.mlp_fractions(0) is not None:
        wanted = default_batches(tl.mlp_fractions(0))
        if wanted > n_batches:
            n_batches = wanted
            tl = from_simulation(cfg, extra, n_batches, cfg.seed)
    t1 = time.perf_counter()
    ref = run_reference(wl, cfg.seed, n_batches, mlp_elements(wl, scale, mems), cfg.pipeline.relaxed_lookup)
    t2 = time.perf_counter()
    devices = tl.devices if tl.devices is not None else build_devices(cfg)  # the run's models, or built once
    proto = build_protocol(cfg, ref, tl, devices, bug)
    checker = Checker(proto, ref, tl, RecoveryCost(devices, proto), cfg.seed)
    t3 = time.perf_counter()
    return CrashRun(cfg, wl, scale, cfg.seed, bug, tl, ref, proto, checker,
                    {"timing_s": t1 - t0, "reference_s": t2 - t1, "protocol_s": t3 - t2})


def default_batches(fractions: list[tuple[float, float]]) -> int:
    """Batches a campaign needs for one relaxed MLP log to complete and
    :data:`~cxlsim.crash.options.MLP_LOG_MARGIN_BATCHES` more, from the log's progress per batch
    over a probe (``(before, after)`` fractions of the log per batch,
    :func:`~cxlsim.crash.timeline.relaxed_mlp_fractions`): a log completes within the probe, or
    after ``1 / mean progress`` batches; at least :data:`DEFAULT_BATCHES`, at most
    :data:`~cxlsim.crash.options.MAX_DEFAULT_BATCHES`."""
    done_at = next((n for n, (_, after) in enumerate(fractions) if after >= 1.0), None)
    if done_at is None:
        progress = [a - b for b, a in fractions]
        per = sum(progress) / len(progress) if progress else 0.0
        if per <= 0:
            return DEFAULT_BATCHES
        done_at = math.ceil(1.0 / per) - 1
    return int(min(MAX_DEFAULT_BATCHES, max(DEFAULT_BATCHES, done_at + 1 + MLP_LOG_MARGIN_BATCHES)))


def instants(cr: CrashRun, n_points: int) -> np.ndarray:
    return crash_instants(cr.timeline, cr.protocol.events, n_points, cr.seed, cr.protocol)


def run_points(cr: CrashRun, n_points: int, resume: int = 0) -> CrashReport:
    """Crash at ``n_points`` instants (see :mod:`cxlsim.crash.points`); resume ``resume`` of them
    to the end of the run."""
    if n_points < 1:  # none would test nothing and report no violation
        raise InputError(f"--points must be >= 1, got {n_points}")
    ts = instants(cr, n_points)
    t0 = time.perf_counter()
    results: list[PointResult | None] = [None] * ts.size
    for i in np.argsort(ts, kind="stable"):
        results[int(i)] = cr.checker.evaluate(float(ts[i]), int(i))
    elapsed = time.perf_counter() - t0
    done = [r for r in results if r is not None]
    resumed = _resume_sample(cr, done, resume)
    first = min((r for r in done if r.violation), key=lambda r: (r.t_ns, r.index), default=None)
    detail = None
    if first is not None:
        detail = violation_detail(cr, cr.checker.evaluate_slow(first.t_ns, first.index), first.violation)
    return CrashReport(summarise(cr, done, detail), done, elapsed, resumed)


def _resume_sample(cr: CrashRun, results: list[PointResult], k: int) -> int:
    """Resume ``k`` passing points (spread over time) to the end; a mismatch becomes a violation."""
    cand = sorted((r for r in results if r.violation is None and r.m is not None and r.m < cr.n_batches - 1),
                  key=lambda r: r.t_ns)
    if k <= 0 or not cand:
        return 0
    pick = [cand[int(i)] for i in np.unique(np.linspace(0, len(cand) - 1, min(k, len(cand))).round())]
    stream = input_stream(cr.reference)
    for r in pick:
        _, table, mlp = cr.checker.recovered_state(r.t_ns)
        same_tables, same_mlp = resume_to_end(cr.reference, stream, table, mlp, r.m, cr.protocol.tolerance)
        if not same_tables:
            r.violation = "the resumed run's tables end different from the reference"
        elif r.gap == 0 and not same_mlp:
            r.violation = "the resumed run's MLP ends different from the reference"
    return len(pick)


def topology_note(cr: CrashRun) -> str | None:
    """Several CXL-MEMs: one line on the devices, the rule and the split crash instants (None for one)."""
    mems = len(cr.protocol.mems)
    if mems < 2:
        return None
    rule = "global persistence rule" if cr.protocol.global_rule else "each CXL-MEM trusting its own flags"
    return (f"{cr.cfg.topology.gpus_count} GPUs x {mems} CXL-MEMs: undo logs per CXL-MEM, {rule}; "
            f"{2 * len(split_windows(cr.protocol))} crash points where the CXL-MEMs' flags of a batch disagree")


def summarise(cr: CrashRun, results: list[PointResult], first: dict | None) -> dict[str, Any]:
    """The ``cxlsim crashtest --json`` object (keys in the documented order)."""
    ok = [r for r in results if r.m is not None]
    lost = [r.lost for r in ok]
    gaps = [r.gap for r in ok if r.gap is not None]
    rec_us = [r.recovery_ns / 1e3 for r in ok]
    return {
        "system": cr.cfg.name,
        "platform": cr.cfg.platform,
        "workload": cr.cfg.workload,
        "points": len(results),
        "recovered_exact": sum(r.exact for r in results),
        "violations": sum(r.violation is not None for r in results),
        "lost_batches": {"max": max(lost, default=0), "mean": float(np.mean(lost)) if lost else 0.0},
        "mlp_log_gap": {"max": max(gaps, default=0)},
        "recovery_time_us": {"mean": float(np.mean(rec_us)) if rec_us else 0.0, "max": max(rec_us, default=0.0)},
        "first_violation": first,
    }


def violation_detail(cr: CrashRun, r: PointResult, reason: str | None = None) -> dict[str, Any]:
    """What a violation report shows: instant, protocol step, first differing row, how to replay."""
    return {
        "point": r.index,
        "t_ns": r.t_ns,
        "step": "; ".join(cr.timeline.active(r.t_ns)) or "between steps",
        "in_flight": r.in_flight,
        "reason": reason or r.violation,
        "recovered_batch": r.m,
        "completed_batch": r.c,
        "table": None if r.row is None else r.row[0],
        "row": None if r.row is None else r.row[1],
        "recovery_read": r.used,
        "replay": f"--replay {r.t_ns!r}",
    }


def parse_replay(text: str, ts: np.ndarray, end: float) -> tuple[float, int]:
    """``--replay`` argument → (instant, point index or −1): an integer is a point index, a number
    with a decimal point or exponent is an instant in ns, within the run (0 to ``end`` ns; not nan
    or inf)."""
    s = text.strip().removesuffix("ns")
    try:
        if s.lstrip("-").isdigit():
            i = int(s)
            if not 0 <= i < ts.size:
                raise InputError(f"--replay {text}: point index out of range (0..{ts.size - 1})")
            return float(ts[i]), i
        t = float(s)
        if not 0 <= t <= end:  # nan fails too
            raise InputError(f"--replay {text}: an instant must lie within the run, 0 to {end:.6g} ns")
        match = np.flatnonzero(ts == t)
        return t, int(match[0]) if match.size else -1
    except ValueError:
        raise InputError(f"--replay {text}: expected a point index or an instant in ns (e.g. 1234.5)") from None


def replay(cr: CrashRun, which: str, n_points: int) -> dict[str, Any]:
    """One point in detail (materialised comparison), as a JSON-ready dict."""
    t, index = parse_replay(which, instants(cr, n_points), end_ns(cr.timeline, cr.protocol.events))
    r = cr.checker.evaluate_slow(t, index)
    d = violation_detail(cr, r)
    d.update({"system": cr.cfg.name, "platform": cr.cfg.platform, "workload": cr.cfg.workload, "ok": r.violation is None,
              "mlp_log_gap": r.gap, "recovery_time_us": r.recovery_ns / 1e3,
              "torn_pieces": {"landed": r.torn[0], "in_flight": r.torn[1]}})
    return d
