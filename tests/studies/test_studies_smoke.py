"""Each study's command end to end on a tiny configuration: its settings read, its simulation run,
its report printed (and the figure drawn). Where a study has no option small enough to stay under
a second, the simulation is real but marked ``slow``, or the runs are replaced by fixed batch times
(the plumbing from settings through report is what is held here; the numbers are the goldens')."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

import cxlsim.studies.fig12.__main__ as fig12_main
import cxlsim.studies.platform_study.__main__ as platform_study_main
import cxlsim.studies.platform_study.simulation as platform_study_simulation
import cxlsim.studies.readings.__main__ as readings_main
import cxlsim.studies.readings.simulation as readings_simulation
import cxlsim.studies.sampling.__main__ as sampling_main
import cxlsim.studies.scaleout.__main__ as scaleout_main
import cxlsim.studies.sensitivity.settings as sensitivity_settings
import cxlsim.studies.sensitivity.simulation as sensitivity_simulation
import cxlsim.studies.symmetry.__main__ as symmetry_main
from cxlsim.cli import main as cli_main
from cxlsim.studies.sensitivity.report import render

#: A tiny workload: 4 tables of 10,000 rows, 8 lookups, batches of 16.
TINY = {"workload_overrides.batch_size": 16, "workload_overrides.rows_per_table": 10000,
        "workload_overrides.tables": 4, "workload_overrides.lookups_per_table": 8}


def _fixed_times(system: str, **_kw) -> SimpleNamespace:
    """A run whose batch time depends on the system only (the conclusions then hold as the paper's)."""
    ms = {"pmem": 10.0, "pcie": 9.0, "cxl-d": 8.0, "cxl-b": 6.0, "cxl": 2.0}.get(system, 5.0)
    return SimpleNamespace(batch_time_ms={"mean": ms}, to_dict=lambda: {
        "batch_time_ms": {"mean": ms}, "breakdown_ms": {"checkpoint": 0.1}, "energy_J_per_batch": {"total": ms}})


@pytest.mark.slow
def test_paper(tmp_path, capsys):
    sets = [x for k, v in {"warmup_batches": 0, **TINY}.items() for x in ("--set", f"{k}={v}")]
    rc = cli_main(["reproduce", "--out", str(tmp_path), "--systems", "pmem", "cxl", "--workloads", "rm1",
                   "--batches", "1", "--platform", "prototype", "--executor", "serial", "--no-progress", *sets])
    assert rc == 0
    assert "speedup vs pmem" in capsys.readouterr().out
    assert (tmp_path / "results.json").is_file() and (tmp_path / "fig11_breakdown.png").is_file()


@pytest.mark.slow
def test_platform_study(monkeypatch, capsys):
    monkeypatch.setattr(platform_study_simulation, "simulate", lambda system, **kw: _fixed_times(system))
    assert platform_study_main.main(["--workloads", "rm1", "--batches", "1", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| base |  | 1/1 | 1/1 | 1/1 | 1/1 | 1.25 / 1.67 / 5.00 |" in out
    assert out.startswith("platform_study on platform prototype:")


def test_readings(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(readings_simulation, "simulate", lambda system, **kw: _fixed_times(system))
    monkeypatch.setattr(readings_simulation, "ProcessPoolExecutor", _InProcess)
    assert readings_main.main(["--workloads", "rm1", "--batches", "1", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "cxl vs pmem speed-up" in out and "readings on platform prototype" in out
    assert json.loads((tmp_path / "r.json").read_text())["workloads"] == ["rm1"]


class _InProcess:
    """A process pool that maps in this process (so a replaced ``simulate`` is the one called)."""

    def __init__(self, max_workers: int) -> None:
        pass

    def __enter__(self) -> _InProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def map(self, fn, jobs):
        return map(fn, jobs)


def test_sensitivity():
    systems = ("pmem", "cxl")
    res = sensitivity_simulation.study(["rm1"], 1, sets={s: list(TINY.items()) for s in systems}, systems=systems)
    assert res["rm1"]["default"]["pmem"]["normalized_to_baseline"] == 1.0
    assert set(res["rm1"]["variants"]) == set(sensitivity_settings.VARIANTS)
    assert "energy normalised to pmem" in render(res)


@pytest.mark.slow
def test_sampling(capsys):
    assert sampling_main.main(["--systems", "pmem", "--workloads", "rm4", "--platforms", "prototype",
                               "--workers", "1", "--markdown"]) == 0
    assert "| prototype | pmem | rm4 |" in capsys.readouterr().out


def test_symmetry(capsys):
    assert symmetry_main.main(["--workloads", "rm4", "--points", "2x2", "--batches", "1", "--warmup", "0"]) == 0
    assert "| cxl | physical | rm4 | 2 × 2 | 2 |" in capsys.readouterr().out


@pytest.mark.slow
def test_fig12(capsys):
    assert fig12_main.main(["--platform", "prototype", "--workload", "rm4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["system"] for r in rows] == ["cxl-d", "cxl-b", "cxl"] and all(r["batch_ms"] > 0 for r in rows)


@pytest.mark.slow
def test_scaleout(tmp_path, capsys):
    recs = [{"id": f"cxl{g}", "status": "ok", "swept": {"system": "cxl", "workload": "rm1", "topology.gpus_count": g,
                                                        "topology.cxl_mems_count": min(g, 7), "devices.switch.levels": 1},
             "result": {"batch_time_ms": {"mean": 1.0}, "throughput_samples_per_s": 1000.0 * g,
                        "energy_J_per_batch": {"total": 1.0}, "bottleneck": {"resource": "gpu", "utilisation": 0.5}}}
            for g in (1, 2, 4, 8)]
    (tmp_path / "points.jsonl").write_text("\n".join(json.dumps(r) for r in recs))
    assert scaleout_main.main([str(tmp_path), "--plot", str(tmp_path / "so.png")]) == 0
    assert (tmp_path / "so.png").is_file() and "cxl" in capsys.readouterr().out
