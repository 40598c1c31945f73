"""The reproduce summary and figures compare at equal accelerator counts (no summary compares 128
chips with one GPU); they report throughput per accelerator and samples per joule."""

from __future__ import annotations

import pytest

import cxlsim
import cxlsim.studies.paper.report as paper_report
import cxlsim.studies.paper.simulation as paper_simulation

SMALL = {"batch_size": 32}


def record(i, label, system, workload, **sets):
    r = cxlsim.simulate(system, workload=workload, batches=1, warmup=0, workload_sets=SMALL, trace=False, sets=sets)
    return {"id": f"p{i}", "swept": {"system": label, "workload": workload}, "status": "ok", "error": None,
            "result": r.to_dict()}


@pytest.fixture(scope="module")
def doc():
    """pmem and tpu-ps on one accelerator each, and tpu-ps on 4 chips (labelled apart)."""
    recs = []
    for w in ("rm1", "rm3"):
        recs += [record(len(recs), "pmem", "pmem", w), record(len(recs) + 1, "tpu-ps", "tpu-ps", w),
                 record(len(recs) + 2, "tpu-ps-4", "tpu-ps", w, **{"topology.gpus_count": 4})]
    return {"points": recs, "summary": paper_simulation.summary(recs)}


def test_rows_carry_accelerators_throughput_per_accelerator_and_samples_per_joule(doc):
    by = {(r["system"], r["workload"]): r for r in doc["summary"]["rows"]}
    for w in ("rm1", "rm3"):
        one, four = by[("tpu-ps", w)], by[("tpu-ps-4", w)]
        assert one["accelerators"] == 1 and four["accelerators"] == 4 and by[("pmem", w)]["accelerators"] == 1
        assert one["speedup_vs_pmem"] == pytest.approx(by[("pmem", w)]["batch_time_ms"] / one["batch_time_ms"])
        assert one["energy_vs_pmem"] is not None and one["not_compared"] is None
        assert four["speedup_vs_pmem"] is None and four["energy_vs_pmem"] is None
        assert "4 accelerators against pmem's 1" in four["not_compared"]
        assert four["throughput_samples_per_s_per_accelerator"] == pytest.approx(
            4 * 32 / (four["batch_time_ms"] / 1e3) / 4)
        assert four["samples_per_J"] == pytest.approx(4 * 32 / four["energy_J_per_batch"])
    avg = {a["system"]: a for a in doc["summary"]["average"]}
    assert avg["tpu-ps-4"]["speedup_vs_pmem"] is None and avg["tpu-ps"]["speedup_vs_pmem"] > 0
    assert avg["tpu-ps-4"]["samples_per_J"] == pytest.approx(
        (by[("tpu-ps-4", "rm1")]["samples_per_J"] + by[("tpu-ps-4", "rm3")]["samples_per_J"]) / 2)


def test_render_adds_two_tables_and_names_the_rows_left_out(doc):
    text = paper_report.render(doc["summary"])
    assert "throughput per accelerator (samples/s)" in text and "samples per joule" in text
    assert "not compared with pmem (other accelerator counts): tpu-ps-4 (4 accelerators)" in text


def test_figures_leave_out_other_accelerator_counts(doc, tmp_path):
    systems, workloads, res = paper_report._comparable(doc)
    assert systems == ["pmem", "tpu-ps"] and workloads == ["rm1", "rm3"]
    assert all(k[0] != "tpu-ps-4" for k in res)
    assert paper_report.fig11_breakdown(doc, tmp_path / "f11.png").stat().st_size > 1000
    assert paper_report.fig13_energy(doc, tmp_path / "f13.png").stat().st_size > 1000
