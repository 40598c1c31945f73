"""The pending table: an open-addressing hash map from global unit index to pending-until time (ns).

Split out of :mod:`cxlsim.devices.memory.media.media_kernel` (see its docstring for the mechanism).
"""

from __future__ import annotations

import gc
import os
import sys

import numpy as np

from cxlsim.devices.memory.media.media_index import EMPTY, NO_TIME
from cxlsim.kernels.jit import refcount_free_jit

HASH_MULT = 2654435761  # Knuth's multiplicative hash constant


HOME_RUN_SH = 4  # log2 of the aligned run of units that hash together in the pending table


HOME_RUN = 1 << HOME_RUN_SH


#: Accesses between prefetching the pending-table slot of an access's first unit and serving it
#: (a hashed slot is a cache miss once the table outgrows the caches; the hint changes no result).
PREFETCH_AHEAD = 16


PREFETCH_MIN_SLOTS = 1 << 15  # smaller tables (≤ 512 KiB) stay in cache: no prefetch


@refcount_free_jit(inline="always")
def _home(g, mask):
    """First slot probed for unit ``g``: aligned runs of ``HOME_RUN`` units hash to one place and
    keep their order there, so a sequential write burst touches a few cache lines, not one each."""
    return ((((g >> HOME_RUN_SH) * HASH_MULT) << HOME_RUN_SH) | (g & (HOME_RUN - 1))) & mask


@refcount_free_jit
def pend_lookup(keys, times, g):
    """Pending-until time (ns) of global unit ``g``, or -inf."""
    mask = keys.shape[0] - 1
    s = _home(g, mask)
    while True:
        k = keys[s]
        if k == g:
            return times[s]
        if k == EMPTY:
            return NO_TIME
        s = (s + 1) & mask


@refcount_free_jit
def pend_insert(keys, times, used, g, t, now):
    """Set unit ``g``'s pending-until to ``t``; slots dead at ``now`` are reused."""
    times[pend_slot(keys, times, used, g, now)] = t


@refcount_free_jit
def pend_slot(keys, times, used, g, now):
    """Slot of unit ``g``, claimed (time -inf) if absent, in the first slot on its probe path that
    is dead at ``now`` (else the empty slot ending it): one probe serves a lookup and the insert
    that follows it, provided no other insert comes between."""
    mask = keys.shape[0] - 1
    s = _home(g, mask)
    reuse = -1
    while True:
        k = keys[s]
        if k == g:
            return s
        if k == EMPTY:
            break
        if reuse < 0 and times[s] <= now:
            reuse = s
        s = (s + 1) & mask
    if reuse >= 0:
        s = reuse
    else:
        used[0] += 1
    keys[s] = g
    times[s] = NO_TIME
    return s


#: Tables of at least this many slots come from a per-process pool: a buffer whose tables every
#: user has dropped serves the next request of its size, its pages already mapped (a fresh 8 M-slot
#: table, 128 MB, costs 0.2–0.5 s of page faults on a VM; refilling a pooled one, a tenth of that).
POOL_MIN_SLOTS = 1 << 20
#: Bytes the pool holds at most, buffers in use included (named assumption: the prototype's largest
#: tables, 4 M and 8 M slots, two of each); past it, free buffers go, oldest first, or a new one is
#: not pooled.
POOL_MAX_B = 384 * 2**20
#: Tables at least this large are worth a run of the garbage collector (0.05–0.15 s here) when the
#: pooled buffers of their size are all held: a finished run's media states wait in reference cycles.
POOL_COLLECT_SLOTS = 1 << 22
_POOL: list[np.ndarray] = []


def _forget_pool() -> None:
    """In a forked worker: writing into its parent's buffers would copy each page; it makes its own."""
    _POOL.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _buffer(capacity: int) -> np.ndarray:
    """A ``[capacity, 2]`` int64 buffer: a free pooled one of that size, else a new one (pooled when
    large and within :data:`POOL_MAX_B`). A pooled buffer is free when nothing but the pool refers
    to it: every view of it (the tables made from it, their slices) holds it as its base."""
    if capacity < POOL_MIN_SLOTS:
        return np.empty((capacity, 2), np.int64)
    free = _free()
    sized = sum(b.shape[0] == capacity for b in _POOL)
    if capacity >= POOL_COLLECT_SLOTS and sized and not any(_POOL[i].shape[0] == capacity for i in free):
        gc.collect()  # a finished run's states, holding one of this size, may wait in reference cycles
        free = _free()
    for i in free:
        if _POOL[i].shape[0] == capacity:
            _POOL.append(_POOL.pop(i))  # the most recently used last
            return _POOL[-1]
    need = capacity * 2 * np.dtype(np.int64).itemsize
    held = sum(b.nbytes for b in _POOL)
    drop = []
    for i in free:  # the oldest free ones first
        if held + need <= POOL_MAX_B:
            break
        held -= _POOL[i].nbytes
        drop.append(i)
    for i in reversed(drop):
        del _POOL[i]
    buf = np.empty((capacity, 2), np.int64)
    if held + need <= POOL_MAX_B:
        _POOL.append(buf)
    return buf


def _free() -> list[int]:
    """Positions of the pooled buffers nothing else refers to (oldest first)."""
    return [i for i in range(len(_POOL)) if sys.getrefcount(_POOL[i]) == 2]  # the list's and the call's


def new_table(capacity):
    """An empty pending table of ``capacity`` slots (a power of two): ``(keys, times)``, two
    strided views of one buffer so that a slot's key and time share a cache line."""
    buf = _buffer(capacity)
    keys = buf[:, 0]
    times = buf.view(np.float64)[:, 1]
    keys[:] = EMPTY
    times[:] = NO_TIME
    return keys, times


@refcount_free_jit
def pend_gather(keys, times, now, gk, gt):
    """Move the entries alive after ``now`` (pending until later than it) into ``gk``/``gt``, in
    slot order, emptying the table in the same pass; returns their count. ``gk`` and ``gt`` must
    hold the table's used count."""
    live = 0
    for s in range(keys.shape[0]):
        k = keys[s]
        t = times[s]
        if k != EMPTY and t > now:
            gk[live] = k
            gt[live] = t
            live += 1
        keys[s] = EMPTY
        times[s] = NO_TIME
    return live


@refcount_free_jit
def pend_refill(keys, times, used, gk, gt, live, now, clear):
    """Insert the first ``live`` entries of ``gk``/``gt`` into the table, emptied first if
    ``clear`` (a spare table); ``used`` counts the slots taken."""
    if clear:
        for s in range(keys.shape[0]):
            keys[s] = EMPTY
            times[s] = NO_TIME
    used[0] = 0
    for j in range(live):
        pend_insert(keys, times, used, gk[j], gt[j], now)


@refcount_free_jit
def scan_stream(issue, addr, size, unit, horizon):
    """One pass over a stream: ``(bad, max_units, total_B)`` where ``bad`` is the index of the first
    access whose issue time decreases (or precedes ``horizon``), whose size is < 1 B or whose
    address is negative (-1 if none), ``max_units`` the most units one access touches and
    ``total_B`` the bytes the stream asks for (both over the accesses before ``bad``)."""
    most = 0
    total = 0
    prev = horizon
    sh = -1
    if unit & (unit - 1) == 0:
        sh = 0
        while (1 << sh) < unit:
            sh += 1
    for i in range(issue.shape[0]):
        a = addr[i]
        if issue[i] < prev or size[i] < 1 or a < 0:
            return i, most, total
        prev = issue[i]
        total += size[i]
        if sh >= 0:
            k = ((a + size[i] - 1) >> sh) - (a >> sh) + 1
        else:
            k = (a + size[i] - 1) // unit - a // unit + 1
        if k > most:
            most = k
    return -1, most, total


@refcount_free_jit(inline="always")
def _pend_find(keys, g):
    """Slot of unit ``g``, which must be in the table."""
    mask = keys.shape[0] - 1
    s = _home(g, mask)
    while keys[s] != g:
        if keys[s] == EMPTY:
            raise AssertionError("a posted write's unit is missing from the pending table")
        s = (s + 1) & mask
    return s
