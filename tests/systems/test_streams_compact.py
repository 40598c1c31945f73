"""Compact stream storage: row ids and counts in int32 where they fit, the same values as the
int64 analysis, and addresses widened to int64 before they can leave the int32 range."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from cxlsim.api import load_workload
from cxlsim.systems.machine import TrainingMachine
from cxlsim.systems.streams import StreamSet, count_dtype, row_dtype
from cxlsim.workloads.analysis import analyze_batch
from cxlsim.workloads.generator import batches
from cxlsim.workloads.layout import TableLayout

SMALL = {"batch_size": 8, "rows_per_table": 1000}


def test_row_dtype_is_int32_exactly_while_every_id_fits():
    assert row_dtype(2**31) == np.int32  # ids 0 .. 2**31 - 1
    assert row_dtype(2**31 + 1) == np.int64
    assert count_dtype(2**31 - 1) == np.int32
    assert count_dtype(2**31) == np.int64


@pytest.mark.parametrize("reading", [{}, {"bag_size": "dlrm_uniform"}, {"bag_dedup": True},
                                     {"bag_size": "dlrm_uniform", "bag_dedup": True}])
def test_compact_streams_equal_the_int64_analysis(reading):
    wl = load_workload("rm1", {**SMALL, **reading})
    s = StreamSet(wl, 3, 3).prepare()
    layout = TableLayout.from_workload(wl)
    prev = None
    for b in batches(wl, seed=3, n=3, dense=False):
        got = s.batch(b.number)
        if reading:  # ragged tables: the table-major form
            acc = analyze_batch(b.indices, layout, prev, table_starts=b.table_starts)
            expect = b.indices + np.repeat(layout.row_base, np.diff(b.table_starts))
        else:  # rectangular: the (tables, lookups) form gives the same
            acc = analyze_batch(b.indices.reshape(wl.tables, -1), layout, prev)
            expect = (b.indices.reshape(wl.tables, -1) + layout.row_base[:, None]).ravel()
        prev = acc
        assert got.lookup_rows.dtype == np.int32 and got.unique_rows.dtype == np.int32
        assert got.counts.dtype == np.int32
        assert got.n_indices == int(b.bag_sizes.sum()) == b.indices.size
        np.testing.assert_array_equal(got.lookup_rows, expect)
        np.testing.assert_array_equal(got.unique_rows, acc.unique_rows)
        np.testing.assert_array_equal(got.counts, acc.counts)
        np.testing.assert_array_equal(got.shared, acc.shared_prev)
        # held arrays own exactly their data, not a view of a lookup-sized buffer
        assert got.unique_rows.base is None and got.counts.base is None


def test_tables_past_int32_keep_int64_ids():
    wl = load_workload("rm1", {"batch_size": 8, "rows_per_table": 2**31})
    s = StreamSet(wl, 1, 1)
    assert s.row_dtype == np.int64
    b = s.batch(0)
    assert b.lookup_rows.dtype == np.int64 and b.unique_rows.dtype == np.int64
    assert int(b.lookup_rows.max()) >= 2**31  # the later tables' ids are past int32
    b0 = next(batches(wl, seed=1, n=1, dense=False))
    np.testing.assert_array_equal(b.lookup_rows, (b0.indices.reshape(wl.tables, -1) + s.layout.row_base[:, None]).ravel())


def test_row_addresses_are_int64_from_int32_rows():
    m = SimpleNamespace(data_base=1 << 30, row_B=512)
    rows = np.array([0, 2**31 - 1], np.int32)
    addr = TrainingMachine.rows_addr(m, rows)
    assert addr.dtype == np.int64
    assert addr.tolist() == [1 << 30, (1 << 30) + (2**31 - 1) * 512]


def test_nbytes_counts_the_batches_made():
    s = StreamSet(load_workload("rm1", SMALL), 3, 3)
    assert s.nbytes == 0
    s.prepare(2)
    b = [s.batch(i) for i in range(2)]
    want = sum(x.lookup_rows.size * 4 + x.unique_rows.size * 4 + x.counts.size * 4 + x.shared.size for x in b)
    assert s.nbytes == want
@pytest.mark.parametrize(("name", "sets"), [("rm4", {"batch_size": 64}), ("rm1", {"batch_size": 16, "rows_per_table": 3000})])
def test_rows_generated_ahead_analyse_as_the_batches_made_in_order(name, sets):
    """``StreamSet.rows`` makes batches without their analysis; ``batch`` then analyses them: the
    batches equal a set made in order, field by field, and ``touched_rows`` (a sort of few ids, a
    bitmap of many) equals ``np.unique``."""
    from cxlsim.systems.vector_cache_start import touched_rows

    w = load_workload(name, sets)  # ids sparse in their range (sorted), dense (a bitmap)
    made = StreamSet(w, 3, 8).prepare()
    ahead = StreamSet(w, 3, 8).prepare(2)
    rows = touched_rows(ahead, 8)  # batches 2..7 generated, not analysed
    assert np.array_equal(rows, np.unique(np.concatenate([made.batch(n).unique_rows for n in range(8)]).astype(np.int64)))
    assert len(ahead._batches) == 2
    for n in range(8):
        x, y = made.batch(n), ahead.batch(n)
        for f in x.__dataclass_fields__:
            a, b = getattr(x, f), getattr(y, f)
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype and np.array_equal(a, b), (n, f)
            else:
                assert a == b, (n, f)
