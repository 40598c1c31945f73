"""Statistics of an index stream (a trace's or the generator's), to hold one against the other.

Over the batches given, with rows counted as distinct (table, row) pairs (global ids of the layout):

- ``distinct_rows_per_batch``: mean, min and max of each batch's distinct rows;
- ``shared_prev_fraction``: mean over batches 1 … n−1 of the share of a batch's distinct rows that
  the previous batch touched too (``cxlsim workload``'s per-batch ``reuse_prev_fraction``);
- ``reuse_distance_batches``: for every (batch, distinct row) of batches 1 … n−1 that an earlier
  batch of the window touched, the batches since the latest such touch: ``median`` and ``p90``
  (NumPy's linear percentile), and ``first_touch_fraction``, the share of those (batch, row) pairs no
  earlier batch of the window touched (the window's cold misses);
- ``zipf_exponent``: per table, the least-squares slope ``s`` of ``log count = c − s log rank`` over
  the table's rows looked up at least twice in the window (all its rows if fewer than three such), the
  rows ranked by lookups; ``median`` over the tables with at least three points, and ``per_table``.
  The estimator is biased by the window's sampling (rare rows are seen once or not at all), the same
  way for both streams: compare a trace with the generator, not with the generator's exponent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from cxlsim.workloads.analysis import analyze_batch
from cxlsim.workloads.generator import Batch
from cxlsim.workloads.layout import TableLayout

#: Fewest points a table's popularity fit takes.
MIN_FIT_POINTS = 3


def zipf_exponent(rows: np.ndarray) -> float | None:
    """The popularity fit (module docstring) of one table's looked-up ``rows``; None below
    :data:`MIN_FIT_POINTS` distinct rows."""
    if rows.size == 0:
        return None
    counts = np.sort(np.unique(rows, return_counts=True)[1])[::-1].astype(np.float64)
    ranks = np.arange(1, counts.size + 1, dtype=np.float64)
    repeated = counts >= 2
    if int(repeated.sum()) >= MIN_FIT_POINTS:
        counts, ranks = counts[repeated], ranks[repeated]
    if counts.size < MIN_FIT_POINTS:
        return None
    slope = np.polyfit(np.log(ranks), np.log(counts), 1)[0]
    return float(-slope)


def stream_stats(batches: Iterable[Batch], layout: TableLayout) -> dict[str, Any]:
    """The statistics (module docstring) of ``batches`` over ``layout``'s global rows."""
    prev = None
    distinct, shared = [], []
    occ_rows, occ_batch = [], []
    per_table: list[list[np.ndarray]] = []
    n = 0
    for n, b in enumerate(batches, start=1):
        acc = analyze_batch(b.indices, layout, prev, table_starts=b.table_starts)
        distinct.append(acc.n_unique)
        if prev is not None:
            shared.append(acc.reuse_prev_fraction)
        occ_rows.append(acc.unique_rows.copy())
        occ_batch.append(np.full(acc.n_unique, n - 1, np.int64))
        if not per_table:
            per_table = [[] for _ in range(b.tables)]
        for t in range(b.tables):
            per_table[t].append(b.table(t))
        prev = acc
    if n == 0:
        return {"batches": 0}
    rows, when = np.concatenate(occ_rows), np.concatenate(occ_batch)
    order = np.lexsort((when, rows))
    rows, when = rows[order], when[order]
    repeat = np.append(False, rows[1:] == rows[:-1])
    gap = np.append(0, np.diff(when))
    later = when > 0
    dist = gap[repeat & later]
    fits = [zipf_exponent(np.concatenate(parts)) for parts in per_table]
    good = [f for f in fits if f is not None]
    return {
        "batches": n,
        "distinct_rows_per_batch": {"mean": float(np.mean(distinct)), "min": int(min(distinct)),
                                    "max": int(max(distinct))},
        "shared_prev_fraction": float(np.mean(shared)) if shared else None,
        "reuse_distance_batches": {
            "median": float(np.median(dist)) if dist.size else None,
            "p90": float(np.percentile(dist, 90)) if dist.size else None,
            "first_touch_fraction": float(1.0 - dist.size / int(later.sum())) if later.any() else None,
        },
        "zipf_exponent": {"median": float(np.median(good)) if good else None,
                          "per_table": [None if f is None else round(f, 6) for f in fits]},
    }
