"""Run an op graph on the simpy clock and record who gated whom.

An :class:`Op` is one step of one batch on one lane (an exclusive resource: ``gpu``, ``ndp``,
``host_cpu``, ``ckpt_logic``, ``cxl.link``...), and optionally on further lanes it ``holds`` for its
whole span (a fabric transfer holds every link direction of its path; all of an op's lanes are
acquired in one global order, so ops cannot deadlock on them; the trace shows the op on its
``lane``). It starts when all its dependencies are met and its
lane is free (ops waiting for a lane go by ``priority``, then by when each became ready, then by
the order they were added; ops that become ready at the same instant all compete), asks its
``work`` callable for its end time *at that instant* (device models with state, e.g. PMEM
write-combining and pending writes, are served in simulated-time order), holds the lane until
then, and records the interval on the trace.

A long op may be served in **segments**: its work returns an :class:`OpOutcome` whose ``resume``
is called when that segment ends and returns the next segment's outcome, decided at that instant
(so a long background copy shares a device with streams that start meanwhile at segment
granularity, instead of reserving at its first instant everything it will ever use). The op holds
its lanes throughout; its record's ``end_ns`` is the current segment's end until the last.

Dependencies are op keys ``(name, batch)`` meaning "after it ends", or ``(name, batch, "start")``
meaning "after it starts" (used for windows such as relaxed MLP logging during the top MLP).
Keys of ops that do not exist (batch −1, steps a pipeline lacks) are ignored.

Contract: after :meth:`Executor.run`, each :class:`OpRecord` holds ``ready_ns`` (dependencies met),
``start_ns``, ``end_ns`` and ``gate`` — the key of what released it (the dependency that ended or
started last, or the lane's previous holder). :mod:`cxlsim.systems.critical_path` walks these gates.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import simpy

from cxlsim.engine.trace import TraceRecorder, Traffic

OpKey = tuple[str, int]
DepKey = tuple  # (name, batch) or (name, batch, "start")


@dataclass
class OpOutcome:
    """What an op's work returns: its end time (ns) and, optionally, the label to trace it with and
    ``resume``: for a segmented op, called with the segment's end time, it returns the next
    segment's outcome (the last has none); ``traffic``: what the op moved, for the trace only (a
    segmented op's outcomes may share one record that grows as its segments are charged)."""

    end_ns: float
    label: str | None = None
    resume: Callable[[float], OpOutcome] | None = None
    traffic: Traffic | None = None


@dataclass
class Op:
    name: str
    batch: int
    lane: str
    category: str  # b_mlp | t_mlp | transfer | embedding | checkpoint | sync
    work: Callable[[float], OpOutcome]
    deps: list[DepKey] = field(default_factory=list)
    label: str = ""
    priority: int = 0  # among ops waiting for the same lane, lower goes first
    holds: tuple[str, ...] = ()  # further lanes the op holds for its whole span (e.g. every link of a path)


    @property
    def key(self) -> OpKey:
        return (self.name, self.batch)


#: simpy event priority below ``simpy.events.NORMAL``: a lane is granted only after every event
#: of the current instant, so requests made at that instant all compete for it.
_AFTER_INSTANT = 2


class Lane:
    """An exclusive resource granting waiting requests by ``(priority, request time, order)``.

    Unlike ``simpy.PriorityResource`` (which hands a free resource to whoever asks first), a grant
    is made after every event of the current simulated instant, so two ops released by the same
    event are ordered by their priorities, not by the order simpy resumes them."""

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self.busy = False
        self._waiting: list[tuple[int, float, int, simpy.Event]] = []
        self._grant_pending = False

    def request(self, priority: int, order: int) -> simpy.Event:
        ev = self.env.event()
        heapq.heappush(self._waiting, (priority, float(self.env.now), order, ev))
        self._schedule_grant()
        return ev

    def release(self) -> None:
        self.busy = False
        self._schedule_grant()

    def _schedule_grant(self) -> None:
        if self.busy or self._grant_pending or not self._waiting:
            return
        self._grant_pending = True
        ev = simpy.Event(self.env)
        ev._ok, ev._value = True, None  # a triggered event, as simpy's Timeout makes one
        ev.callbacks.append(self._grant)
        self.env.schedule(ev, _AFTER_INSTANT)

    def _grant(self, _event: simpy.Event) -> None:
        self._grant_pending = False
        if not self.busy and self._waiting:
            self.busy = True
            heapq.heappop(self._waiting)[3].succeed()


@dataclass
class OpRecord:
    op: Op
    ready_ns: float = float("nan")
    start_ns: float = float("nan")
    end_ns: float = float("nan")
    gate: tuple | None = None  # ("end", key) | ("start", key) | ("lane", key) | None
    label: str = ""  # the trace label its work gave it
    traced: bool = False  # its interval is on the trace
    traffic: Traffic | None = None  # what its work moved (the trace's bytes, rows and device)


class Executor:
    """Runs :class:`Op` s on simpy with one :class:`Lane` per lane name (waiting ops go by priority, then readiness)."""

    def __init__(self, trace: TraceRecorder | None = None) -> None:
        self.env = simpy.Environment()
        self.trace = trace or TraceRecorder()
        self.ops: dict[OpKey, Op] = {}
        self.records: dict[OpKey, OpRecord] = {}
        self._lanes: dict[str, Lane] = {}
        self._order = itertools.count()
        self._add_order: dict[OpKey, int] = {}
        self._lane_last: dict[str, OpKey | None] = {}
        self._started: dict[OpKey, simpy.Event] = {}
        self._done: dict[OpKey, simpy.Event] = {}
        self._until: int | None = None
        self._rule: Callable[[int], bool] | None = None
        self._pending: dict[OpKey, OpOutcome] = {}  # segmented ops: the outcome of the running segment

    def add(self, op: Op) -> None:
        if op.key in self.ops:
            raise ValueError(f"op {op.key} added twice")
        self.ops[op.key] = op
        self._add_order[op.key] = next(self._order)
        self.records[op.key] = OpRecord(op)
        self._started[op.key] = self.env.event()
        self._done[op.key] = self.env.event()
        for lane in (op.lane, *op.holds):
            if lane not in self._lanes:
                self._lanes[lane] = Lane(self.env)
                self._lane_last[lane] = None
        self.trace.declare_lane(op.lane)

    def planned_end(self, key: OpKey) -> float:
        """End time of an op that has started (its work already decided it; a segmented op's
        current segment's end until its last segment)."""
        return self.records[key].end_ns

    def finished(self, key: OpKey) -> bool:
        """Whether op ``key`` has ended (its last segment too)."""
        return key in self._done and self._done[key].triggered

    def record(self, key: OpKey) -> OpRecord | None:
        return self.records.get(key)

    def run(self, until_batch: int | None = None, stop: Callable[[int], bool] | None = None) -> int | None:
        """Run the graph. With ``until_batch`` = k, stop once ``("begin", k)`` and every op of the
        batches before k have started: ops of batch k or later not started by then are skipped
        (their records keep NaN times). Everything an op decides is decided when it starts, so
        the records of the batches before k are the same as in a full run; the intervals of ops
        still running at the stop are put on the trace as planned.

        ``stop`` (with ``until_batch`` the last batch it may choose): called with k as each
        ``("begin", k)`` starts, before ``until_batch``; the first k it accepts becomes the batch to
        stop at, as if given as ``until_batch`` (sampling decides the batch count as it goes,
        :mod:`cxlsim.systems.sampling`). Returns the batch the run stopped at (None: ran out)."""
        if stop is not None and until_batch is None:
            raise ValueError("a stop rule needs until_batch, the last batch it may stop at")
        self._until = until_batch
        self._rule = stop
        self._unstarted: dict[int, int] = {}
        for k in self.ops:
            self._unstarted[k[1]] = self._unstarted.get(k[1], 0) + 1
        self._low = min(self._unstarted, default=0)  # the lowest batch with an op not started
        self._stop = self.env.event()
        for op in self.ops.values():
            self.env.process(self._process(op))
        if until_batch is None or self._stop_reached():
            self.env.run()
        else:
            while not self._stop.triggered and self.env.peek() != float("inf"):
                self.env.step()  # a dry queue before the stop: the check below names what never ran
            self._finish_segments()
            for key, rec in self.records.items():
                if rec.start_ns == rec.start_ns and not rec.traced:
                    self._trace(self.ops[key], rec)
        until_batch = self._until
        missing = [k for k, r in self.records.items() if r.end_ns != r.end_ns
                   and (until_batch is None or k[1] < until_batch or k == ("begin", until_batch))]
        if missing:
            raise RuntimeError(f"op graph deadlocked; never ran: {sorted(missing)[:5]}")
        return until_batch

    def _stop_reached(self) -> bool:
        """Whether ``("begin", until)`` and every op of the batches before it have started."""
        until = self._until
        key = ("begin", until)
        begun = key not in self.ops or self.records[key].start_ns == self.records[key].start_ns
        return begun and self._low >= until

    def _started_op(self, op: Op) -> None:
        """Bookkeeping of the stop (:meth:`run`) as ``op`` starts."""
        if self._until is None:
            return
        self._unstarted[op.batch] -= 1
        while self._unstarted.get(self._low, 0) == 0 and self._low in self._unstarted:
            self._low += 1
        if self._rule is not None and op.name == "begin" and op.batch < self._until and self._rule(op.batch):
            self._until, self._rule = op.batch, None
        if not self._stop.triggered and self._stop_reached():
            self._stop.succeed()

    def _finish_segments(self) -> None:
        """At a stop: serve the running segmented ops' remaining segments, all of them in time
        order, from the stop on (nothing else runs after the stop)."""
        now = float(self.env.now)
        heap = [(max(self.records[k].end_ns, now), i, k) for i, k in enumerate(self._pending)]
        heapq.heapify(heap)
        while heap:
            t, i, key = heapq.heappop(heap)
            outcome, rec = self._pending[key], self.records[key]
            if outcome.resume is None:
                continue
            outcome = outcome.resume(t)
            if outcome.end_ns < t:
                raise RuntimeError(f"op {key} segment ends before it starts")
            self._pending[key] = outcome
            rec.end_ns = float(outcome.end_ns)
            rec.label = outcome.label or rec.label
            rec.traffic = outcome.traffic or rec.traffic
            heapq.heappush(heap, (rec.end_ns, i, key))
        self._pending.clear()

    def _trace(self, op: Op, rec: OpRecord) -> None:
        self.trace.record(op.lane, rec.start_ns, rec.end_ns, rec.label, op.batch, op.category, rec.traffic)
        rec.traced = True

    def _events(self, op: Op) -> list[tuple[tuple, simpy.Event]]:
        out = []
        for dep in op.deps:
            key = (dep[0], dep[1])
            if key not in self.ops:
                continue
            kind = dep[2] if len(dep) > 2 else "end"
            out.append(((kind, key), self._started[key] if kind == "start" else self._done[key]))
        return out

    def _process(self, op: Op):
        rec = self.records[op.key]
        deps = self._events(op)
        if deps:
            yield simpy.AllOf(self.env, [ev for _, ev in deps])
        rec.ready_ns = float(self.env.now)
        gate = None
        latest = float("-inf")
        for (kind, key), _ in deps:
            r = self.records[key]
            t = r.start_ns if kind == "start" else r.end_ns
            if t >= latest:  # ties: the later-listed dependency (deps are listed in data order)
                latest, gate = t, (kind, key)
        names = sorted({op.lane, *op.holds})  # one global order: paths cannot deadlock
        for name in names:
            yield self._lanes[name].request(op.priority, self._add_order[op.key])
        rec.start_ns = float(self.env.now)
        if rec.start_ns > rec.ready_ns:
            held = [self._lane_last[n] for n in names if self._lane_last[n] is not None]
            if held:  # released by the lane freed last
                gate = ("lane", max(held, key=lambda k: self.records[k].end_ns))
        rec.gate = gate
        outcome = op.work(rec.start_ns)
        if outcome.end_ns < rec.start_ns:
            raise RuntimeError(f"op {op.key} ends before it starts")
        rec.end_ns = float(outcome.end_ns)
        rec.label = outcome.label or op.label or op.name
        rec.traffic = outcome.traffic
        self._started[op.key].succeed()
        self._started_op(op)
        if outcome.resume is not None:
            self._pending[op.key] = outcome  # the running segment (a stop finishes the rest)
        yield self.env.timeout(rec.end_ns - rec.start_ns)
        while outcome.resume is not None:  # a segmented op: the next segment, decided now
            outcome = outcome.resume(rec.end_ns)
            self._pending[op.key] = outcome
            if outcome.end_ns < rec.end_ns:
                raise RuntimeError(f"op {op.key} segment ends before it starts")
            seg_start, rec.end_ns = rec.end_ns, float(outcome.end_ns)
            rec.label = outcome.label or rec.label
            rec.traffic = outcome.traffic or rec.traffic
            yield self.env.timeout(rec.end_ns - seg_start)
        self._pending.pop(op.key, None)
        for name in names:
            self._lane_last[name] = op.key
        self._trace(op, rec)
        self._done[op.key].succeed()
        for name in names:
            self._lanes[name].release()  # granted after the ops this one releases have asked
