"""The readings study: each reading reaches the systems it names, the columns are built from them,
and the claims are computed from the runs."""

from __future__ import annotations

import math

import pytest

import cxlsim
import cxlsim.studies.readings.settings as readings_settings

SMALL = {"rows_per_table": 4096, "batch_size": 64, "tables": 4}


def test_every_reading_reaches_a_system_and_the_columns_compose():
    lists = readings_settings.study_lists()
    cfgs = {s: readings_settings.study_config(s) for s in lists.systems}
    for r in readings_settings.READINGS:
        assert any(r.audited(c) or r.other(c) for c in cfgs.values()), r.name
    for s, c in cfgs.items():
        assert readings_settings.column_sets("defaults", c) == []
        audited = readings_settings.column_sets("audited", c)
        assert audited == [x for r in readings_settings.READINGS for x in r.audited(c)]
        for r in readings_settings.READINGS:  # a reading's column differs from audited exactly where it reaches
            col = readings_settings.column_sets(r.name, c)
            assert (col != audited) == bool(r.audited(c) or r.other(c)), (s, r.name)
    # what each reading reaches, by mechanism
    assert readings_settings.READINGS[3].audited(cfgs["cxl-b"]) and not readings_settings.READINGS[3].audited(cfgs["cxl-d"])  # undo log start
    assert readings_settings.READINGS[4].audited(cfgs["ssd"]) and not readings_settings.READINGS[4].audited(cfgs["pmem"])  # vector cache
    assert readings_settings.READINGS[5].audited(cfgs["cxl"]) and not readings_settings.READINGS[5].audited(cfgs["pmem"])  # emulated unit
    assert readings_settings.READINGS[6].audited(cfgs["dram"]) and not readings_settings.READINGS[6].audited(cfgs["cxl"])  # host LLC


def test_claims_from_results():
    def r(ms, ck=0.0, j=1.0):
        return {"batch_ms": ms, "checkpoint_ms": ck, "energy_J": j}

    res = {w: {"ssd": r(100, 50, 5), "pmem": r(10, 5, 2), "pcie": r(8), "cxl-d": r(6), "cxl-b": r(5),
               "cxl": r(4, 0, 0.5), "dram": r(2, 0, 3)} for w in ("rm1", "rm2")}
    vals = {c.name: c.value(res, ["rm1", "rm2"]) for c in readings_settings.CLAIMS}
    assert vals["cxl vs pmem speed-up (geomean)"] == pytest.approx(2.5)
    assert vals["cxl energy vs pmem (geomean)"] == pytest.approx(0.25)
    assert vals["cxl-d vs pcie speed-up (geomean)"] == pytest.approx(8 / 6)
    assert vals["cxl vs cxl-b speed-up (geomean)"] == pytest.approx(1.25)
    assert vals["cxl-b's gain over cxl-d, RM1 (ms)"] == pytest.approx(1.0)
    assert vals["pmem vs ssd, checkpoint excluded (RM1, RM2 geomean)"] == pytest.approx(10.0)
    assert vals["dram energy vs pmem (RM1, RM2 geomean)"] == pytest.approx(1.5)
    assert math.isnan(readings_settings.CLAIMS[4].value({"rm3": res["rm1"]}, ["rm3"]))


@pytest.mark.slow
@pytest.mark.parametrize("column", ["audited", *(r.name for r in readings_settings.READINGS)])
def test_every_column_runs_on_every_system(column):
    """Each column's overrides are accepted (each reaches timing or energy) on every system."""
    platform = readings_settings.study_lists().platforms[0]
    for s in readings_settings.study_lists().systems:
        sets = readings_settings.column_sets(column, readings_settings.study_config(s))
        cxlsim.simulate(s, workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                        sets=[("platform", platform), *sets])
