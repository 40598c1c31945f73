"""Trace recorder: busy intervals per resource lane, with operation labels.

Contract: times are in ns. A lane is a resource (``gpu``, ``cxl_mem.compute``, ``pmem.mc0``...);
an interval is ``[start_ns, end_ns)`` with a label (the operation) and a batch number. Timelines
(ASCII Gantt, Chrome trace-event JSON, matplotlib figures) are drawn from this record alone.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    lane: str
    start_ns: float
    end_ns: float
    label: str
    batch: int = -1
    category: str = ""

    @property
    def duration_ns(self) -> float:
        return self.end_ns - self.start_ns


class TraceRecorder:
    """Append-only list of :class:`Interval` grouped by lane (lanes keep first-use order)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.intervals: list[Interval] = []
        self._lanes: dict[str, None] = {}

    def record(self, lane: str, start_ns: float, end_ns: float, label: str, batch: int = -1, category: str = "") -> None:
        if end_ns < start_ns:
            raise ValueError(f"interval on {lane} ends before it starts ({start_ns} > {end_ns})")
        if not self.enabled or end_ns == start_ns:
            return
        self._lanes.setdefault(lane, None)
        self.intervals.append(Interval(lane, float(start_ns), float(end_ns), label, batch, category))

    def declare_lane(self, lane: str) -> None:
        """Show ``lane`` in timelines even if it stays idle."""
        self._lanes.setdefault(lane, None)

    @property
    def lanes(self) -> list[str]:
        return list(self._lanes)

    def on(self, lane: str) -> list[Interval]:
        return [iv for iv in self.intervals if iv.lane == lane]

    def busy_ns(self, lane: str, start_ns: float = float("-inf"), end_ns: float = float("inf")) -> float:
        """Union length of ``lane``'s intervals clipped to ``[start_ns, end_ns)``."""
        spans = sorted((max(iv.start_ns, start_ns), min(iv.end_ns, end_ns)) for iv in self.on(lane))
        total, cur_s, cur_e = 0.0, None, None
        for s, e in spans:
            if e <= s:
                continue
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    total += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            total += cur_e - cur_s
        return total
