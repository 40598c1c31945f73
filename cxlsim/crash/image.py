"""Persistent memory as a byte image plus an ordered list of write events.

A :class:`Layout` places named regions (data region, log slots, redo records, flags) in one address
space, each aligned to a 4 KiB burst. A write event is ``(addr, size, issue_ns, ack_ns)`` plus the
copies that produce its bytes: segments ``(dst, src, len)`` whose sources are offsets in the run's
payload :class:`~cxlsim.crash.reference.Pool`; the segments of an event tile its address range.
:class:`WriteLog` collects events step by step; :meth:`WriteLog.finish` sorts them by
acknowledgement into :class:`Events`, the form the crash kernels use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

REGION_ALIGN_B = 4096
#: Log regions and redo records are written in bursts of this size (the timing model's burst).
BURST_B = 4096
#: A persistent flag or a deletion is one line of this size, written atomically.
LINE_B = 64

#: Event kinds (for reporting and for drawing crash instants inside writes).
DATA, LOG, FLAG, DELETE = 0, 1, 2, 3
KIND_NAMES = ("data", "log", "flag", "delete")


@dataclass(frozen=True)
class Region:
    name: str
    rid: int
    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass
class Layout:
    """Named regions, in address order (region 0 is the data region at address 0)."""

    regions: list[Region] = field(default_factory=list)

    def add(self, name: str, size: int) -> Region:
        base = 0
        if self.regions:
            base = -(-self.regions[-1].end // REGION_ALIGN_B) * REGION_ALIGN_B
        reg = Region(name, len(self.regions), base, int(size))
        self.regions.append(reg)
        return reg

    def __getitem__(self, name: str) -> Region:
        for r in self.regions:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def total_B(self) -> int:
        return -(-self.regions[-1].end // REGION_ALIGN_B) * REGION_ALIGN_B if self.regions else 0


@dataclass
class WriteBatch:
    """Writes of one kind in issue order, before timing: per event its address and size, and the
    segments (``seg_count`` per event, then flat ``dst``/``src``/``len``)."""

    addr: np.ndarray
    size: np.ndarray
    seg_count: np.ndarray
    seg_dst: np.ndarray
    seg_src: np.ndarray
    seg_len: np.ndarray

    def __len__(self) -> int:
        return int(self.addr.size)

    @staticmethod
    def concat(parts: list[WriteBatch]) -> WriteBatch:
        parts = [p for p in parts if len(p)]
        if not parts:
            return contiguous(0, 0, 0)
        return WriteBatch(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                            ("addr", "size", "seg_count", "seg_dst", "seg_src", "seg_len")))


def contiguous(dst: int, src: int, nbytes: int, burst_B: int = BURST_B) -> WriteBatch:
    """``nbytes`` copied from pool ``src`` to ``dst`` in bursts (one segment each)."""
    starts = np.arange(0, int(nbytes), burst_B, dtype=np.int64)
    sizes = np.minimum(burst_B, nbytes - starts)
    return WriteBatch(dst + starts, sizes, np.ones(starts.size, np.int64), dst + starts, src + starts, sizes)


def gathered(dst: int, src_rows: np.ndarray, row_B: int, burst_B: int = BURST_B) -> WriteBatch:
    """Rows from scattered pool offsets ``src_rows`` packed at ``dst`` and written in bursts
    (one segment per row)."""
    k = src_rows.size
    seg_dst = dst + np.arange(k, dtype=np.int64) * row_B
    per = max(1, burst_B // row_B)
    n_ev = -(-k // per)
    counts = np.full(n_ev, per, np.int64)
    if n_ev:
        counts[-1] = k - per * (n_ev - 1)
    addr = dst + np.arange(n_ev, dtype=np.int64) * per * row_B
    return WriteBatch(addr, counts * row_B, counts, seg_dst, src_rows.astype(np.int64), np.full(k, row_B, np.int64))


def in_place(dst_rows: np.ndarray, src_rows: np.ndarray, row_B: int) -> WriteBatch:
    """One write per row: pool ``src_rows[i]`` to address ``dst_rows[i]``."""
    k = dst_rows.size
    ones = np.ones(k, np.int64)
    sizes = np.full(k, row_B, np.int64)
    return WriteBatch(dst_rows.astype(np.int64), sizes, ones, dst_rows.astype(np.int64), src_rows.astype(np.int64), sizes)


def line(dst: int, src: int) -> WriteBatch:
    """One ``LINE_B`` line (a flag or a deletion)."""
    return contiguous(dst, src, LINE_B, LINE_B)


@dataclass
class Events:
    """All write events sorted by acknowledgement (ties: creation order), with their segments."""

    issue: np.ndarray
    ack: np.ndarray
    addr: np.ndarray
    size: np.ndarray
    region: np.ndarray
    kind: np.ndarray
    step: np.ndarray  # index into step_labels / step_batch
    seg_lo: np.ndarray
    seg_hi: np.ndarray
    seg_dst: np.ndarray
    seg_src: np.ndarray
    seg_len: np.ndarray
    step_labels: list[str]
    step_batch: np.ndarray  # the batch whose protocol issued each step
    by_issue: np.ndarray  # event indices sorted by issue time
    issue_sorted: np.ndarray  # issue[by_issue]
    max_flight_ns: float

    def __len__(self) -> int:
        return int(self.issue.size)

    def applied_before(self, t: float) -> int:
        """Number of events acknowledged by ``t`` (``ack <= t``: durable; a prefix of the ack order)."""
        return int(np.searchsorted(self.ack, t, side="right"))

    def in_flight(self, t: float) -> np.ndarray:
        """Events issued at or before ``t`` and acknowledged after it (``issue <= t < ack``), in ack
        order. A flag issued when the data it covers is acknowledged is thus in flight exactly when
        that data is durable."""
        lo = int(np.searchsorted(self.issue_sorted, t - self.max_flight_ns, side="left"))
        hi = int(np.searchsorted(self.issue_sorted, t, side="right"))
        cand = self.by_issue[lo:hi]
        return np.sort(cand[self.ack[cand] > t])

    def region_totals(self, n_regions: int) -> np.ndarray:
        return np.bincount(self.region, minlength=n_regions).astype(np.int64)


class WriteLog:
    """Collects timed write events of a protocol run; :meth:`finish` sorts them."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._parts: list[tuple] = []
        self.step_labels: list[str] = []
        self.step_batch: list[int] = []
        self._bounds = np.array([r.base for r in layout.regions] + [layout.total_B], np.int64)

    def add(self, wb: WriteBatch, issue: np.ndarray, ack: np.ndarray, kind: int, label: str, batch: int) -> None:
        if len(wb) == 0:
            return
        issue = np.broadcast_to(np.asarray(issue, np.float64), (len(wb),))
        ack = np.broadcast_to(np.asarray(ack, np.float64), (len(wb),))
        region = np.searchsorted(self._bounds, wb.addr, side="right") - 1
        step = len(self.step_labels)
        self.step_labels.append(label)
        self.step_batch.append(batch)
        self._parts.append((wb, issue.copy(), ack.copy(), region.astype(np.int32), kind, step))

    def finish(self) -> Events:
        wbs = [p[0] for p in self._parts]
        wb = WriteBatch.concat(wbs)
        issue = np.concatenate([p[1] for p in self._parts]) if self._parts else np.zeros(0)
        ack = np.concatenate([p[2] for p in self._parts]) if self._parts else np.zeros(0)
        region = np.concatenate([p[3] for p in self._parts]) if self._parts else np.zeros(0, np.int32)
        kind = np.concatenate([np.full(len(p[0]), p[4], np.int8) for p in self._parts]) if self._parts else np.zeros(0, np.int8)
        step = np.concatenate([np.full(len(p[0]), p[5], np.int32) for p in self._parts]) if self._parts else np.zeros(0, np.int32)
        order = np.argsort(ack, kind="stable")
        seg_start = np.concatenate(([0], np.cumsum(wb.seg_count)[:-1])).astype(np.int64)
        counts = wb.seg_count[order]
        # segments follow their events into ack order
        seg_idx = np.repeat(seg_start[order] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts) + np.arange(counts.sum())
        seg_hi = np.cumsum(counts).astype(np.int64)
        seg_lo = seg_hi - counts
        issue_o = issue[order]
        by_issue = np.argsort(issue_o, kind="stable").astype(np.int64)
        flight = float(np.max(ack - issue)) if ack.size else 0.0
        return Events(issue_o, ack[order], wb.addr[order], wb.size[order], region[order], kind[order], step[order],
                      seg_lo, seg_hi, wb.seg_dst[seg_idx], wb.seg_src[seg_idx], wb.seg_len[seg_idx],
                      list(self.step_labels), np.asarray(self.step_batch, np.int64), by_issue, issue_o[by_issue], flight)
