"""The CNR checkpoint's modified rows: the union of ascending distinct row lists equals np.unique."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.axes.persistence.cnr.scheme import union_sorted


@settings(max_examples=100, deadline=None)
@given(parts=st.lists(st.lists(st.integers(0, 60)), min_size=1, max_size=5),
       dtype=st.sampled_from([np.int32, np.int64]))
def test_union_sorted_equals_unique_of_concatenation(parts, dtype):
    arrays = [np.unique(np.asarray(p, dtype=dtype)) for p in parts]
    got = union_sorted(arrays)
    want = np.unique(np.concatenate(arrays))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if len(arrays) == 1 and arrays[0].size:
        assert got is not arrays[0]  # a new array, as np.unique gave
