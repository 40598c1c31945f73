"""A requester's slots: the earliest free time of ``outstanding`` slots that free out of order.

Split out of :mod:`cxlsim.devices.memory.media.media_kernel` (see its docstring for the mechanism).
"""

from __future__ import annotations

import functools

import numpy as np

from cxlsim.devices.memory.media.media_index import NO_TIME
from cxlsim.kernels.jit import refcount_free_jit


def slot_tree(outstanding):
    """The free times of a requester's ``outstanding`` slots, all free (-inf), as the loser tree of
    :func:`_slot_replace_min`: ``(vals, idx)`` of ``P`` entries each, ``P`` the power of two >=
    ``outstanding``. Leaf ``j < outstanding`` is slot ``j``; leaves beyond hold +inf (never the
    earliest). Node ``n`` in ``1 .. P - 1`` keeps the loser of the match between its two subtrees
    (its value in ``vals[n]``, its leaf in ``idx[n]``); node 0 the overall winner: ``vals[0]`` is
    the earliest free time. Fresh arrays, copied from a template built once per size (building
    one costs a Python loop over its nodes: 80 µs for 128 slots, once or twice per ``serve``)."""
    vals, idx = _slot_tree_template(max(1, int(outstanding)))
    return vals.copy(), idx.copy()


@functools.lru_cache(maxsize=64)
def _slot_tree_template(k):
    """:func:`slot_tree` of ``k`` slots (read-only arrays, shared: copy before use)."""
    size = 1
    while size < k:
        size *= 2
    leaf = np.full(size, np.inf)
    leaf[:k] = NO_TIME
    vals = np.empty(size)
    idx = np.empty(size, np.int64)
    win = np.arange(2 * size, dtype=np.int64) - size  # the winner (a leaf) below each node
    for n in range(size - 1, 0, -1):
        a, b = win[2 * n], win[2 * n + 1]
        w, lo = (a, b) if leaf[a] <= leaf[b] else (b, a)
        win[n], vals[n], idx[n] = w, leaf[lo], lo
    w = win[1] if size > 1 else 0
    vals[0], idx[0] = leaf[w], w
    vals.setflags(write=False)
    idx.setflags(write=False)
    return vals, idx


@refcount_free_jit(inline="always")
def _slot_replace_min(vals, idx, value):
    """The requester's earliest free slot (``vals[0]``) is taken by an access that frees it at
    ``value``: replay the leaf's matches up to the root (:func:`slot_tree`). The path is fixed by
    the leaf, so its log2(P) loads do not wait on the comparisons, and each level is a compare and
    a branch-free swap (selects, not branches: the outcomes are data-dependent and a mispredicted
    branch would discard the next accesses' work, which the CPU overlaps with this one). Only the
    multiset of free times matters to the kernel (which time is earliest), so this gives the same
    times as taking the first minimum of a plain list (the reference) or a heap."""
    v, cur = _slot_replay(vals, idx, idx[0], value)
    vals[0] = v
    idx[0] = cur


@refcount_free_jit(inline="always")
def _slot_replay(vals, idx, leaf, value):
    """:func:`_slot_replace_min` for the winner ``leaf`` (``idx[0]``) without node 0: returns the
    new winner ``(free time, leaf)``, which the kernel keeps in registers from one access to the
    next (its next start reads it there, not through a store and a load of node 0)."""
    size = vals.shape[0]
    cur = leaf
    v = value
    n = (cur + size) >> 1
    while n > 0:
        lv = vals[n]
        li = idx[n]
        sw = lv < v  # the stored loser wins this match: the running winner is stored instead
        vals[n] = v if sw else lv
        idx[n] = cur if sw else li
        v = lv if sw else v
        cur = li if sw else cur
        n >>= 1
    return v, cur
