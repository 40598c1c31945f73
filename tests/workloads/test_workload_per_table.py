"""Per-table rows and bag sizes (rows_profile / bag_size ``per_table``), list-valued parameters, and
the old readings' streams draw for draw as they were."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from cxlsim.config.params import Param
from cxlsim.errors import ConfigError
from cxlsim.workloads import batches, load_workload

ROWS = [50, 7, 1000, 3]
BAGS = [3, 1, 8, 2]
PER_TABLE = {"tables": 4, "rows_profile": "per_table", "table_rows": ROWS, "bag_size": "per_table",
             "table_bag_sizes": BAGS, "lookups_per_table": 8, "batch_size": 16}


def test_a_list_parameter_checks_each_element():
    p = Param("xs", tuple, "numbers", minimum=1, item=int)
    assert p.coerce([1, 2.0], "f", "k") == (1, 2)
    with pytest.raises(ConfigError, match=r"k\[1\]: must be >= 1"):
        p.coerce([1, 0], "f", "k")
    with pytest.raises(ConfigError, match="expected a list"):
        p.coerce("1, 2", "f", "k")


def test_per_table_rows_and_bags_are_exact():
    w = load_workload("rm4", PER_TABLE)
    assert w.rows_per_table == tuple(ROWS) and w.max_bag_sizes == tuple(BAGS)
    assert w.lookups_per_sample == sum(BAGS) and w.lookups_per_batch == 16 * sum(BAGS)
    assert [w.table_lookups(t) for t in range(4)] == BAGS
    assert w.mean_bag_draws() == pytest.approx(np.mean(BAGS))
    q = 0.9
    assert w.mean_table_power(q) == pytest.approx(np.mean([q ** b for b in BAGS]))
    for b in batches(w, seed=5, n=3):
        assert (b.bag_sizes == np.array(BAGS)[:, None]).all()  # every bag of table t: BAGS[t]
        for t in range(4):
            assert b.table(t).size == 16 * BAGS[t] and 0 <= b.table(t).min() and b.table(t).max() < ROWS[t]


def test_per_table_bags_with_dedup_keep_each_bags_distinct_rows():
    w = load_workload("rm4", {**PER_TABLE, "bag_dedup": True})
    for b in batches(w, seed=2, n=2):
        for t in range(4):
            for s in range(16):
                bag = b.bag(t, s)
                assert bag.size <= BAGS[t] and (np.diff(bag) > 0).all()


@pytest.mark.parametrize(("change", "key"), [
    ({"table_rows": ROWS[:3]}, "table_rows"),
    ({"table_bag_sizes": BAGS + [1]}, "table_bag_sizes"),
    ({"lookups_per_table": 9}, "lookups_per_table"),  # must be the largest bag
    ({"rows_profile": "uniform"}, "table_rows"),  # given where it does not apply
    ({"table_bag_sizes": [3, 0, 8, 2]}, "table_bag_sizes"),
])
def test_per_table_lists_are_checked(change, key):
    with pytest.raises(ConfigError, match=key):
        load_workload("rm4", {**PER_TABLE, **change})


#: sha256 of three batches' indices, offsets and dense features (seed 3, row_scale 0.001, batch 8),
#: computed before per-table readings existed (commit 71e2851): the old readings draw for draw.
OLD_STREAMS = {
    ("rm1", "fixed", False): "6667198d3204db958733a27f2297f0d50613536d9d65a6431a07f6b29fac0a92",
    ("rm2", "dlrm_uniform", False): "bbe814b4bd594a5b09756c7dad4188b6bf49d2068f72b805bc7ffbf8c2e30968",
    ("rm4", "dlrm_uniform", True): "dede2f948a887d0327c23c2bcaa61263dac0168b6b553f0b8d6a4243df856330",
}


@pytest.mark.parametrize(("name", "bag_size", "dedup"), list(OLD_STREAMS))
def test_the_old_readings_draw_as_before(name, bag_size, dedup):
    sets = {"batch_size": 8, **({"bag_size": bag_size} if bag_size != "fixed" else {}),
            **({"bag_dedup": True} if dedup else {})}
    h = hashlib.sha256()
    for b in batches(load_workload(name, sets), seed=3, n=3, row_scale=0.001):
        h.update(b.indices.tobytes())
        h.update(b.offsets.tobytes())
        h.update(b.dense.tobytes())
    assert h.hexdigest() == OLD_STREAMS[(name, bag_size, dedup)]


def test_per_table_bags_all_at_L_are_the_fixed_reading_draw_for_draw():
    fixed = load_workload("rm3", {"batch_size": 4})
    per = load_workload("rm3", {"batch_size": 4, "bag_size": "per_table", "table_bag_sizes": [20] * 20})
    assert per.lookups_per_batch == fixed.lookups_per_batch and per.max_bag_sizes == fixed.max_bag_sizes
    for a, b in zip(batches(fixed, seed=1, n=2, row_scale=0.01), batches(per, seed=1, n=2, row_scale=0.01), strict=True):
        assert (a.indices == b.indices).all() and (a.offsets == b.offsets).all()


@pytest.mark.slow
def test_a_reduced_runs_device_streams_take_per_table_bags():
    import cxlsim

    sets = [("topology.gpus_count", 32), ("topology.cxl_mems_count", 8), ("topology.symmetry", "on")]
    times = [cxlsim.simulate("cxl", workload="rm1", batches=1, warmup=1, workload_sets=ws, sets=sets).batch_times_ns
             for ws in ({"batch_size": 4}, {"batch_size": 4, "bag_size": "per_table", "table_bag_sizes": [80] * 20})]
    assert times[0] == times[1]
