"""Sweep specs: validation (one-line errors naming file and key) and grid/zip expansion."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cxlsim.cli import main
from cxlsim.errors import ConfigError
from cxlsim.sweep.spec import Point, build_spec, load_spec

REPO = Path(__file__).resolve().parents[2]


def spec_file(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_grid_and_zip_expand_in_order(tmp_path):
    doc = {"version": 1, "base": {"systems": ["pmem", "cxl"], "workloads": ["rm1", "rm2"], "batches": 2},
           "axes": {"grid": {"devices.table_memory.params.write_bw_GBps": [1, 2, 4]},
                    "zip": {"seed": [1, 2], "devices.table_memory.count": [2, 4]}}}
    spec = load_spec(spec_file(tmp_path, doc))
    assert spec.axes == ("system", "workload", "devices.table_memory.params.write_bw_GBps", "seed",
                         "devices.table_memory.count")
    assert len(spec.points) == 2 * 2 * 3 * 2
    first, second, last = spec.points[0], spec.points[1], spec.points[-1]
    assert dict(first.swept) == {"system": "pmem", "workload": "rm1", "devices.table_memory.params.write_bw_GBps": 1,
                                 "seed": 1, "devices.table_memory.count": 2}
    assert dict(second.swept)["seed"] == 2 and dict(second.swept)["devices.table_memory.count"] == 4  # zip walks together
    assert dict(last.swept) == {"system": "cxl", "workload": "rm2", "devices.table_memory.params.write_bw_GBps": 4,
                                "seed": 2, "devices.table_memory.count": 4}
    assert dict(first.sets)["batches"] == 2  # base values are configuration keys of every point
    assert len({p.id for p in spec.points}) == len(spec.points)


def test_system_and_workload_as_axes(tmp_path):
    doc = {"version": 1, "base": {}, "axes": {"zip": {"system": ["pmem", "cxl"], "workload": ["rm3", "rm4"]}}}
    spec = build_spec(doc, "inline")
    assert [(p.system, p.workload) for p in spec.points] == [("pmem", "rm3"), ("cxl", "rm4")]
    no_wl = build_spec({"version": 1, "base": {"systems": ["cxl"]}}, "inline")
    assert no_wl.points[0].workload is None  # the system's own workload


def test_point_id_is_stable_and_ignores_labels():
    p = Point("cxl", "rm1", (("seed", 3), ("devices.switch.levels", 2)))
    relabelled = Point("cxl", "rm1", (("devices.switch.levels", 2), ("seed", 3)), swept=(("system", "cxl"),))
    assert p.id == relabelled.id
    # resumed sweeps find their points by this hash: changing the scheme orphans every points.jsonl
    assert p.id == "8285a720f4fa6d58"


def test_set_applies_to_every_point_and_wins_over_base():
    doc = {"version": 1, "base": {"systems": ["cxl"], "batches": 5}}
    spec = build_spec(doc, "inline", [("batches", 1), ("pipeline.relaxed_lookup", False)])
    assert dict(spec.points[0].sets) == {"batches": 1, "pipeline.relaxed_lookup": False}


BAD = [
    ({"version": 1, "base": {"systems": ["cxl"]}, "axis": {}}, "axis", "unknown key"),
    ({"version": 1, "base": {"systems": ["cxl"], "workload": ["rm1"]}}, "base.workload", "did you mean workloads"),
    ({"version": 1, "base": {"systems": ["cxl"]}, "axes": {"product": {}}}, "axes.product", "unknown key"),
    ({"version": 1, "base": {"systems": ["cxl"]}, "axes": {"zip": {"seed": [1, 2], "batches": [1]}}},
     "axes.zip", "equal lengths"),
    ({"version": 1, "base": {"systems": ["cxl"]}, "axes": {"grid": {"seed": [1]}, "zip": {"seed": [2]}}},
     "axes.zip.seed", "sweep a key once"),
    ({"version": 1, "base": {"systems": ["cxl"], "seed": 1}, "axes": {"grid": {"seed": [1, 2]}}},
     "axes.grid.seed", "fixed by base.seed"),
    ({"version": 1, "base": {"systems": ["cxl", "nosuch"]}}, "base.systems[1]", "no such system"),
    ({"version": 1, "base": {"systems": ["cxl"], "workloads": ["rm9"]}}, "base.workloads[0]", "no such workload"),
    ({"version": 1, "base": {"systems": ["cxl"]}, "axes": {"grid": {"system": ["pmem"]}}},
     "axes.grid.system", "also given as base.systems"),
    ({"version": 1, "base": {"workloads": ["rm1"]}}, "base.systems", "missing"),
    ({"version": 1, "base": {"systems": ["cxl"]}, "axes": {"grid": {"seed": []}}}, "axes.grid.seed", "non-empty list"),
    ({"version": 1, "base": {"systems": ["cxl"]}, "axes": {"grid": {"seed": [1, 1]}}}, "axes", "identical"),
    ({"version": 1, "base": {"systems": ["cxl"], "batches": "many"}}, "base.batches", "whole number"),
    ({"base": {"systems": ["cxl"]}}, "version", "missing"),
]


@pytest.mark.parametrize(("doc", "key", "message"), BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_spec_errors_name_file_and_key(tmp_path, doc, key, message):
    path = spec_file(tmp_path, doc)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert info.value.where == str(path)
    assert info.value.key == key
    assert message in info.value.message


def test_cli_bad_spec_exits_2_with_one_line(tmp_path, capsys):
    path = spec_file(tmp_path, {"version": 1, "base": {"systems": ["cxl"], "batchez": 2}})
    assert main(["sweep", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "base.batchez" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "configs" / "sweeps").glob("*.yaml")))
def test_shipped_specs_load(name):
    spec = load_spec(REPO / "configs" / "sweeps" / name)
    assert spec.points
    if name == "paper.yaml":
        systems = ["ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram", "tpu-ps", "cxl-cnr", "cxl-expander"]
        assert len(spec.points) == len(systems) * 4
        assert list(dict.fromkeys(p.system for p in spec.points)) == systems  # the paper's order, then the extra rows


def test_dry_run_lists_points(capsys):
    assert main(["sweep", str(REPO / "configs" / "sweeps" / "paper.yaml"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "paper: 40 points" in out and "cxl-b" in out and "cxl-cnr" in out and "cxl-expander" in out
