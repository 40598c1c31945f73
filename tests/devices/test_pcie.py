"""PCIe link and software data path: bandwidths, overheads, bounce copies, costs, CLI (bounds vs
factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.fabric.pcie import microbench

PCIE = build_device("pcie/gen4-x16")
I5 = build_device("cpu/i5-9600k")  # the host whose software path these tests run
BOUNCE_COPY = build_device("pcie/gen4-x16", {"bounce_host_copy": True})
U200 = build_device("pcie/u200-gen3-x16")


def test_bandwidth_and_overheads_match_sources():
    assert PCIE.raw_bw_GBps == pytest.approx(31.5, abs=0.05)
    assert all(24 <= bw <= 27 for bw in PCIE.dma_bw_GBps.values())
    assert 3e3 <= PCIE.launch_ns(I5) <= 5e3 and 5e3 <= PCIE.sync_ns(I5) <= 6e3
    assert 5e3 <= PCIE.memcpy_ns(0, "h2d", I5) - PCIE.latency_ns <= 7e3


@settings(max_examples=150, deadline=None)
@given(size_B=st.integers(0, 1 << 30), model=st.sampled_from([PCIE, BOUNCE_COPY, U200]))
def test_bounce_slower_than_direct(size_B, model):
    bounce = model.memcpy_ns(size_B, "d2h2d", I5)
    for way in ("h2d", "d2h"):
        direct = model.memcpy_ns(size_B, way, I5)
        assert bounce > direct
        assert direct == I5.memcpy_call_ns() + model.dma_ns(size_B, way)
        if size_B:
            assert size_B / (direct - I5.memcpy_call_ns()) <= model.raw_bw_GBps
    # two calls, two transfers: one leg each way
    assert bounce >= model.memcpy_ns(size_B, "h2d", I5) + model.memcpy_ns(size_B, "d2h", I5)


def test_bound_factor_closed_form():
    assert PCIE.bound_factor("dma") == pytest.approx(1 / 0.81)
    assert PCIE.bound_factor("memcpy") == pytest.approx(1 / 0.81)  # the call is in the bound: the link's loss
    assert BOUNCE_COPY.bound_factor("memcpy") == pytest.approx(1 / 0.81 + PCIE.raw_bw_GBps / (2 * 10.0))
    assert U200.bound_factor("dma") == pytest.approx(1 / U200.params["h2d_efficiency_fraction"])  # the slower way
    # per leg: the memcpy call (software the copy cannot avoid) + DMA latency + size / raw bandwidth
    assert PCIE.bound_ns("memcpy", 1 << 20, "d2h2d", I5) == pytest.approx(2 * (6e3 + 1e3 + (1 << 20) / PCIE.raw_bw_GBps))


def test_cost_counts_every_leg():
    c = PCIE.memcpy_cost(1e6, "d2h2d", I5)
    assert (c.time_ns, c.size_B) == (PCIE.memcpy_ns(1e6, "d2h2d", I5), 2e6)
    assert c.energy_J == pytest.approx(2e6 * 8 * 5e-12) == pytest.approx(PCIE.energy_J(2e6))


def test_host_staging_copy_adds_cpu_time():
    n = 64 << 20
    extra = BOUNCE_COPY.memcpy_ns(n, "d2h2d", I5) - PCIE.memcpy_ns(n, "d2h2d", I5)
    assert extra == pytest.approx(n / BOUNCE_COPY.params["host_copy_bw_GBps"])


def test_microbench_is_the_software_path():
    out = microbench(PCIE, {"host": I5})
    assert out["latency_ns"] == {"down": PCIE.memcpy_ns(0, "h2d", I5), "up": PCIE.memcpy_ns(0, "d2h", I5)}
    assert out["bw_GBps"]["up"] == pytest.approx((64 << 20) / PCIE.memcpy_ns(64 << 20, "d2h", I5))
    assert out["memcpy_bw_by_size_GBps"]["down"]["1MB"] == pytest.approx(1e6 / PCIE.memcpy_ns(1e6, "h2d", I5))
    assert out["memcpy_bounce_us"]["64MiB"] == pytest.approx(PCIE.memcpy_ns(64 << 20, "d2h2d", I5) / 1e3)


def test_software_path_costs_are_the_hosts():
    """The per-call costs are host software: the host passed decides them; the link keeps its own."""
    i5, rv = build_device("cpu/i5-9600k"), build_device("cpu/riscv-u200")
    n = 1 << 20
    assert PCIE.memcpy_ns(n, "h2d", rv) - PCIE.memcpy_ns(n, "h2d", i5) == pytest.approx(rv.memcpy_call_ns() - 6e3)
    assert PCIE.memcpy_ns(n, "h2d", rv) == rv.memcpy_call_ns() + PCIE.dma_ns(n, "h2d")
    assert PCIE.launch_ns(rv) == rv.launch_call_ns() and PCIE.sync_ns(rv) == rv.sync_call_ns()
    assert PCIE.memcpy_cost(n, "d2h2d", rv).time_ns == PCIE.memcpy_ns(n, "d2h2d", rv)
    assert PCIE.bound_ns("memcpy", n, "h2d", rv) <= PCIE.memcpy_ns(n, "h2d", rv)


def test_the_u200_link_leaves_the_software_path_to_the_host():
    u200, rv = build_device("pcie/u200-gen3-x16"), build_device("cpu/riscv-u200")
    assert u200.raw_bw_GBps == pytest.approx(15.75, abs=0.01)  # Gen3 x16: 16 × 8 GT/s × 128/130 / 8
    # the measured XDMA rates at 256 MB ([xilinx-vitis-tutorials-281], [xilinx-xrt-pr2065]):
    # 9.30-9.58 host -> card, 11.91-11.96 card -> host
    assert 9.30 <= u200.dma_bw_GBps["h2d"] <= 9.58 and 11.91 <= u200.dma_bw_GBps["d2h"] <= 11.96
    assert u200.dma_ns(0, "h2d") == u200.dma_ns(0, "d2h") == 2000.0
    with pytest.raises(ValueError, match="host="):
        u200.memcpy_ns(4096, "h2d")
    assert u200.memcpy_ns(4096, "d2h", rv) == rv.memcpy_call_ns() + u200.dma_ns(4096, "d2h")
    out = microbench(u200, {})  # without a host: the link alone
    assert out["latency_ns"]["up"] == u200.dma_ns(0, "d2h") and "software_path" in out
    assert microbench(u200, {"host": rv})["launch_us"] == pytest.approx(rv.launch_call_ns() / 1e3)


FABRIC_PRESETS = [
    "cxl_link/cxl2-x16", "cxl_link/cxl3-x16", "cxl_link/cxl3-x16-lopt",
    "cxl_switch/cxl2-x16", "cxl_switch/cxl3-x16",
    "cxl_protocol/asic", "cxl_protocol/fpga", "pcie/gen4-x16", "pcie/u200-gen3-x16",
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
