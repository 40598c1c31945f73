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
from cxlsim.workloads.generator import batches
from cxlsim.workloads.layout import TableLayout


@dataclass(frozen=True)
class BatchStreams:
    number: int
    lookup_rows: np.ndarray  # int64 global row ids, table-major, length n_indices
    unique_rows: np.ndarray  # int64 ascending distinct global rows
    counts: np.ndarray  # lookups per unique row
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


class StreamSet:
    """The analysed input streams of ``n`` batches of a workload for a seed."""

    def __init__(self, workload: Workload, seed: int, n: int) -> None:
        self.workload = workload
        self.seed = seed
        self.layout = TableLayout.from_workload(workload)
        self._batches: list[BatchStreams] = []
        prev = None
        for b in batches(workload, seed=seed, n=n, dense=False):
            rows = (b.indices + self.layout.row_base[:, None]).ravel()
            acc = analyze_batch(b.indices, self.layout, prev)
            self._batches.append(BatchStreams(b.number, rows, acc.unique_rows, acc.counts, int(acc.shared_prev.sum()),
                                              int(acc.counts[acc.shared_prev].sum()), acc.shared_prev))
            prev = acc

    def batch(self, n: int) -> BatchStreams:
        return self._batches[n]

    def __len__(self) -> int:
        return len(self._batches)


def _key(workload: Workload) -> tuple:
    return (workload.name, tuple(sorted((k, str(v)) for k, v in workload.params.items())))


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
    """The (possibly cached) stream set for ``workload``, ``seed`` and ``n`` batches."""
    key = (_key(workload), seed, n)
    if key not in _LAST:
        while len(_LAST) >= _KEEP[0]:
            del _LAST[next(iter(_LAST))]  # the oldest
        _LAST[key] = StreamSet(workload, seed, n)
    return _LAST[key]
