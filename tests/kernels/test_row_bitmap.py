"""The row bitmap's distinct rows equal ``np.unique`` of the arrays it marked."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.row_bitmap import mark, members, members_ref, new_bitmap


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5000), st.lists(st.lists(st.integers(0, 10**6), max_size=300), max_size=6),
       st.sampled_from([np.int32, np.int64]))
def test_members_equal_the_unique_rows_of_every_array_marked(total, lists, dtype):
    arrays = [np.asarray([v % total for v in a], dtype) for a in lists]
    bitmap = new_bitmap(total)
    for a in arrays:
        mark(bitmap, a)
    got = members(bitmap)
    assert got.dtype == np.int64
    assert np.array_equal(got, members_ref(arrays))
    want = np.unique(np.concatenate(arrays).astype(np.int64)) if arrays else np.zeros(0, np.int64)
    assert np.array_equal(members_ref(arrays), want)


def test_rows_at_word_edges_and_the_last_row():
    total = 64 * 3 + 5
    rows = np.array([0, 63, 64, 127, 128, total - 1, 63], np.int64)
    bitmap = new_bitmap(total)
    mark(bitmap, rows)
    assert members(bitmap).tolist() == [0, 63, 64, 127, 128, total - 1]
    assert members(new_bitmap(total)).size == 0
