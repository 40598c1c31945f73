"""Crash a run at an instant, recover, and check the recovery invariant bit-exactly
(docs/design.md#crash-and-recovery).

The durable image at a crash instant ``t`` is the initial image with every write acknowledged before
``t`` applied (in acknowledgement order), then, for each write in flight at ``t`` (issued, not yet
acknowledged), the 64 B pieces a seeded coin says landed (:func:`~cxlsim.crash.kernels.landed`).
Flags are ordinary writes issued after a fence, so they reach the media only after the data they
cover — unless a bug is injected. Recovery (:mod:`cxlsim.crash.recovery`) reads only that image.

The invariant, checked for every point against the fault-free reference:

- recovery succeeds and its batch ``m`` is at most the last batch ``c`` whose update completed
  before ``t`` and at least the one before the last batch that completed (its update and its MLP
  optimizer step; :meth:`~cxlsim.crash.timeline.Timeline.completed_batches`) — the same as
  ``c − 1 ≤ m ≤ c`` unless an update ends before its batch does: on ``cxl-b`` the update does not
  wait for the MLP log (docs/design.md#batch-aware-undo-log), the optimizer step does, and a crash
  after update ``n`` ended but before its MLP log is flagged must recover to ``n − 2`` (redo: and no
  committed record is lost);
- the recovered tables equal the reference after batch ``m`` bit for bit;
- every MLP chunk equals the reference after some batch ``m − g`` with ``0 ≤ g ≤`` the configured
  MLP log gap (0 unless relaxed);
- hence training resumes from ``m + 1`` and, with ``g = 0``, ends identical to the reference
  (gradients do not depend on the state: a state equal to the reference's evolves as it did;
  :mod:`cxlsim.crash.resume` runs it for a sample of points).

Two evaluations share everything but the table comparison:

- :meth:`Checker.evaluate` (fast, points in time order): an image advanced incrementally, torn
  pieces applied and reverted through a journal, per-row mismatch flags of the data region against
  the two reference states a valid ``m`` can name, kept up to date as writes land; restores are
  checked row by row (:func:`~cxlsim.crash.kernels.restore_check`) and memoised while the logs they
  read are unchanged; redo prefixes of final records that replay to the reference are reused.
- :meth:`Checker.evaluate_slow`: materialise the recovered tables (restores applied with
  :func:`~cxlsim.kernels.undo_log.undo_log_restore`) and compare them whole; reports the first
  differing row. Used for replays, for the first violation's details, and by the tests to hold the
  fast path to it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from cxlsim.arrays import unique as sorted_unique
from cxlsim.crash import kernels as K
from cxlsim.crash.points import point_key
from cxlsim.crash.protocols import FAST_LOGS, FAST_RECORDS, MLP_CHUNK, Protocol
from cxlsim.crash.recovery import RecoveryCost, RecoveryPlan, plan
from cxlsim.crash.reference import Reference
from cxlsim.crash.timeline import Timeline
from cxlsim.kernels.undo_log import undo_log_restore

MEMO_ENTRIES = 16


@dataclass
class PointResult:
    """The outcome of one crash point."""

    index: int
    t_ns: float
    m: int | None  # recovered batch (None: recovery failed)
    c: int  # last batch whose update completed before t
    gap: int | None  # largest MLP chunk gap, batches
    recovery_ns: float
    done: int = -1  # last batch that completed (update and MLP optimizer step) before t
    violation: str | None = None
    row: tuple[int, int] | None = None  # first differing (table, row)
    used: list[str] = field(default_factory=list)
    torn: tuple[int, int] = (0, 0)  # (64 B pieces landed, pieces in flight)
    in_flight: list[str] = field(default_factory=list)

    @property
    def lost(self) -> int | None:
        return None if self.m is None else self.c - self.m

    @property
    def exact(self) -> bool:
        return self.violation is None and self.gap == 0


class Checker:
    """Crash points of one protocol run (see module docstring)."""

    def __init__(self, proto: Protocol, ref: Reference, tl: Timeline, cost: RecoveryCost, seed: int) -> None:
        self.proto, self.ref, self.tl, self.cost, self.seed = proto, ref, tl, cost, seed
        self.ev = proto.events
        self.pool = ref.pool.buf
        self.n_regions = len(proto.layout.regions)
        self.region_total = self.ev.region_totals(self.n_regions)
        self.row_B = proto.row_B
        self.data_end = proto.data_B
        self.seen = np.zeros(proto.rows, np.bool_)
        most = max(proto.cap, *(int(r.size) for r in ref.unique_rows)) if ref.unique_rows else proto.cap
        self.out_rows = np.empty(max(2 * most, 1), np.int64)
        self.touched = np.zeros(self.n_regions, np.bool_)
        self._journal(1024)
        self.memo: OrderedDict = OrderedDict()
        self.diff_memo: dict[tuple[int, int], np.ndarray] = {}
        self.prefix_ok = self._prefix_ok() if proto.fast_path == FAST_RECORDS else None
        self.reset()

    # -- image state -----------------------------------------------------------------------------
    def reset(self) -> None:
        self.img = self.proto.image0.copy()
        self.ptr = 0
        self.count = np.zeros(self.n_regions, np.int64)
        self.tracked: list[int] = []
        self.mis = np.zeros((0, self.proto.rows), np.bool_)
        self.cnt = np.zeros(0, np.int64)

    def _journal(self, pieces: int) -> None:
        self.j_addr = np.empty(pieces, np.int64)
        self.j_len = np.empty(pieces, np.int64)
        self.j_bytes = np.empty(pieces * K.TORN_GRANULE_B, np.uint8)
        self.rows_touched = np.empty(pieces, np.int64)

    def advance(self, t: float) -> None:
        """Apply every write acknowledged before ``t`` (restarting if ``t`` is earlier than before)."""
        hi = self.ev.applied_before(t)
        if hi < self.ptr:
            tracked = self.tracked
            self.reset()
            self.track(tracked)
        ev = self.ev
        offs = np.array([self.ref.table_offset(m) for m in self.tracked], np.int64)
        K.apply_events(self.img, self.pool, self.ptr, hi, ev.seg_lo, ev.seg_hi, ev.seg_dst, ev.seg_src,
                       ev.seg_len, ev.region, self.count, self.data_end, self.row_B, offs, self.mis, self.cnt)
        self.ptr = hi

    def track(self, targets: list[int]) -> None:
        """Keep data-region mismatch flags against the reference after each batch in ``targets``."""
        if targets == self.tracked:
            return
        mis = np.zeros((len(targets), self.proto.rows), np.bool_)
        cnt = np.zeros(len(targets), np.int64)
        for i, m in enumerate(targets):
            if m in self.tracked:
                j = self.tracked.index(m)
                mis[i], cnt[i] = self.mis[j], self.cnt[j]
            else:
                cnt[i] = K.mismatch_rows(self.img, self.pool, self.ref.table_offset(m), self.proto.rows, self.row_B, mis[i])
        self.tracked, self.mis, self.cnt = list(targets), mis, cnt

    def _tear(self, t: float) -> tuple[int, np.ndarray, tuple[int, int], np.ndarray]:
        """Land the chosen pieces of the writes in flight at ``t``; returns (journal entries, data
        rows touched, (landed, pieces), in-flight events)."""
        ev = self.ev
        fl = self.ev.in_flight(t)
        self.touched[:] = False
        if fl.size == 0:
            return 0, np.zeros(0, np.int64), (0, 0), fl
        need = int(np.sum(ev.seg_hi[fl] - ev.seg_lo[fl]) + np.sum(ev.size[fl]) // K.TORN_GRANULE_B) + 2
        if need > self.j_addr.size:
            self._journal(2 * need)
        nj, nr, n_land, n_all = K.apply_torn(self.img, self.pool, fl, ev.seg_lo, ev.seg_hi, ev.seg_dst, ev.seg_src,
                                             ev.seg_len, ev.region, point_key(self.seed, t), self.j_addr, self.j_len,
                                             self.j_bytes, self.touched, self.data_end, self.row_B, self.rows_touched)
        return nj, sorted_unique(self.rows_touched[:nr]), (int(n_land), int(n_all)), fl

    def _untear(self, nj: int) -> None:
        if nj:
            K.revert_journal(self.img, nj, self.j_addr, self.j_len, self.j_bytes)

    # -- one point -------------------------------------------------------------------------------
    def evaluate(self, t: float, index: int = -1, slow: bool = False) -> PointResult:
        """Crash at ``t``, recover, check. ``slow`` compares materialised tables."""
        c = self.tl.completed_updates(t)
        done = min(self.tl.completed_batches(t), c)
        self.advance(t)
        if self.proto.fast_path == FAST_LOGS and not slow:
            self.track([m for m in range(done - 1, c + 1) if m >= -1])
        nj, torn_rows, torn, _ = self._tear(t)
        try:
            res = self._check(t, index, c, done, torn_rows, slow)
        finally:
            self._untear(nj)
        res.torn = torn
        return res

    def evaluate_slow(self, t: float, index: int = -1) -> PointResult:
        res = self.evaluate(t, index, slow=True)
        res.in_flight = self.in_flight_labels(t)
        return res

    def in_flight_labels(self, t: float) -> list[str]:
        fl = self.ev.in_flight(t)
        steps = np.unique(self.ev.step[fl])
        return [f"{self.ev.step_labels[s]} ({int(np.sum(self.ev.step[fl] == s))} writes)" for s in steps]

    def _check(self, t: float, index: int, c: int, done: int, torn_rows: np.ndarray, slow: bool) -> PointResult:
        pr = self.proto
        rp = plan(self.img, pr)
        res = PointResult(index, t, None, c, None, 0.0, done, used=rp.used)
        if rp.error:
            res.violation = f"recovery failed: {rp.error}"
            return res
        m = res.m = rp.m
        res.recovery_ns = self.cost.time_ns(rp)
        committed = pr.committed(self.tl, t)
        lo, hi = pr.allowed(done, c)
        if not lo <= m <= hi:
            what = f"the update of batch {c}" if m > c or done == c else f"batch {done}"
            res.violation = (f"recovered to batch {m}, but {what} had completed "
                             f"(allowed: {lo}" + (f" … {hi})" if hi > lo + 1 else f" or {hi})"))
        elif m < committed:
            res.violation = f"recovered to batch {m}, but record {committed} was committed"
        if res.violation is None or slow:
            bad_row = self._tables_slow(rp, m) if slow else self._tables_fast(rp, m, torn_rows)
            if bad_row is not None and res.violation is None:
                res.violation = "recovered tables differ from the reference after batch " + str(m)
            if bad_row is not None and bad_row >= 0:
                res.row = self._table_row(bad_row)
        states = self._mlp_states(rp, m)
        if np.any(states < -1):
            res.violation = res.violation or (f"MLP chunk {int(np.argmax(states < -1))} equals no reference "
                                              f"state at or before batch {m}")
        else:
            res.gap = int(m - states.min())
            if res.gap > pr.mlp_gap_bound and res.violation is None:
                res.violation = f"MLP log gap {res.gap} exceeds the configured {pr.mlp_gap_bound}"
        return res

    def _mlp_states(self, rp: RecoveryPlan, m: int) -> np.ndarray:
        """Per MLP chunk (every device's shard in order): the reference batch it equals (−2: none)."""
        return np.concatenate([
            K.mlp_chunk_states(self.img, addr, hi - lo, MLP_CHUNK, self.pool, self.ref.mlp_off + 4 * lo, max(m, -1),
                               claimed) for addr, lo, hi, claimed in rp.mlp_parts])

    def _table_row(self, g: int) -> tuple[int, int]:
        lay = self.ref.layout
        t = int(lay.table_of(g))
        return t, int(g - lay.row_base[t])

    # -- table comparisons -----------------------------------------------------------------------
    def _restore(self, rp: RecoveryPlan, rest: list, ref_off: int):
        """Check restores ``rest`` against the reference state at ``ref_off``: (rows, bad, first, err)."""
        ids = np.array([r[0] for r in rest], np.int64)
        vals = np.array([r[1] for r in rest], np.int64)
        nrows = np.array([r[2] for r in rest], np.int64)
        if nrows.sum() > self.out_rows.size:
            self.out_rows = np.empty(int(nrows.sum()), np.int64)
        k, n_bad, first, err = K.restore_check(self.img, ids, vals, nrows, self.pool, ref_off, self.row_B,
                                               self.proto.rows, self.seen, self.out_rows)
        return np.sort(self.out_rows[:k]), int(n_bad), int(first), int(err)

    def _memo_restore(self, rp: RecoveryPlan, rest: list, m: int):
        key = (tuple((r[3], int(self.count[r[3]]), r[2]) for r in rest), m)
        if any(self.touched[r[3]] for r in rest):
            return self._restore(rp, rest, self.ref.table_offset(m))
        hit = self.memo.get(key)
        if hit is None:
            hit = self._restore(rp, rest, self.ref.table_offset(m))
            self.memo[key] = hit
            if len(self.memo) > MEMO_ENTRIES:
                self.memo.popitem(last=False)
        return hit

    def _tables_fast(self, rp: RecoveryPlan, m: int, torn_rows: np.ndarray) -> int | None:
        """None if the recovered tables equal the reference after ``m``; else the lowest differing
        global row when known, or −1."""
        if self.proto.fast_path is None:
            return self._tables_slow(rp, m)
        if self.proto.fast_path == FAST_RECORDS:
            return self._redo_fast(rp, m)
        R, n_bad, first, err = self._memo_restore(rp, rp.restores, m)
        if err:
            return -1
        i = self.tracked.index(m)
        bad_out = int(self.cnt[i]) - int(K.count_at(self.mis[i], R))
        if torn_rows.size:
            pos = np.searchsorted(R, torn_rows)
            outside = torn_rows[(pos >= R.size) | (R[np.minimum(pos, max(R.size - 1, 0))] != torn_rows)] if R.size else torn_rows
            ref_off = self.ref.table_offset(m)
            for r in outside:
                now = K.row_differs(self.img, int(r) * self.row_B, self.pool, ref_off + int(r) * self.row_B, self.row_B)
                bad_out += int(now) - int(self.mis[i, r])
        if n_bad == 0 and bad_out == 0:
            return None
        return first if n_bad else -1

    def _redo_fast(self, rp: RecoveryPlan, k: int) -> int | None:
        rids = [r[3] for r in rp.restores]
        j = -1
        for jj, rid in enumerate(rids):  # records 0..jj final and untouched
            if self.count[rid] != self.region_total[rid] or self.touched[rid]:
                break
            if self.prefix_ok[jj]:
                j = jj
        if j == k:
            return None
        R, n_bad, first, err = self._memo_restore(rp, rp.restores[j + 1:k + 1], k)
        if err:
            return -1
        diff = self._ref_diff(j, k)
        pos = np.searchsorted(R, diff)
        covered = (pos < R.size) & (R[np.minimum(pos, max(R.size - 1, 0))] == diff) if R.size else np.zeros(diff.size, bool)
        if n_bad == 0 and covered.all():
            return None
        return first if n_bad else -1

    def _ref_diff(self, j: int, k: int) -> np.ndarray:
        """Ascending rows where the reference after ``j`` and after ``k`` differ."""
        if (j, k) not in self.diff_memo:
            rows = sorted_unique(np.concatenate([self.ref.unique_rows[b] for b in range(j + 1, k + 1)] or [np.zeros(0, np.int64)]))
            a, b = self.ref.table(j)[rows], self.ref.table(k)[rows]
            self.diff_memo[(j, k)] = rows[np.any(a.view(np.uint32) != b.view(np.uint32), axis=1)]
        return self.diff_memo[(j, k)]

    def materialise(self, rp: RecoveryPlan) -> tuple[np.ndarray | None, np.ndarray]:
        """The recovered tables ``(rows, dim)`` (None if a restore names a row out of range) and MLP."""
        pr = self.proto
        dim = self.row_B // 4
        base = pr.data_base
        table = self.img[base:base + pr.data_B].view(np.float32).reshape(pr.rows, dim).copy()
        for ids_at, vals_at, nrows, _ in rp.restores:
            ids = self.img[ids_at:ids_at + 8 * nrows].view(np.int64)
            if ids.size and (ids.min() < 0 or ids.max() >= pr.rows):
                return None, np.zeros(0, np.float32)
            vals = self.img[vals_at:vals_at + nrows * self.row_B].view(np.float32).reshape(nrows, dim)
            undo_log_restore(table, ids, vals)
        mlp = np.concatenate([self.img[a:a + 4 * (hi - lo)].view(np.float32) for a, lo, hi, _ in rp.mlp_parts])
        return table, mlp

    def _tables_slow(self, rp: RecoveryPlan, m: int) -> int | None:
        table, _ = self.materialise(rp)
        if table is None:
            return -1
        want = self.ref.table(min(max(m, -1), self.ref.n_batches - 1))
        if self.proto.tolerance > 0:  # within the error the scheme declares (e.g. quantised rows)
            bad = np.flatnonzero(np.any(~(np.abs(table - want) <= self.proto.tolerance), axis=1))
        else:
            bad = np.flatnonzero(np.any(table.view(np.uint32) != want.view(np.uint32), axis=1))
        return int(bad[0]) if bad.size else None

    def _prefix_ok(self) -> np.ndarray:
        """Redo: does replaying the final records ``0 … j`` onto the snapshot give the reference
        after ``j``? (Computed once from the image with every write applied.)"""
        pr, ev = self.proto, self.ev
        img = pr.image0.copy()
        count = np.zeros(self.n_regions, np.int64)
        K.apply_events(img, self.pool, 0, len(ev), ev.seg_lo, ev.seg_hi, ev.seg_dst, ev.seg_src, ev.seg_len,
                       ev.region, count, 0, self.row_B, np.zeros(0, np.int64), np.zeros((0, 1), np.bool_),
                       np.zeros(0, np.int64))
        dim = self.row_B // 4
        table = pr.image0[pr.snapshot.base:pr.snapshot.base + pr.data_B].view(np.float32).reshape(pr.rows, dim).copy()
        if not np.array_equal(table.view(np.uint32), self.ref.table(-1).view(np.uint32)):
            raise AssertionError("the snapshot is not the initial model")
        ok = np.zeros(pr.n_batches, np.bool_)
        for j, rows in enumerate(self.ref.unique_rows):
            ids_at, vals_at, _ = pr.record_parts(j, rows.size)
            ids = img[ids_at:ids_at + 8 * rows.size].view(np.int64)
            vals = img[vals_at:vals_at + rows.size * self.row_B].view(np.float32).reshape(rows.size, dim)
            undo_log_restore(table, ids, vals)
            ok[j] = np.array_equal(table.view(np.uint32), self.ref.table(j).view(np.uint32))
        return ok

    def recovered_state(self, t: float) -> tuple[RecoveryPlan, np.ndarray | None, np.ndarray]:
        """Recovery's plan at a crash at ``t`` and the state it rebuilds (tables, MLP)."""
        self.advance(t)
        nj, _, _, _ = self._tear(t)
        try:
            rp = plan(self.img, self.proto)
            if rp.error:
                return rp, None, np.zeros(0, np.float32)
            table, mlp = self.materialise(rp)
        finally:
            self._untear(nj)
        return rp, table, mlp
