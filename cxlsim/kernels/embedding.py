"""Embedding-bag lookup (gather + sum pool) and SGD update, one table at a time.

Bags are given DLRM-style by ``offsets`` (length ``bags + 1``, ``offsets[0] == 0``,
``offsets[-1] == len(indices)``): bag ``b`` sums rows ``indices[offsets[b]:offsets[b+1]]``.
Arithmetic is float32 and sequential in index order, so the kernels and their numpy references
agree bit for bit.

The update is plain SGD with sum pooling: every lookup of row ``r`` in bag ``b`` contributes
``bag_grads[b]`` to ``r``'s gradient; duplicate rows are accumulated first, in occurrence order,
then ``w[r] += delta`` with ``delta = (-lr) * accumulated`` (float32). The per-row deltas are returned
because the relaxed lookup (docs/design.md#relaxed-embedding-lookup) adds them to the next batch's
pooled vectors.

Speed: both kernels touch table rows in an order the hardware prefetcher cannot guess, so each
prefetches the row it will need :data:`PREFETCH_DISTANCE` steps ahead (an LLVM prefetch hint: it
changes no result). The update groups a table's lookups by row without a comparison sort: the
MSD split of :mod:`cxlsim.kernels.access` (buckets by high bits, an L1-resident bitmap per bucket)
orders the distinct rows, and a stable scatter keeps each row's lookups in occurrence order.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from cxlsim.kernels.access import (
    BUCKET_KEYS,
    BUCKET_LOW_BITS,
    BUCKET_LOW_MASK,
    MAX_BUCKETS_PER_KEY,
    WORD_BITS,
    WORD_MASK,
    WORD_SHIFT,
)
from cxlsim.kernels.prefetch import prefetch_read2, prefetch_write2
from cxlsim.kernels.sorting import key_bits, radix_sort_perm

EMBEDDING_DTYPE = np.float32

#: Lookups (or updated rows) between prefetching a table row and using it: about a DRAM latency of
#: work at RM2's shape (measured best of 16/32/64/128 by ``cxlsim bench kernels``).
PREFETCH_DISTANCE = 64
#: Cache line size: a row's lines are prefetched one by one.
CACHE_LINE_B = 64
@njit(inline="always")
def prefetch_row(weights: np.ndarray, row: int, write: bool) -> None:
    """Prefetch ``weights[row]``: its first and last byte's lines, and the lines between when the
    row is longer than two lines (a 2-line row off a line boundary spans three lines; the L2's
    adjacent-line prefetcher usually brings the third)."""
    dim = weights.shape[1]
    step = max(CACHE_LINE_B // weights.itemsize, 1)
    if write:
        prefetch_write2(weights, row, 0)
        prefetch_write2(weights, row, dim - 1)
    else:
        prefetch_read2(weights, row, 0)
        prefetch_read2(weights, row, dim - 1)
    for d in range(step, dim - step, step):
        if write:
            prefetch_write2(weights, row, d)
        else:
            prefetch_read2(weights, row, d)


@njit(cache=True)
def embedding_bag_sum(weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Pooled vectors ``(bags, dim)`` float32: the sum of each bag's rows of ``weights``."""
    bags = offsets.size - 1
    dim = weights.shape[1]
    out = np.zeros((bags, dim), np.float32)
    last = indices.size - 1
    for b in range(bags):
        for j in range(offsets[b], offsets[b + 1]):
            prefetch_row(weights, indices[min(j + PREFETCH_DISTANCE, last)], False)
            row = indices[j]
            for d in range(dim):  # row-contiguous, vectorised; out[b] stays in L1
                out[b, d] += weights[row, d]
    return out


def embedding_bag_sum_ref(weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Numpy reference of :func:`embedding_bag_sum`: vectorised over bags, the k-th lookup of every
    bag added in step k (the same float32 summation order as the kernel)."""
    bags = offsets.size - 1
    out = np.zeros((bags, weights.shape[1]), np.float32)
    lengths = np.diff(offsets)
    starts = offsets[:-1]
    for k in range(int(lengths.max()) if bags else 0):
        has = lengths > k
        out[has] += weights[indices[starts[has] + k]]
    return out


@njit(cache=True)
def bag_of_positions(offsets: np.ndarray) -> np.ndarray:
    """For each lookup position, the bag it belongs to."""
    out = np.empty(offsets[-1], np.int64)
    for b in range(offsets.size - 1):
        for j in range(offsets[b], offsets[b + 1]):
            out[j] = b
    return out


@njit(cache=True)
def accumulate_by_row_sorted(
    indices: np.ndarray, offsets: np.ndarray, bag_grads: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct rows ascending, summed bag gradients per row)``, each row's lookups summed in
    occurrence order: a stable radix sort (for tables much larger than the batch)."""
    dim = bag_grads.shape[1]
    bag = bag_of_positions(offsets)
    keys, perm = radix_sort_perm(indices)  # stable: equal rows keep occurrence order
    n = keys.size
    n_unique = 0
    for i in range(n):
        if i == 0 or keys[i] != keys[i - 1]:
            n_unique += 1
    rows = np.empty(n_unique, np.int64)
    acc = np.zeros((n_unique, dim), np.float32)
    u = -1
    for i in range(n):  # runs of equal rows, each in occurrence order
        if i == 0 or keys[i] != keys[i - 1]:
            u += 1
            rows[u] = keys[i]
        g = bag[perm[i]]
        for d in range(dim):
            acc[u, d] += bag_grads[g, d]
    return rows, acc


@njit(cache=True)
def accumulate_by_row_split(
    indices: np.ndarray, offsets: np.ndarray, bag_grads: np.ndarray, high_bits: int
) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`accumulate_by_row_sorted`, by an MSD split of the rows (``< 2**(high_bits +
    BUCKET_LOW_BITS)``): a stable scatter of (low bits, bag) into buckets of high bits, then per
    bucket an L1 bitmap orders its distinct rows and its lookups are summed in bucket order, which
    is each row's occurrence order."""
    dim = bag_grads.shape[1]
    n = indices.size
    buckets = 1 << high_bits
    start = np.zeros(buckets + 1, np.int64)
    for j in range(n):
        start[(indices[j] >> BUCKET_LOW_BITS) + 1] += 1
    for b in range(buckets):
        start[b + 1] += start[b]
    cursor = start[:buckets].copy()
    low = np.empty(n, np.uint16)
    bag = np.empty(n, np.int64)
    for g in range(offsets.size - 1):
        for j in range(offsets[g], offsets[g + 1]):
            b = indices[j] >> BUCKET_LOW_BITS
            p = cursor[b]
            low[p] = indices[j] & BUCKET_LOW_MASK
            bag[p] = g
            cursor[b] = p + 1
    # distinct rows, ascending: bucket by bucket, a bitmap's set bits in order
    rows = np.empty(n, np.int64)
    first = np.empty(buckets + 1, np.int64)  # rows[first[b]:first[b+1]] lie in bucket b
    bitmap = np.zeros(BUCKET_KEYS // WORD_BITS, np.int64)
    u = 0
    for b in range(buckets):
        first[b] = u
        summary = 0
        for i in range(start[b], start[b + 1]):
            v = np.int64(low[i])
            bitmap[v >> WORD_SHIFT] |= 1 << (v & WORD_MASK)
            summary |= 1 << (v >> WORD_SHIFT)
        while summary:
            w = trailing_zeros(summary)
            summary &= summary - 1
            word = bitmap[w]
            bitmap[w] = 0
            while word:
                rows[u] = (b << BUCKET_LOW_BITS) | (w << WORD_SHIFT) | trailing_zeros(word)
                word &= word - 1
                u += 1
    first[buckets] = u
    acc = np.zeros((u, dim), np.float32)
    rank = np.empty(BUCKET_KEYS, np.int64)  # low bits -> output row, for the current bucket
    for b in range(buckets):
        for r in range(first[b], first[b + 1]):
            rank[rows[r] & BUCKET_LOW_MASK] = r
        for i in range(start[b], start[b + 1]):  # bucket order = occurrence order of each row
            r = rank[np.int64(low[i])]
            g = bag[i]
            for d in range(dim):
                acc[r, d] += bag_grads[g, d]
    return rows[:u], acc


@njit(cache=True)
def embedding_sgd_update(
    weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray, bag_grads: np.ndarray, lr: float
) -> tuple[np.ndarray, np.ndarray]:
    """SGD on ``weights`` IN PLACE; returns ``(unique_rows ascending, deltas (U, dim) float32)``."""
    high_bits = max(key_bits(weights.shape[0] - 1) - BUCKET_LOW_BITS, 0)
    if (1 << high_bits) <= MAX_BUCKETS_PER_KEY * indices.size + 1:
        rows, deltas = accumulate_by_row_split(indices, offsets, bag_grads, high_bits)
    else:
        rows, deltas = accumulate_by_row_sorted(indices, offsets, bag_grads)
    dim = weights.shape[1]
    neg_lr = np.float32(-lr)
    last = rows.size - 1
    for u in range(rows.size):
        prefetch_row(weights, rows[min(u + PREFETCH_DISTANCE, last)], True)
        row = rows[u]
        for d in range(dim):
            delta = neg_lr * deltas[u, d]
            deltas[u, d] = delta
            weights[row, d] += delta
    return rows, deltas


def embedding_sgd_update_ref(
    weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray, bag_grads: np.ndarray, lr: float
) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`embedding_sgd_update` (``np.add.at`` accumulates in index order)."""
    bag = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    rows, inverse = np.unique(indices, return_inverse=True)
    acc = np.zeros((rows.size, weights.shape[1]), np.float32)
    np.add.at(acc, inverse.ravel(), bag_grads[bag])
    deltas = np.float32(-lr) * acc
    weights[rows] += deltas
    return rows.astype(np.int64), deltas
