"""Host-DRAM cache of embedding vectors in front of slow table memory (the ``ssd`` system,
docs/design.md#ssd).

A set-associative cache with true LRU inside each set (``ways`` per set; ``ways == capacity`` gives
a fully associative LRU). Keys are global row ids, int32 or int64 in ``[0, MAX_ROW]`` (``MAX_ROW =
2**31 - 2``; :func:`cache_access` raises ``ValueError`` before touching the state if a key is
outside). The set of a key is a multiplicative hash so that neighbouring rows spread over sets. A
state may carry a recipe of sets not built yet (``VectorCache.steady``: a steady start's), built as
an access first touches them.

State (from :func:`new_cache`) is a 1-tuple holding a :class:`VectorCache`: its sets are held
compactly, a set's ``ways`` uint32 entries allocated only when the set is first used. ``index``
(int32, one per set, zeroed so the OS commits it only as sets are first touched) gives each used
set's row in ``pool`` plus one (0: never used); ``pool`` rows are handed out in order and the pool
grows (doubling) before an access could need more. A row ``r`` is stored as ``((r + 1) << 1) |
dirty`` and 0 is an empty slot. Each set lists its entries most recently used first, empty slots
last, so the LRU entry (the victim of a full set) is the last slot. 4 B per entry, so a 16-way set
is one 64 B cache line (the pool is 64 B aligned). Memory is then 4 B per set plus 64 B per set a
run touched, not 4 B per entry of the whole capacity: a 16 GB cache of 128 B rows (125 M entries)
used to commit a 4 KiB page per distinct row the hash scattered, up to 0.5 GB a run;
:meth:`VectorCache.dense` gives the ``[n_sets, ways]`` array the reference
(:func:`cache_access_ref`, state from :func:`new_cache_ref`) keeps.

Contract of :func:`cache_access`: processes ``keys`` in order; a read inserts a missing key
(evicting its set's LRU entry); ``write=True`` marks the key dirty (write-allocate). Returns
``hit`` (bool per access) and the keys of dirty entries evicted (to be written back), in order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cxlsim.kernels.prefetch import prefetch_write, prefetch_write2

#: Fibonacci hashing multiplier (2^64 / golden ratio), spreads consecutive row ids over sets.
HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: Largest row id an entry can encode: ``(MAX_ROW + 1) << 1 | 1`` must fit in uint32.
MAX_ROW = 2**31 - 2
#: How many keys ahead :func:`cache_access` prefetches the set's line (hides DRAM latency).
PREFETCH_AHEAD = 64
#: Caches of fewer entries (1 MiB of them) are not prefetched: they stay in the core's own caches.
PREFETCH_MIN_ENTRIES = 1 << 18


def _aligned_zeros(rows: int, ways: int) -> np.ndarray:
    raw = np.zeros(rows * ways + 16, dtype=np.uint32)  # lazily committed zero pages; 16 spare for alignment
    start = (-raw.ctypes.data % 64) // 4
    return raw[start:start + rows * ways].reshape(rows, ways)


class VectorCache:
    """The compact cache state (module doc): ``index``, ``pool`` and ``used`` (pool rows handed out)."""

    def __init__(self, capacity_rows: int, ways: int = 16) -> None:
        ways = max(1, min(ways, capacity_rows))
        n_sets = max(1, capacity_rows // ways)
        self.ways = ways
        self.index = np.zeros(n_sets, dtype=np.int32)
        self.pool = _aligned_zeros(min(n_sets, 64), ways)
        self.used = np.zeros(1, dtype=np.int64)
        #: the recipe of sets not built yet (a steady start's
        #: :class:`~cxlsim.kernels.vector_cache_steady.SteadySets`), or None: every unbuilt set is empty
        self.steady = None

    @property
    def n_sets(self) -> int:
        return int(self.index.size)

    def reserve(self, new_sets: int) -> None:
        """Room in the pool for ``new_sets`` more sets (at most every set)."""
        need = min(self.n_sets, int(self.used[0]) + new_sets)
        if need > self.pool.shape[0]:
            grown = _aligned_zeros(min(self.n_sets, max(need, 2 * self.pool.shape[0])), self.ways)
            grown[: int(self.used[0])] = self.pool[: int(self.used[0])]
            self.pool = grown

    def copy(self) -> VectorCache:
        """An independent copy of this state."""
        out = VectorCache.__new__(VectorCache)
        out.ways = self.ways
        out.index = self.index.copy()
        out.pool = _aligned_zeros(*self.pool.shape)  # rows past ``used`` are zero: left uncommitted
        n = int(self.used[0])
        out.pool[:n] = self.pool[:n]
        out.used = self.used.copy()
        out.steady = self.steady
        return out

    def dense(self) -> np.ndarray:
        """The ``[n_sets, ways]`` uint32 array of every set (unused sets all zero; a steady start's
        sets not yet touched are built first)."""
        if self.steady is not None:
            self.steady.open_all(self)
        out = np.zeros((self.n_sets, self.ways), dtype=np.uint32)
        on = self.index > 0
        out[on] = self.pool[self.index[on] - 1]
        return out


def new_cache(capacity_rows: int, ways: int = 16) -> tuple[VectorCache]:
    """Empty cache state for ``capacity_rows`` entries in sets of ``ways`` (see the module doc)."""
    if capacity_rows // max(1, min(ways, capacity_rows)) > np.iinfo(np.int32).max:
        raise ValueError(f"vector cache: {capacity_rows} entries need more sets than an int32 index holds")
    return (VectorCache(capacity_rows, ways),)


def new_cache_ref(capacity_rows: int, ways: int = 16) -> tuple[np.ndarray]:
    """Empty state of :func:`cache_access_ref`: the dense ``[n_sets, ways]`` array."""
    ways = max(1, min(ways, capacity_rows))
    return (_aligned_zeros(max(1, capacity_rows // ways), ways),)


@njit(cache=True)
def _set_of(key: np.int64, n_sets: int) -> int:
    """``((key × HASH_MULTIPLIER mod 2**64) >> 20) mod n_sets`` (:func:`set_of_ref`). The 44-bit
    dividend is exact in a double, so the quotient from a multiplication by ``1 / n_sets`` is off
    by at most one, which one step corrects: a division's latency saved on every access."""
    h = np.uint64(key) * HASH_MULTIPLIER
    x = np.int64(h >> np.uint64(20))
    r = x - np.int64(np.float64(x) * (1.0 / n_sets)) * n_sets
    if r < 0:
        r += n_sets
    elif r >= n_sets:
        r -= n_sets
    return r


def set_of_ref(key: int, n_sets: int) -> int:
    """Reference of :func:`_set_of`: the integer arithmetic."""
    return (((int(key) * int(HASH_MULTIPLIER)) % 2**64) >> 20) % int(n_sets)


def cache_access(keys: np.ndarray, write: bool, cache: VectorCache) -> tuple[np.ndarray, np.ndarray]:
    """Access ``keys`` in order (contract in the module doc): ``(hit per key, dirty rows evicted)``."""
    keys = np.asarray(keys)
    if keys.dtype != np.int32 and keys.dtype != np.int64:  # int32 row ids go in as they are (no widened copy)
        keys = keys.astype(np.int64)
    cache.reserve(keys.size)
    if cache.steady is None:
        hit, evicted, ok = _cache_access(keys, write, cache.index, cache.pool, cache.used)
        if not ok:
            raise ValueError(BAD_KEYS)
        return hit, evicted
    # a steady start: the sets these keys open first are built from its recipe, then accessed
    set_idx = cache.steady.open(keys, cache)
    return _lru(keys, set_idx, write, cache.index, cache.pool, cache.used)


BAD_KEYS = "vector cache: row ids must lie in [0, 2**31 - 2]"


@njit(cache=True)
def _cache_access(keys: np.ndarray, write: bool, index: np.ndarray, pool: np.ndarray,
                  used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cache_access` on the compact state; ``pool`` has room for every set ``keys`` may open.
    Returns ``(hit, evicted, True)``; ``(…, False)``, the state untouched, when a key lies outside
    ``[0, MAX_ROW]``."""
    set_idx, ok = sets_of(keys, index.size)
    if not ok:
        return np.zeros(0, dtype=np.bool_), np.zeros(0, dtype=np.int64), False
    hit, evicted = _lru(keys, set_idx, write, index, pool, used)
    return hit, evicted, True


@njit(cache=True)
def sets_of(keys: np.ndarray, n_sets: int) -> tuple[np.ndarray, bool]:
    """Each key's set, and whether every key lies in ``[0, MAX_ROW]`` (else the sets are partial)."""
    n = keys.shape[0]
    set_idx = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = np.int64(keys[i])
        if k < 0 or k > MAX_ROW:
            return set_idx, False
        set_idx[i] = _set_of(k, n_sets)
    return set_idx, True


@njit(cache=True)
def _lru(keys: np.ndarray, set_idx: np.ndarray, write: bool, index: np.ndarray, pool: np.ndarray,
         used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The accesses of :func:`_cache_access`, each key's set given."""
    ways = pool.shape[1]
    n = keys.shape[0]
    big = index.size * ways >= PREFETCH_MIN_ENTRIES  # a small cache (the host's LLC) stays in the core's caches
    one = np.uint32(1)
    wbit = one if write else np.uint32(0)
    hit = np.zeros(n, dtype=np.bool_)
    evicted = np.empty(n, dtype=np.int64)
    n_ev = 0
    for i in range(n):
        if big and i + PREFETCH_AHEAD < n:
            prefetch_write(index, set_idx[i + PREFETCH_AHEAD])
        if big and i + PREFETCH_AHEAD // 2 < n:
            ahead = index[set_idx[i + PREFETCH_AHEAD // 2]]
            if ahead > 0:
                prefetch_write2(pool, ahead - 1, 0)
        slot = index[set_idx[i]]
        if slot == 0:  # the set's first use: the next pool row (zero: all slots empty)
            slot = used[0] + 1
            used[0] = slot
            index[set_idx[i]] = slot
        s = slot - 1
        tag = np.uint32((np.int64(keys[i]) + 1) << 1)
        pos = ways - 1  # the entry's slot if present, else the first empty slot, else the LRU slot
        found = False
        for w in range(ways):
            e = pool[s, w]
            if (e | one) == (tag | one):
                pos = w
                found = True
                break
            if e == 0:
                pos = w
                break
        old = pool[s, pos]
        if found:
            hit[i] = True
            new = old | wbit
        else:
            if old & one:  # a dirty victim (an empty slot is 0, a clean one has the bit clear)
                evicted[n_ev] = (np.int64(old) >> 1) - 1
                n_ev += 1
            new = tag | wbit
        for w in range(pos, 0, -1):  # move to the front: most recently used first
            pool[s, w] = pool[s, w - 1]
        pool[s, 0] = new
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
