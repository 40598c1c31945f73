"""Host-DRAM cache of embedding vectors in front of slow table memory (the ``ssd`` system, SPEC §2.3).

A set-associative cache with true LRU inside each set (``ways`` per set; ``ways == capacity`` gives
a fully associative LRU). Keys are global row ids, int64 in ``[0, MAX_ROW]`` (``MAX_ROW = 2**31 - 2``;
:func:`cache_access` raises ``ValueError`` before touching the state if a key is outside). The set
of a key is a multiplicative hash so that neighbouring rows spread over sets.

State (from :func:`new_cache`) is a 1-tuple holding ``sets``, a uint32 array ``[n_sets, ways]``:
row ``r`` is stored as ``((r + 1) << 1) | dirty`` and 0 is an empty slot. Each set lists its entries
most recently used first, empty slots last, so the LRU entry (the victim of a full set) is the last
slot. 4 B per entry, so a 16-way set is one 64 B cache line (the array is 64 B aligned); it is
allocated zeroed, so the OS commits memory only as sets are first used.

Contract of :func:`cache_access`: processes ``keys`` in order; a read inserts a missing key
(evicting its set's LRU entry); ``write=True`` marks the key dirty (write-allocate). Returns
``hit`` (bool per access) and the keys of dirty entries evicted (to be written back), in order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cxlsim.kernels.prefetch import prefetch_write2

#: Fibonacci hashing multiplier (2^64 / golden ratio), spreads consecutive row ids over sets.
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: Largest row id an entry can encode: ``(MAX_ROW + 1) << 1 | 1`` must fit in uint32.
MAX_ROW = 2**31 - 2
#: How many keys ahead :func:`cache_access` prefetches the set's line (hides DRAM latency).
PREFETCH_AHEAD = 64


def new_cache(capacity_rows: int, ways: int = 16) -> tuple[np.ndarray]:
    """Empty cache state for ``capacity_rows`` entries in sets of ``ways`` (see the module doc)."""
    ways = max(1, min(ways, capacity_rows))
    sets = max(1, capacity_rows // ways)
    n = sets * ways
    raw = np.zeros(n + 16, dtype=np.uint32)  # lazily committed zero pages; 16 spare for alignment
    start = (-raw.ctypes.data % 64) // 4
    return (raw[start:start + n].reshape(sets, ways),)


@njit(cache=True)
def _set_of(key: np.int64, n_sets: int) -> int:
    h = np.uint64(key) * HASH_MULTIPLIER
    return int((h >> np.uint64(20)) % np.uint64(n_sets))


@njit(cache=True)
def cache_access(keys: np.ndarray, write: bool, sets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Access ``keys`` in order (contract in the module doc): ``(hit per key, dirty rows evicted)``."""
    n_sets, ways = sets.shape
    n = keys.shape[0]
    set_idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        if keys[i] < 0 or keys[i] > MAX_ROW:
            raise ValueError("vector cache: row ids must lie in [0, 2**31 - 2]")
        set_idx[i] = _set_of(keys[i], n_sets)
    one = np.uint32(1)
    wbit = one if write else np.uint32(0)
    hit = np.zeros(n, dtype=np.bool_)
    evicted = np.empty(n, dtype=np.int64)
    n_ev = 0
    for i in range(n):
        if i + PREFETCH_AHEAD < n:
            prefetch_write2(sets, set_idx[i + PREFETCH_AHEAD], 0)
        s = set_idx[i]
        tag = np.uint32((keys[i] + 1) << 1)
        pos = ways - 1  # the entry's slot if present, else the first empty slot, else the LRU slot
        found = False
        for w in range(ways):
            e = sets[s, w]
            if (e | one) == (tag | one):
                pos = w
                found = True
                break
            if e == 0:
                pos = w
                break
        old = sets[s, pos]
        if found:
            hit[i] = True
            new = old | wbit
        else:
            if old & one:  # a dirty victim (an empty slot is 0, a clean one has the bit clear)
                evicted[n_ev] = (np.int64(old) >> 1) - 1
                n_ev += 1
            new = tag | wbit
        for w in range(pos, 0, -1):  # move to the front: most recently used first
            sets[s, w] = sets[s, w - 1]
        sets[s, 0] = new
    return hit, evicted[:n_ev]


def cache_access_ref(keys, write, sets):
    """Reference implementation of :func:`cache_access` (plain Python, same state array)."""
    keys = np.asarray(keys, dtype=np.int64)
    if keys.size and (keys.min() < 0 or keys.max() > MAX_ROW):
        raise ValueError("vector cache: row ids must lie in [0, 2**31 - 2]")
    n_sets, ways = sets.shape
    hit = np.zeros(len(keys), dtype=bool)
    evicted = []
    for i, key in enumerate(keys.tolist()):
        with np.errstate(over="ignore"):
            s = int(((np.uint64(key) * HASH_MULTIPLIER) >> np.uint64(20)) % np.uint64(n_sets))
        lru = [(e >> 1) - 1 for e in sets[s].tolist() if e]  # row ids, most recent first
        dirty = [bool(e & 1) for e in sets[s].tolist() if e]
        if key in lru:
            w = lru.index(key)
            hit[i] = True
            d = dirty.pop(w) or write
            lru.pop(w)
        else:
            if len(lru) == ways:
                if dirty.pop():
                    evicted.append(lru[-1])
                lru.pop()
            d = write
        lru.insert(0, key)
        dirty.insert(0, d)
        sets[s] = [((r + 1) << 1) | int(dd) for r, dd in zip(lru, dirty, strict=True)] + [0] * (ways - len(lru))
    return hit, np.array(evicted, dtype=np.int64)
