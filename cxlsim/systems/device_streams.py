"""The input streams one memory device of the full system serves, drawn without the full system's
streams (the symmetry reduction's representative device; :mod:`cxlsim.systems.symmetry`).

In the full system a row-sharded device ``d`` serves the lookups of all ``G × batch_size`` samples
that fall in its row range of every table (``whole``: every lookup of its tables). Its stream is
skewed by popularity: the device that holds the hottest rows serves the most lookups, each row
read many times, and it gates every lock-step batch. :class:`DeviceStreams` draws exactly that
stream, in distribution, for the device the reduction simulates, at a cost that does not grow
with ``G``:

* Each lookup position of table ``t`` (``G · batch_size · L`` of them) follows the generator
  (:mod:`cxlsim.workloads.generator`): it keeps the previous batch's row with probability ``c``
  (``reuse_prev_fraction``), else draws a fresh rank from the bounded power law, mapped to a row by
  the table's Feistel bijection. Only the positions whose row is on the device are held (``S``):
  a position in ``S`` keeps its row, or redraws and stays if the new row is on the device; of the
  other positions, ``Binomial(N − |S|, 1 − c)`` redraw, and those landing on the device are placed
  at distinct positions drawn uniformly outside ``S``.
* A fresh draw lands on the device's *head* rows (ranks below :data:`HEAD_RANKS`, enumerated once
  with their exact probabilities) or in the *tail* (the remaining ranks). The head/tail split is
  exact (binomial). A device holding at most :data:`ENUMERATED_ROWS` rows of a table (row-sharded
  over many devices) enumerates its tail ranks too, once (the bijection's inverse,
  :func:`~cxlsim.kernels.sampling.feistel_inverse`, of its rows), with their exact probabilities:
  how many tail draws land on it is binomial and which rows a categorical draw, so the work is the
  rows it keeps. A device holding more (whole tables, few devices) draws the tail from the power
  law restricted to it and keeps the rows the bijection puts on the device (about ``(1 − F(K))``
  of the fresh draws cost work). Both are the same distribution.
* Lookups keep the system's order (table-major, then sample-major positions), so the engine sees
  the device's accesses in the order full detail gives it.
* Bag readings (``bag_size: dlrm_uniform``, ``bag_dedup``; :mod:`cxlsim.workloads.generator`): the
  batch's ``G · batch_size`` bag sizes are drawn per table (the one cost here that grows with
  ``G``, under these readings only), so the positions number ``N_n``, their sum, and change from
  batch to batch: held positions past ``N_n`` are gone, positions past ``N_{n−1}`` draw fresh, and
  with ``bag_dedup`` the device's rows of a bag are its distinct ones, ascending (the positions stay
  as drawn, as the generator's do).
  With ``bag_size: per_table`` table ``t``'s bags are fixed at its own size
  (:attr:`~cxlsim.workloads.catalog.Workload.max_bag_sizes`): ``G · batch_size · L_t`` positions.

:func:`busiest_device` picks the system device with the most expected lookups (the one a lock-step
batch waits for): head masses exact, each tail's mass counted in proportion to the device's tail
rows (named approximation, for the choice only: a tail of ranks ≥ 2^18, each of tiny probability,
falls on the devices in proportion to their rows).
"""

from __future__ import annotations

import math

import numpy as np

from cxlsim.kernels.sampling import (
    EXPONENT_ONE_TOL,
    feistel_inverse,
    feistel_permute,
    power_law_ranks,
)
from cxlsim.rng import keyed_stream
from cxlsim.systems.streams import BatchStreams, count_dtype, row_dtype
from cxlsim.systems.topology import Placement
from cxlsim.workloads.catalog import Workload
from cxlsim.workloads.generator import dedup_bags, dlrm_bag_sizes, table_keys
from cxlsim.workloads.layout import TableLayout

#: Ranks enumerated exactly per table (the head); the rest are drawn by rejection or enumerated.
HEAD_RANKS = 1 << 18
#: A device's row range of a table up to this many rows has its tail ranks enumerated (memory: 24 B
#: a row, 6 MiB a table at the bound); a larger one draws its tail by rejection.
ENUMERATED_ROWS = 1 << 18
#: Child stream of the user's seed for device streams (after the generator's 0-2).
STREAM_DEVICE = 3


def rank_cdf(j: np.ndarray, n: int, exponent: float) -> np.ndarray:
    """``P(rank < j)`` under the generator's bounded power law on ``n`` ranks
    (:func:`cxlsim.kernels.sampling.power_law_ranks`)."""
    j = np.asarray(j, np.float64)
    if abs(exponent - 1.0) < EXPONENT_ONE_TOL:
        return np.log(j + 1.0) / math.log(n + 1.0)
    a = 1.0 - exponent
    return ((j + 1.0) ** a - 1.0) / ((n + 1.0) ** a - 1.0)


def _ranges(layout: TableLayout, placement: Placement, d: int) -> list[tuple[int, int]]:
    """Local row range ``[lo, hi)`` of every table on system device ``d``."""
    rows = np.diff(np.append(layout.row_base, layout.total_rows))
    M = placement.mems
    out = []
    for t, n in enumerate(rows.tolist()):
        if M == 1:
            out.append((0, n))
        elif placement.policy == "whole":
            out.append((0, n) if int(placement.table_mem[t]) == d else (0, 0))
        else:  # row_sharded: row r is on device r·M // n
            out.append((-(-d * n // M), -(-(d + 1) * n // M)))
    return out


class _Head:
    """A table's head ranks: their rows and probabilities."""

    def __init__(self, n: int, exponent: float, key: np.uint64) -> None:
        self.n, self.exponent, self.key = n, exponent, key
        self.K = min(n, HEAD_RANKS)
        ranks = np.arange(self.K, dtype=np.int64)
        self.rows = feistel_permute(ranks, n, key)
        edges = rank_cdf(np.arange(self.K + 1), n, exponent)
        self.w = np.diff(edges)
        self.F = float(edges[-1]) if self.K < n else 1.0  # P(rank < K)


def heads(workload: Workload, layout: TableLayout, seed: int) -> list[_Head]:
    """Every table's head (module docstring)."""
    p = workload.params
    rows = np.diff(np.append(layout.row_base, layout.total_rows))
    keys = table_keys(seed, p.tables)
    return [_Head(int(n), float(p.popularity_exponent), keys[t]) for t, n in enumerate(rows.tolist())]


def busiest_device(heads: list[_Head], placement: Placement) -> int:
    """The system device with the most expected lookups (module docstring), from every table's head."""
    M = placement.mems
    load = np.zeros(M)
    for t, h in enumerate(heads):
        n = h.n
        if M == 1:
            break
        if placement.policy == "whole":
            load[int(placement.table_mem[t])] += 1.0
            continue
        dev = h.rows * M // n
        load += np.bincount(dev, weights=h.w, minlength=M)
        if h.K < n:
            lo = -(-np.arange(M) * n // M)
            hi = -(-(np.arange(M) + 1) * n // M)
            tail_rows = (hi - lo) - np.bincount(dev, minlength=M)
            load += (1.0 - h.F) * tail_rows / (n - h.K)
    return int(np.argmax(load))


class _Bags:
    """The bag reading of a device's streams: ``samples`` bags per table and batch, each drawing
    ``lookups`` positions (``fixed``) or :func:`~cxlsim.workloads.generator.dlrm_bag_sizes`'s."""

    def __init__(self, samples: int, lookups: int, dlrm: bool, dedup: bool) -> None:
        self.samples, self.lookups, self.dlrm, self.dedup = samples, lookups, dlrm, dedup

    def sizes(self, rng: np.random.Generator, rows: int) -> np.ndarray:
        if self.dlrm:
            return dlrm_bag_sizes(rng.random(self.samples), rows, self.lookups)
        return np.full(self.samples, self.lookups, np.int64)


class _TableStream:
    """One table's lookups on one device, batch after batch (module docstring)."""

    def __init__(self, h: _Head, lo: int, hi: int, positions: int, reuse: float, bags: _Bags | None = None) -> None:
        self.n, self.lo, self.hi, self.N = h.n, lo, hi, positions
        self.exponent, self.key, self.reuse = h.exponent, h.key, reuse
        self.bags = bags
        self.N_prev = 0  # positions of the previous batch (bag readings)
        self.pos = np.empty(0, np.int64)  # positions on the device, ascending
        self.rows = np.empty(0, np.int64)
        if hi > lo:
            on = (h.rows >= lo) & (h.rows < hi)
            self.K, self.F = h.K, h.F
            self.head_rows = h.rows[on]
            self.head_cdf = np.cumsum(h.w[on])
            self.h = float(self.head_cdf[-1]) if self.head_cdf.size else 0.0
            self.tail_rows = None  # the device's tail rows, enumerated (ENUMERATED_ROWS)
            if hi - lo <= ENUMERATED_ROWS and h.K < h.n:
                ranks = feistel_inverse(np.arange(lo, hi, dtype=np.int64), h.n, h.key)
                ranks = np.sort(ranks[ranks >= h.K])
                self.tail_rows = feistel_permute(ranks, h.n, h.key)
                self.tail_cdf = np.cumsum(rank_cdf(ranks + 1, h.n, h.exponent) - rank_cdf(ranks, h.n, h.exponent))
                self.t = float(self.tail_cdf[-1]) if self.tail_cdf.size else 0.0

    def _fresh(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        """The rows on the device among ``draws`` fresh draws (their order random)."""
        if draws == 0:
            return np.empty(0, np.int64)
        tail = int(rng.binomial(draws, 1.0 - self.F)) if self.F < 1.0 else 0
        head = draws - tail
        n_head = int(rng.binomial(head, min(1.0, self.h / self.F))) if head and self.h > 0 else 0
        out = [self.head_rows[np.searchsorted(self.head_cdf, rng.random(n_head) * self.h, side="right")
                              .clip(max=self.head_rows.size - 1)]]
        if tail and self.tail_rows is not None:
            n_tail = int(rng.binomial(tail, min(1.0, self.t / (1.0 - self.F)))) if self.t > 0 else 0
            out.append(self.tail_rows[np.searchsorted(self.tail_cdf, rng.random(n_tail) * self.t, side="right")
                                      .clip(max=self.tail_rows.size - 1)])
        elif tail:
            u = self.F + (1.0 - self.F) * rng.random(tail)
            ranks = np.maximum(power_law_ranks(u, self.n, self.exponent), self.K)
            rows = feistel_permute(ranks, self.n, self.key)
            out.append(rows[(rows >= self.lo) & (rows < self.hi)])
        rows = np.concatenate(out)
        return rows[rng.permutation(rows.size)]

    def _free_positions(self, rng: np.random.Generator, count: int, taken: np.ndarray,
                        total: int | None = None) -> np.ndarray:
        """``count`` distinct positions drawn uniformly outside ``taken`` (ascending) in
        ``[0, total)`` (default ``N``): distinct ranks among the ``total − |taken|`` free
        positions, each mapped to its free position."""
        free = (self.N if total is None else total) - taken.size
        got = np.empty(0, np.int64)
        while got.size < count:
            need = count - got.size
            cand = np.sort(np.concatenate([got, rng.integers(0, free, size=need + need // 8 + 16)]))
            cand = cand[np.append(True, cand[1:] != cand[:-1])]
            got = cand if cand.size <= count else np.sort(cand[rng.permutation(cand.size)[:count]])
        # the i-th free position: i plus the taken positions at or before it
        gaps = taken - np.arange(taken.size)
        return got + np.searchsorted(gaps, got, side="right")

    def next(self, rng: np.random.Generator, first: bool) -> np.ndarray:
        """The next batch's rows on the device, in position order."""
        if self.bags is not None:
            return self._next_bags(rng, first)
        if self.hi <= self.lo:
            return self.rows
        c = 0.0 if first else self.reuse
        if self.pos.size:
            redraw = rng.random(self.pos.size) >= c
            fresh = self._fresh_each(rng, int(redraw.sum()))
            stay = fresh >= 0
            rows = self.rows.copy()
            idx = np.flatnonzero(redraw)
            rows[idx[stay]] = fresh[stay]
            keep = ~redraw
            keep[idx[stay]] = True
            old_pos, old_rows = self.pos[keep], rows[keep]
        else:
            old_pos, old_rows = self.pos, self.rows
        outside = int(rng.binomial(self.N - self.pos.size, 1.0 - c))
        new_rows = self._fresh(rng, outside)
        new_pos = self._free_positions(rng, new_rows.size, self.pos)
        pos = np.concatenate([old_pos, new_pos])
        rows = np.concatenate([old_rows, new_rows])
        order = np.argsort(pos, kind="stable")
        self.pos, self.rows = pos[order], rows[order]
        return self.rows

    def _next_bags(self, rng: np.random.Generator, first: bool) -> np.ndarray:
        """:meth:`next` under a bag reading (module docstring): this batch's ``N`` is its bags'
        sum; only positions the previous batch had may copy."""
        sizes = self.bags.sizes(rng, self.n)
        if self.hi <= self.lo:
            return self.rows
        N, c = int(sizes.sum()), 0.0 if first else self.reuse
        K = 0 if first else min(self.N_prev, N)  # positions that may copy
        alive = self.pos < K
        pos, rows = self.pos[alive], self.rows[alive]
        if pos.size:
            redraw = rng.random(pos.size) >= c
            fresh = self._fresh_each(rng, int(redraw.sum()))
            stay = fresh >= 0
            rows = rows.copy()
            idx = np.flatnonzero(redraw)
            rows[idx[stay]] = fresh[stay]
            keep = ~redraw
            keep[idx[stay]] = True
            pos, rows = pos[keep], rows[keep]
        inner = self._fresh(rng, int(rng.binomial(K - int(alive.sum()), 1.0 - c)) if K else 0)
        inner_pos = self._free_positions(rng, inner.size, self.pos[alive], K)
        outer = self._fresh(rng, N - K)
        outer_pos = K + self._free_positions(rng, outer.size, np.empty(0, np.int64), N - K)
        pos = np.concatenate([pos, inner_pos, outer_pos])
        rows = np.concatenate([rows, inner, outer])
        order = np.argsort(pos, kind="stable")
        self.pos, self.rows, self.N_prev = pos[order], rows[order], N
        if not self.bags.dedup:
            return self.rows
        bag = np.searchsorted(np.cumsum(sizes), self.pos, side="right")
        held = np.bincount(bag, minlength=sizes.size)
        return dedup_bags(self.rows, held)[0]

    def _fresh_each(self, rng: np.random.Generator, draws: int) -> np.ndarray:
        """Per draw: its row if it lands on the device, else −1 (exchangeable draws)."""
        out = np.full(draws, -1, np.int64)
        rows = self._fresh(rng, draws)
        out[rng.choice(draws, size=rows.size, replace=False)] = rows
        return out


def _member(x: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    if sorted_set.size == 0:
        return np.zeros(x.size, bool)
    i = np.searchsorted(sorted_set, x).clip(max=sorted_set.size - 1)
    return sorted_set[i] == x


class DeviceStreams:
    """The batches of system device ``device`` of ``mems`` serving ``gpus`` GPUs' samples (module
    docstring); ``batch(n)`` as :meth:`cxlsim.systems.streams.StreamSet.batch` would give the
    device's part of the full system's batch ``n`` (global row ids, the same layout)."""

    def __init__(self, workload: Workload, gpus: int, placement: Placement, device: int, seed: int,
                 n: int, table_heads: list[_Head] | None = None) -> None:
        p = workload.params
        layout = placement.layout
        self.device = device
        hs = table_heads if table_heads is not None else heads(workload, layout, seed)
        samples = gpus * p.batch_size
        L = workload.max_bag_sizes  # each table's bag bound (per_table: its fixed multi-hot size)
        rng = keyed_stream(seed, STREAM_DEVICE, device)

        def bags(t: int) -> _Bags | None:
            if p.bag_size != "dlrm_uniform" and not p.bag_dedup:
                return None
            return _Bags(samples, L[t], p.bag_size == "dlrm_uniform", bool(p.bag_dedup))

        tables = [_TableStream(hs[t], lo, hi, samples * L[t], float(p.reuse_prev_fraction), bags(t))
                  for t, (lo, hi) in enumerate(_ranges(layout, placement, device))]
        self.n, self._tables, self._rng, self._layout = n, tables, rng, layout
        self._rows = row_dtype(int(layout.total_rows))  # held as the system's streams hold them
        self._batches: list[BatchStreams] = []
        self._prev_unique = np.empty(0, np.int64)

    def batch(self, n: int) -> BatchStreams:
        """Batch ``n``; the batches are drawn in order as they are first asked for (the same
        whatever is asked), so a run that stops early never draws the rest."""
        if not 0 <= n < self.n:
            raise IndexError(f"batch {n} of a device stream of {self.n}")
        while len(self._batches) <= n:
            b, layout = len(self._batches), self._layout
            lookup = np.concatenate([ts.next(self._rng, b == 0) + layout.row_base[t]
                                     for t, ts in enumerate(self._tables)])
            unique, counts = np.unique(lookup, return_counts=True)
            shared = _member(unique, self._prev_unique)
            self._batches.append(BatchStreams(b, lookup.astype(self._rows), unique.astype(self._rows),
                                              counts.astype(count_dtype(lookup.size)), int(shared.sum()),
                                              int(counts[shared].sum()), shared))
            self._prev_unique = unique
        return self._batches[n]
