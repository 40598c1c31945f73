"""The crash checker's functional scale shrinks every table by the scale, whatever the workload's
row profile says its tables are (a per-table list, one uniform count, Criteo's sizes), at least one
row each (a mutation sample of the change that fixed the per-table profile found nothing here that
pinned it)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.crash.scale import scaled_workload
from cxlsim.workloads.catalog import load_workload


@settings(max_examples=25, deadline=None)
@given(scale=st.sampled_from([1.0, 0.5, 1e-2, 1e-3, 1e-4, 1e-7]))
@pytest.mark.parametrize("name", ["dlrm-dcnv2", "rm1", "rm4"])
def test_every_table_shrinks_by_the_scale_at_least_one_row(name, scale):
    full = load_workload(name).rows_per_table_scaled(1.0)
    small, extra = scaled_workload(name, {}, scale)
    rows = small.rows_per_table_scaled(1.0)
    assert len(rows) == len(full) and extra
    for r_full, r in zip(full, rows, strict=True):
        assert r >= 1
        assert r == pytest.approx(max(1, r_full * scale), rel=0.02, abs=1.5)
    if scale == 1.0:
        assert rows == full
