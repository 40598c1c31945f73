"""Host-DRAM cache of embedding vectors in front of slow table memory (the ``ssd`` system, SPEC §2.3).

A set-associative cache with true LRU inside each set (``ways`` per set; ``ways == capacity`` gives
a fully associative LRU). Keys are global row ids (int64 ≥ 0). State is three arrays:
``tags[sets, ways]`` (−1 = empty), ``stamp[sets, ways]`` (last use, larger = more recent) and
``dirty[sets, ways]``, plus a use counter in ``clock[0]``. The set of a key is a multiplicative
hash so that neighbouring rows spread over sets.

Contract of :func:`cache_access`: processes ``keys`` in order; a read inserts a missing key
(evicting its set's LRU entry); ``write=True`` marks the key dirty (write-allocate). Returns
``hit`` (bool per access) and the keys of dirty entries evicted (to be written back), in order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Fibonacci hashing multiplier (2^64 / golden ratio), spreads consecutive row ids over sets.
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
EMPTY = -1


def new_cache(capacity_rows: int, ways: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Empty cache state for ``capacity_rows`` entries in sets of ``ways``."""
    ways = max(1, min(ways, capacity_rows))
    sets = max(1, capacity_rows // ways)
    tags = np.full((sets, ways), EMPTY, dtype=np.int64)
    stamp = np.zeros((sets, ways), dtype=np.int64)
    dirty = np.zeros((sets, ways), dtype=np.bool_)
    clock = np.zeros(1, dtype=np.int64)
    return tags, stamp, dirty, clock


@njit(cache=True)
def _set_of(key: np.int64, n_sets: int) -> int:
    h = np.uint64(key) * HASH_MULTIPLIER
    return int((h >> np.uint64(20)) % np.uint64(n_sets))


@njit(cache=True)
def cache_access(keys: np.ndarray, write: bool, tags: np.ndarray, stamp: np.ndarray,
                 dirty: np.ndarray, clock: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n_sets, ways = tags.shape
    hit = np.zeros(keys.shape[0], dtype=np.bool_)
    evicted = np.empty(keys.shape[0], dtype=np.int64)
    n_ev = 0
    for i in range(keys.shape[0]):
        key = keys[i]
        s = _set_of(key, n_sets)
        clock[0] += 1
        found = -1
        for w in range(ways):
            if tags[s, w] == key:
                found = w
                break
        if found >= 0:
            hit[i] = True
            stamp[s, found] = clock[0]
            if write:
                dirty[s, found] = True
            continue
        victim = -1
        for w in range(ways):  # the first empty way, else the least recently used
            if tags[s, w] == EMPTY:
                victim = w
                break
        if victim < 0:
            victim = 0
            for w in range(1, ways):
                if stamp[s, w] < stamp[s, victim]:
                    victim = w
        if tags[s, victim] != EMPTY and dirty[s, victim]:
            evicted[n_ev] = tags[s, victim]
            n_ev += 1
        tags[s, victim] = key
        stamp[s, victim] = clock[0]
        dirty[s, victim] = write
    return hit, evicted[:n_ev]


def cache_access_ref(keys, write, tags, stamp, dirty, clock):
    """Reference implementation of :func:`cache_access` (plain Python, same state arrays)."""
    n_sets, ways = tags.shape
    hit = np.zeros(len(keys), dtype=bool)
    evicted = []
    for i, key in enumerate(keys.tolist()):
        with np.errstate(over="ignore"):
            s = int(((np.uint64(key) * HASH_MULTIPLIER) >> np.uint64(20)) % np.uint64(n_sets))
        clock[0] += 1
        row = tags[s].tolist()
        if key in row:
            w = row.index(key)
            hit[i] = True
            stamp[s, w] = clock[0]
            if write:
                dirty[s, w] = True
            continue
        empties = [w for w in range(ways) if row[w] == EMPTY]
        w = empties[0] if empties else int(np.argmin(stamp[s]))
        if row[w] != EMPTY and dirty[s, w]:
            evicted.append(row[w])
        tags[s, w] = key
        stamp[s, w] = clock[0]
        dirty[s, w] = write
    return hit, np.array(evicted, dtype=np.int64)
