"""Sets of row ids as bitmaps: the distinct rows of many arrays without sorting their concatenation.

A bitmap over ``total`` rows is ``uint64`` words, bit ``g & 63`` of word ``g >> 6`` for row ``g``
(:func:`new_bitmap`). :func:`mark` sets the bits of an array's rows (any order, repeats allowed);
:func:`members` gives the marked rows ascending (int64). Together they are ``np.unique`` of the
arrays' concatenation (:func:`members_ref`, what the test holds them to), at one pass over each
array and one over the bitmap (``total / 8`` bytes) instead of a sort of every element.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from cxlsim.arrays import unique as sorted_unique


def new_bitmap(total: int) -> np.ndarray:
    """An empty bitmap over rows ``[0, total)``."""
    return np.zeros((max(int(total), 0) + 63) // 64, np.uint64)


@njit(cache=True)
def mark(bitmap: np.ndarray, rows: np.ndarray) -> None:
    """Set the bits of ``rows`` (each in ``[0, 64 × bitmap.size)``)."""
    one = np.uint64(1)
    for i in range(rows.shape[0]):
        g = np.int64(rows[i])
        bitmap[g >> 6] |= one << np.uint64(g & 63)


@njit(cache=True)
def _count(bitmap: np.ndarray) -> int:
    c = 0
    for w in range(bitmap.size):
        x = bitmap[w]
        while x:
            x &= x - np.uint64(1)
            c += 1
    return c


@njit(cache=True)
def members(bitmap: np.ndarray) -> np.ndarray:
    """The rows whose bits are set, ascending."""
    out = np.empty(_count(bitmap), np.int64)
    k = 0
    for w in range(bitmap.size):
        x = bitmap[w]
        while x:
            out[k] = (np.int64(w) << 6) + np.int64(trailing_zeros(x))
            x &= x - np.uint64(1)
            k += 1
    return out


def members_ref(arrays) -> np.ndarray:
    """Reference: the distinct rows of ``arrays`` ascending, as :func:`mark` then :func:`members` give
    them (and the cheaper way for a few rows of many: a sort of them, not a pass over every word;
    :func:`cxlsim.arrays.unique`, where NumPy 2.4's hashing ``np.unique`` takes 60 times as long)."""
    arrays = [np.asarray(a, np.int64) for a in arrays]
    return sorted_unique(np.concatenate(arrays)) if arrays else np.zeros(0, np.int64)
