"""The vector cache's steady start under per-table bags (cxlsim.systems.vector_cache_start): the
stream's positions per table and batch follow the tables' own bag sizes, ``B·Σ L_t // T`` (one count
for every table, their mean: the module's named approximation), not the largest bag that
``lookups_per_table`` holds with ``bag_size: per_table``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.vector_cache_steady import steady_state_touched
from cxlsim.systems import vector_cache_start as vcs
from cxlsim.systems.streams import StreamSet
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.generator import table_keys


@settings(max_examples=6, deadline=None)
@given(bags=st.lists(st.integers(1, 12), min_size=2, max_size=4).filter(lambda b: len(set(b)) > 1),
       batch=st.integers(2, 8), seed=st.integers(0, 100), capacity=st.sampled_from([256, 1024]))
def test_each_tables_steady_state_follows_the_tables_bag_sizes(bags, batch, seed, capacity):
    wl = load_workload("rm4", {"tables": len(bags), "rows_profile": "uniform", "rows_per_table": 3000, "batch_size": batch,
                               "bag_size": "per_table", "table_bag_sizes": bags, "lookups_per_table": max(bags)})
    streams = StreamSet(wl, seed, 2)
    got = vcs.starting_cache("steady", streams, capacity)[0].dense()
    p, layout = wl.params, streams.layout
    positions = batch * sum(bags) // len(bags)
    (want,), _ = steady_state_touched(vcs.touched_rows(streams), layout.rows, layout.row_base,
                                      table_keys(seed, layout.tables), float(p.popularity_exponent), positions,
                                      float(p.reuse_prev_fraction), capacity, seed=seed)
    np.testing.assert_array_equal(got, want.dense())
