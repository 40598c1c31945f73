"""Stable LSD radix sort of non-negative int64 keys (the sort under unique-row extraction).

A batch holds tens of thousands of lookups per table whose keys fit in ~20–30 bits; an LSD radix
sort with :data:`RADIX_BITS`-bit digits sorts them in ``ceil(bits / RADIX_BITS)`` linear passes,
several times faster than a comparison sort, and is stable (equal keys keep their input order),
which the SGD update relies on for a deterministic accumulation order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Bits per radix digit: 2**11 counters (16 KiB) stay in L1 while a pass streams the keys.
RADIX_BITS = 11
RADIX_SIZE = 1 << RADIX_BITS
RADIX_MASK = RADIX_SIZE - 1


@njit(cache=True)
def key_bits(max_key: int) -> int:
    """Number of bits needed to write ``max_key`` (0 for 0)."""
    bits = 0
    while (max_key >> bits) > 0:
        bits += 1
    return bits


@njit(cache=True)
def radix_sort_perm(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(sorted_keys, perm)`` with ``sorted_keys == keys[perm]``; stable; keys >= 0."""
    n = keys.size
    ka = keys.copy()
    pa = np.arange(n)
    if n < 2:
        return ka, pa
    bits = key_bits(ka.max())
    kb = np.empty(n, np.int64)
    pb = np.empty(n, np.int64)
    count = np.empty(RADIX_SIZE + 1, np.int64)
    shift = 0
    while shift < bits:
        count[:] = 0
        for i in range(n):
            count[((ka[i] >> shift) & RADIX_MASK) + 1] += 1
        for d in range(RADIX_SIZE):
            count[d + 1] += count[d]
        for i in range(n):
            d = (ka[i] >> shift) & RADIX_MASK
            j = count[d]
            kb[j] = ka[i]
            pb[j] = pa[i]
            count[d] = j + 1
        ka, kb = kb, ka
        pa, pb = pb, pa
        shift += RADIX_BITS
    return ka, pa


@njit(cache=True)
def unique_counts_sorted(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of an ascending array and how often each occurs."""
    n = sorted_keys.size
    uniq = np.empty(n, np.int64)
    counts = np.empty(n, np.int64)
    u = -1
    for i in range(n):
        if u < 0 or sorted_keys[i] != uniq[u]:
            u += 1
            uniq[u] = sorted_keys[i]
            counts[u] = 1
        else:
            counts[u] += 1
    return uniq[: u + 1], counts[: u + 1]
