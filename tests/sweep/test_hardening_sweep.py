"""Sweeps fail cleanly: a point that fails with an internal error is recorded and the sweep goes on
in every executor; an output that cannot be written ends the sweep with exit 1 and one line, and
every finished point stays in points.jsonl (a re-run resumes from it)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
import yaml

import cxlsim.sweep.evaluate as evaluate_mod
import cxlsim.sweep.runner as runner
from cxlsim.cli import main
from cxlsim.sweep import load_spec, run_sweep
from cxlsim.sweep.executors import make_executor
from cxlsim.sweep.runner import execute
from cxlsim.sweep.spec import Point

TINY = {"workload_overrides.batch_size": 16, "workload_overrides.rows_per_table": 10_000,
        "workload_overrides.tables": 4, "workload_overrides.lookups_per_table": 8}


def write_spec(tmp_path: Path, seeds=(1, 2, 3)) -> Path:
    doc = {"version": 1, "name": "tiny",
           "base": {"systems": ["dram"], "workloads": ["rm1"], "batches": 1, "warmup_batches": 0, "set": TINY},
           "axes": {"grid": {"seed": list(seeds)}}}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def fails_on_seed_2(point: Point) -> dict:
    """A point function (module level: workers import it) failing inside, as a model bug would."""
    seed = dict(point.sets).get("seed")
    if seed == 2:
        raise ZeroDivisionError("a bug in one point")
    return {"id": point.id, "point": point.to_dict(), "swept": dict(point.swept), "status": "ok", "seed": seed}


def test_internal_error_in_a_point_is_recorded_and_the_serial_sweep_goes_on(tmp_path, monkeypatch):
    real = evaluate_mod.simulate

    def simulate(system, **kw):
        if dict(kw["sets"]).get("seed") == 2:
            raise ZeroDivisionError("a bug in one point")
        return real(system, **kw)

    monkeypatch.setattr(evaluate_mod, "simulate", simulate)
    spec = load_spec(write_spec(tmp_path))
    outcome = run_sweep(spec, tmp_path / "out", executor="serial", progress=False)
    by_seed = {r["swept"]["seed"]: r for r in outcome.records}
    assert [by_seed[s]["status"] for s in (1, 2, 3)] == ["ok", "error", "ok"]
    bad = by_seed[2]
    assert bad["error_kind"] == "internal" and "ZeroDivisionError" in bad["error"] and "traceback" in bad
    assert len((tmp_path / "out" / "points.jsonl").read_text().splitlines()) == 3
    rc = main(["sweep", str(spec.source), "--out", str(tmp_path / "cli"), "--executor", "serial", "--no-progress"])
    assert rc == 1  # a point failed otherwise than by bad input


@pytest.mark.parametrize("executor", ["serial", "process", pytest.param("dask", marks=pytest.mark.slow)])
def test_every_executor_goes_on_after_a_point_raises(tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("dask.distributed")
    spec = load_spec(write_spec(tmp_path))
    ex = make_executor(executor, workers=1)
    try:
        got = {spec.points[i].id: rec for i, rec in execute(spec.points, ex, fn=fails_on_seed_2)}
    finally:
        ex.close()
    status = {dict(p.sets)["seed"]: got[p.id]["status"] for p in spec.points}
    assert status == {1: "ok", 2: "error", 3: "ok"}
    bad = next(r for r in got.values() if r["status"] == "error")
    assert "ZeroDivisionError" in bad["error"] and bad["error_kind"] == "executor"


def one_line_exit_1(capsys, argv) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.strip().splitlines() if ln and not ln.startswith("warning: ")]  # warnings may precede
    assert rc == 1, err
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_full_disk_stops_with_one_line_and_keeps_finished_points(tmp_path, capsys, monkeypatch):
    spec = write_spec(tmp_path)
    out = tmp_path / "out"
    real = runner.append_record
    written = []

    def append_record(fh, rec):  # the disk fills up after two points
        if len(written) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), fh.name)
        real(fh, rec)
        written.append(rec["id"])

    monkeypatch.setattr(runner, "append_record", append_record)
    line = one_line_exit_1(capsys, ["sweep", str(spec), "--out", str(out), "--executor", "serial", "--no-progress"])
    assert "points.jsonl" in line and os.strerror(errno.ENOSPC) in line and "2 finished point(s)" in line
    kept = [json.loads(ln)["id"] for ln in (out / "points.jsonl").read_text().splitlines()]
    assert kept == written
    monkeypatch.setattr(runner, "append_record", real)  # space again: the re-run resumes
    outcome = run_sweep(load_spec(spec), out, executor="serial", progress=False)
    assert (outcome.reused, outcome.ran) == (2, 1) and not outcome.failed


@pytest.mark.parametrize("blocked", ["points.jsonl", "results.json"])
def test_unwritable_output_stops_with_one_line(tmp_path, capsys, blocked):
    """An output path that cannot be written (here a folder where a file must go: chmod does not
    stop root) ends with exit 1 and one line naming it; points already logged stay."""
    spec = write_spec(tmp_path, seeds=(1,))
    out = tmp_path / "out"
    (out / blocked).mkdir(parents=True)
    line = one_line_exit_1(capsys, ["sweep", str(spec), "--out", str(out), "--executor", "serial", "--no-progress"])
    assert blocked in line
    if blocked == "results.json":
        assert len((out / "points.jsonl").read_text().splitlines()) == 1


def test_damaged_points_log_is_read_around(tmp_path):
    spec = load_spec(write_spec(tmp_path, seeds=(1,)))
    out = tmp_path / "out"
    out.mkdir()
    (out / "points.jsonl").write_bytes(b"\xff\xfe garbage\n\x00\x01\n")
    outcome = run_sweep(spec, out, executor="serial", progress=False)
    assert outcome.ran == 1 and not outcome.failed


# ---------------------- a spec's bad axis is refused before any point runs
def spec_with(tmp_path: Path, grid=None, zipped=None, systems=("dram",), base_set=None) -> Path:
    doc = yaml.safe_load(write_spec(tmp_path).read_text())
    doc["base"]["systems"] = list(systems)
    swept = {**(grid or {}), **(zipped or {})}
    doc["base"]["set"] = {**{k: v for k, v in TINY.items() if k not in swept}, **(base_set or {})}
    doc["axes"] = {**({"grid": grid} if grid else {}), **({"zip": zipped} if zipped else {})}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def refused_before_running(tmp_path, capsys, path: Path, *needles: str, argv=()) -> str:
    out = tmp_path / "out"
    rc = main(["sweep", str(path), "--out", str(out), "--executor", "serial", "--no-progress", *argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.strip().splitlines() if ln and not ln.startswith("warning: ")]  # warnings may precede
    assert rc == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert not (out / "points.jsonl").exists()  # no point ran
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("axes, needle", [
    ({"grid": {"devices.table_memory.count": [1, 0]}}, "axes.grid.devices.table_memory.count[1]: must be >= 1, got 0"),
    ({"grid": {"pipeline.bogus_ns": [1, 2]}}, "axes.grid.pipeline.bogus_ns: unknown key"),
    ({"grid": {"devices.table_memory.params.write_bw_GBps": [2, -1]}},
     "axes.grid.devices.table_memory.params.write_bw_GBps[1]: must be > 0"),
    ({"zipped": {"seed": [1, 2], "topology.gpus_count": [1, 0]}}, "axes.zip.topology.gpus_count[1]: must be >= 1"),
    ({"grid": {"workload_overrides.tables": [4, 10**9]}}, "axes.grid.workload_overrides.tables[1]"),  # the workload's bound
    ({"grid": {"platform": ["physical", "mars"]}}, "axes.grid.platform[1]: no such platform"),
])
def test_a_bad_axis_names_the_spec_and_axis_before_any_point_runs(tmp_path, capsys, axes, needle):
    path = spec_with(tmp_path, axes.get("grid"), axes.get("zipped"))
    line = refused_before_running(tmp_path, capsys, path, f"{path}: {needle}", "(system dram)")
    assert "--set" not in line, line


def test_an_axis_value_bad_on_one_system_names_it(tmp_path, capsys):
    # relaxed lookup needs the undo log: fine on cxl, refused on dram (limit the axis with systems:)
    path = spec_with(tmp_path, {"pipeline.relaxed_lookup": [True]}, systems=("cxl", "dram"))
    refused_before_running(tmp_path, capsys, path, f"{path}: axes.grid.pipeline.relaxed_lookup[0]: relaxations",
                           "(system dram)")
    doc = yaml.safe_load(path.read_text())
    doc["axes"]["grid"]["pipeline.relaxed_lookup"] = {"values": [True], "systems": ["cxl"]}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert [p.system for p in load_spec(path).points] == ["cxl", "dram"]


def test_base_and_command_line_sets_name_themselves(tmp_path, capsys):
    path = spec_with(tmp_path, {"seed": [1, 2]}, base_set={"devices.table_memory.count": 0})
    refused_before_running(tmp_path, capsys, path, f"{path}: base.set.devices.table_memory.count: must be >= 1")
    path = spec_with(tmp_path, {"seed": [1, 2]})
    line = refused_before_running(tmp_path, capsys, path, "--set: devices.table_memory.count: must be >= 1",
                                  argv=["--set", "devices.table_memory.count=0"])
    assert str(path) not in line.split(": must")[0], line
