"""A reduced run's device streams under per-table bags (cxlsim.systems.device_streams): table ``t``'s
positions number ``G · batch_size · L_t``, its own bag size, so a device holding table ``t`` whole
serves exactly that many of its lookups every batch."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.systems.device_streams import DeviceStreams
from cxlsim.systems.topology import Placement
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.layout import TableLayout


@settings(max_examples=12, deadline=None)
@given(bags=st.lists(st.integers(1, 9), min_size=2, max_size=5).filter(lambda b: len(set(b)) > 1),
       gpus=st.integers(1, 4), batch=st.integers(1, 16), mems=st.integers(1, 3), device=st.integers(0, 2),
       reuse=st.sampled_from([0.0, 0.76]), seed=st.integers(0, 1000))
def test_each_tables_reduced_run_stream_follows_its_own_bag_size(bags, gpus, batch, mems, device, reuse, seed):
    wl = load_workload("rm4", {"tables": len(bags), "rows_profile": "uniform", "rows_per_table": 2000, "batch_size": batch,
                               "bag_size": "per_table", "table_bag_sizes": bags, "lookups_per_table": max(bags),
                               "reuse_prev_fraction": reuse})
    layout = TableLayout.from_workload(wl)
    placement = Placement.of(layout, mems, "whole")
    device = device % mems
    ds = DeviceStreams(wl, gpus, placement, device, seed, 3)
    edges = np.append(layout.row_base, layout.total_rows)
    on = placement.table_mem == device if mems > 1 else np.ones(len(bags), bool)
    want = np.where(on, gpus * batch * np.asarray(bags), 0)
    for n in range(3):
        rows = ds.batch(n).lookup_rows.astype(np.int64)
        got = np.histogram(rows, bins=edges)[0]
        np.testing.assert_array_equal(got, want)
