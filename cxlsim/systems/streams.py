"""Per-batch index streams and their access analysis, computed once and shared by every system.

Systems that see the same inputs (same workload parameters, seed and batch count) share one
:class:`StreamSet`; the most recent one is kept in memory (more with :func:`keep_stream_sets`), so
a comparison of seven systems on one workload generates and analyses its streams once.

Contract: ``StreamSet.batch(n)`` gives a :class:`BatchStreams` with global row ids (layout order):
``lookup_rows`` — every lookup of the batch, table-major (table 0's bags first), as the engine
processes them; ``unique_rows`` ascending with ``counts``; ``n_shared_prev`` — distinct rows also
touched by batch n−1 (the relaxed-lookup correction's work).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.workloads.analysis import analyze_batch
from cxlsim.workloads.catalog import Workload
from cxlsim.workloads.layout import TableLayout
from cxlsim.workloads.source import input_batches
from cxlsim.workloads.trace import trace_identity


@dataclass(frozen=True)
class BatchStreams:
    number: int
    lookup_rows: np.ndarray  # global row ids (:func:`row_dtype`), table-major, length n_indices
    unique_rows: np.ndarray  # ascending distinct global rows (same dtype)
    counts: np.ndarray  # lookups per unique row (:func:`count_dtype`)
    n_shared_prev: int  # distinct rows batch n−1 touched too
    n_shared_lookups: int  # lookups of those rows (the relaxed correction's adds, per element)
    shared: np.ndarray | None = None  # bool per unique row: batch n−1 touched it too

    def on(self, lookup_owner: np.ndarray, unique_owner: np.ndarray, m: int) -> BatchStreams:
        """The part of this batch held by device ``m``, given the device of every lookup row and of
        every distinct row (lookups keep their order)."""
        u_keep = unique_owner == m
        shared = self.shared[u_keep]
        counts = self.counts[u_keep]
        return BatchStreams(self.number, self.lookup_rows[lookup_owner == m], self.unique_rows[u_keep], counts,
                            int(shared.sum()), int(counts[shared].sum()), shared)

    @property
    def n_indices(self) -> int:
        return int(self.lookup_rows.size)

    @property
    def n_unique(self) -> int:
        return int(self.unique_rows.size)


#: Row ids and counts are held in int32 where they fit (RM2: 46 M rows, 2.5 M lookups a batch), so a
#: run's streams take 4 bytes per lookup and 9 per distinct row instead of 24 per lookup.
INT32_MAX = int(np.iinfo(np.int32).max)


def row_dtype(total_rows: int) -> np.dtype:
    """The dtype of global row ids for tables of ``total_rows`` rows in all: int32 where every id
    fits, else int64. Consumers widen before arithmetic that can leave the range (addresses)."""
    return np.dtype(np.int32) if total_rows - 1 <= INT32_MAX else np.dtype(np.int64)


def count_dtype(lookups: int) -> np.dtype:
    """The dtype of per-row lookup counts in a batch of ``lookups`` lookups."""
    return np.dtype(np.int32) if lookups <= INT32_MAX else np.dtype(np.int64)


class StreamSet:
    """The analysed input streams of (at most) ``n`` batches of a workload for a seed.

    Batches are generated and analysed in order as they are first asked for, so a run that stops
    early (``batches: auto``) never makes the rest; :meth:`prepare` makes them ahead (a caller
    that forks workers, so they inherit them)."""

    def __init__(self, workload: Workload, seed: int, n: int) -> None:
        self.workload = workload
        self.seed = seed
        self.n = n
        self.layout = TableLayout.from_workload(workload)
        self.row_dtype = row_dtype(int(self.layout.total_rows))
        self._batches: list[BatchStreams] = []
        #: batches generated but not analysed yet (:meth:`rows`): (global rows, table starts), in order
        self._raw: list[tuple[np.ndarray, np.ndarray]] = []
        self._source = input_batches(workload, seed=seed, n=None, dense=False)  # batch k is the same whatever n
        self._prev = None

    def _generate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The source's next batch: (global rows, table starts, local indices)."""
        b = next(self._source)
        rows = np.empty(b.indices.size, self.row_dtype)
        for t, (lo, hi) in enumerate(zip(b.table_starts[:-1].tolist(), b.table_starts[1:].tolist(), strict=True)):
            np.add(b.indices[lo:hi], self.layout.row_base[t], out=rows[lo:hi], casting="unsafe")  # ids fit
        return rows, b.table_starts, b.indices

    def rows(self, n: int) -> np.ndarray:
        """Global rows batch ``n`` accesses (its distinct rows where it is analysed already, else
        every lookup), generating it without the analysis the run may never need (a later
        :meth:`prepare` analyses it)."""
        if not 0 <= n < self.n:
            raise IndexError(f"batch {n} of a stream set of {self.n}")
        if n < len(self._batches):
            return self._batches[n].unique_rows
        while len(self._batches) + len(self._raw) <= n:
            rows, starts, _ = self._generate()
            self._raw.append((rows, starts))
        return self._raw[n - len(self._batches)][0]

    def prepare(self, n: int | None = None) -> StreamSet:
        """Generate the first ``n`` batches (default: all) now; returns self."""
        want = self.n if n is None else min(n, self.n)
        while len(self._batches) < want:
            if self._raw:  # generated by rows(): its local indices again
                rows, starts = self._raw.pop(0)
                indices = np.empty(rows.size, np.int64)
                for t, (lo, hi) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True)):
                    np.subtract(rows[lo:hi], self.layout.row_base[t], out=indices[lo:hi])
            else:
                rows, starts, indices = self._generate()
            acc = analyze_batch(indices, self.layout, self._prev, table_starts=starts)
            cdt = count_dtype(indices.size)
            # compact copies: the analysis's outputs are views of lookup-sized int64 buffers
            self._batches.append(BatchStreams(len(self._batches), rows, acc.unique_rows.astype(self.row_dtype),
                                              acc.counts.astype(cdt), int(acc.shared_prev.sum()),
                                              int(acc.counts[acc.shared_prev].sum()), acc.shared_prev))
            self._prev = acc
        return self

    def batch(self, n: int) -> BatchStreams:
        if not 0 <= n < self.n:
            raise IndexError(f"batch {n} of a stream set of {self.n}")
        if n >= len(self._batches):
            self.prepare(n + 1)
        return self._batches[n]

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        """Bytes of the batches made so far (their arrays)."""
        return (sum(b.lookup_rows.nbytes + b.unique_rows.nbytes + b.counts.nbytes
                    + (0 if b.shared is None else b.shared.nbytes) for b in self._batches)
                + sum(r.nbytes + s.nbytes for r, s in self._raw))


def _key(workload: Workload) -> tuple:
    """The stream set's identity: the workload's parameters, and its trace file's identity where one is
    set (a trace rewritten in place is read again)."""
    return (workload.name, tuple(sorted((k, str(v)) for k, v in workload.params.items())),
            trace_identity(workload.params.trace))


_LAST: dict[tuple, StreamSet] = {}
_KEEP = [1]  # stream sets kept in memory (full-size streams are large: RM2's 23 batches ≈ 0.8 GB)


def keep_stream_sets(n: int) -> int:
    """Keep the ``n`` most recent stream sets in memory (default 1); returns the previous value.
    A caller that forks workers after generating several workloads' streams raises it."""
    if n < 1:
        raise ValueError("keep at least one stream set")
    previous, _KEEP[0] = _KEEP[0], n
    while len(_LAST) > n:
        del _LAST[next(iter(_LAST))]
    return previous


def stream_set(workload: Workload, seed: int, n: int) -> StreamSet:
    """The (possibly cached) stream set for ``workload`` and ``seed``, holding at least ``n``
    batches (a cached set is extended: its batches are the same whatever its length)."""
    key = (_key(workload), seed)
    if key not in _LAST:
        while len(_LAST) >= _KEEP[0]:
            del _LAST[next(iter(_LAST))]  # the oldest
        _LAST[key] = StreamSet(workload, seed, n)
    found = _LAST[key]
    found.n = max(found.n, n)
    return found
