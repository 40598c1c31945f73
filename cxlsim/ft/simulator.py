"""The failure-and-checkpoint simulator: one scheme, one interruption trace, hours of training.

Time unit inside :mod:`cxlsim.ft` is the **second** (runs span hours; ``cxlsim.units.S`` converts
to the project's ns at the boundary). The clock is a simpy environment; events are coarse: training
segments, checkpoint stalls, background checkpoint writes, failures, recoveries, preemption notices
and holds.

Mechanism. The trainer must complete ``T_total`` seconds of *work* (failure-free training time). It
trains at rate ρ/σ (σ ≥ 1 the scheme's steady slowdown, e.g. ECRec's parity traffic or an exposed
undo log; ρ ≤ 1 the throughput while a scheme recovers in the background), stopping at each
checkpoint position (every ``interval_s`` of work) for the scheme's stall; an optional background
write makes the checkpoint valid later (a failure before then cancels it). Trace events interrupt
whatever phase is running:

- failures, preemptions, temporary errors: the scheme returns a :class:`Recovery` (work rolled
  back, reschedule and load times, PLS added, an optional degraded period); a failure during a
  recovery abandons it and starts the new one;
- preemption notices (only for schemes that act on them) move the next checkpoint to *now*;
- holds stop the job for their duration (events falling inside a hold are handled after it).

Accounting (exact): wall time = T_total + save + load + lost + reschedule, where *save* is checkpoint
stalls plus the slowdown's share of training time, *load* is restore time plus the throughput
deficit of degraded periods, *lost* is work rolled back, and *reschedule* is O_res, preemption
downtime and holds. ``overhead_pct`` divides each by T_total.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import simpy

from cxlsim.ft.failures import HOUR_S, Event

#: Work positions closer than this (s) are the same position.
EPS_S = 1e-6


class WorkBoundError(Exception):
    """A run went past its bound on interruptions plus checkpoints (see :meth:`FtRun._count`);
    the message says how far it got (one argument: simpy re-raises a copy made from ``args``)."""


@dataclass(frozen=True)
class CheckpointCost:
    """What one checkpoint costs: training stall, background write after it, bytes written."""

    stall_s: float
    background_s: float = 0.0
    bytes_written: float = 0.0


@dataclass(frozen=True)
class Recovery:
    """A scheme's answer to an interruption (times in s)."""

    lost_work_s: float
    reschedule_s: float
    load_s: float
    pls: float = 0.0
    degraded_s: float = 0.0
    degraded_throughput: float = 1.0


@dataclass
class _Pending:
    work_s: float
    valid_at_s: float


@dataclass
class RunState:
    """What a scheme may read about the run (its own state lives in the scheme)."""

    total_work_s: float
    now_s: float = 0.0
    work_s: float = 0.0
    last_valid_work_s: float = 0.0
    has_valid_checkpoint: bool = False
    degraded_until_s: float = 0.0
    failures: int = 0
    resumes: int = 0
    buckets: dict[str, float] = field(default_factory=lambda: {
        "save": 0.0, "load": 0.0, "lost": 0.0, "reschedule": 0.0})
    useful_s: float = 0.0
    hold_s: float = 0.0
    pls: float = 0.0
    bytes_written: float = 0.0
    checkpoints: int = 0
    recovery_times_s: list[float] = field(default_factory=list)


class FtRun:
    """Drives one scheme through one trace on a simpy clock (seconds)."""

    def __init__(self, scheme: Any, trace: tuple[Event, ...], total_work_s: float,
                 max_events: float = math.inf) -> None:
        self.scheme = scheme
        self.max_events = max_events
        events = list(trace)
        if getattr(scheme, "handles_notices", False):
            events += [Event(max(0.0, e.time_s - e.notice_s), "notice", ()) for e in trace
                       if e.kind == "preemption" and e.notice_s > 0]
        order = {"notice": 0}
        self.events = sorted(events, key=lambda e: (e.time_s, order.get(e.kind, 1)))
        self.i = 0
        self.state = RunState(total_work_s=total_work_s)
        self.env = simpy.Environment()
        self.pending: _Pending | None = None
        self.next_ckpt_s = scheme.interval_s
        self.throughput = 1.0
        self.notice_pending = False

    # ------------------------------------------------------------------ phases
    def _phase(self, duration_s: float, interruptible: bool = True) -> Generator[Any, Any, tuple[float, Event | None]]:
        """Advance up to ``duration_s``; stop early at the next trace event if interruptible."""
        env = self.env
        if interruptible and self.i < len(self.events):
            ev = self.events[self.i]
            if ev.time_s < env.now + duration_s:
                dt = max(0.0, ev.time_s - env.now)
                yield env.timeout(dt)
                self.i += 1
                self.state.now_s = env.now
                return dt, ev
        yield env.timeout(max(0.0, duration_s))
        self.state.now_s = env.now
        return duration_s, None

    def _stall(self, duration_s: float, bucket: str) -> Generator[Any, Any, Event | None]:
        """Stall for ``duration_s`` into ``bucket``; notices and holds are handled inline, a
        failure-like event ends the stall and is returned."""
        left = duration_s
        while left > EPS_S:
            elapsed, ev = yield from self._phase(left)
            self.state.buckets[bucket] += elapsed
            left -= elapsed
            if ev is None:
                break
            if ev.kind in ("notice", "transient-hold", "permanent-hold"):
                yield from self._handle(ev)
                continue
            return ev
        return None

    def _settle(self) -> None:
        """Make a finished background write valid; end a finished degraded period."""
        st = self.state
        if self.pending is not None and self.pending.valid_at_s <= self.env.now + EPS_S:
            st.last_valid_work_s = self.pending.work_s
            st.has_valid_checkpoint = True
            self.pending = None
            self.scheme.on_valid(st)
        if st.degraded_until_s <= self.env.now + EPS_S:
            self.throughput = 1.0

    # ------------------------------------------------------------------ trainer
    def _trainer(self) -> Generator[Any, Any, None]:
        st = self.state
        sigma = self.scheme.slowdown
        while st.work_s < st.total_work_s - EPS_S:
            self._settle()
            rho = self.throughput
            rate = rho / sigma
            target = min(self.next_ckpt_s, st.total_work_s)
            need = max(0.0, (target - st.work_s) / rate)
            caps = [need]
            if self.pending is not None:
                caps.append(self.pending.valid_at_s - self.env.now)
            if rho < 1.0:
                caps.append(st.degraded_until_s - self.env.now)
            d = max(0.0, min(caps))
            elapsed, ev = yield from self._phase(d)
            produced = target - st.work_s if (ev is None and d == need) else elapsed * rate
            st.work_s += produced
            st.useful_s += produced
            st.buckets["load"] += elapsed * (1.0 - rho)
            st.buckets["save"] += elapsed * rho * (1.0 - 1.0 / sigma)
            if ev is not None:
                yield from self._handle(ev)
                continue
            if d < need or st.work_s >= st.total_work_s - EPS_S:
                continue
            yield from self._checkpoint()
        self._settle()

    def _checkpoint(self) -> Generator[Any, Any, None]:
        st = self.state
        if self.pending is not None:  # checkpoints never overlap: wait for the previous write
            ev = yield from self._stall(self.pending.valid_at_s - self.env.now, "save")
            if ev is not None:
                yield from self._handle(ev)
                return
            self._settle()
        cost: CheckpointCost = self.scheme.checkpoint(st)
        ev = yield from self._stall(cost.stall_s, "save")
        if ev is not None:
            self.scheme.on_abort(st)
            yield from self._handle(ev)
            return
        st.checkpoints += 1
        self._count()
        st.bytes_written += cost.bytes_written
        self.pending = _Pending(st.work_s, self.env.now + cost.background_s)
        self._settle()
        self.next_ckpt_s = st.work_s + self.scheme.interval_s
        if self.notice_pending:  # the epoch ended early: the job idles until it is preempted
            self.notice_pending = False
            t_pre = next((e.time_s for e in self.events[self.i:] if e.kind == "preemption"), None)
            if t_pre is not None and t_pre >= self.env.now:
                ev = yield from self._stall(t_pre - self.env.now + EPS_S, "reschedule")
                if ev is not None:
                    yield from self._handle(ev)

    def _count(self) -> None:
        """Bound the work: interruptions handled plus checkpoints taken must stay within
        ``max_events`` (a run whose failures or checkpoints come faster than it can simulate is
        refused instead of running for hours)."""
        st = self.state
        if st.failures + st.checkpoints > self.max_events:
            raise WorkBoundError(f"{st.failures} interruptions and {st.checkpoints} checkpoints by "
                                 f"{self.env.now / HOUR_S:.3g} h")

    def _handle(self, ev: Event) -> Generator[Any, Any, None]:
        """Handle ``ev`` and every failure-like event that interrupts its recovery, in turn (a loop,
        not a recursion: failures may interrupt recoveries without limit)."""
        next_ev: Event | None = ev
        while next_ev is not None:
            next_ev = yield from self._handle_one(next_ev)

    def _handle_one(self, ev: Event) -> Generator[Any, Any, Event | None]:
        """Handle one event; return the failure-like event that interrupted its recovery, if any."""
        st = self.state
        if ev.kind == "notice":
            self.next_ckpt_s = min(self.next_ckpt_s, st.work_s)
            self.notice_pending = True
            return None
        if ev.kind in ("transient-hold", "permanent-hold"):
            yield from self._phase(ev.duration_s, interruptible=False)
            st.buckets["reschedule"] += ev.duration_s
            st.hold_s += ev.duration_s
            return None
        self._settle()
        if self.pending is not None:  # background write cancelled: not a valid checkpoint
            self.pending = None
            self.scheme.on_abort(st)
        st.failures += 1
        self._count()
        rec: Recovery = self.scheme.recover(st, ev)
        st.resumes += 1
        lost = min(rec.lost_work_s, st.work_s)
        if lost > 0:
            st.work_s -= lost
            st.useful_s -= lost
            st.buckets["lost"] += lost
            self.next_ckpt_s = st.work_s + self.scheme.interval_s
        st.pls += rec.pls
        start = self.env.now
        for duration, bucket in ((rec.reschedule_s, "reschedule"), (rec.load_s, "load")):
            nxt = yield from self._stall(duration, bucket)
            if nxt is not None:
                st.recovery_times_s.append(self.env.now - start)
                return nxt
        if rec.degraded_s > 0:
            st.degraded_until_s = self.env.now + rec.degraded_s
            self.throughput = rec.degraded_throughput
        st.recovery_times_s.append(self.env.now - start + rec.degraded_s)
        return None

    # ------------------------------------------------------------------ result
    def run(self) -> dict[str, Any]:
        self.env.process(self._trainer())
        self.env.run()
        st = self.state
        t_total = st.total_work_s
        pct = {k: 100.0 * v / t_total for k, v in st.buckets.items()}
        pct["total"] = sum(pct.values())
        wall = self.env.now
        rec = st.recovery_times_s
        return {
            "overhead_pct": pct,
            "pls": st.pls,
            "checkpoint_bytes_written": st.bytes_written,
            "peak_checkpoint_capacity_bytes": self.scheme.peak_capacity_bytes,
            "recovery_time_s": sum(rec) / len(rec) if rec else 0.0,
            "throughput_during_recovery": self.scheme.throughput_during_recovery,
            "wall_time_h": wall / HOUR_S,
            "interruptions_handled": st.failures,
            "checkpoints": st.checkpoints,
            "hold_h": st.hold_s / HOUR_S,
            "accounting_error_s": wall - t_total - sum(st.buckets.values()) - (st.useful_s - t_total),
        }


def simulate_scheme(scheme: Any, trace: tuple[Event, ...], total_work_s: float,
                    max_events: float = math.inf) -> dict[str, Any]:
    """Run ``scheme`` over ``trace``; the result merges the scheme's own figures (``details``).
    More than ``max_events`` interruptions plus checkpoints raise :class:`WorkBoundError`."""
    result = FtRun(scheme, trace, total_work_s, max_events).run()
    written = getattr(scheme, "written_B", None)
    if written is not None:  # schemes that persist logs rather than checkpoints
        result["checkpoint_bytes_written"] = written
    result["details"] = scheme.details()
    return result
