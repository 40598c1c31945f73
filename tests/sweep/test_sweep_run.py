"""Running sweeps: failed points recorded, resume, identical results on every executor, energy,
DataFrame. Tiny workloads (batch 16, small tables), one measured batch, no warm-up."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
import yaml

from cxlsim.cli import main
from cxlsim.sweep import load_spec, run_sweep, to_dataframe
from cxlsim.sweep.evaluate import evaluate
from cxlsim.sweep.results import csv_text, rows
from cxlsim.sweep.spec import Point

TINY = {"workload_overrides.batch_size": 16, "workload_overrides.rows_per_table": 10_000,
        "workload_overrides.tables": 4, "workload_overrides.lookups_per_table": 8}


def write_spec(tmp_path: Path, systems, grid, name="spec.yaml") -> Path:
    doc = {"version": 1, "name": "tiny",
           "base": {"systems": systems, "workloads": ["rm1"], "batches": 1, "warmup_batches": 0, "set": TINY},
           "axes": {"grid": grid}}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def sorted_lines(path: Path) -> list[str]:
    head, *body = path.read_text().splitlines()
    return [head, *sorted(body)]


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serial")
    spec = load_spec(write_spec(tmp, ["dram", "cxl"], {"seed": [1, 2]}))
    outcome = run_sweep(spec, tmp / "out", executor="serial", progress=False)
    return spec, outcome, tmp / "out"


def test_serial_sweep_writes_results_with_provenance(serial_run):
    spec, outcome, out = serial_run
    assert outcome.ran == 4 and not outcome.failed
    with (out / "results.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert [(r["system"], r["seed"]) for r in table] == [("dram", "1"), ("dram", "2"), ("cxl", "1"), ("cxl", "2")]
    for r in table:
        assert r["status"] == "ok" and float(r["batch_time_ms"]) > 0
        parts = sum(float(r[f"{c}_ms"]) for c in ("b_mlp", "t_mlp", "transfer", "embedding", "checkpoint", "idle"))
        assert parts == pytest.approx(float(r["batch_time_ms"]), rel=1e-6)  # the breakdown sums to the batch time
    doc = json.loads((out / "results.json").read_text())
    assert doc["counts"] == {"points": 4, "ok": 4, "failed": 0}
    for rec in doc["points"]:
        res = rec["result"]
        assert {"config", "seed", "version", "git_revision"} <= set(res)
        assert res["config"]["workload_overrides"]["batch_size"] == 16
        assert res["seed"] == rec["swept"]["seed"]
    assert len((out / "points.jsonl").read_text().splitlines()) == 4


def test_failed_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    # a batch of more lookups than one run holds: each axis value loads (the spec is accepted), the
    # combination is found when the point runs; its error names the spec's axes, not --set
    doc = yaml.safe_load(write_spec(tmp_path, ["dram"], {}).read_text())
    doc["base"]["set"] = {k: v for k, v in TINY.items() if k not in ("workload_overrides.batch_size",
                                                                    "workload_overrides.lookups_per_table")}
    doc["axes"]["grid"] = {"workload_overrides.batch_size": [16, 8_000],
                           "workload_overrides.lookups_per_table": [8, 8_000]}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(path)
    outcome = run_sweep(spec, tmp_path / "out", executor="serial", progress=False)
    status = {(r["swept"]["workload_overrides.batch_size"], r["swept"]["workload_overrides.lookups_per_table"]): r
              for r in outcome.records}
    big = status[(8_000, 8_000)]
    assert [status[k]["status"] for k in ((16, 8), (16, 8_000), (8_000, 8))] == ["ok"] * 3
    assert big["status"] == "error" and big["error_kind"] == "input"
    assert f"{path}: axes.grid.workload_overrides.batch_size[1]" in big["error"] and "--set" not in big["error"]
    with (tmp_path / "out" / "results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert sum(r["status"] == "error" and "batch_size" in r["error"] and r["batch_time_ms"] == "" for r in rows) == 1
    # the CLI writes the same files and exits 2 (only bad-input failures)
    assert main(["sweep", str(spec.source), "--out", str(tmp_path / "cli"), "--executor", "serial",
                 "--no-progress"]) == 2


def test_resume_skips_done_points_and_retries_failed(tmp_path):
    path = write_spec(tmp_path, ["dram"], {"seed": [1, 2, 3]})
    spec = load_spec(path)
    out = tmp_path / "out"
    # an "interrupted" run: only the first point finished, and the last line was torn
    first = evaluate(spec.points[0])
    failed = dict(evaluate(spec.points[1]), status="error", error="KilledWorker: lost")
    (out).mkdir()
    (out / "points.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(failed) + "\n" + '{"id": "tor')
    outcome = run_sweep(spec, out, executor="serial", progress=False)
    assert (outcome.reused, outcome.ran) == (1, 2)
    assert [r["status"] for r in outcome.records] == ["ok", "ok", "ok"]
    again = run_sweep(spec, out, executor="serial", progress=False)
    assert (again.reused, again.ran) == (3, 0)
    assert (out / "results.csv").read_text() == csv_text(outcome.records, spec.axes)
    fresh = run_sweep(spec, out, executor="serial", progress=False, fresh=True)
    assert fresh.ran == 3


@pytest.mark.parametrize("executor", ["process", pytest.param("dask", marks=pytest.mark.slow)])
def test_executors_give_byte_identical_results(serial_run, tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("dask.distributed")
    spec, _, serial_out = serial_run
    out = tmp_path / executor
    # dask without --scheduler: a local cluster over loopback (127.0.0.1)
    rc = main(["sweep", spec.source, "--out", str(out), "--executor", executor, "--workers", "2", "--no-progress"])
    assert rc == 0
    assert sorted_lines(out / "results.csv") == sorted_lines(serial_out / "results.csv")


def test_energy_columns_empty_when_unavailable(serial_run):
    _, outcome, _ = serial_run
    rec = json.loads(json.dumps(outcome.records[0]))
    rec["result"]["energy_J_per_batch"] = None
    columns, table = rows([rec], ["system", "workload"])
    assert table[0]["energy_J_per_batch"] is None and table[0]["energy_gpu_J"] is None
    assert "energy_cxl_mem_logic_J" in columns  # the CSV schema does not depend on availability


def test_timeline_point_keeps_the_measured_batches():
    rec = evaluate(Point("cxl", "rm1", tuple(TINY.items()) + (("batches", 2), ("warmup_batches", 0)), timeline=True))
    tl = rec["timeline"]
    assert rec["status"] == "ok" and tl["intervals"] and "gpu" in tl["lanes"]
    assert all(iv[2] > tl["start_ns"] and iv[1] < tl["end_ns"] for iv in tl["intervals"])


def test_to_dataframe(serial_run, monkeypatch):
    pd = pytest.importorskip("pandas")
    _, outcome, out = serial_run
    df = to_dataframe(out)
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert df["batch_time_ms"].dtype.kind == "f" and list(df["seed"]) == [1, 2, 1, 2]
    assert len(to_dataframe(outcome.records)) == 4
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="needs pandas"):
        to_dataframe(out)
