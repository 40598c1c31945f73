"""PCIe link and software data path: bandwidths, overheads, bounce copies, costs, CLI (bounds vs
factors: tests/test_device_api.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.pcie import microbench

PCIE = build_device("pcie/gen4-x16")
BOUNCE_COPY = build_device("pcie/gen4-x16", {"bounce_host_copy": True})


def test_bandwidth_and_overheads_match_sources():
    assert PCIE.raw_bw_GBps == pytest.approx(31.5, abs=0.05)
    assert 24 <= PCIE.effective_bw_GBps <= 27
    assert 3e3 <= PCIE.launch_ns() <= 5e3 and 5e3 <= PCIE.sync_ns() <= 6e3
    assert 5e3 <= PCIE.memcpy_ns(0) - PCIE.latency_ns <= 7e3


@settings(max_examples=150, deadline=None)
@given(size_B=st.integers(0, 1 << 30), model=st.sampled_from([PCIE, BOUNCE_COPY]))
def test_bounce_slower_than_direct(size_B, model):
    direct, bounce = model.memcpy_ns(size_B), model.memcpy_ns(size_B, True)
    assert bounce > direct
    assert bounce >= 2 * direct  # two calls, two transfers
    assert direct == model.params["memcpy_overhead_us"] * 1e3 + model.dma_ns(size_B)
    if size_B:
        assert size_B / (direct - model.params["memcpy_overhead_us"] * 1e3) <= model.raw_bw_GBps


def test_bound_factor_closed_form():
    assert PCIE.bound_factor("dma") == pytest.approx(1 / 0.81)
    assert PCIE.bound_factor("memcpy") == pytest.approx((6e3 + 1e3) / 1e3)  # small copies: the call overhead
    assert PCIE.bound_ns("memcpy", 1 << 20, True) == pytest.approx(2 * (1e3 + (1 << 20) / PCIE.raw_bw_GBps))


def test_cost_counts_every_leg():
    c = PCIE.memcpy_cost(1e6, True)
    assert (c.time_ns, c.size_B) == (PCIE.memcpy_ns(1e6, True), 2e6)
    assert c.energy_J == pytest.approx(2e6 * 8 * 5e-12) == pytest.approx(PCIE.energy_J(2e6))


def test_host_staging_copy_adds_cpu_time():
    n = 64 << 20
    extra = BOUNCE_COPY.memcpy_ns(n, True) - PCIE.memcpy_ns(n, True)
    assert extra == pytest.approx(n / BOUNCE_COPY.params["host_copy_bw_GBps"])


def test_microbench_is_the_software_path():
    out = microbench(PCIE, {})
    assert out["latency_ns"] == {"down": PCIE.memcpy_ns(0), "up": PCIE.memcpy_ns(0)}
    assert out["bw_GBps"]["up"] == pytest.approx((64 << 20) / PCIE.memcpy_ns(64 << 20))


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
        raw = build_device(preset if not preset.startswith("cxl_switch") else "cxl_link/cxl3-x16").raw_bw_GBps
        assert max(data["bw_GBps"].values()) <= raw
    assert main(["devices", "show", preset, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(p["source"] for p in shown["params"])
