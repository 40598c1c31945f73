"""The host LLC serves a row only when every line of it hits (cxlsim.systems.host_llc): a row with a
missing line is read whole from the memory below, so its lines that hit are not served by the cache."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cxlsim.config.params import ParamSet
from cxlsim.devices.compute.cpu import CpuModel
from cxlsim.systems.host_llc import HostLlc

LINE_B = 64


def _llc(capacity_lines: int, ways: int, row_B: int) -> HostLlc:
    p = ParamSet({"cache_line_B": LINE_B, "llc_capacity_B": capacity_lines * LINE_B, "llc_ways_count": ways,
                  "cores_count": 1, "line_fill_buffers_count": 2, "llc_hit_latency_ns": 10.0,
                  "llc_hit_bw_GBps": 100.0}, {}, "cpu")
    return HostLlc(CpuModel(p), 0, row_B, 10**6 * row_B)


def _lines_of_row(addr_B: int, row_B: int) -> int:
    return (addr_B + row_B - 1) // LINE_B - addr_B // LINE_B + 1


def test_llc_serves_a_row_only_when_all_its_lines_hit_a_shared_line():
    """Rows of 96 B: row 1 shares line 1 with row 0. After row 0, row 1 hits line 1 and misses line
    2: one line hit, none served (the row is read from below whole)."""
    llc = _llc(64, 4, 96)
    llc.access(np.array([0]), False)
    acc = llc.access(np.array([96]), False)
    assert acc.lines == 2 and acc.hit_lines == 1
    assert not acc.row_hit[0] and acc.served_lines == 0


@settings(max_examples=40, deadline=None)
@given(cap=st.integers(2, 40), ways=st.integers(1, 8),
       row_B=st.integers(8, 300).filter(lambda b: b % LINE_B != 0),
       calls=st.lists(st.tuples(st.lists(st.integers(0, 80), max_size=40), st.booleans()), min_size=1, max_size=6))
@example(cap=64, ways=4, row_B=96, calls=[([0, 1, 3, 2], False), ([1, 2, 5], True)])
def test_llc_serves_a_row_only_when_all_its_lines_hit(cap, ways, row_B, calls):
    """Rows that are not whole lines (kept per line): the lines served are exactly the lines of the
    rows that hit whole, never a line that hit in a row that missed one."""
    ways = min(ways, cap)
    llc = _llc(cap - cap % ways, ways, row_B)
    assert not llc.whole_lines
    for rows, write in calls:
        addr = np.asarray(rows, np.int64) * row_B
        acc = llc.access(addr, write)
        per_row = np.array([_lines_of_row(int(a), row_B) for a in addr.tolist()], np.int64)
        assert acc.lines == int(per_row.sum())
        assert acc.served_lines == int(per_row[acc.row_hit].sum())
        assert acc.served_lines <= acc.hit_lines
