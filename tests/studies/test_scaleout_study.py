"""The scale-out study: axes limited to some systems, and the reader of its results."""

from __future__ import annotations

import json

import pytest

import cxlsim.studies.scaleout.__main__ as scaleout_main
import cxlsim.studies.scaleout.report as scaleout_report
import cxlsim.studies.scaleout.simulation as scaleout_simulation
from cxlsim.errors import ConfigError
from cxlsim.sweep.spec import build_spec, load_spec
from cxlsim.systems.config import system_path


def test_an_axis_limited_to_systems_leaves_the_others_at_their_value():
    doc = {"version": 1, "base": {"systems": ["pmem", "cxl"], "workloads": ["rm1"]},
           "axes": {"grid": {"topology.gpus_count": [1, 2],
                             "topology.cxl_mems_count": {"values": [1, 2, 4], "systems": ["cxl"]}}}}
    spec = build_spec(doc, "t.yaml")
    pmem = [p for p in spec.points if p.system == "pmem"]
    cxl = [p for p in spec.points if p.system == "cxl"]
    assert len(pmem) == 2 and len(cxl) == 6  # pmem does not repeat over the CXL-MEM axis
    assert all("topology.cxl_mems_count" not in dict(p.sets) for p in pmem)
    assert all(dict(p.swept)["topology.cxl_mems_count"] is None for p in pmem)
    assert sorted(dict(p.sets)["topology.cxl_mems_count"] for p in cxl) == [1, 1, 2, 2, 4, 4]


@pytest.mark.parametrize("entry,key", [
    ({"values": [1], "systems": ["ssd"]}, "axes.grid.topology.cxl_mems_count.systems"),
    ({"values": [1], "systems": []}, "axes.grid.topology.cxl_mems_count.systems"),
    ({"values": [1], "systems": ["cxl"], "other": 1}, "axes.grid.topology.cxl_mems_count.other"),
    ({"systems": ["cxl"]}, "axes.grid.topology.cxl_mems_count"),
])
def test_limited_axes_are_validated(entry, key):
    doc = {"version": 1, "base": {"systems": ["pmem", "cxl"]}, "axes": {"grid": {"topology.cxl_mems_count": entry}}}
    with pytest.raises(ConfigError) as e:
        build_spec(doc, "t.yaml")
    assert key in str(e.value)


def test_the_shipped_scale_out_spec_expands():
    spec = load_spec(system_path("cxl").parent / "sweeps" / "scale-out.yaml")
    by = {}
    for p in spec.points:
        by[p.system] = by.get(p.system, 0) + 1
    assert by == {"cxl": 128, "cxl-b": 64, "cxl-d": 64, "pcie": 64, "pmem": 16, "tpu-ps": 16}


def _record(system, workload, g, m, levels, thr, energy, bottleneck="gpu"):
    return {"id": f"{system}{workload}{g}{m}{levels}", "status": "ok", "swept": {
        "system": system, "workload": workload, "topology.gpus_count": g, "topology.cxl_mems_count": m,
        "devices.switch.levels": levels}, "result": {
        "batch_time_ms": {"mean": 1e3 * 359 * g / thr}, "throughput_samples_per_s": thr,
        "energy_J_per_batch": {"total": energy}, "bottleneck": {"resource": bottleneck, "utilisation": 0.9}}}


@pytest.mark.slow
def test_reader_tables_and_figure(tmp_path):
    recs = [_record("cxl", "rm1", g, min(g, 7), 1, 1000.0 * g, 1.0 * g) for g in (1, 2, 4, 8)]
    recs += [_record("cxl", "rm1", 8, m, 1, 500.0 * m, 2.0, f"media.{m}") for m in (1, 2, 4)]
    recs += [_record("pmem", "rm1", g, None, None, 900.0, 3.0) for g in (1, 2, 4, 8)]
    recs.append({"id": "bad", "status": "failed", "swept": {}, "result": None})
    (tmp_path / "points.jsonl").write_text("\n".join(json.dumps(r) for r in recs))
    points = scaleout_simulation.read_points(tmp_path)
    assert len(points) == len(recs) - 1
    p = next(x for x in points if x.system == "cxl" and x.gpus == 8 and x.mems == 7)
    assert p.balanced and p.samples_per_batch == pytest.approx(359 * 8)
    assert p.energy_per_sample_mJ == pytest.approx(1e3 * 8 / (359 * 8))
    head, rows = scaleout_report.balanced_table(points)
    cxl = next(r for r in rows if r[0] == "cxl")
    assert cxl[2:6] == ["1.0", "2.0", "4.0", "8.0"] and cxl[6] == "1.00"  # linear: efficiency 1
    pmem = next(r for r in rows if r[0] == "pmem")
    assert pmem[6] == "0.12"  # one host: flat
    head, rows = scaleout_report.memory_table(points)
    assert rows[0][1:5] == ["0.5", "1.0", "2.0", "8.0"] and rows[0][6] == "media.1 (90%)"
    out = scaleout_report.plot(points, tmp_path / "fig.png")
    assert out.stat().st_size > 0
    assert scaleout_main.main([str(tmp_path), "--plot", str(tmp_path / "f2.png"), "--markdown"]) == 0
    assert scaleout_main.main([str(tmp_path / "nowhere")]) == 2
