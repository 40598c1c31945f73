"""Host-DRAM vector cache kernel against its reference, and LRU behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.vector_cache import MAX_ROW, cache_access, cache_access_ref, new_cache

_calls = st.lists(
    st.tuples(st.lists(st.integers(0, 40), max_size=60), st.booleans(), st.booleans()),
    min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(cap=st.integers(1, 48), ways=st.integers(1, 16), calls=_calls,
       offset=st.sampled_from([0, 1000, MAX_ROW - 40]))
def test_matches_reference(cap, ways, calls, offset):
    """Kernel == reference (hits, evictions, state) over read/write sequences carrying state."""
    a, b = new_cache(cap, ways), new_cache(cap, ways)
    for keys, write, unique in calls:
        k = np.asarray(keys, dtype=np.int64) + offset
        if unique:  # the update's sorted unique rows
            k = np.unique(k)
        h1, e1 = cache_access(k, write, *a)
        h2, e2 = cache_access_ref(k, write, *b)
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(e1, e2)
        assert e1.dtype == np.int64 and h1.dtype == np.bool_
        np.testing.assert_array_equal(a[0], b[0])


@settings(max_examples=30, deadline=None)
@given(cap=st.integers(1, 80), ways=st.integers(1, 16), seed=st.integers(0, 2**31 - 1))
def test_matches_reference_random_keys(cap, ways, seed):
    rng = np.random.default_rng(seed)
    a, b = new_cache(cap, ways), new_cache(cap, ways)
    for it in range(4):
        keys = rng.integers(0, 3 * cap + 1, size=60)
        h1, e1 = cache_access(keys, bool(it % 2), *a)
        h2, e2 = cache_access_ref(keys, bool(it % 2), *b)
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(e1, e2)


def test_fully_associative_lru_and_dirty_writeback():
    state = new_cache(3, ways=3)
    hit, ev = cache_access(np.array([1, 2, 3, 1]), False, *state)
    assert hit.tolist() == [False, False, False, True]
    hit, ev = cache_access(np.array([2]), True, *state)  # 2 becomes dirty and MRU
    hit, ev = cache_access(np.array([4, 5]), False, *state)  # evicts 3 (clean), then 1 (clean)
    assert ev.tolist() == []
    hit, ev = cache_access(np.array([6]), False, *state)  # evicts 2 (dirty)
    assert ev.tolist() == [2]


@pytest.mark.parametrize("access", [cache_access, cache_access_ref])
def test_hand_worked_lru(access):
    """Two ways, one set: hits refresh recency, a read hit keeps the dirty bit, misses evict LRU."""
    state = new_cache(2, ways=2)
    assert state[0].shape == (1, 2)
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
    (sets,) = new_cache(64)
    assert sets.shape == (4, 16) and sets.dtype == np.uint32
    assert sets.ctypes.data % 64 == 0 and not sets.any()
    hit, ev = cache_access(np.zeros(0, dtype=np.int64), True, sets)
    assert hit.size == 0 and ev.size == 0
    cache_access(np.array([0, MAX_ROW]), True, sets)
    assert sorted(sets[sets != 0].tolist()) == [(0 + 1) << 1 | 1, (MAX_ROW + 1) << 1 | 1]


@pytest.mark.parametrize("access", [cache_access, cache_access_ref])
@pytest.mark.parametrize("bad", [-1, MAX_ROW + 1])
def test_rejects_unencodable_rows_without_touching_state(access, bad):
    state = new_cache(8, ways=2)
    with pytest.raises(ValueError, match="row ids"):
        access(np.array([1, 2, bad], dtype=np.int64), True, *state)
    assert not state[0].any()
