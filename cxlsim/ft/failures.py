"""The seeded interruption trace that drives every scheme of a scenario.

Times are seconds of wall clock from the job's start (this package's internal unit). A trace is a
sorted tuple of :class:`Event`; it is a pure function of the scenario and its seed, drawn once and
shared by all schemes, so their overheads are comparable.

Sources of events, merged and sorted:

- the failure process (``failures.process_policy``): exponential or gamma inter-failure times with
  mean ``mtbf_h``; or ``uniform-count``: ``count`` failures at uniformly random times in
  [0, duration_h] (the CPR emulation's setup); each failure wipes ``shards_fraction`` of the
  embedding shards (at least one), chosen at random;
- Poisson processes of preemptions, transient holds, permanent holds and temporary errors
  (``interruptions``; a mean interval of 0 disables one);
- the explicit ``trace`` list.

A preemption carries its notice: schemes that act on notices (TPU epochs) see a ``notice`` at
``time_s − notice_s``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.ft.scenario import Scenario
from cxlsim.rng import stream

HOUR_S = 3600.0


@dataclass(frozen=True)
class Event:
    """One interruption. ``shards`` are the failed embedding shard ids (all of them for events that
    stop the whole job: preemptions, temporary errors); ``duration_s`` is a hold's length or a
    preemption's downtime."""

    time_s: float
    kind: str
    shards: tuple[int, ...]
    notice_s: float = 0.0
    duration_s: float = 0.0

    @property
    def whole_job(self) -> bool:
        return self.kind in ("preemption", "temporary-error")

    def to_dict(self) -> dict:
        return {"time_h": self.time_s / HOUR_S, "kind": self.kind, "shards": len(self.shards),
                "notice_s": self.notice_s, "duration_s": self.duration_s}


def failure_times_s(policy: str, mtbf_s: float, shape: float, count: int, duration_s: float,
                    horizon_s: float, rng: np.random.Generator) -> list[float]:
    """Failure instants (s) of one seeded failure process, up to ``horizon_s``."""
    if policy == "none":
        return []
    if policy == "uniform-count":
        return sorted(float(t) for t in rng.uniform(0.0, duration_s, size=count))
    times, t = [], 0.0
    while True:
        if policy == "exponential":
            t += float(rng.exponential(mtbf_s))
        else:  # gamma with mean mtbf_s
            t += float(rng.gamma(shape, mtbf_s / shape))
        if t > horizon_s:
            return times
        times.append(t)


def _poisson_times(mean_interval_h: float, horizon_s: float, rng: np.random.Generator) -> list[float]:
    if mean_interval_h <= 0:
        return []
    times, t = [], 0.0
    while True:
        t += float(rng.exponential(mean_interval_h * HOUR_S))
        if t > horizon_s:
            return times
        times.append(t)


def _pick_shards(n_emb: int, fraction: float, rng: np.random.Generator) -> tuple[int, ...]:
    n = min(n_emb, max(1, int(round(fraction * n_emb))))
    return tuple(sorted(int(s) for s in rng.choice(n_emb, size=n, replace=False)))


def build_trace(sc: Scenario) -> tuple[Event, ...]:
    """The scenario's interruption trace (same seed → same trace)."""
    f, it = sc.failures, sc.interruptions
    duration_s = sc.job.duration_h * HOUR_S
    horizon_s = f.horizon_factor * duration_s
    n_emb = sc.model.emb_shards_count
    all_shards = tuple(range(n_emb))
    shard_rng = stream(sc.seed, "ft.failures.shards")
    events = [
        Event(t, "failure", _pick_shards(n_emb, f.shards_fraction, shard_rng))
        for t in failure_times_s(f.process_policy, f.mtbf_h * HOUR_S, f.gamma_shape_factor, f.count,
                                 duration_s, horizon_s, stream(sc.seed, "ft.failures.times"))
    ]
    events += [Event(t, "preemption", all_shards, it.preemption_notice_s, it.preemption_downtime_s)
               for t in _poisson_times(it.preemption_mean_interval_h, horizon_s, stream(sc.seed, "ft.preemptions"))]
    events += [Event(t, "transient-hold", (), 0.0, it.transient_hold_s)
               for t in _poisson_times(it.transient_hold_mean_interval_h, horizon_s, stream(sc.seed, "ft.holds.transient"))]
    events += [Event(t, "permanent-hold", (), 0.0, it.permanent_hold_s)
               for t in _poisson_times(it.permanent_hold_mean_interval_h, horizon_s, stream(sc.seed, "ft.holds.permanent"))]
    events += [Event(t, "temporary-error", all_shards)
               for t in _poisson_times(it.temporary_error_mean_interval_h, horizon_s, stream(sc.seed, "ft.temporary"))]
    explicit_rng = stream(sc.seed, "ft.trace.shards")
    defaults = {"preemption": it.preemption_downtime_s, "transient-hold": it.transient_hold_s,
                "permanent-hold": it.permanent_hold_s}
    for ev in sc.trace:
        kind = ev.kind
        if kind == "failure":
            frac = f.shards_fraction if ev.shards_fraction < 0 else ev.shards_fraction
            shards = _pick_shards(n_emb, frac, explicit_rng)
        elif kind in ("preemption", "temporary-error"):
            shards = all_shards
        else:
            shards = ()
        notice = (it.preemption_notice_s if ev.notice_s < 0 else ev.notice_s) if kind == "preemption" else 0.0
        dur = defaults.get(kind, 0.0) if ev.duration_s < 0 else ev.duration_s
        events.append(Event(ev.at_h * HOUR_S, kind, shards, notice, dur))
    return tuple(sorted(events, key=lambda e: (e.time_s, e.kind)))
