"""Relaxed embedding lookup correction (docs/design.md#relaxed-embedding-lookup).

Batch n+1's bags are pooled on the table *before* batch n's update; when batch n's per-row deltas
(``delta = -lr × accumulated grad`` for each unique row of batch n, as returned by
:func:`cxlsim.kernels.embedding.embedding_sgd_update`) are known, each bag of n+1 receives the delta
of every row it shares with batch n, once per occurrence. In real arithmetic the result equals the
dependent lookup (pooling after the update); in float32 it equals it exactly whenever all sums are
representable (e.g. small integers or dyadic values), and to float32 rounding otherwise.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _find_sorted(sorted_rows: np.ndarray, row: int) -> int:
    """Position of ``row`` in ascending ``sorted_rows``, or -1."""
    k = np.searchsorted(sorted_rows, row)
    if k < sorted_rows.size and sorted_rows[k] == row:
        return k
    return -1


@njit(cache=True)
def relaxed_correction(
    pooled: np.ndarray,
    indices: np.ndarray,
    offsets: np.ndarray,
    prev_rows: np.ndarray,
    prev_deltas: np.ndarray,
) -> np.ndarray:
    """Corrected pooled vectors (a new array); ``prev_rows`` ascending, ``prev_deltas`` aligned."""
    out = pooled.copy()
    dim = pooled.shape[1]
    for b in range(offsets.size - 1):
        for j in range(offsets[b], offsets[b + 1]):
            k = _find_sorted(prev_rows, indices[j])
            if k >= 0:
                for d in range(dim):
                    out[b, d] += prev_deltas[k, d]
    return out


def relaxed_correction_ref(
    pooled: np.ndarray,
    indices: np.ndarray,
    offsets: np.ndarray,
    prev_rows: np.ndarray,
    prev_deltas: np.ndarray,
) -> np.ndarray:
    """Numpy reference of :func:`relaxed_correction` (same addition order: by position)."""
    out = pooled.copy()
    k = np.searchsorted(prev_rows, indices)
    k_clip = np.minimum(k, max(prev_rows.size - 1, 0))
    hit = (k < prev_rows.size) & (prev_rows[k_clip] == indices) if prev_rows.size else np.zeros(indices.size, bool)
    bag = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    for j in np.flatnonzero(hit):
        out[bag[j]] += prev_deltas[k[j]]
    return out
