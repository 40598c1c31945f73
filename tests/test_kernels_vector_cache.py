"""Host-DRAM vector cache kernel against its reference, and LRU behaviour."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.vector_cache import cache_access, cache_access_ref, new_cache


@settings(max_examples=40, deadline=None)
@given(cap=st.integers(1, 80), ways=st.integers(1, 16), seed=st.integers(0, 2**31 - 1))
def test_matches_reference(cap, ways, seed):
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
