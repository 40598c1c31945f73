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


@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.integers(1, 10**7), min_size=20, max_size=20),
       scale=st.sampled_from([1.0, 0.5, 0.3, 1e-3, 1e-7]))
def test_a_per_table_profile_shrinks_each_listed_table_by_the_scale(rows, scale):
    small, extra = scaled_workload("rm1", {"rows_profile": "per_table", "table_rows": rows}, scale)
    assert extra["table_rows"] == [max(1, round(r * scale)) for r in rows]
    assert list(small.rows_per_table_scaled(1.0)) == extra["table_rows"]


def test_replay_takes_an_instant_up_to_the_runs_end_and_no_further():
    import numpy as np

    from cxlsim.crash.run import parse_replay
    from cxlsim.errors import InputError

    ts = np.array([10.0, 20.0])
    assert parse_replay("0.0", ts, 100.0) == (0.0, -1)
    assert parse_replay("100.0", ts, 100.0) == (100.0, -1)
    assert parse_replay("1", ts, 100.0) == (20.0, 1)
    for bad in ("100.5", "-0.5", "nan", "inf", "2"):
        with pytest.raises(InputError):
            parse_replay(bad, ts, 100.0)
