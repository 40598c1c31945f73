"""`cxlsim reproduce` on a tiny run: the three figures, results files, summary against pmem."""

from __future__ import annotations

import json

import pytest

import cxlsim.studies.paper.report as paper_report
import cxlsim.studies.paper.settings as paper_settings
import cxlsim.studies.paper.simulation as paper_simulation
from cxlsim.cli import main

TINY = ["--set", "warmup_batches=0", "--set", "workload_overrides.batch_size=16",
        "--set", "workload_overrides.rows_per_table=10000", "--set", "workload_overrides.tables=4",
        "--set", "workload_overrides.lookups_per_table=8"]


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    """One tiny reproduction on both platforms (serial, in this process)."""
    out = tmp_path_factory.mktemp("plots")
    rc = main(["reproduce", "--out", str(out), "--systems", "pmem", "cxl-d", "cxl-b", "cxl",
               "--workloads", "rm1", "rm2", "--batches", "1", "--executor", "serial", "--no-progress",
               "--json", *TINY])
    return rc, out


def test_reproduce_writes_figures_and_results(reproduced, capsys):
    rc, out = reproduced
    assert rc == 0
    for sfx in ("", "_physical"):  # the paper's apparatus keeps the plain names
        for name in ("fig11_breakdown", "fig12_timeline", "fig13_energy"):
            assert (out / f"{name}{sfx}.png").stat().st_size > 1000, name + sfx
        for name in ("results.json", "results.csv"):
            assert (out / name.replace(".", f"{sfx}.")).stat().st_size > 1000, name
    for sfx, platform in (("", "prototype"), ("_physical", "physical")):
        doc = json.loads((out / f"results{sfx}.json").read_text())
        assert doc["platform"] == platform
        assert {p["result"]["config"]["platform"] for p in doc["points"] + doc["timelines"]} == {platform}
    doc = json.loads((out / "results.json").read_text())
    assert doc["counts"] == {"points": 8, "ok": 8, "failed": 0}
    assert {"version", "git_revision"} <= set(doc)
    assert all({"config", "seed", "git_revision"} <= set(p["result"]) for p in doc["points"])
    assert [t["swept"]["system"] for t in doc["timelines"]] == ["cxl-d", "cxl-b", "cxl"]
    assert all(t["result"]["batches"] == 2 for t in doc["timelines"])  # Figure 12 shows two batches
    lines = (out / "results.csv").read_text().splitlines()
    assert lines[0].startswith("point_id,system,workload,seed,batches") and len(lines) == 9


def test_summary_is_normalised_to_pmem(reproduced):
    _, out = reproduced
    s = json.loads((out / "results.json").read_text())["summary"]
    assert s["systems"] == ["pmem", "cxl-d", "cxl-b", "cxl"] and s["workloads"] == ["rm1", "rm2"]
    by = {(r["system"], r["workload"]): r for r in s["rows"]}
    for w in ("rm1", "rm2"):
        assert by[("pmem", w)]["speedup_vs_pmem"] == 1.0 and by[("pmem", w)]["energy_vs_pmem"] == 1.0
        r = by[("cxl", w)]
        assert r["speedup_vs_pmem"] == pytest.approx(by[("pmem", w)]["batch_time_ms"] / r["batch_time_ms"])
    avg = {a["system"]: a for a in s["average"]}
    ratios = [by[("cxl", w)]["speedup_vs_pmem"] for w in ("rm1", "rm2")]
    assert avg["cxl"]["speedup_vs_pmem"] == pytest.approx((ratios[0] * ratios[1]) ** 0.5)


def test_plots_only_redraws_without_simulating(reproduced, monkeypatch, capsys):
    _, out = reproduced
    (out / "fig11_breakdown.png").unlink()
    monkeypatch.setattr(paper_simulation, "run", lambda *a, **k: pytest.fail("--plots-only simulated"))
    assert main(["reproduce", "--out", str(out), "--plots-only"]) == 0
    assert (out / "fig11_breakdown.png").is_file()
    text = capsys.readouterr().out
    assert "speedup vs pmem" in text and "cxl-b" in text and "== platform physical" in text
    assert main(["reproduce", "--out", str(out), "--plots-only", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["platforms"]) == ["prototype", "physical"]


def test_fig13_skipped_with_a_note_without_energy(reproduced, tmp_path):
    _, out = reproduced
    doc = json.loads((out / "results.json").read_text())
    for p in doc["points"]:
        p["result"]["energy_J_per_batch"] = None
    doc["summary"] = paper_simulation.summary(doc["points"])
    assert paper_report.fig13_energy(doc, tmp_path / "fig13.png") is None
    assert not doc["summary"]["energy_available"]
    assert "energy vs pmem (lower is better): unavailable" in paper_report.render(doc["summary"])


def test_axis_cuts_towering_bars():
    assert paper_report._axis_top([1.0, 1.1, 0.9, 80.0]) == pytest.approx(1.1 * 1.1)
    assert paper_report._axis_top([1.0, 2.0]) == pytest.approx(2.2)
    # RM2's energy panel: the pmem baseline (1.0) towers over the others' 0.2 but stays whole
    panel = [5.5, 1.0, 0.2, 0.21, 0.2, 0.2, 0.17, 1.7, 0.18]
    assert paper_report._axis_top(panel) < 1.0
    assert paper_report._axis_top(panel, keep=1.0) == pytest.approx(1.1)


def test_default_systems_follow_the_configs(monkeypatch):
    monkeypatch.setattr("cxlsim.studies.paper.settings.list_systems", lambda: ["cxl", "pmem", "tpu-ps", "my-variant"])
    assert paper_settings.default_systems() == ["pmem", "cxl", "tpu-ps"]  # docs/design.md#systems-compared order; others left out


def test_config_flag_is_rejected(capsys):
    assert main(["reproduce", "--config", "x.yaml"]) == 2
    assert "--systems" in capsys.readouterr().err
