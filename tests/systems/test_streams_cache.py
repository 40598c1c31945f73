"""The stream-set cache: systems on the same inputs share one analysed stream set."""

from __future__ import annotations

import pytest

from cxlsim.api import load_workload
from cxlsim.systems.streams import keep_stream_sets, stream_set

SMALL = {"batch_size": 8, "rows_per_table": 1000}


def test_cache_keeps_the_most_recent_sets():
    a, b = (load_workload(w, SMALL) for w in ("rm1", "rm3"))
    previous = keep_stream_sets(2)
    try:
        sa = stream_set(a, 1, 2)
        sb = stream_set(b, 1, 2)
        assert stream_set(a, 1, 2) is sa and stream_set(b, 1, 2) is sb  # both kept
        stream_set(a, 2, 2)  # a third set evicts the oldest (a, seed 1)
        assert stream_set(b, 1, 2) is sb
        assert stream_set(a, 1, 2) is not sa
        keep_stream_sets(1)
        assert stream_set(a, 1, 2) is stream_set(a, 1, 2)
    finally:
        keep_stream_sets(previous)


def test_keep_at_least_one():
    with pytest.raises(ValueError):
        keep_stream_sets(0)
