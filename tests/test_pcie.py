"""PCIe link and software data path: bandwidths, overheads, bounce copies, bounds, CLI."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.pcie import PcieComponent
from cxlsim.engine.component import Simulation

PCIE = build_device("pcie/gen4-x16")
BOUNCE_COPY = build_device("pcie/gen4-x16", {"bounce_host_copy": True})


def test_bandwidth_and_overheads_match_sources():
    assert PCIE.raw_bw_GBps == pytest.approx(31.5, abs=0.05)
    assert 24 <= PCIE.effective_bw_GBps <= 27
    assert 3e3 <= PCIE.launch_ns() <= 5e3 and 5e3 <= PCIE.sync_ns() <= 6e3
    assert 5e3 <= PCIE.memcpy_ns(0) - PCIE.latency_ns <= 7e3


@settings(max_examples=150, deadline=None)
@given(nbytes=st.integers(0, 1 << 30), model=st.sampled_from([PCIE, BOUNCE_COPY]))
def test_bounce_slower_than_direct_and_within_bounds(nbytes, model):
    direct, bounce = model.memcpy_ns(nbytes), model.memcpy_ns(nbytes, True)
    assert bounce > direct
    assert bounce >= 2 * direct  # two calls, two transfers
    for b, t, flag in ((model.memcpy_bound_ns(nbytes), direct, False), (model.memcpy_bound_ns(nbytes, True), bounce, True)):
        assert b <= t <= model.bound_factor(flag) * b * (1 + 1e-12)
    if nbytes:
        assert nbytes / (direct - model.params["memcpy_overhead_us"] * 1e3) <= model.raw_bw_GBps


def test_host_staging_copy_adds_cpu_time():
    n = 64 << 20
    extra = BOUNCE_COPY.memcpy_ns(n, True) - PCIE.memcpy_ns(n, True)
    assert extra == pytest.approx(n / BOUNCE_COPY.params["host_copy_bw_GBps"])


def test_simpy_copy_matches_pure_and_contends():
    sim = Simulation(seed=0, trace=False)
    comp = PcieComponent(sim, "p", PCIE)
    ends = []

    def go(n, d):
        ends.append((yield from comp.memcpy(n, d)))

    sim.env.process(go(1 << 20, "h2d"))
    sim.run()
    assert ends == [pytest.approx(PCIE.memcpy_ns(1 << 20))]

    sim = Simulation(seed=0, trace=False)
    comp = PcieComponent(sim, "p", PCIE)
    out = []

    def bounce():
        out.append((yield from comp.bounce(1 << 20)))

    sim.env.process(bounce())
    sim.run()
    assert out == [pytest.approx(PCIE.memcpy_ns(1 << 20, True))]


FABRIC_PRESETS = [
    "cxl_link/cxl2-x16", "cxl_link/cxl3-x16", "cxl_link/cxl3-x16-lopt",
    "cxl_switch/cxl2-x16", "cxl_switch/cxl3-x16",
    "cxl_protocol/asic", "cxl_protocol/fpga", "pcie/gen4-x16",
]


@pytest.mark.parametrize("preset", FABRIC_PRESETS)
def test_cli_microbench_and_show(preset, capsys):
    assert main(["microbench", preset, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] == preset
    for key in ("latency_ns", "bw_GBps"):
        assert all(v > 0 for v in data[key].values())
    if preset.startswith(("cxl_link", "cxl_switch", "pcie")):
        assert set(data["latency_ns"]) == {"up", "down"} == set(data["bw_GBps"])
        raw = build_device(preset).raw_bw_GBps if not preset.startswith("cxl_switch") else build_device(preset).link.raw_bw_GBps
        assert max(data["bw_GBps"].values()) <= raw
    assert main(["devices", "show", preset, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(p["source"] for p in shown["params"])
