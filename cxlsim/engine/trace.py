"""Trace recorder: busy intervals per resource lane, with operation labels.

Contract: times are in ns. A lane is a resource (``gpu``, ``cxl_mem.compute``, ``pmem.mc0``...);
an interval is ``[start_ns, end_ns)`` with a label (the operation) and a batch number, and, where
the model charged the op with any, what it moved (:class:`Traffic`: bytes per link path and per
memory role, embedding rows). Timelines (ASCII Gantt, Chrome trace-event JSON, matplotlib figures)
are drawn from this record alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Traffic:
    """What one op moved, as the machine charged it while the op ran (every segment of it).

    ``link_B``: link path (``pcie``, ``cxl:<src>><dst>``) -> bytes over it; ``media_B``: memory role
    -> bytes its media read and wrote; ``rows``: embedding rows the near-data logic pooled or
    updated. Accounting only: nothing here feeds back into timing."""

    link_B: dict[str, float] = field(default_factory=dict)
    media_B: dict[str, float] = field(default_factory=dict)
    rows: int = 0

    @property
    def empty(self) -> bool:
        return not self.link_B and not self.media_B and not self.rows


@dataclass(frozen=True)
class Interval:
    """One busy interval; ``bytes_B``, ``rows`` and ``device`` are ``None`` where the model did not
    charge the op with any: ``bytes_B`` the bytes it moved over links (its media bytes if it crossed
    none), ``device`` the link paths or memory roles those bytes went through (comma-separated),
    ``link_B`` the bytes per link path (``(path, bytes)`` pairs)."""

    lane: str
    start_ns: float
    end_ns: float
    label: str
    batch: int = -1
    category: str = ""
    bytes_B: float | None = None
    rows: int | None = None
    device: str | None = None
    link_B: tuple[tuple[str, float], ...] = ()

    @property
    def duration_ns(self) -> float:
        return self.end_ns - self.start_ns


class TraceRecorder:
    """Append-only list of :class:`Interval` grouped by lane (lanes keep first-use order)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.intervals: list[Interval] = []
        self._lanes: dict[str, None] = {}

    def record(self, lane: str, start_ns: float, end_ns: float, label: str, batch: int = -1, category: str = "",
               traffic: Traffic | None = None) -> None:
        if end_ns < start_ns:
            raise ValueError(f"interval on {lane} ends before it starts ({start_ns} > {end_ns})")
        if not self.enabled or end_ns == start_ns:
            return
        self._lanes.setdefault(lane, None)
        extra: dict = {}
        if traffic is not None and not traffic.empty:
            links = {k: v for k, v in traffic.link_B.items() if v}
            media = {k: v for k, v in traffic.media_B.items() if v}
            moved = links or media
            extra = {"bytes_B": float(sum(moved.values())) if moved else None, "rows": traffic.rows or None,
                     "device": ",".join(sorted(moved)) or None, "link_B": tuple(sorted(links.items()))}
        self.intervals.append(Interval(lane, float(start_ns), float(end_ns), label, batch, category, **extra))

    def declare_lane(self, lane: str) -> None:
        """Name ``lane`` in the trace's lanes even while no interval is on it (timelines draw a lane
        idle in their window, and leave out one that holds no interval anywhere in the run)."""
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
