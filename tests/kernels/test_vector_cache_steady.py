"""The vector cache's steady state (cxlsim/kernels/vector_cache_steady.py, pipeline.vector_cache_start).

What must hold: the kernel equals its NumPy reference; each set holds distinct rows of its own hash,
most recently used first, dirty as the update leaves them; the state is a function of the seed; and
the cache run from it hits as often as a cache warmed by the real stream for many characteristic
times (a scaled-down workload), where an empty start does not.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cxlsim.kernels.sampling import feistel_permute
from cxlsim.kernels.vector_cache import HASH_MULTIPLIER, cache_access, new_cache
from cxlsim.kernels.vector_cache_steady import (
    che_hit_fraction,
    horizon,
    steady_sets_touched,
    steady_state,
    steady_state_ref,
    steady_state_touched,
    steady_state_touched_ref,
)
from cxlsim.systems.config import load_system
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.generator import batches, table_keys
from cxlsim.workloads.layout import TableLayout


def global_rows(b, row_base) -> np.ndarray:
    """Batch ``b``'s lookups as global row ids, table after table (the generator's flat layout)."""
    return np.concatenate([b.table(t) + row_base[t] for t in range(b.tables)])



def _tables(rows):
    rows = np.asarray(rows, np.int64)
    base = np.concatenate(([0], np.cumsum(rows)[:-1])).astype(np.int64)
    keys = np.arange(1, rows.size + 1, dtype=np.uint64) * np.uint64(0x5851F42D4C957F2D)
    return rows, base, keys


CASES = [  # rows per table, exponent, positions, reuse, capacity, ways, reverse, dirty
    ([3000, 500, 7, 1], 1.1, 64, 0.76, 512, 16, False, True),
    ([3000, 500, 7, 1], 1.1, 64, 0.76, 512, 4, True, True),
    ([20000, 20000, 20000], 1.05, 200, 0.5, 4000, 16, False, False),
    ([5000, 900], 1.0, 30, 0.0, 700, 1, True, True),  # exponent 1: the log-uniform form; no reuse
    ([100, 50], 1.2, 10, 1.0, 64, 8, False, True),  # reuse 1: positions never redraw
    ([100, 50], 1.1, 10, 0.76, 1000, 8, True, True),  # every row fits
]


@pytest.mark.parametrize("case", CASES)
def test_kernel_matches_reference(case):
    rows, exponent, positions, reuse, cap, ways, reverse, dirty = case
    rows, base, keys = _tables(rows)
    (state,), empty = steady_state(rows, base, keys, exponent, positions, reuse, cap, ways, seed=7,
                                   dirty=dirty, reverse_tables=reverse)
    ref = steady_state_ref(rows, base, keys, exponent, positions, reuse, cap, ways, seed=7, dirty=dirty,
                           reverse_tables=reverse)
    np.testing.assert_array_equal(state.dense(), ref)
    assert empty == int((ref == 0).sum())


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("share", [0.02, 0.3, 1.0])
def test_touched_kernel_matches_reference(case, share):
    rows, exponent, positions, reuse, cap, ways, reverse, dirty = case
    rows, base, keys = _tables(rows)
    rng = np.random.default_rng(5)
    total = int(rows.sum())
    touched = np.unique(rng.integers(0, total, max(1, int(share * total))))
    (state,), empty = steady_state_touched(touched, rows, base, keys, exponent, positions, reuse, cap, ways, seed=7,
                                           dirty=dirty, reverse_tables=reverse)
    ref = steady_state_touched_ref(touched, rows, base, keys, exponent, positions, reuse, cap, ways, seed=7,
                                   dirty=dirty, reverse_tables=reverse)
    np.testing.assert_array_equal(state.dense(), ref)
    built = state.index > 0
    assert empty == int((ref[built] == 0).sum())


@pytest.mark.parametrize("cap", [4096, 1 << 22])  # the recipe's sets dense (a position per set) or sparse (searched)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_lazy_cache_accesses_as_the_eager_one(cap, seed):
    """A steady start's cache that builds each set when an access first touches it (what a run gets)
    hits, evicts and ends as the cache built whole at once, in whatever order the sets open; a key
    outside the range is refused before anything is built."""
    rows, base, keys = _tables([3000, 500, 7, 1])
    rng = np.random.default_rng(seed)
    touched = np.unique(rng.integers(0, int(rows.sum()), 400))
    args = (touched, rows, base, keys, 1.1, 64, 0.76, cap, 16)
    (eager,), _ = steady_state_touched(*args, seed=seed)
    sets = steady_sets_touched(*args, seed=seed)
    assert (sets.recipe_of is None) == (cap > 4096)
    lazy = sets.new_cache()
    with pytest.raises(ValueError):
        cache_access(np.array([int(touched[0]), -1]), False, lazy)
    assert int(lazy.used[0]) == 0
    part = touched[: touched.size // 8]  # the run reaches some of its sets only
    calls = []
    for k in range(6):
        batch = rng.permutation(part)[: 10 + 5 * k]
        write = bool(k % 2)
        h_e, ev_e = cache_access(batch, write, eager)
        h_l, ev_l = cache_access(batch.astype(np.int32), write, lazy)
        assert np.array_equal(h_e, h_l) and np.array_equal(ev_e, ev_l)
        calls.append((batch, write, h_l, ev_l))
    assert int(lazy.used[0]) < int(eager.used[0])  # the sets never touched were never built
    # a second run from the same recipe copies the sets the first made (as the recipe made them,
    # not as that run left them) and accesses as the first did
    made = int(sets._is_made.sum())
    again = sets.new_cache()
    for batch, write, h_l, ev_l in calls:
        h_a, ev_a = cache_access(batch, write, again)
        assert np.array_equal(h_a, h_l) and np.array_equal(ev_a, ev_l)
    assert int(sets._is_made.sum()) == made
    np.testing.assert_array_equal(lazy.dense(), eager.dense())
    np.testing.assert_array_equal(again.dense(), eager.dense())


def test_touched_rows_keep_their_full_state_ages():
    """A touched row is cached exactly when the full state caches it, where its set's other rows are
    not younger in one and older in the other: the full state's youngest rows of a set are cached in both."""
    rows, base, keys = _tables([20000] * 4)
    full = steady_state(rows, base, keys, 1.1, 256, 0.76, 4096, 16, seed=3)[0][0].dense()
    front = (full[:, :4].astype(np.int64) >> 1) - 1  # each set's 4 most recently used rows
    touched = np.unique(front[front >= 0])
    (state,), _ = steady_state_touched(touched, rows, base, keys, 1.1, 256, 0.76, 4096, 16, seed=3)
    cached = (state.dense().astype(np.int64) >> 1) - 1
    # the touched rows' ages are the full state's, and untouched rows enter only behind the young ones
    assert np.isin(touched, cached).mean() > 0.99


def test_sets_hold_their_own_distinct_rows_dirty_and_full():
    rows, base, keys = _tables([20000] * 4)
    (state,), empty = steady_state(rows, base, keys, 1.1, 256, 0.76, 4096, 16, seed=3)
    assert empty <= 4096 // 1000  # the horizon leaves a few slots of the rare sets short of candidates empty
    (state,), empty = steady_state(rows, base, keys, 1.1, 256, 0.76, 4096, 16, seed=3, tau_h=float("inf"))
    dense = state.dense()
    assert empty == 0 and (dense != 0).all()  # every row a candidate, 20 × the capacity: every set full
    assert (dense & 1).all()  # every row a batch reads its update then writes
    g = (dense.astype(np.int64) >> 1) - 1
    assert np.unique(g).size == g.size and g.min() >= 0 and g.max() < rows.sum()
    sets = ((g.astype(np.uint64) * HASH_MULTIPLIER) >> np.uint64(20)) % np.uint64(state.n_sets)
    np.testing.assert_array_equal(sets, np.arange(state.n_sets, dtype=np.uint64)[:, None].repeat(16, 1))
    # the hottest rank of every table was accessed in the last batch: cached
    hot = {int(feistel_permute(np.zeros(1, np.int64), 20000, k)[0] + b) for k, b in zip(keys, base, strict=True)}
    assert hot <= set(g.ravel().tolist())


def test_a_function_of_the_seed():
    rows, base, keys = _tables([5000] * 3)
    a = steady_state(rows, base, keys, 1.1, 64, 0.76, 1024, seed=1)[0][0].dense()
    b = steady_state(rows, base, keys, 1.1, 64, 0.76, 1024, seed=1)[0][0].dense()
    c = steady_state(rows, base, keys, 1.1, 64, 0.76, 1024, seed=2)[0][0].dense()
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_horizon_counts_young_rows():
    """Every row fits: no horizon; more capacity: a longer one."""
    rows, _, _ = _tables([1000, 1000])
    assert horizon(rows, 1.1, 64, 0.76, 2001) == float("inf")
    assert 1 <= horizon(rows, 1.1, 64, 0.76, 500) < horizon(rows, 1.1, 64, 0.76, 1000) < float("inf")


# -- against the real stream, scaled down ----------------------------------------------------------
SMALL = {"tables": 4, "rows_per_table": 50_000, "batch_size": 32, "lookups_per_table": 8}
SMALL_CAP = 16_384  # 8 % of the rows; Che's T_C ≈ 240 batches
WARM_BATCHES = 720  # 3 T_C: the warm run has forgotten its empty start
WINDOW = 100


def _feed(cache, wl, layout, n: int) -> np.ndarray:
    """Lookup hit fraction per batch, fed as the ssd system feeds it (reads, then the update's
    ascending distinct rows, written)."""
    out = np.empty(n)
    for i, b in enumerate(batches(wl, seed=1, n=n, dense=False)):
        rows = global_rows(b, layout.row_base)
        hit, _ = cache_access(rows, False, *cache)
        cache_access(np.unique(rows), True, *cache)
        out[i] = hit.mean()
    return out


def test_steady_start_hits_as_a_long_warm_run():
    wl = load_workload("rm1", SMALL)
    layout = TableLayout.from_workload(wl)
    p = wl.params
    positions = p.batch_size * p.lookups_per_table
    t_c, che = che_hit_fraction(layout.rows, p.popularity_exponent, positions, p.reuse_prev_fraction, SMALL_CAP)
    assert WARM_BATCHES >= 3 * t_c
    args = (layout.rows, layout.row_base, table_keys(1, layout.tables), p.popularity_exponent, positions,
            p.reuse_prev_fraction, SMALL_CAP)
    steady, _ = steady_state(*args, seed=1)
    from_steady = _feed(steady, wl, layout, WINDOW + 1)[1:].mean()  # batch 0 copies nothing: not stationary
    touched = np.unique(np.concatenate([global_rows(b, layout.row_base)
                                        for b in batches(wl, seed=1, n=WINDOW + 1, dense=False)]))
    only_touched, _ = steady_state_touched(touched, *args, seed=1)  # what a run builds
    from_touched = _feed(only_touched, wl, layout, WINDOW + 1)[1:].mean()
    assert abs(from_touched - from_steady) < 0.002
    warm = _feed(new_cache(SMALL_CAP), wl, layout, WARM_BATCHES)
    warmed, cold = warm[-2 * WINDOW:].mean(), warm[1:WINDOW + 1].mean()
    assert abs(from_steady - warmed) < 0.02
    assert abs(che - warmed) < 0.02
    assert warmed - cold > 0.02  # the check can fail: an empty start is that far off


def test_pipeline_option_declared_only_with_a_cache():
    ssd = load_system("ssd")
    assert ssd.pipeline.vector_cache_start == "steady"
    cxl = load_system("cxl")
    assert "vector_cache_start" in cxl.pipeline.skipped


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 50.0), min_size=1, max_size=40), st.floats(0.0, 1.0), st.integers(1, 64))
@example([2.2250738585072014e-308], 0.0, 6)  # a subnormal top: the bucket scale overflows to inf
def test_bucketed_search_is_searchsorted(steps, frac, buckets):
    """The fill's bucketed lookup returns numpy's left searchsorted for every x in [0, mu[-1]] (ties,
    flat runs, bucket edges and their neighbouring doubles included), whatever rounding puts x in
    the bucket next to its own."""
    from cxlsim.kernels.vector_cache_steady import _first_reaching

    mu = np.maximum.accumulate(np.asarray(steps, np.float64))
    top = float(mu[-1])
    lo_q = np.array([np.searchsorted(mu, top * b / buckets) for b in range(buckets + 1)], np.int64)
    xs = {top * frac, top, 0.0, *mu.tolist(), *(top * b / buckets for b in range(buckets + 1))}
    xs |= {y for x in xs for y in (np.nextafter(x, 0.0), np.nextafter(x, np.inf)) if 0.0 <= y <= top}
    for scale in ({buckets / top, buckets / top * (1 + 1e-12), buckets / top * (1 - 1e-12)} if top > 0 else {0.0}):
        for x in xs:
            assert _first_reaching(mu, x, lo_q, scale) == np.searchsorted(mu, x)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)), max_size=300),
       st.sampled_from([1, 3, 70000, 2**32]))
def test_set_order_is_lexsort(pairs, modulus):
    """The radix set order equals numpy's lexsort by set then key (stable), for any sets below 2**32."""
    from cxlsim.kernels.vector_cache_steady import set_order

    sets = np.array([p[0] % modulus for p in pairs], np.uint64)
    key = np.array([p[1] for p in pairs], np.uint64)
    assert np.array_equal(set_order(sets, key), np.lexsort((key, sets)))


@pytest.mark.parametrize("rows_per_table", [[3000, 500, 7, 1], [70_000, 70_000, 900, 70_000], [1, 1, 256, 257, 4096]])
@pytest.mark.parametrize("exponent,reuse", [(1.1, 0.76), (1.0, 0.0), (1.2, 1.0)])
@pytest.mark.parametrize("reverse", [False, True])
def test_touched_keys_kernel_equals_reference(rows_per_table, exponent, reuse, reverse):
    """The touched rows' ages (each block's survival computed once a table size, tables of one size
    sharing it), recency keys and sets equal their NumPy reference's, rank by rank: the steady
    state's touched rows cannot drift from the full state's draws."""
    from cxlsim.kernels.sampling import feistel_inverse
    from cxlsim.kernels.vector_cache_steady import (
        _block_of,
        _touched_keys,
        _touched_keys_ref,
        _update_bases,
        block_start,
    )

    rows, base, keys = _tables(rows_per_table)
    rng = np.random.default_rng(11)
    total = int(rows.sum())
    touched = np.unique(np.concatenate((rng.integers(0, total, total // 3), base, base + rows - 1)))
    bounds = np.searchsorted(touched, np.append(base, np.iinfo(np.int64).max))
    ranks = np.empty(touched.size, np.int64)
    for t in range(rows.size):
        lo, hi = int(bounds[t]), int(bounds[t + 1])
        ranks[lo:hi] = feistel_inverse(touched[lo:hi] - base[t], int(rows[t]), keys[t])
    for k in np.unique(ranks).tolist():  # a block's index and first rank
        b, k0 = _block_of(k)
        assert k0 == block_start(k) and (k0 == k or _block_of(k0)[0] == b)
    visit = _update_bases(rows, base, reverse)
    args = (touched, bounds, ranks, rows, base, visit, exponent, 64.0, reuse, 7, 97)
    for got, want in zip(_touched_keys(*args), _touched_keys_ref(*args), strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("rows_per_table", [[1000] * 3, [40_000_000, 39_060, 17_295, 7424, 3, 63, 10, 4],
                                            list(range(1, 3000, 97)), [312_500_000 // 8] * 8])
@pytest.mark.parametrize("exponent", [0.8, 1.0, 1.2])
def test_young_grid_equals_young_at_each_age_bit_for_bit(rows_per_table, exponent):
    """The grid form (one row per age) gives the per-age sum exactly: the steady state built from it
    cannot drift from the one built age by age."""
    from cxlsim.kernels.vector_cache_steady import _binned, _survival_terms, _young, _young_grid

    terms = _survival_terms(_binned(rows_per_table, exponent), 2048.0 * 80, 0.3)
    grid = np.unique(np.ceil(np.geomspace(1.0, 1e9, 300)))
    got = _young_grid(terms, grid)
    want = np.array([_young(terms, float(g)) for g in grid])
    assert np.array_equal(got, want)


def test_starting_state_is_the_runs_own_not_a_longer_stream_sets():
    """The steady start is built from the batches the run simulates: a stream set an earlier run in
    the same process lengthened (sweeps, the comparison) gives the same state as a fresh one."""
    from cxlsim.systems.streams import StreamSet
    from cxlsim.systems.vector_cache_start import starting_cache

    wl = load_workload("rm4", {"batch_size": 8})
    fresh = starting_cache("steady", StreamSet(wl, 3, 3), 4096)[0]
    longer = StreamSet(wl, 3, 12)
    lengthened = starting_cache("steady", longer, 4096, batches=3)[0]
    whole = starting_cache("steady", longer, 4096)[0]
    assert np.array_equal(lengthened.dense(), fresh.dense())
    assert not np.array_equal(whole.dense(), fresh.dense())  # the batch count is what matters


def test_recipes_are_kept_per_workload_within_their_budget(monkeypatch):
    """A process keeps the recipes of several workloads (a comparison over RM1–RM4 builds each
    once, on every platform), the most recently used first, dropping the oldest past the budget;
    a kept recipe gives the state a fresh build gives."""
    from cxlsim.systems import vector_cache_start as vcs
    from cxlsim.systems.streams import StreamSet

    monkeypatch.setattr(vcs, "_KEPT", {})
    built = []
    real = vcs._build
    monkeypatch.setattr(vcs, "_build", lambda *a: built.append(a[0].workload.name) or real(*a))
    a = StreamSet(load_workload("rm4", {"batch_size": 8}), 3, 3)
    b = StreamSet(load_workload("rm3", {"batch_size": 8, "rows_per_table": 3000}), 3, 3)
    first = vcs.starting_cache("steady", a, 4096)[0].dense()
    vcs.starting_cache("steady", b, 4096)
    again = vcs.starting_cache("steady", a, 4096)[0].dense()
    assert built == ["rm4", "rm3"] and np.array_equal(again, first)
    assert list(vcs._KEPT)[-1][0] == "rm4"  # most recently used last
    monkeypatch.setattr(vcs, "KEPT_RECIPES_B", 1)  # room for the latest only
    vcs.starting_cache("steady", b, 4096)
    assert built == ["rm4", "rm3"] and [k[0] for k in vcs._KEPT] == ["rm3"]
    vcs.starting_cache("steady", a, 4096)
    assert built == ["rm4", "rm3", "rm4"]
