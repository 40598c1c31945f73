"""Embedding-bag lookup (gather + sum pool) and SGD update, one table at a time.

Bags are given DLRM-style by ``offsets`` (length ``bags + 1``, ``offsets[0] == 0``,
``offsets[-1] == len(indices)``): bag ``b`` sums rows ``indices[offsets[b]:offsets[b+1]]``.
Arithmetic is float32 and sequential in index order, so the kernels and their numpy references
agree bit for bit.

The update is plain SGD with sum pooling: every lookup of row ``r`` in bag ``b`` contributes
``bag_grads[b]`` to ``r``'s gradient; duplicate rows are accumulated first, in occurrence order,
then ``w[r] += delta`` with ``delta = (-lr) * accumulated`` (float32). The per-row deltas are returned
because the relaxed lookup (SPEC §3.3) adds them to the next batch's pooled vectors.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cxlsim.kernels.sorting import radix_sort_perm

EMBEDDING_DTYPE = np.float32


@njit(cache=True)
def embedding_bag_sum(weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Pooled vectors ``(bags, dim)`` float32: the sum of each bag's rows of ``weights``."""
    bags = offsets.size - 1
    dim = weights.shape[1]
    out = np.zeros((bags, dim), np.float32)
    acc = np.zeros(dim, np.float32)  # a private accumulator lets LLVM vectorise the row add
    for b in range(bags):
        acc[:] = 0
        for j in range(offsets[b], offsets[b + 1]):
            w_row = weights[indices[j]]
            for d in range(dim):
                acc[d] += w_row[d]
        out[b] = acc
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
def embedding_sgd_update(
    weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray, bag_grads: np.ndarray, lr: float
) -> tuple[np.ndarray, np.ndarray]:
    """SGD on ``weights`` IN PLACE; returns ``(unique_rows ascending, deltas (U, dim) float32)``."""
    dim = weights.shape[1]
    bag = bag_of_positions(offsets)
    keys, perm = radix_sort_perm(indices)  # stable: equal rows keep occurrence order
    n = keys.size
    n_unique = 0
    for i in range(n):
        if i == 0 or keys[i] != keys[i - 1]:
            n_unique += 1
    rows = np.empty(n_unique, np.int64)
    deltas = np.zeros((n_unique, dim), np.float32)  # accumulated gradients, then deltas
    u = -1
    for i in range(n):  # runs of equal rows, each in occurrence order (stable sort)
        if i == 0 or keys[i] != keys[i - 1]:
            u += 1
            rows[u] = keys[i]
        g = bag[perm[i]]
        for d in range(dim):
            deltas[u, d] += bag_grads[g, d]
    neg_lr = np.float32(-lr)
    for u in range(n_unique):
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
