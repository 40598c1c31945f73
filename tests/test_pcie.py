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
I5 = build_device("cpu/i5-9600k")  # the host whose software path these tests run
BOUNCE_COPY = build_device("pcie/gen4-x16", {"bounce_host_copy": True})


def test_bandwidth_and_overheads_match_sources():
    assert PCIE.raw_bw_GBps == pytest.approx(31.5, abs=0.05)
    assert 24 <= PCIE.effective_bw_GBps <= 27
    assert 3e3 <= PCIE.launch_ns(I5) <= 5e3 and 5e3 <= PCIE.sync_ns(I5) <= 6e3
    assert 5e3 <= PCIE.memcpy_ns(0, host=I5) - PCIE.latency_ns <= 7e3


@settings(max_examples=150, deadline=None)
@given(size_B=st.integers(0, 1 << 30), model=st.sampled_from([PCIE, BOUNCE_COPY]))
def test_bounce_slower_than_direct(size_B, model):
    direct, bounce = model.memcpy_ns(size_B, host=I5), model.memcpy_ns(size_B, True, I5)
    assert bounce > direct
    assert bounce >= 2 * direct  # two calls, two transfers
    assert direct == I5.memcpy_call_ns() + model.dma_ns(size_B)
    if size_B:
        assert size_B / (direct - I5.memcpy_call_ns()) <= model.raw_bw_GBps


def test_bound_factor_closed_form():
    assert PCIE.bound_factor("dma") == pytest.approx(1 / 0.81)
    assert PCIE.bound_factor("memcpy") == pytest.approx(1 / 0.81)  # the call is in the bound: the link's loss
    assert BOUNCE_COPY.bound_factor("memcpy") == pytest.approx(1 / 0.81 + PCIE.raw_bw_GBps / (2 * 10.0))
    # per leg: the memcpy call (software the copy cannot avoid) + DMA latency + size / raw bandwidth
    assert PCIE.bound_ns("memcpy", 1 << 20, True, I5) == pytest.approx(2 * (6e3 + 1e3 + (1 << 20) / PCIE.raw_bw_GBps))


def test_cost_counts_every_leg():
    c = PCIE.memcpy_cost(1e6, True, I5)
    assert (c.time_ns, c.size_B) == (PCIE.memcpy_ns(1e6, True, I5), 2e6)
    assert c.energy_J == pytest.approx(2e6 * 8 * 5e-12) == pytest.approx(PCIE.energy_J(2e6))


def test_host_staging_copy_adds_cpu_time():
    n = 64 << 20
    extra = BOUNCE_COPY.memcpy_ns(n, True, I5) - PCIE.memcpy_ns(n, True, I5)
    assert extra == pytest.approx(n / BOUNCE_COPY.params["host_copy_bw_GBps"])


def test_microbench_is_the_software_path():
    out = microbench(PCIE, {"host": I5})
    assert out["latency_ns"] == {"down": PCIE.memcpy_ns(0, host=I5), "up": PCIE.memcpy_ns(0, host=I5)}
    assert out["bw_GBps"]["up"] == pytest.approx((64 << 20) / PCIE.memcpy_ns(64 << 20, host=I5))


def test_software_path_costs_are_the_hosts():
    """The per-call costs are host software: the host passed decides them; the link keeps its own."""
    i5, rv = build_device("cpu/i5-9600k"), build_device("cpu/riscv-u200")
    n = 1 << 20
    assert PCIE.memcpy_ns(n, host=rv) - PCIE.memcpy_ns(n, host=i5) == pytest.approx(rv.memcpy_call_ns() - 6e3)
    assert PCIE.memcpy_ns(n, host=rv) == rv.memcpy_call_ns() + PCIE.dma_ns(n)
    assert PCIE.launch_ns(rv) == rv.launch_call_ns() and PCIE.sync_ns(rv) == rv.sync_call_ns()
    assert PCIE.memcpy_cost(n, True, rv).time_ns == PCIE.memcpy_ns(n, True, rv)
    assert PCIE.bound_ns("memcpy", n, False, rv) <= PCIE.memcpy_ns(n, False, rv)


def test_the_u200_link_leaves_the_software_path_to_the_host():
    u200, rv = build_device("pcie/u200-gen3-x16"), build_device("cpu/riscv-u200")
    assert u200.raw_bw_GBps == pytest.approx(15.75, abs=0.01)  # Gen3 x16: 16 × 8 GT/s × 128/130 / 8
    assert u200.effective_bw_GBps == pytest.approx(0.8 * u200.raw_bw_GBps)
    assert u200.dma_ns(0) == 2000.0
    with pytest.raises(ValueError, match="host="):
        u200.memcpy_ns(4096)
    assert u200.memcpy_ns(4096, host=rv) == rv.memcpy_call_ns() + u200.dma_ns(4096)
    out = microbench(u200, {})  # without a host: the link alone
    assert out["latency_ns"]["up"] == u200.dma_ns(0) and "software_path" in out
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
