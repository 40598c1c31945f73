"""The write-combining buffer: per-module entries, a membership filter and an LRU recency list.

Split out of :mod:`cxlsim.devices.memory.media.media_kernel` (see its docstring for the mechanism).
"""

from __future__ import annotations

import numpy as np

from cxlsim.devices.memory.media.media_index import EMPTY
from cxlsim.devices.memory.media.media_pending import HASH_MULT
from cxlsim.kernels.jit import refcount_free_jit

WCB_FILTER_BUCKETS = 1024  # per-module buckets of the write-combining buffer's membership filter


@refcount_free_jit(inline="always")
def _wcb_bucket(g, filt):
    return ((g * HASH_MULT) >> 16) & (filt.shape[1] - 1)


@refcount_free_jit
def _wcb_find(tags, filt, m, g):
    """Entry of module ``m``'s buffer holding unit ``g``, or -1. ``filt`` counts the buffered
    units per hash bucket, so most misses skip the scan."""
    if filt[m, _wcb_bucket(g, filt)] == 0:
        return -1
    for e in range(tags.shape[1]):
        if tags[m, e] == g:
            return e
    return -1


def wcb_filter(tags, buckets=WCB_FILTER_BUCKETS):
    """The bucket counts of :func:`_wcb_find` for buffer tags ``tags`` (modules × entries)."""
    filt = np.zeros((tags.shape[0], buckets), np.int32)
    for m in range(tags.shape[0]):
        for g in tags[m]:
            if g != EMPTY:
                filt[m, ((int(g) * HASH_MULT) >> 16) & (buckets - 1)] += 1
    return filt


@refcount_free_jit(inline="always")
def _lru_victim(lru, m, entries):
    """The entry a write miss replaces: the first empty entry, else the least recently used one,
    in O(1): empty entries are always a suffix (they fill in index order and
    are emptied only all at once), so the first empty one is ``count``; else the list's tail."""
    if lru[m, 2] < entries:
        return lru[m, 2]
    return lru[m, 1]


@refcount_free_jit
def _lru_touch(prev, nxt, lru, m, e, entries):
    """Move entry ``e`` of module ``m`` to the most-recently-used end (appending a new one)."""
    if e == lru[m, 2] and lru[m, 2] < entries:  # a new entry
        lru[m, 2] += 1
    else:
        p = prev[m, e]
        q = nxt[m, e]
        if p >= 0:
            nxt[m, p] = q
        else:
            lru[m, 0] = q
        if q >= 0:
            prev[m, q] = p
        else:
            lru[m, 1] = p
    h = lru[m, 0]
    prev[m, e] = -1
    nxt[m, e] = h
    if h >= 0:
        prev[m, h] = e
    else:
        lru[m, 1] = e
    lru[m, 0] = e


def lru_state(tags, stamps):
    """``(prev, next, lru)`` of the recency list for buffer ``tags`` ordered by ``stamps``
    (``lru[m] = [most recent, least recent, count]``)."""
    modules, entries = tags.shape
    prev = np.full((modules, entries), -1, np.int64)
    nxt = np.full((modules, entries), -1, np.int64)
    lru = np.full((modules, 3), -1, np.int64)
    for m in range(modules):
        used = [e for e in range(entries) if tags[m, e] != EMPTY]
        order = sorted(used, key=lambda e: -int(stamps[m, e]))  # most recent first
        lru[m, 2] = len(used)
        if order:
            lru[m, 0], lru[m, 1] = order[0], order[-1]
        for a, b in zip(order[:-1], order[1:], strict=True):
            nxt[m, a], prev[m, b] = b, a
    return prev, nxt, lru
