"""The prototype platform's sensitivity study: which assumption reaches which system, and the
conclusions it checks (the simulations themselves are the goldens' business)."""

from __future__ import annotations

import pytest

import cxlsim.studies.platform_study.report as platform_study_report
import cxlsim.studies.platform_study.settings as platform_study_settings
import cxlsim.studies.platform_study.simulation as platform_study_simulation


def test_each_assumption_reaches_the_systems_holding_its_preset():
    by_name = {a.name: a for a in platform_study_settings.ASSUMPTIONS}
    assert by_name["riscv_ipc"].sets("pmem", 2.0) == []  # the baselines run on the i5-9600K
    assert by_name["riscv_ipc"].sets("cxl", 2.0) == [("devices.host_cpu.params.software_ipc", 1.4)]
    # the U200's DMA efficiency is measured: set per direction to each tool's reading, not scaled
    u200 = by_name["u200_pcie_efficiency"]
    low, high = u200.variants()
    assert u200.sets("pcie", low) == [("devices.pcie.params.h2d_efficiency_fraction", pytest.approx(9.30 / 15.7538, rel=1e-4)),
                                      ("devices.pcie.params.d2h_efficiency_fraction", pytest.approx(11.91 / 15.7538, rel=1e-4))]
    assert [v for _, v in u200.sets("pcie", high)] == pytest.approx([9.58 / 15.7538, 11.96 / 15.7538], rel=1e-4)
    assert u200.sets("cxl-d", low) == []
    assert by_name["optane_modules"].sets("pmem", 0.5) == [("devices.table_memory.count", 2)]
    assert by_name["optane_modules"].sets("cxl", 0.5) == []  # the CXL-MEM emulates its PMEM
    for a in platform_study_settings.ASSUMPTIONS:  # every assumption reaches some system of the study
        assert any(a.sets(s, a.variants()[-1]) for s in platform_study_settings.study_lists().systems), a.name


def test_conclusions_and_speedups():
    good = {"pmem": 10.0, "pcie": 9.0, "cxl-d": 8.0, "cxl-b": 6.0, "cxl": 2.0}
    bad = dict(good, **{"cxl-d": 11.0, "pcie": 10.5})
    v = platform_study_report.verdicts({"rm1": good, "rm2": bad})
    assert v["order"] == ["rm1"] and v["cxl_beats_pmem"] == ["rm1", "rm2"]
    assert v["cxl_d_beats_pmem"] == ["rm1"] and v["cxl_d_beats_pcie"] == ["rm1"]
    assert v["speedup_cxl"] == pytest.approx(5.0)
    assert v["speedup_cxl-d"] == pytest.approx((10 / 8 * 10 / 11) ** 0.5)


def test_run_simulates_only_what_a_variant_reaches(monkeypatch):
    calls = []

    def fake(system, workload, sets, batches, seed):
        calls.append((system, tuple(sets)))
        return {"pmem": 10.0, "pcie": 9.0, "cxl-d": 8.0, "cxl-b": 6.0, "cxl": 2.0}[system] * (2 if sets else 1)

    monkeypatch.setattr(platform_study_simulation, "batch_times", fake)
    out = platform_study_simulation.run(["rm1"], batches=1)
    assert len(out["variants"]) == sum(len(a.variants()) for a in platform_study_settings.ASSUMPTIONS)
    # the emulated PMEM's requests in flight: both readings (16, the preset; 4, Table 2's write bandwidth)
    emulated = [v for v in out["variants"] if v["assumption"] == "emulated_outstanding"]
    assert [v["factor"] for v in emulated] == [0.25, 0.5, 2.0]
    by_name = {a.name: a for a in platform_study_settings.ASSUMPTIONS}
    assert by_name["emulated_outstanding"].sets("cxl", 0.25)[0][1] == 4
    assert all(sets for s, sets in calls[len(platform_study_settings.study_lists().systems):])  # after the base, only reached systems rerun
    head, rows = platform_study_report.table(out)
    assert rows[0][0] == "base" and len(rows) == 1 + len(out["variants"]) and len(head) == len(rows[0])
    assert "u200_pcie_efficiency xbutil validate 9.30/11.91 GB/s" in [r[0] for r in rows]
    assert "| base |" in platform_study_report.markdown(out)
