"""Host-DRAM vector cache kernel against its reference, and LRU behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.vector_cache import (
    MAX_ROW,
    VectorCache,
    _set_of,
    cache_access,
    cache_access_ref,
    new_cache,
    new_cache_ref,
    set_of_ref,
)

_calls = st.lists(
    st.tuples(st.lists(st.integers(0, 40), max_size=60), st.booleans(), st.booleans()),
    min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(cap=st.integers(1, 48), ways=st.integers(1, 16), calls=_calls,
       offset=st.sampled_from([0, 1000, MAX_ROW - 40]))
def test_matches_reference(cap, ways, calls, offset):
    """Kernel == reference (hits, evictions, state) over read/write sequences carrying state."""
    a, b = new_cache(cap, ways), new_cache_ref(cap, ways)
    for keys, write, unique in calls:
        k = np.asarray(keys, dtype=np.int64) + offset
        if unique:  # the update's sorted unique rows
            k = np.unique(k)
        h1, e1 = cache_access(k, write, *a)
        h2, e2 = cache_access_ref(k, write, *b)
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(e1, e2)
        assert e1.dtype == np.int64 and h1.dtype == np.bool_
        np.testing.assert_array_equal(a[0].dense(), b[0])


@settings(max_examples=30, deadline=None)
@given(cap=st.integers(1, 80), ways=st.integers(1, 16), seed=st.integers(0, 2**31 - 1))
def test_matches_reference_random_keys(cap, ways, seed):
    rng = np.random.default_rng(seed)
    a, b = new_cache(cap, ways), new_cache_ref(cap, ways)
    for it in range(4):
        keys = rng.integers(0, 3 * cap + 1, size=60)
        h1, e1 = cache_access(keys, bool(it % 2), *a)
        h2, e2 = cache_access_ref(keys, bool(it % 2), *b)
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(e1, e2)
        np.testing.assert_array_equal(a[0].dense(), b[0])


def test_fully_associative_lru_and_dirty_writeback():
    state = new_cache(3, ways=3)
    hit, ev = cache_access(np.array([1, 2, 3, 1]), False, *state)
    assert hit.tolist() == [False, False, False, True]
    hit, ev = cache_access(np.array([2]), True, *state)  # 2 becomes dirty and MRU
    hit, ev = cache_access(np.array([4, 5]), False, *state)  # evicts 3 (clean), then 1 (clean)
    assert ev.tolist() == []
    hit, ev = cache_access(np.array([6]), False, *state)  # evicts 2 (dirty)
    assert ev.tolist() == [2]


@pytest.mark.parametrize(("access", "new"), [(cache_access, new_cache), (cache_access_ref, new_cache_ref)])
def test_hand_worked_lru(access, new):
    """Two ways, one set: hits refresh recency, a read hit keeps the dirty bit, misses evict LRU."""
    state = new(2, ways=2)
    assert (state[0].dense() if access is cache_access else state[0]).shape == (1, 2)
    steps = [  # (keys, write, expected hits, expected dirty evictions); LRU order after, MRU first
        ([5, 7], True, [False, False], []),      # [7d, 5d]
        ([5], False, [True], []),                # [5d, 7d]  read hit keeps 5 dirty
        ([9], False, [False], [7]),              # [9, 5d]   7 is LRU, dirty -> written back
        ([9, 5], False, [True, True], []),       # [5d, 9]
        ([3], True, [False], []),                # [3d, 5d]  9 is LRU, clean -> dropped
        ([5, 3, 8], False, [True, True, False], [5]),  # [5d, 3d] -> [3d, 5d] -> [8, 3d]
        ([8, 8, 3], True, [True, True, True], []),     # [3d, 8d]
        ([1, 2], False, [False, False], [8, 3]),       # [1, 3d] -> [2, 1]
    ]
    for keys, write, hits, evicted in steps:
        hit, ev = access(np.array(keys, dtype=np.int64), write, *state)
        assert hit.tolist() == hits and ev.tolist() == evicted, keys


def test_state_layout_and_empty_calls():
    (c,) = new_cache(64)
    assert c.index.shape == (4,) and c.index.dtype == np.int32 and not c.index.any()
    assert c.pool.shape[1] == 16 and c.pool.dtype == np.uint32 and c.pool.ctypes.data % 64 == 0
    hit, ev = cache_access(np.zeros(0, dtype=np.int64), True, c)
    assert hit.size == 0 and ev.size == 0 and int(c.used[0]) == 0
    cache_access(np.array([0, MAX_ROW]), True, c)
    sets = c.dense()
    assert sorted(sets[sets != 0].tolist()) == [(0 + 1) << 1 | 1, (MAX_ROW + 1) << 1 | 1]
    assert int(c.used[0]) == np.count_nonzero(c.index) == np.count_nonzero(sets.any(axis=1))


def test_pool_holds_only_the_sets_used_and_grows_keeping_them():
    """A large cache commits 64 B per set touched, not its capacity; growing keeps every set."""
    big, ref = new_cache(2**24), new_cache_ref(2**24)  # 1 M sets of 16 ways: 64 MiB dense
    keys = np.random.default_rng(5).integers(0, MAX_ROW, size=5000)
    for part in np.array_split(keys, 7):  # several growths
        h1, e1 = cache_access(part, True, *big)
        h2, e2 = cache_access_ref(part, True, *ref)
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(e1, e2)
    c = big[0]
    assert int(c.used[0]) == np.count_nonzero(c.index) <= 5000
    assert c.pool.shape[0] <= 2 * 5000  # rows for the sets used (doubling), not 1 M
    np.testing.assert_array_equal(c.dense(), ref[0])


def test_int32_row_ids_are_widened():
    a, b = new_cache(64), new_cache(64)
    keys = np.array([5, 2**31 - 2, 7, 5], np.int64)
    r64 = cache_access(keys, True, *a)
    r32 = cache_access(keys.astype(np.int32), True, *b)
    for x, y in zip(r64, r32, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a[0].dense(), b[0].dense())


def test_index_past_int32_is_refused():
    with pytest.raises(ValueError, match="int32"):
        new_cache(16 * (2**31), ways=16)


@pytest.mark.parametrize(("access", "new"), [(cache_access, new_cache), (cache_access_ref, new_cache_ref)])
@pytest.mark.parametrize("bad", [-1, MAX_ROW + 1])
def test_rejects_unencodable_rows_without_touching_state(access, new, bad):
    state = new(8, ways=2)
    with pytest.raises(ValueError, match="row ids"):
        access(np.array([1, 2, bad], dtype=np.int64), True, *state)
    s = state[0]
    assert not (s.dense() if isinstance(s, VectorCache) else s).any()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**31 - 2), st.integers(1, 2**31 - 1))
def test_the_set_of_a_key_is_the_integer_modulo(key, n_sets):
    """The double-precision quotient with its one correction equals the integer arithmetic, at
    every key and set count (and at the edges: a dividend just below and at a multiple)."""
    assert _set_of(key, n_sets) == set_of_ref(key, n_sets)


def test_the_set_of_a_key_at_quotient_edges():
    rng = np.random.default_rng(0)
    for n_sets in (1, 2, 3, 6144, 7812500, 15625000, 2**31 - 1, 2**30 + 3):
        for key in rng.integers(0, 2**31 - 1, 2000).tolist() + [0, 1, 2**31 - 2]:
            assert _set_of(key, n_sets) == set_of_ref(key, n_sets)
