"""Device-initiated CXL.cache ops and the home's coherence-tracking cap.

Each mechanism is pinned both ways against the C2 Sight checks (configs/validation/devices.yaml):
the check holds with it and fails without it."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.axes.mlp_pull.cxl_cache import MLP_PULL_OP
from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.fabric import cxl_cache_ops
from cxlsim.devices.fabric.cxl_cache_ops import OPS, cache_ops, op_latency_ns, op_stream_ns
from cxlsim.devices.fabric.cxl_path import FabricPath
from cxlsim.devices.registry import get_family
from cxlsim.validate import checks as validate

DEVICE = "cxl_protocol/agilex7"
CHECKS = ("cxl-cache-ops-bandwidth", "cxl-cache-ops-latency", "cxl-cache-device-hit")
PRESETS = ("cxl_protocol/asic", "cxl_protocol/fpga", DEVICE)
LINKS = ("cxl_link/cxl2-x16", "cxl_link/cxl3-x16", "cxl_link/cxl3-x16-lopt", "cxl_link/alveo-u200-gen3x16")


def _points(overrides=None) -> dict[tuple[str, str], dict]:
    checks = [c for c in validate.load_catalog() if c.id in CHECKS]
    report = validate.run(checks, overrides=overrides)
    return {(c["id"], str(p["x"])): p for c in report["checks"] for p in c["points"]}


def _direct(link: str = "cxl_link/cxl2-x16") -> FabricPath:
    return FabricPath([build_device(link)])


def test_every_c2_sight_point_is_inside_its_tolerance():
    pts = _points()
    assert len(pts) == 8
    assert all(p["within"] for p in pts.values()), {k: round(p["rel_error"], 3) for k, p in pts.items()}


def test_without_the_allocation_cap_rdshared_runs_at_rdcurr_rate_and_fails():
    pts = _points({DEVICE: {"coherence_alloc_interval_ns": 1e-3}})
    assert not pts[("cxl-cache-ops-bandwidth", "RdShared")]["within"]
    assert not pts[("cxl-cache-ops-bandwidth", "RdOwn")]["within"]
    # it then runs near RdCurr's rate: its longer latency over the 512 trackers is all that holds it
    shared = pts[("cxl-cache-ops-bandwidth", "RdShared")]["model"]
    assert shared > 0.8 * pts[("cxl-cache-ops-bandwidth", "RdCurr")]["model"]


def test_without_its_second_memory_write_wowrinvf_fails(monkeypatch):
    monkeypatch.setitem(OPS, "WOWrInvF", dataclasses.replace(OPS["WOWrInvF"], memory_writes=1))
    pts = _points()
    assert not pts[("cxl-cache-ops-bandwidth", "WOWrInvF")]["within"]
    assert pts[("cxl-cache-ops-bandwidth", "ItoMWr")]["within"]


def test_rdcurr_made_to_allocate_fails(monkeypatch):
    monkeypatch.setitem(OPS, "RdCurr", dataclasses.replace(OPS["RdCurr"], allocating=True))
    pts = _points()
    assert not pts[("cxl-cache-ops-bandwidth", "RdCurr")]["within"]


def test_rdshared_latency_needs_the_victim_eviction():
    """C2 Sight streams beyond the 256 KiB device cache: each fill evicts first. Without the
    eviction an allocating read is a RdCurr plus a 30 ns fill, far below the measured 851 ns."""
    pr, path = build_device(DEVICE), _direct()
    with_evict = op_latency_ns(pr, "RdShared", path)
    without = op_latency_ns(pr, "RdShared", path, evict=False)
    assert abs(with_evict - 851) / 851 <= 0.30 < abs(without - 851) / 851
    assert without == pytest.approx(op_latency_ns(pr, "RdCurr", path) + pr.params["dcoh_state_change_ns"])


def test_allocating_reads_are_capped_by_the_home_tracking_only():
    pr, path = build_device(DEVICE), _direct()
    ops = cache_ops(pr, path)
    assert ops["RdShared"]["bw_GBps"] == pytest.approx(pr.line_B / pr.params["coherence_alloc_interval_ns"])
    assert ops["RdCurr"]["bw_GBps"] / ops["RdShared"]["bw_GBps"] > 5  # measured 6.2×
    slow = build_device(DEVICE, {"coherence_alloc_interval_ns": 50.0})
    assert cache_ops(slow, path)["RdCurr"] == ops["RdCurr"]
    assert cache_ops(slow, path)["ItoMWr"] == ops["ItoMWr"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(PRESETS), st.sampled_from(LINKS), st.integers(1, 4), st.floats(0, 1000),
       st.sampled_from([0.0, 1.0, 10.0]), st.booleans())
def test_properties_allocating_le_non_allocating_and_latency_ge_crossings(preset, link, n_links, memory_ns,
                                                                         memory_interval_ns, evict):
    pr = build_device(preset)
    lk = build_device(link)
    switch = build_device("cxl_switch/cxl2-x16" if lk.flit_B == 68 else "cxl_switch/cxl3-x16")
    path = FabricPath([lk] * n_links, switch)
    ops = cache_ops(pr, path, memory_ns, memory_interval_ns, evict)
    for name in ("RdShared", "RdOwn"):
        assert ops[name]["bw_GBps"] <= ops["RdCurr"]["bw_GBps"] * (1 + 1e-12)
        assert ops[name]["latency_ns"] >= ops["RdCurr"]["latency_ns"]
    assert ops["WOWrInvF"]["bw_GBps"] <= ops["ItoMWr"]["bw_GBps"] * (1 + 1e-12)
    req, data = path.message_ns(0), path.message_ns(pr.line_B)
    assert ops["RdCurr"]["latency_ns"] >= req + data + memory_ns
    assert ops["RdShared"]["latency_ns"] >= req + data + memory_ns + (2 * req if evict else 0.0)
    assert ops["ItoMWr"]["latency_ns"] >= 2 * req + data
    for name, o in ops.items():
        # no op streams faster than the link carries its data messages
        assert o["bw_GBps"] <= pr.line_B / path.per_message_ns(pr.line_B) * (1 + 1e-12), name
        t1 = op_stream_ns(pr, name, 1000, path, memory_ns, memory_interval_ns, None, evict)
        t2 = op_stream_ns(pr, name, 2000, path, memory_ns, memory_interval_ns, None, evict)
        assert t2 > t1 > 0


def test_the_mlp_pull_is_a_non_allocating_read_and_pays_no_tracking_cap():
    assert not OPS[MLP_PULL_OP].allocating
    fpga = build_device("cxl_protocol/fpga")
    path = FabricPath([build_device("cxl_link/alveo-u200-gen3x16")] * 2, build_device("cxl_switch/cxl3-x16"))
    n = 1 << 16
    pull = fpga.cache_fill_ns(n, 0.0, path, 0.1)
    assert build_device("cxl_protocol/fpga", {"coherence_alloc_interval_ns": 100.0}).cache_fill_ns(n, 0.0, path, 0.1) == pull
    # were it allocating, the tracking cap would set its rate
    alloc = fpga.cache_fill_ns(n, 0.0, path, 0.1, "RdShared")
    assert (alloc - pull) / n == pytest.approx(fpga.params["coherence_alloc_interval_ns"] - max(
        fpga.params["dcoh_occupancy_ns"], path.per_message_ns(64)), rel=0.01)


def test_microbench_has_cache_ops_over_a_direct_link():
    pr = build_device(DEVICE)
    out = get_family("cxl_protocol").microbench(pr, {"link": build_device("cxl_link/cxl2-x16"),
                                                     "switch": build_device("cxl_switch/cxl2-x16")})
    assert out["cache_ops"] == cache_ops(pr, _direct())
    assert out["device_cache_hit_ns"] == 120


@pytest.mark.slow
def test_microbench_json_has_cache_ops(capsys):
    assert main(["microbench", DEVICE, "--json", "--link", "cxl_link/cxl2-x16", "--switch", "cxl_switch/cxl2-x16"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["cache_ops"]) == set(OPS)
    assert all(set(v) == {"bw_GBps", "latency_ns"} for v in out["cache_ops"].values())
    assert out["device_cache_hit_ns"] == 120


def test_unknown_op_is_refused():
    with pytest.raises(ValueError, match="unknown CXL.cache op"):
        cxl_cache_ops.op_latency_ns(build_device(DEVICE), "RdAny", _direct())


@pytest.mark.slow
def test_the_systems_pull_with_rdcurr_and_declare_the_tracking_cap_unused():
    """cxl-d's MLP pull is timed as the RdCurr op and reads no allocation cap; the axes say why."""
    import cxlsim

    cfg = cxlsim.load_config("cxl-d", [("platform", "prototype")])
    r = cxlsim.simulate(cfg, workload="rm3", batches=1, warmup=0, workload_sets={"batch_size": 16}, trace=False)
    params = cfg.devices["cxl_protocol"].params
    assert "RdCurr" in params.skipped["coherence_alloc_interval_ns"]
    assert "home_write_interval_ns" in params.skipped and "device_cache_hit_ns" in params.skipped
    assert "device_completion_ns" in params.reads
    mc = r.machine
    nbytes = 1 << 20
    path = mc.path(("gpu", mc.sides[0].source_gpu), ("mem", 0))
    gpu_bw = mc.gpu.params.mem_bw_GBps * mc.gpu.params.mem_bw_efficiency_fraction
    assert mc.puller.pull_ns(nbytes, 0) == op_stream_ns(mc.cxl, "RdCurr", nbytes // 64, path, 0.0, 64 / gpu_bw,
                                                        mc.cxl.cache_fill_home_ns())


def test_microbench_text_prints_cache_ops_one_op_a_line():
    """The text output lists each CXL.cache op on its own line with its numbers (not a nested dict)."""
    from cxlsim.cli.microbench import render_result

    text = render_result({"device": "x", "cache_ops": {"RdCurr": {"bw_GBps": 47.45, "latency_ns": 452.2}}})
    assert "  cache_ops\n    RdCurr" in text and "bw_GBps: 47.45" in text and "{" not in text
