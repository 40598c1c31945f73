"""The vector cache's steady state, built without simulating the batches that reach it.

The input stream (:mod:`cxlsim.workloads.generator`): each of a table's ``m`` lookup positions
(batch × lookups per table) keeps its previous batch's row with probability ``c``
(``reuse_prev_fraction``), else draws a fresh one, rank ``k`` with probability ``p(k)`` of the
bounded power law (:mod:`cxlsim.kernels.sampling`). A position is then a two-state Markov chain for
each row (holds it / not): stationary it holds the row with probability ``p``, and a position not
holding it takes it in a batch with probability ``(1 − c) p``. Positions are independent, so a row
is *not* accessed in any of the last ``τ ≥ 1`` batches with probability

    A(τ) = (1 − p)^m · (1 − (1 − c) p)^(m (τ − 1)),

the survival function of its *age* (batches since its last access; age 1: the previous batch). The
cache (:mod:`cxlsim.kernels.vector_cache`) is LRU within each hashed set of ``ways`` entries, and
every row a batch looks up the batch's update then writes (write-allocate), last, in the update's
order. So at the start of a batch each set holds exactly its ``ways`` most recently accessed rows,
most recent first: ascending age, and within one batch the row the update visited last first. That
is the state this module builds, exactly for LRU given the rows' ages; the ages are drawn
independently from each row's ``A`` (the one approximation: rows' processes are independent, where
a position holds one row at a time, a correlation of order ``p``). Che's approximation (one
characteristic time for the whole cache) is not used for the state: each set keeps its own
youngest rows, so a set's fill is its own. Every resident row is dirty: it was written by the update
of the batch that last accessed it, after its insertion (``dirty=False`` builds it clean).

Randomness: row ``k`` of table ``t`` takes the uniform ``u`` of a counter-based hash of ``(seed, t,
k)`` (splitmix64, :func:`cxlsim.kernels.sampling._mix64`), and its age is ``A``'s inverse at ``u``:
the state is a pure function of the inputs, whatever order the rows are visited in.

Cost: only rows younger than a horizon ``τ_h`` can be resident in practice; ``τ_h`` is where the
expected number of rows that young is :data:`CANDIDATE_FACTOR` times the capacity (every row if
fewer), so a set of ``ways`` entries has on average ``CANDIDATE_FACTOR × ways`` candidates and
fewer than ``ways`` with a small probability (those sets keep empty slots; :func:`steady_state`
returns the count). Ranks take their block's mean probability (:data:`BLOCK_SHIFT`), so a rank
costs one hash and a comparison; a candidate costs its permutation
(:func:`cxlsim.kernels.sampling.feistel_permute`) and an insertion into its set (prefetched; while
filling, a set holds each entry's recency key, 8 B, and the rows are written at the end). Memory
while building: 8 B a cache entry (RM1 at 16 GB: 1 GB), then the state's 4 B.

Contract: :func:`steady_state` → a :class:`~cxlsim.kernels.vector_cache.VectorCache` state tuple (as
:func:`~cxlsim.kernels.vector_cache.new_cache`) and the count of empty slots;
:func:`steady_state_ref` (plain NumPy, same inputs) gives the dense ``[n_sets, ways]`` array that
``state[0].dense()`` equals. :func:`horizon` solves ``Σ_rows P(age ≤ τ) = target`` (binned over ranks);
:func:`che_hit_fraction` is the analytic lookup hit fraction at a characteristic time.
:func:`steady_state_touched` builds only the sets of the rows a run accesses (``touched``): those
rows' ages as :func:`steady_state` draws them, their sets' other rows as a Poisson process of ages
(mean measure: the expected count of young rows less the touched ones', per set), a slot such a row
wins holding a row the run never accesses; cost in proportion to the touched rows;
:func:`steady_state_touched_ref` is its reference (the dense state).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros

from cxlsim.arrays import unique as sorted_unique
from cxlsim.kernels.prefetch import prefetch_read, prefetch_write2
from cxlsim.kernels.row_bitmap import mark, new_bitmap
from cxlsim.kernels.sampling import (
    EXPONENT_ONE_TOL,
    GOLDEN_GAMMA,
    _mix64,
    feistel_inverse,
    feistel_permute,
)
from cxlsim.kernels.vector_cache import (
    BAD_KEYS,
    HASH_MULTIPLIER,
    MAX_ROW,
    PREFETCH_AHEAD,
    VectorCache,
    _aligned_zeros,
    _set_of,
    sets_of,
)

#: Rows of age up to the horizon are candidates; the horizon holds this many times the capacity in
#: expectation, so a set of 16 ways has 24 candidates on average and fewer than 16 rarely (those few
#: slots stay empty, where the real cache holds rows older than the horizon; RM1: see docs/validation.md).
CANDIDATE_FACTOR = 2.0
#: Ranks handled per call of the candidate kernel at most (bounds the buffers: 12 B a rank).
RANK_CHUNK = 1 << 20
#: Ranks are taken in blocks (:func:`block_end`: single ranks below 256, then 256 aligned blocks an
#: octave), each rank given its block's mean probability (named approximation: p varies by at most
#: 0.43 % across a block), so that a rank costs one hash and one comparison.
BLOCK_SHIFT = 8
#: A table's ranks from the first block where fewer than this many of them are expected to be candidates
#: are left out (their candidate probability only falls with the rank): a cache far smaller than the
#: tables costs its candidates, not the tables' rows.
TAIL_EXPECTED = 1e-3
#: Ages are uint32; a row that never comes back (its positions never redraw) is given this age.
AGE_MAX = np.uint32(0xFFFFFFFE)
#: Bisection steps of :func:`horizon` in log space (from 1 to 1e18 batches: a ratio of 1 + 6e-16 at the end).
BISECTIONS = 80
#: Ranks below this are summed one by one in :func:`horizon`, above it in geometric bins of ratio
#: 1 + 1/RANK_BIN_DIVISOR (the horizon only truncates: its precision moves no resident row).
EXACT_RANKS = 4096
RANK_BIN_DIVISOR = 256
_TWO_M53 = 2.0**-53
_SHIFT_11 = np.uint64(11)
_SHIFT_32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


# -- the per-row model ------------------------------------------------------------------------------
@njit(cache=True)
def block_prob(k0: int, k1: int, n: int, exponent: float) -> float:
    """Mean P(rank) over ranks ``[k0, k1)`` of the generator's bounded power law over ``n`` ranks
    (:mod:`cxlsim.kernels.sampling`), in a cancellation-free form."""
    if abs(exponent - 1.0) < EXPONENT_ONE_TOL:
        return np.log1p((k1 - k0) / (k0 + 1.0)) / np.log(n + 1.0) / (k1 - k0)
    a = 1.0 - exponent
    return ((k0 + 1.0) ** a * -np.expm1(a * np.log1p((k1 - k0) / (k0 + 1.0)))
            / -np.expm1(a * np.log(n + 1.0)) / (k1 - k0))


@njit(cache=True)
def block_end(k0: int, n: int) -> int:
    """The rank after the block starting at ``k0`` (blocks: single ranks below ``2**BLOCK_SHIFT``, then
    each octave ``[2**e, 2**(e+1))`` cut in ``2**BLOCK_SHIFT`` aligned blocks)."""
    e = 0
    while (np.int64(2) << e) <= k0:
        e += 1
    size = 1 if e < BLOCK_SHIFT else np.int64(1) << (e - BLOCK_SHIFT)
    return min(n, k0 + size)


@njit(cache=True)
def block_start(k: int) -> int:
    """The first rank of ``k``'s block (:func:`block_end`)."""
    e = 0
    while (np.int64(2) << e) <= k:
        e += 1
    if e < BLOCK_SHIFT:
        return k
    return k & ~((np.int64(1) << (e - BLOCK_SHIFT)) - 1)


@njit(cache=True)
def _survival_log(p: float, m: float, c: float) -> tuple[float, float]:
    """``(log A(1), β)`` with ``log A(τ) = log A(1) − β (τ − 1)`` for τ ≥ 1."""
    log_a1 = m * np.log1p(-p) if p < 1.0 else -np.inf
    q = (1.0 - c) * p
    beta = -m * np.log1p(-q) if q < 1.0 else np.inf
    return log_a1, beta


@njit(cache=True)
def _log_survival(log_a1: float, beta: float, tau: float) -> float:
    if tau <= 0.0:
        return 0.0
    if beta == np.inf:
        return log_a1 if tau <= 1.0 else -np.inf
    if beta == 0.0:
        return log_a1
    return log_a1 - beta * (tau - 1.0)


@njit(cache=True)
def _uniform(h: np.uint64, k: int) -> float:
    """Uniform in (0, 1] of rank ``k`` under the table's stream ``h``."""
    x = _mix64(h + np.uint64(k + 1) * GOLDEN_GAMMA)
    return (np.float64(x >> _SHIFT_11) + 1.0) * _TWO_M53


@njit(cache=True)
def table_stream(seed: int, table: int) -> np.uint64:
    """The hash stream of ``table`` under ``seed`` (:func:`_uniform`'s ``h``)."""
    return _mix64(_mix64(np.uint64(seed)) + np.uint64(table + 1) * GOLDEN_GAMMA)


@njit(cache=True)
def _age(log_u: float, log_a1: float, beta: float) -> np.uint32:
    """The age (batches) whose survival brackets ``u``: 1 if ``u > A(1)``, else ``2 + ⌊(log A(1) − log u) / β⌋``."""
    if log_u > log_a1:
        return np.uint32(1)
    if beta == 0.0:  # the row's positions never redraw: it stays away
        return AGE_MAX
    x = (log_a1 - log_u) / beta
    if not x < 4e9:
        return AGE_MAX
    return np.uint32(min(2.0 + np.floor(x), 4294967294.0))


# -- the kernel -------------------------------------------------------------------------------------
@njit(cache=True)
def _candidates(k: int, n: int, exponent: float, m: float, c: float, tau_h: float, h: np.uint64,
                ranks: np.ndarray, ages: np.ndarray) -> tuple[int, int]:
    """Ranks from block start ``k`` no older than the horizon (``u > A(τ_h)``) and their ages, whole
    blocks while they fit the buffers; returns ``(count, the next block's start)``."""
    cnt = 0
    cap = ranks.size
    while k < n:
        k1 = block_end(k, n)
        if cnt + (k1 - k) > cap:
            break
        la1, beta = _survival_log(block_prob(k, k1, n, exponent), m, c)
        thr = np.exp(_log_survival(la1, beta, tau_h))
        if (n - k) * (1.0 - thr) < TAIL_EXPECTED:  # the table's colder ranks: no candidate, in expectation
            return cnt, n
        for j in range(k, k1):
            u = _uniform(h, j)
            if u > thr:
                ranks[cnt] = j
                ages[cnt] = _age(np.log(u), la1, beta)
                cnt += 1
        k = k1
    return cnt, k


@njit(cache=True)
def _insert(rows: np.ndarray, ages: np.ndarray, visit_base_t: int, row_base_t: int, slots: np.ndarray) -> None:
    """Offer each candidate of one table (local ``rows``, ``ages``) to its set, which keeps its
    youngest ``ways`` unordered: ``slots[s, w]`` is the entry's recency key ``age << 32 | (2**32 − 1 −
    visit)`` (smaller: more recently used; ``visit`` the row's place in the update's order), 0 empty."""
    n_sets, ways = slots.shape
    n = rows.size
    sets = np.empty(n, np.int64)
    for i in range(n):
        sets[i] = _set_of(rows[i] + row_base_t, n_sets)
    for i in range(n):
        if i + PREFETCH_AHEAD < n:
            prefetch_write2(slots, sets[i + PREFETCH_AHEAD], 0)
            prefetch_write2(slots, sets[i + PREFETCH_AHEAD], ways - 1)
        s = sets[i]
        key = (np.uint64(ages[i]) << _SHIFT_32) | (_LOW32 - np.uint64(rows[i] + visit_base_t))
        worst = 0  # an empty slot, else the least recently used entry
        for w in range(ways):
            e = slots[s, w]
            if e == 0:
                worst = w
                break
            if e > slots[s, worst]:
                worst = w
        e = slots[s, worst]
        if e == 0 or key < e:
            slots[s, worst] = key


@njit(cache=True)
def _finish(slots: np.ndarray, pool: np.ndarray, dirty: bool, visit_base: np.ndarray, row_base: np.ndarray) -> int:
    """Each set's entries most recently used first, encoded (``((g + 1) << 1) | dirty``) into ``pool``;
    returns the empty slots. ``visit_base`` is descending when the update runs the tables last first."""
    n_sets, ways = slots.shape
    d = np.uint32(1) if dirty else np.uint32(0)
    keys = np.empty(ways, np.uint64)
    forward = visit_base.size < 2 or visit_base[1] > visit_base[0]
    empty = 0
    for s in range(n_sets):
        cnt = 0
        for w in range(ways):
            e = slots[s, w]
            if e == 0:
                continue
            j = cnt - 1  # insertion sort, youngest first
            while j >= 0 and keys[j] > e:
                keys[j + 1] = keys[j]
                j -= 1
            keys[j + 1] = e
            cnt += 1
        empty += ways - cnt
        for w in range(cnt):
            visit = np.int64(_LOW32 - (keys[w] & _LOW32))
            t = 0
            if forward:
                g = visit
            else:  # the table whose update span holds the visit: the first with base <= visit
                lo, hi = 0, visit_base.size - 1
                while lo < hi:
                    mid = (lo + hi) // 2
                    if visit_base[mid] <= visit:
                        hi = mid
                    else:
                        lo = mid + 1
                t = lo
                g = row_base[t] + (visit - visit_base[t])
            pool[s, w] = (np.uint32(g + 1) << np.uint32(1)) | d
    return empty


def _update_bases(rows_per_table: np.ndarray, row_base: np.ndarray, reverse_tables: bool) -> np.ndarray:
    """Each table's first position in the update's order (tables last first when ``reverse_tables``)."""
    if not reverse_tables:
        return row_base.copy()
    return np.concatenate((np.cumsum(rows_per_table[::-1])[::-1][1:], [0])).astype(np.int64)


def steady_state(rows_per_table, row_base, table_keys, exponent: float, positions: int, reuse: float,
                 capacity_rows: int, ways: int = 16, seed: int = 0, dirty: bool = True,
                 reverse_tables: bool = False, tau_h: float | None = None) -> tuple[tuple[VectorCache], int]:
    """The LRU steady state (module docstring) of a cache of ``capacity_rows`` entries in sets of
    ``ways`` (as :func:`~cxlsim.kernels.vector_cache.new_cache`), fed by tables of
    ``rows_per_table`` rows (global ids from ``row_base``; ``table_keys`` the generator's Feistel
    keys), ``positions`` lookups per table and batch, reuse fraction ``reuse``, popularity
    ``exponent``. ``reverse_tables``: the update visits the tables last first. ``tau_h`` (batches)
    overrides the horizon. Returns ``((cache,), empty_slots)``."""
    rows_per_table = np.asarray(rows_per_table, np.int64)
    row_base = np.asarray(row_base, np.int64)
    keys = np.asarray(table_keys, np.uint64)
    if rows_per_table.size and int(row_base[-1] + rows_per_table[-1]) - 1 > MAX_ROW:
        raise ValueError("vector cache: row ids must lie in [0, 2**31 - 2]")
    cache = VectorCache(capacity_rows, ways)
    n_sets, w = cache.n_sets, cache.ways
    if tau_h is None:
        tau_h = horizon(rows_per_table, exponent, positions, reuse, CANDIDATE_FACTOR * n_sets * w)
    slots = np.zeros((n_sets, w), np.uint64)
    visit_base = _update_bases(rows_per_table, row_base, reverse_tables)
    ranks = np.empty(RANK_CHUNK, np.int64)
    ages = np.empty(RANK_CHUNK, np.uint32)
    for t, n in enumerate(rows_per_table.tolist()):
        h = np.uint64(table_stream(seed, t))
        k = 0
        while k < n:
            cnt, k = _candidates(k, n, float(exponent), float(positions), float(reuse), float(tau_h), h, ranks, ages)
            if cnt:
                _insert(feistel_permute(ranks[:cnt], n, keys[t]), ages[:cnt], int(visit_base[t]), int(row_base[t]), slots)
    pool = _aligned_zeros(n_sets, w)
    empty = _finish(slots, pool, dirty, visit_base, row_base)
    del slots
    cache.pool = pool
    cache.index[:] = np.arange(1, n_sets + 1, dtype=np.int32)
    cache.used[0] = n_sets
    return (cache,), int(empty)


# -- the reference ----------------------------------------------------------------------------------
def _mix64_np(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _survival_log_np(p: np.ndarray, m: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_survival_log` of every probability of ``p``: ``(log A(1), β)``."""
    log_a1 = np.where(p < 1.0, m * np.log1p(-np.minimum(p, 1.0)), -np.inf)
    q = (1.0 - c) * p
    return log_a1, np.where(q < 1.0, -m * np.log1p(-np.minimum(q, 1.0)), np.inf)


def _uniform_np(h: np.uint64, k: np.ndarray) -> np.ndarray:
    """:func:`_uniform` of every rank of ``k`` under the table's stream ``h``."""
    x = _mix64_np(np.uint64(h) + (k + 1).astype(np.uint64) * GOLDEN_GAMMA)
    return ((x >> _SHIFT_11).astype(np.float64) + 1.0) * _TWO_M53


def _age_np(lu: np.ndarray, la1: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """:func:`_age` of every ``(log u, log A(1), β)``."""
    ratio = (la1 - lu) / beta
    return np.where(lu > la1, 1.0, np.where((beta == 0.0) | ~(ratio < 4e9), float(AGE_MAX),
                                            np.minimum(2.0 + np.floor(ratio), 4294967294.0))).astype(np.uint32)


def _block_probs_np(n: int, exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """Each rank's block mean probability (:func:`block_prob`) and each block's first rank, in NumPy."""
    edges = [0]
    while edges[-1] < n:
        edges.append(int(block_end(edges[-1], n)))
    e = np.asarray(edges, np.float64)
    k0, size = e[:-1], np.diff(e)
    if abs(exponent - 1.0) < EXPONENT_ONE_TOL:
        pb = np.log1p(size / (k0 + 1.0)) / np.log(n + 1.0) / size
    else:
        a = 1.0 - exponent
        pb = (k0 + 1.0) ** a * -np.expm1(a * np.log1p(size / (k0 + 1.0))) / -np.expm1(a * np.log(n + 1.0)) / size
    return np.repeat(pb, size.astype(np.int64)), e[:-1].astype(np.int64)


def steady_state_ref(rows_per_table, row_base, table_keys, exponent: float, positions: int, reuse: float,
                     capacity_rows: int, ways: int = 16, seed: int = 0, dirty: bool = True,
                     reverse_tables: bool = False, tau_h: float | None = None) -> np.ndarray:
    """Reference of :func:`steady_state`: every rank at once in NumPy, each set's youngest by a sort.
    Returns the dense ``[n_sets, ways]`` state."""
    rows_per_table = np.asarray(rows_per_table, np.int64)
    row_base = np.asarray(row_base, np.int64)
    ways = max(1, min(ways, capacity_rows))
    n_sets = max(1, capacity_rows // ways)
    if tau_h is None:
        tau_h = horizon(rows_per_table, exponent, positions, reuse, CANDIDATE_FACTOR * n_sets * ways)
    visit_base = _update_bases(rows_per_table, row_base, reverse_tables)
    m, c = float(positions), float(reuse)
    all_g, all_age, all_visit = [], [], []
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for t, n in enumerate(rows_per_table.tolist()):
            k = np.arange(n, dtype=np.int64)
            p, starts = _block_probs_np(n, exponent)
            log_a1, beta = _survival_log_np(p, m, c)
            if tau_h <= 0:
                lh = np.zeros(n)
            elif tau_h <= 1:
                lh = log_a1
            else:
                lh = np.where(beta == np.inf, -np.inf, np.where(beta == 0.0, log_a1, log_a1 - beta * (tau_h - 1.0)))
            u = _uniform_np(table_stream(seed, t), k)
            thr = np.exp(lh)
            tail = (n - starts) * (1.0 - thr[starts]) < TAIL_EXPECTED
            stop = int(starts[np.argmax(tail)]) if tail.any() else n
            keep = (u > thr) & (k < stop)
            age = _age_np(np.log(u[keep]), log_a1[keep], beta[keep])
            rows = feistel_permute(k[keep], n, np.uint64(table_keys[t]))
            all_g.append(rows + row_base[t])
            all_age.append(age)
            all_visit.append(rows + visit_base[t])
    g = np.concatenate(all_g) if all_g else np.zeros(0, np.int64)
    age = np.concatenate(all_age) if all_age else np.zeros(0, np.uint32)
    visit = np.concatenate(all_visit) if all_visit else np.zeros(0, np.int64)
    sets = ((g.astype(np.uint64) * HASH_MULTIPLIER) >> np.uint64(20)) % np.uint64(n_sets)
    order = np.lexsort((-visit, age, sets))
    out = np.zeros((n_sets, ways), np.uint32)
    fill = np.zeros(n_sets, np.int64)
    d = 1 if dirty else 0
    for i in order.tolist():
        s = int(sets[i])
        if fill[s] < ways:
            out[s, fill[s]] = ((int(g[i]) + 1) << 1) | d
            fill[s] += 1
    return out


# -- the analytic side -----------------------------------------------------------------------------
def _rank_bins(n: int, exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """(mean probability, ranks) of each bin of ranks: one a rank below :data:`EXACT_RANKS`, then geometric."""
    edges = list(range(min(n, EXACT_RANKS) + 1))
    while edges[-1] < n:
        edges.append(min(n, edges[-1] + max(1, edges[-1] // RANK_BIN_DIVISOR)))
    e = np.asarray(edges, np.float64)
    if abs(exponent - 1.0) < EXPONENT_ONE_TOL:
        cdf = np.log1p(e) / np.log(n + 1.0)
    else:
        a = 1.0 - exponent
        cdf = np.expm1(a * np.log1p(e)) / np.expm1(a * np.log(n + 1.0))
    count = np.diff(e)
    return np.diff(cdf) / count, count


def _binned(rows_per_table, exponent: float):
    sizes, mult = np.unique(np.asarray(rows_per_table, np.int64), return_counts=True)
    return [(*_rank_bins(int(n), exponent), int(c)) for n, c in zip(sizes, mult, strict=True)]


def _survival_terms(bins, positions: float, reuse: float) -> list[tuple]:
    """Per bin group of :func:`_binned`: ``(count, mult, log A(1), beta, beta infinite)``, the
    terms :func:`_young` evaluates at every age (computed once per stream)."""
    out = []
    with np.errstate(divide="ignore"):
        for p, count, mult in bins:
            log_a1 = positions * np.log1p(-np.minimum(p, 1.0))
            beta = -positions * np.log1p(-np.minimum((1.0 - reuse) * p, 1.0))
            out.append((count, mult, log_a1, beta, np.isinf(beta)))
    return out


def _young(terms, tau: float) -> float:
    """Expected rows accessed within the last ``tau`` batches (``terms``: :func:`_survival_terms`)."""
    total = 0.0
    for count, mult, log_a1, beta, inf in terms:
        la = np.where(inf, -np.inf, log_a1 - beta * max(tau - 1.0, 0.0))
        total += mult * float(np.sum(count * -np.expm1(la)))
    return total


def _young_grid(terms, taus: np.ndarray) -> np.ndarray:
    """:func:`_young` at every age of ``taus``, a row per age (each row's sum is the 1-D sum
    :func:`_young` takes, in the same group order; a test holds them equal bit for bit)."""
    shift = np.maximum(np.asarray(taus, np.float64) - 1.0, 0.0)[:, None]
    total = np.zeros(shift.shape[0])
    for count, mult, log_a1, beta, inf in terms:
        la = np.where(inf[None, :], -np.inf, log_a1[None, :] - beta[None, :] * shift)
        total += mult * np.sum(count[None, :] * -np.expm1(la), axis=1)
    return total


def horizon(rows_per_table, exponent: float, positions: int, reuse: float, target: float) -> float:
    """The age ``τ`` (batches) whose expected count of rows accessed within it is ``target``
    (``inf`` when every row fits)."""
    terms = _survival_terms(_binned(rows_per_table, exponent), positions, reuse)
    if _young(terms, 1e18) <= target:
        return float("inf")
    lo, hi = 1.0, 1e18
    if _young(terms, lo) >= target:
        return lo
    for _ in range(BISECTIONS):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if _young(terms, mid) < target else (lo, mid)
    return hi


def che_hit_fraction(rows_per_table, exponent: float, positions: int, reuse: float, capacity_rows: int) -> tuple[float, float]:
    """``(T_C, hit fraction)``: Che's characteristic time (batches) of a fully associative LRU of
    ``capacity_rows`` over this stream, and the lookups' hit fraction it implies (a row's first
    access in a batch misses when it was not accessed within ``T_C``: expected misses
    ``Σ A(T_C) (1 − (1 − (1 − c) p)^m)`` a batch, over ``m`` lookups a table)."""
    t_c = horizon(rows_per_table, exponent, positions, reuse, capacity_rows)
    if not np.isfinite(t_c):  # every row fits: nothing leaves
        return t_c, 1.0
    misses = 0.0
    with np.errstate(divide="ignore"):
        for p, count, mult in _binned(rows_per_table, exponent):
            log_a1 = positions * np.log1p(-np.minimum(p, 1.0))
            beta = -positions * np.log1p(-np.minimum((1.0 - reuse) * p, 1.0))
            la = log_a1 - beta * (t_c - 1.0)
            misses += mult * float(np.sum(count * np.exp(la) * -np.expm1(-beta)))
    return t_c, 1.0 - misses / (len(list(rows_per_table)) * positions)


# -- the rows a run touches -------------------------------------------------------------------------
#: A recipe whose sets are at least one in this many of the cache's keeps a position per set
#: (:attr:`SteadySets.recipe_of`); a sparser one is searched.
DENSE_RECIPE_SETS = 64
#: Phantom rows (never accessed in the run) tried per slot before the slot is left empty.
PHANTOM_TRIES = 64
#: Points of the grid on which the untouched rows' expected young count is tabulated (log-spaced ages).
AGE_GRID_POINTS = 512
#: Sets whose phantoms' touched-row bitmap bytes :func:`_fill_sets` prefetches ahead of the one it
#: fills (the bitmap, one bit per row, is tens of MB: its random reads miss the cache).
PHANTOM_PREFETCH_SETS = 16
#: Buckets of the phantoms' mean-measure lookup (each starts the search near its answer).
MU_BUCKETS = 1024
_PHANTOM_STREAM = np.uint64(0xD1B54A32D192ED03)


#: Blocks of ranks a table can have at most (:func:`_block_of`: 2**BLOCK_SHIFT single ranks, then
#: 2**BLOCK_SHIFT blocks an octave, up to rank 2**63).
_BLOCKS_MAX = (64 - BLOCK_SHIFT + 1) << BLOCK_SHIFT


@njit(cache=True)
def _block_of(k: int) -> tuple[int, int]:
    """``(index, first rank)`` of rank ``k``'s block (:func:`block_start`): blocks numbered from 0
    in rank order, the same for every table (a table's last block may be cut short by its ``n``)."""
    if k < (np.int64(1) << BLOCK_SHIFT):
        return k, k
    e = 63 - np.int64(leading_zeros(np.uint64(k)))  # 2**e <= k < 2**(e + 1)
    sh = e - BLOCK_SHIFT  # the octave's blocks are 2**sh ranks each
    return (sh << BLOCK_SHIFT) + (k >> sh), (k >> sh) << sh


@njit(cache=True)
def _touched_keys(touched: np.ndarray, bounds: np.ndarray, ranks: np.ndarray, rows_per_table: np.ndarray,
                  row_base: np.ndarray, visit_base: np.ndarray, exponent: float, m: float, c: float, seed: int,
                  n_sets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per touched row (ascending global ids; table ``t``'s from ``bounds[t]`` to ``bounds[t + 1]``,
    ``ranks`` their ranks): its age as :func:`steady_state` draws it (its rank's hash, its block's
    probability, each block's survival computed once a table size), its recency key ``age << 32 |
    (2**32 − 1 − visit)`` and its set. :func:`_touched_keys_ref` is the NumPy reference."""
    n = touched.size
    ages = np.empty(n, np.uint32)
    keys = np.empty(n, np.uint64)
    sets = np.empty(n, np.uint64)
    la1s = np.empty(_BLOCKS_MAX, np.float64)
    betas = np.empty(_BLOCKS_MAX, np.float64)
    known = np.zeros(_BLOCKS_MAX, np.bool_)
    size = np.int64(-1)
    for t in range(rows_per_table.size):
        lo, hi = bounds[t], bounds[t + 1]
        if hi <= lo:
            continue
        nt = rows_per_table[t]
        if nt != size:  # a block's survival depends on the table's size alone
            known[:] = False
            size = nt
        h = table_stream(seed, t)
        for i in range(lo, hi):
            k = ranks[i]
            b, k0 = _block_of(k)
            if not known[b]:
                la1s[b], betas[b] = _survival_log(block_prob(k0, block_end(k0, nt), nt, exponent), m, c)
                known[b] = True
            age = _age(np.log(_uniform(h, k)), la1s[b], betas[b])
            ages[i] = age
            g = touched[i]
            keys[i] = (np.uint64(age) << _SHIFT_32) | (_LOW32 - np.uint64(g - row_base[t] + visit_base[t]))
            sets[i] = np.uint64(_set_of(g, n_sets))
    return ages, keys, sets


def _touched_keys_ref(touched, bounds, ranks, rows_per_table, row_base, visit_base, exponent, m, c, seed, n_sets):
    """Reference of :func:`_touched_keys` in NumPy: every rank's block probability from
    :func:`_block_probs_np`, the survival and age in array form (the helpers :func:`steady_state_ref` uses)."""
    touched = np.asarray(touched, np.int64)
    ages = np.empty(touched.size, np.uint32)
    keys = np.empty(touched.size, np.uint64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for t, n in enumerate(np.asarray(rows_per_table, np.int64).tolist()):
            lo, hi = int(bounds[t]), int(bounds[t + 1])
            if hi <= lo:
                continue
            k = np.asarray(ranks[lo:hi], np.int64)
            la1, beta = _survival_log_np(_block_probs_np(n, exponent)[0][k], m, c)
            ages[lo:hi] = _age_np(np.log(_uniform_np(table_stream(seed, t), k)), la1, beta)
            visit = touched[lo:hi] - row_base[t] + visit_base[t]
            keys[lo:hi] = (ages[lo:hi].astype(np.uint64) << _SHIFT_32) | (_LOW32 - visit.astype(np.uint64))
    sets = ((touched.astype(np.uint64) * HASH_MULTIPLIER) >> np.uint64(20)) % np.uint64(n_sets)
    return ages, keys, sets


@njit(cache=True)
def _fill_sets(js: np.ndarray, slots: np.ndarray, set_ids: np.ndarray, starts: np.ndarray, keys: np.ndarray,
               rows: np.ndarray, grid: np.ndarray, mu: np.ndarray, seed: int, total_rows: int, can_phantom: bool,
               bitmap: np.ndarray, forward: bool, row_base: np.ndarray, visit_base: np.ndarray, dirty: bool,
               index: np.ndarray, pool: np.ndarray) -> int:
    """Build touched set ``set_ids[j]`` for each ``j = js[k]`` into pool row ``slots[k]`` (``index``
    of the set: ``slots[k] + 1``): its touched rows (``keys``/``rows`` from ``starts[j]`` to
    ``starts[j + 1]``, youngest first) and its untouched rows' ages, a Poisson process of mean
    measure ``mu`` over the ages ``grid``, each untouched winner a never-touched row (``bitmap``: one
    bit per touched row; ``can_phantom``: some row is untouched); the youngest ``ways``. A set's
    entries depend on ``j`` alone, whatever the order or company it is built in. ``index`` None: the
    sets are built, not indexed. Returns the empty slots of the sets built."""
    ways = pool.shape[1]
    d = np.uint32(1) if dirty else np.uint32(0)
    cand_k = np.empty(2 * ways, np.uint64)
    cand_g = np.empty(2 * ways, np.int64)
    empty = 0
    h_seed = _mix64(np.uint64(seed) ^ _PHANTOM_STREAM)
    n = js.size
    top = mu[-1]
    lo_q = np.empty(MU_BUCKETS + 1, np.int64)  # lo_q[b]: the first grid index reaching bucket b's floor
    for b in range(MU_BUCKETS + 1):
        lo_q[b] = np.searchsorted(mu, top * b / MU_BUCKETS)
    scale = MU_BUCKETS / top if top > 0.0 else 0.0
    if can_phantom:
        for k in range(min(PHANTOM_PREFETCH_SETS, n)):
            _prefetch_phantoms(bitmap, h_seed, set_ids[js[k]], ways, total_rows)
    for k in range(n):
        j = js[k]
        s = set_ids[j]
        if can_phantom and k + PHANTOM_PREFETCH_SETS < n:
            _prefetch_phantoms(bitmap, h_seed, set_ids[js[k + PHANTOM_PREFETCH_SETS]], ways, total_rows)
        a = 0
        for i in range(starts[j], min(starts[j + 1], starts[j] + ways)):
            cand_k[a] = keys[i]
            cand_g[a] = rows[i]
            a += 1
        h = _mix64(h_seed + np.uint64(s + 1) * GOLDEN_GAMMA)
        x = 0.0
        for i in range(ways):
            if not can_phantom:
                break
            x -= np.log(_uniform(h, 2 * i))
            if x > mu[-1]:
                break
            q = _first_reaching(mu, x, lo_q, scale)  # the first grid age whose mean measure reaches x
            if q == 0:
                tau = grid[0]
            else:
                tau = grid[q - 1] + (x - mu[q - 1]) / (mu[q] - mu[q - 1]) * (grid[q] - grid[q - 1])
            age = np.uint32(min(max(1.0, np.ceil(tau)), 4294967294.0))
            g = np.int64(-1)
            for tr in range(PHANTOM_TRIES):
                r = np.int64(_mix64(h + np.uint64(2 * i + 1 + 2 * ways * tr) * GOLDEN_GAMMA) % np.uint64(total_rows))
                if not (bitmap[r >> 3] >> (r & 7)) & 1:  # not a touched row
                    g = r
                    break
            if g < 0:
                continue
            cand_k[a] = (np.uint64(age) << _SHIFT_32) | (_LOW32 - np.uint64(_visit(g, forward, row_base, visit_base)))
            cand_g[a] = g
            a += 1
        for i in range(1, a):  # insertion sort by key, youngest first
            kk, gg = cand_k[i], cand_g[i]
            q = i - 1
            while q >= 0 and cand_k[q] > kk:
                cand_k[q + 1] = cand_k[q]
                cand_g[q + 1] = cand_g[q]
                q -= 1
            cand_k[q + 1] = kk
            cand_g[q + 1] = gg
        kept = min(a, ways)
        row = slots[k]
        for w in range(kept):
            pool[row, w] = (np.uint32(cand_g[w] + 1) << np.uint32(1)) | d
        empty += ways - kept
        if index is not None:
            index[s] = np.int32(row + 1)
    return empty


@njit(cache=True)
def _copy_sets(js: np.ndarray, slots: np.ndarray, set_ids: np.ndarray, made: np.ndarray, index: np.ndarray,
               pool: np.ndarray) -> int:
    """Copy made set ``j = js[k]`` (row ``j`` of ``made``) into pool row ``slots[k]`` and index it;
    returns the empty slots (zero entries) of the sets copied."""
    ways = pool.shape[1]
    empty = 0
    for k in range(js.size):
        j = js[k]
        row = slots[k]
        for w in range(ways):
            e = made[j, w]
            pool[row, w] = e
            if e == 0:
                empty += 1
        index[set_ids[j]] = np.int32(row + 1)
    return empty


@njit(cache=True)
def _claim(set_idx: np.ndarray, index: np.ndarray, used: np.ndarray, recipe_of, set_ids: np.ndarray) -> np.ndarray:
    """The touched sets of ``set_idx`` (the sets of a cache access's keys, in order) not built yet
    (``index`` 0, and in the recipe: ``recipe_of`` > 0, their position in it plus one, or, with
    ``recipe_of`` None, found in the ascending ``set_ids``), each handed the next pool row (``used``)
    as it is found (marking it open); returns their recipe positions."""
    n = set_idx.shape[0]
    js = np.empty(n, np.int64)
    c = 0
    for i in range(n):
        if i + PREFETCH_AHEAD < n:
            prefetch_read(index, set_idx[i + PREFETCH_AHEAD])
        s = set_idx[i]
        if index[s] != 0:
            continue
        if recipe_of is not None:
            j = np.int64(recipe_of[s]) - 1
        else:
            j = np.searchsorted(set_ids, s)
            if j >= set_ids.size or set_ids[j] != s:
                j = -1
        if j >= 0:
            slot = used[0] + 1
            used[0] = slot
            index[s] = np.int32(slot)
            js[c] = j
            c += 1
    return js[:c]


@njit(cache=True)
def _prefetch_phantoms(bitmap: np.ndarray, h_seed: np.uint64, s: int, ways: int, total_rows: int) -> None:
    """Prefetch the bitmap bytes of set ``s``'s phantoms' first-try rows (as :func:`_fill_sets` draws them)."""
    h = _mix64(h_seed + np.uint64(s + 1) * GOLDEN_GAMMA)
    for i in range(ways):
        r = np.int64(_mix64(h + np.uint64(2 * i + 1) * GOLDEN_GAMMA) % np.uint64(total_rows))
        prefetch_read(bitmap, r >> 3)


@njit(cache=True)
def _first_reaching(mu: np.ndarray, x: float, lo_q: np.ndarray, scale: float) -> int:
    """``np.searchsorted(mu, x)`` (the first index with ``mu[q] >= x``) for ``0 <= x <= mu[-1]``:
    ``x``'s bucket of ``lo_q`` (bucket ``⌊x × scale⌋``, ``scale`` the buckets per unit of measure;
    0: start at 0; past the last bucket, infinite or NaN: the last), one step taken without a branch (a bucket rarely holds more than one grid point),
    then walked to the exact answer."""
    nb = lo_q.size - 1
    f = x * scale  # inf or nan where the measure's top is subnormal (``scale`` overflows): the last bucket
    q = lo_q[np.int64(f) if f < nb else nb]
    if q < mu.size:
        q += np.int64(mu[q] < x)
    while q > 0 and mu[q - 1] >= x:
        q -= 1
    while q < mu.size and mu[q] < x:
        q += 1
    return q


@njit(cache=True)
def _visit(g: np.int64, forward: bool, row_base: np.ndarray, visit_base: np.ndarray) -> np.int64:
    """Row ``g``'s position in the update's order (``forward``: ascending global rows)."""
    if forward:
        return g
    lo, hi = 0, row_base.size - 1
    while lo < hi:  # the last table whose base is <= g
        mid = (lo + hi + 1) // 2
        if row_base[mid] <= g:
            lo = mid
        else:
            hi = mid - 1
    return visit_base[lo] + (g - row_base[lo])


@njit(cache=True)
def set_order(sets: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``np.lexsort((key, sets))`` (by set, then key; stable) for uint64 ``sets`` below 2**32: a
    two-pass LSD radix sort of the sets (16 bits a pass), then each set's run insertion-sorted by key
    (runs are short: a set holds few touched rows)."""
    n = sets.size
    order = np.arange(n)
    sv = sets.copy()  # the sets in the current order (moved with it: sequential reads)
    tmp = np.empty(n, np.int64)
    tmp_sv = np.empty(n, np.uint64)
    for shift in (np.uint64(0), np.uint64(16)):
        count = np.zeros((1 << 16) + 1, np.int64)
        for i in range(n):
            count[((sv[i] >> shift) & np.uint64(0xFFFF)) + np.uint64(1)] += 1
        for b in range(1, count.size):
            count[b] += count[b - 1]
        for i in range(n):
            d = (sv[i] >> shift) & np.uint64(0xFFFF)
            tmp[count[d]] = order[i]
            tmp_sv[count[d]] = sv[i]
            count[d] += 1
        order, tmp = tmp, order
        sv, tmp_sv = tmp_sv, sv
    start = 0
    for i in range(1, n + 1):
        if i == n or sv[i] != sv[start]:
            for a in range(start + 1, i):  # insertion sort of the run by key, stable
                o = order[a]
                q = a - 1
                while q >= start and key[order[q]] > key[o]:
                    order[q + 1] = order[q]
                    q -= 1
                order[q + 1] = o
            start = i
    return order


def _touched_inputs(touched, rows_per_table, row_base, table_keys, exponent, positions, reuse, capacity_rows,
                    ways, seed, reverse_tables, tau_h):
    """What :func:`steady_state_touched` and its reference share: per touched row its age, set and
    recency key; the untouched rows' mean measure on an age grid."""
    rows_per_table = np.asarray(rows_per_table, np.int64)
    row_base = np.asarray(row_base, np.int64)
    keys = np.asarray(table_keys, np.uint64)
    touched = np.asarray(touched, np.int64)
    if touched.size > 1 and not (np.diff(touched) > 0).all():
        touched = sorted_unique(touched)
    total = int(rows_per_table.sum())
    ways = max(1, min(ways, capacity_rows))
    n_sets = max(1, capacity_rows // ways)
    if tau_h is None:
        tau_h = horizon(rows_per_table, exponent, positions, reuse, CANDIDATE_FACTOR * n_sets * ways)
    visit_base = _update_bases(rows_per_table, row_base, reverse_tables)
    ranks = np.empty(touched.size, np.int64)
    # touched ascends, so each table's rows are one slice
    bounds = np.searchsorted(touched, np.append(row_base, np.iinfo(np.int64).max))
    for t in range(rows_per_table.size):
        lo, hi = int(bounds[t]), int(bounds[t + 1])
        if hi > lo:
            ranks[lo:hi] = feistel_inverse(touched[lo:hi] - row_base[t], int(rows_per_table[t]), keys[t])
    ages, key, sets = _touched_keys(touched, bounds, ranks, rows_per_table, row_base, visit_base, float(exponent),
                                    float(positions), float(reuse), int(seed), int(n_sets))
    order = set_order(sets, key) if n_sets < 1 << 32 else np.lexsort((key, sets))
    top = min(tau_h, 1e12)
    grid = np.unique(np.ceil(np.geomspace(1.0, max(top, 1.0), AGE_GRID_POINTS)))
    young = _young_grid(_survival_terms(_binned(rows_per_table, exponent), float(positions), float(reuse)), grid)
    touched_young = np.searchsorted(np.sort(ages), grid, side="right")
    mu = np.maximum.accumulate(np.maximum(young - touched_young, 0.0)) / n_sets
    s_sorted = sets[order].astype(np.int64)
    cut = np.flatnonzero(np.diff(s_sorted)) + 1
    starts = np.concatenate(([0], cut, [s_sorted.size])).astype(np.int64)
    set_ids = s_sorted[starts[:-1]] if s_sorted.size else np.zeros(0, np.int64)
    return (touched, total, ways, n_sets, visit_base, row_base, set_ids, starts, key[order], touched[order],
            grid.astype(np.float64), mu)


def steady_state_touched(touched, rows_per_table, row_base, table_keys, exponent: float, positions: int,
                         reuse: float, capacity_rows: int, ways: int = 16, seed: int = 0, dirty: bool = True,
                         reverse_tables: bool = False, tau_h: float | None = None) -> tuple[tuple[VectorCache], int]:
    """:func:`steady_state` for a run that accesses only the rows ``touched`` (global ids): only the
    sets holding one are built. A touched row's age is the one :func:`steady_state` draws; the rows of
    its set that the run never accesses enter as a Poisson process of ages, whose mean measure is the
    expected count of rows younger than an age (:func:`horizon`'s sum) less the touched ones', per set,
    and a slot one of them wins holds a row the run never accesses (a dirty victim when evicted).
    Returns ``((cache,), empty slots of the built sets)``."""
    (touched, total, ways, n_sets, visit_base, row_base, set_ids, starts, keys, rows, grid,
     mu) = _touched_inputs(touched, rows_per_table, row_base, table_keys, exponent, positions, reuse,
                           capacity_rows, ways, seed, reverse_tables, tau_h)
    sets = SteadySets(capacity_rows, ways, set_ids, starts, keys, rows, grid, mu, seed, total, touched,
                      not reverse_tables, row_base, visit_base, dirty)
    cache = sets.new_cache(lazy=False)
    return (cache,), sets.empty


def steady_sets_touched(touched, rows_per_table, row_base, table_keys, exponent: float, positions: int,
                        reuse: float, capacity_rows: int, ways: int = 16, seed: int = 0, dirty: bool = True,
                        reverse_tables: bool = False, tau_h: float | None = None) -> SteadySets:
    """What :func:`steady_state_touched` builds, kept as its recipe: :meth:`SteadySets.new_cache`
    gives a cache that builds each touched set when a run first touches it (the same entries)."""
    (touched, total, ways, n_sets, visit_base, row_base, set_ids, starts, keys, rows, grid,
     mu) = _touched_inputs(touched, rows_per_table, row_base, table_keys, exponent, positions, reuse,
                           capacity_rows, ways, seed, reverse_tables, tau_h)
    return SteadySets(capacity_rows, ways, set_ids, starts, keys, rows, grid, mu, seed, total, touched,
                      not reverse_tables, row_base, visit_base, dirty)


class SteadySets:
    """The steady state of the sets a run's rows fall in (:func:`steady_state_touched`), as the
    recipe of each set: a cache from :meth:`new_cache` builds a set from it when the run first
    touches the set (:meth:`open`, called by :func:`~cxlsim.kernels.vector_cache.cache_access`), so
    a run pays for the sets it reaches, not every set its longest possible run could. A set's
    entries are the recipe's whatever order the sets open in, so the lazy and the eager cache hold
    the same state (``dense()`` opens every set first). Each set is made once, kept, and copied
    into every cache that opens it (the runs of a sweep over one workload build each set once)."""

    def __init__(self, capacity_rows, ways, set_ids, starts, keys, rows, grid, mu, seed, total, touched, forward,
                 row_base, visit_base, dirty) -> None:
        self.capacity_rows, self.ways = int(capacity_rows), int(ways)
        self.set_ids, self.starts, self.keys, self.rows = set_ids, starts, keys, rows
        self.grid, self.mu, self.seed, self.total = grid, mu, int(seed), int(total)
        self.can_phantom = touched.size < total
        # one bit per touched row, read by byte (bit g & 7 of byte g >> 3): the row bitmap's words, little-endian
        words = new_bitmap(total)
        mark(words, touched)
        self.bitmap = words.astype("<u8", copy=False).view(np.uint8)
        self.forward, self.row_base, self.visit_base, self.dirty = bool(forward), row_base, visit_base, bool(dirty)
        self.empty = 0  # empty slots of the sets built by an eager cache
        self._recipe_of: np.ndarray | None = None
        #: the sets made so far, row ``j`` set ``set_ids[j]``'s entries (where ``_is_made[j]``): a
        #: later cache copies them (zero pages until a set is made)
        self._made: np.ndarray | None = None
        self._is_made: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        """Bytes the recipe holds, with what it makes once used: the per-set position array
        (:attr:`recipe_of`) and the made sets (every one counted)."""
        held = sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))
        n_sets = max(1, self.capacity_rows // self.ways)
        if self._recipe_of is None and self.set_ids.size * DENSE_RECIPE_SETS >= n_sets:
            held += 4 * n_sets
        if self._made is None:  # the made sets, counted whole from the start
            held += self.set_ids.size * (4 * self.ways + 1)
        return held

    def new_cache(self, lazy: bool = True) -> VectorCache:
        """A cache in this steady state: its sets built as the run first touches them (``lazy``), or all now."""
        cache = VectorCache(self.capacity_rows, self.ways)
        # room for as many sets again (zero pages, committed only when a set opens): a run's first
        # access reserves room for every key it brings and would otherwise copy the whole pool
        cache.pool = _aligned_zeros(max(1, min(cache.n_sets, 2 * self.set_ids.size)), cache.ways)
        if lazy:
            cache.steady = self
            return cache
        js = np.arange(self.set_ids.size, dtype=np.int64)
        self.empty = int(self._fill(js, js, cache))
        cache.used[0] = self.set_ids.size
        return cache

    @property
    def recipe_of(self) -> np.ndarray | None:
        """Per set of the cache: its position in the recipe plus one (0: no touched row); None where
        the recipe's sets are sparse (fewer than one in :data:`DENSE_RECIPE_SETS`: a search of
        ``set_ids`` then costs less than faulting in an array of every set)."""
        n_sets = max(1, self.capacity_rows // self.ways)
        if self._recipe_of is None and self.set_ids.size * DENSE_RECIPE_SETS >= n_sets:
            self._recipe_of = np.zeros(n_sets, np.int32)
            self._recipe_of[self.set_ids] = np.arange(1, self.set_ids.size + 1, dtype=np.int32)
        return self._recipe_of

    def open(self, keys: np.ndarray, cache: VectorCache) -> np.ndarray:
        """Build the not yet built sets of ``keys`` in ``cache`` (its pool has room for them);
        returns each key's set. Raises ``ValueError`` (the cache untouched) for a key outside
        ``[0, MAX_ROW]``."""
        set_idx, ok = sets_of(keys, cache.n_sets)
        if not ok:
            raise ValueError(BAD_KEYS)
        first = int(cache.used[0])
        js = _claim(set_idx, cache.index, cache.used, self.recipe_of, self.set_ids)
        if js.size:
            # built in recipe order (its arrays read forward, the index written forward) into the
            # rows just handed out, in the same order (the pool written forward)
            js.sort()
            self._fill(js, first + np.arange(js.size, dtype=np.int64), cache)
        return set_idx

    def open_all(self, cache: VectorCache) -> None:
        """Build every set of the recipe ``cache`` has not built."""
        todo = np.flatnonzero(cache.index[self.set_ids] == 0)
        if todo.size:
            cache.reserve(todo.size)
            slots = int(cache.used[0]) + np.arange(todo.size, dtype=np.int64)
            cache.used[0] += todo.size
            self._fill(todo.astype(np.int64), slots, cache)

    def _fill(self, js: np.ndarray, slots: np.ndarray, cache: VectorCache) -> int:
        """Recipe sets ``js`` into ``cache``'s pool rows ``slots``, indexed: each set is made once
        (into ``_made``) and copied from there (a set's entries depend on the set alone, so a later
        cache's copy is what it would build). Returns their empty slots."""
        if self._made is None:
            self._made = np.zeros((self.set_ids.size, self.ways), np.uint32)
            self._is_made = np.zeros(self.set_ids.size, np.bool_)
        new = js[~self._is_made[js]]
        if new.size:
            _fill_sets(new, new, self.set_ids, self.starts, self.keys, self.rows, self.grid, self.mu, self.seed,
                       self.total, self.can_phantom, self.bitmap, self.forward, self.row_base, self.visit_base,
                       self.dirty, None, self._made)
            self._is_made[new] = True
        return _copy_sets(js, slots, self.set_ids, self._made, cache.index, cache.pool)


def steady_state_touched_ref(touched, rows_per_table, row_base, table_keys, exponent: float, positions: int,
                             reuse: float, capacity_rows: int, ways: int = 16, seed: int = 0, dirty: bool = True,
                             reverse_tables: bool = False, tau_h: float | None = None) -> np.ndarray:
    """Reference of :func:`steady_state_touched` (plain Python over the sets): the dense state."""
    (touched, total, ways, n_sets, visit_base, row_base, set_ids, starts, keys, rows, grid,
     mu) = _touched_inputs(touched, rows_per_table, row_base, table_keys, exponent, positions, reuse,
                           capacity_rows, ways, seed, reverse_tables, tau_h)
    out = np.zeros((n_sets, ways), np.uint32)
    touched_set = set(touched.tolist())
    h_seed = int(_mix64(np.uint64(seed) ^ _PHANTOM_STREAM))
    mask = (1 << 64) - 1
    gamma = int(GOLDEN_GAMMA)
    for j, s in enumerate(set_ids.tolist()):
        cand = [(int(keys[i]), int(rows[i])) for i in range(starts[j], min(starts[j + 1], starts[j] + ways))]
        h = int(_mix64(np.uint64((h_seed + (s + 1) * gamma) & mask)))
        x = 0.0
        for i in range(ways):
            if len(touched_set) >= total:
                break
            x -= float(np.log(_uniform(np.uint64(h), 2 * i)))
            if x > mu[-1]:
                break
            q = int(np.searchsorted(mu, x))
            tau = grid[0] if q == 0 else grid[q - 1] + (x - mu[q - 1]) / (mu[q] - mu[q - 1]) * (grid[q] - grid[q - 1])
            age = int(min(max(1.0, np.ceil(tau)), 4294967294.0))
            g = -1
            for tr in range(PHANTOM_TRIES):
                r = int(_mix64(np.uint64((h + (2 * i + 1 + 2 * ways * tr) * gamma) & mask))) % total
                if r not in touched_set:
                    g = r
                    break
            if g < 0:
                continue
            v = int(_visit(np.int64(g), not reverse_tables, row_base, visit_base))
            cand.append(((age << 32) | (0xFFFFFFFF - v), g))
        cand.sort(key=lambda e: e[0])
        for w, (_, g) in enumerate(cand[:ways]):
            out[s, w] = ((g + 1) << 1) | int(dirty)
    return out
