"""``cxlsim.arrays.unique`` is ``np.unique`` of a 1-D array (sorted distinct values), by a sort."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.arrays import unique


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40), max_size=200))
def test_unique_is_numpys(values):
    a = np.asarray(values, np.int64)
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_unique_keeps_dtype_and_takes_any_shape():
    a = np.array([[3, 1], [3, 2]], np.int32)
    assert unique(a).dtype == np.int32 and unique(a).tolist() == [1, 2, 3]
    assert unique(np.zeros(0, np.int64)).size == 0 and unique(np.array([7.5])).tolist() == [7.5]
