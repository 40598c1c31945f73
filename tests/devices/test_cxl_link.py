"""CXL link model: flit arithmetic, bandwidths, costs and energy, the microbenchmark (bounds vs
factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device as _build
from cxlsim.devices.fabric.cxl_link import microbench
from cxlsim.errors import ConfigError

LINKS = ("cxl_link/cxl2-x16", "cxl_link/cxl3-x16", "cxl_link/cxl3-x16-lopt")


@cache
def _cached(preset: str):
    return _build(preset)


def build_device(preset: str, overrides=None):
    return _cached(preset) if overrides is None else _build(preset, overrides)


@pytest.fixture(scope="module", params=LINKS)
def link(request):
    return build_device(request.param)


def test_raw_bandwidth_from_lanes_rate_and_encoding():
    assert build_device("cxl_link/cxl2-x16").raw_bw_GBps == pytest.approx(16 * 32 * 128 / 130 / 8)  # 63.0
    assert build_device("cxl_link/cxl3-x16").raw_bw_GBps == pytest.approx(128.0)


@pytest.mark.parametrize(
    ("preset", "payload", "flits"),
    [
        # 68 B flit: 4 slots of 16 B; one header slot per message
        ("cxl_link/cxl2-x16", 0, 1),  # header-only request
        ("cxl_link/cxl2-x16", 48, 1),  # 1 + 3 slots
        ("cxl_link/cxl2-x16", 64, 2),  # 1 + 4 slots: a lone 64 B line spills into a second flit
        ("cxl_link/cxl2-x16", 112, 2),  # 1 + 7 slots
        ("cxl_link/cxl2-x16", 113, 3),
        ("cxl_link/cxl2-x16", 4096, 65),  # 1 + 256 slots
        # 256 B flit: 15 slots
        ("cxl_link/cxl3-x16", 64, 1),
        ("cxl_link/cxl3-x16", 224, 1),  # 1 + 14 slots
        ("cxl_link/cxl3-x16", 225, 2),
        ("cxl_link/cxl3-x16", 4096, 18),  # 257 slots / 15
    ],
)
def test_flit_arithmetic_exact(preset, payload, flits):
    lk = build_device(preset)
    assert lk.flits(payload) == flits
    assert lk.wire_B(payload) == flits * lk.flit_B


def test_68B_flit_carries_64B_of_slots_and_stream_packs_lines():
    lk = build_device("cxl_link/cxl2-x16")
    assert lk.slot_B * lk.slots_per_flit == 64 and lk.flit_B == 68
    # four 64 B lines back to back: 4 × 5 slots = 20 slots = 5 flits (not 4 × 2 lone flits)
    assert lk.stream_flits(4, 64) == 5
    assert lk.stream_ns(4, 64) == pytest.approx(5 * 68 / lk.raw_bw_GBps)
    # effective bandwidth = raw × 64/68 (× a link efficiency of 1.0: the framing is not taken twice)
    assert lk.effective_bw_GBps == pytest.approx(lk.raw_bw_GBps * 64 / 68)
    low = build_device("cxl_link/cxl2-x16", {"link_efficiency_fraction": 0.928})
    assert low.stream_ns(4, 64) == pytest.approx(5 * 68 / low.raw_bw_GBps / 0.928)


def test_256B_flit_payload_share_and_half_flit_mode():
    std, lopt = build_device("cxl_link/cxl3-x16"), build_device("cxl_link/cxl3-x16-lopt")
    assert 0.92 <= std.slot_fraction <= 0.94
    # a 64 B line fits the first 128 B half: the latency-optimised flit delivers it in half the time
    assert lopt.transfer_ns(64) == pytest.approx(std.transfer_ns(64) / 2)
    assert lopt.transfer_ns(4096) <= std.transfer_ns(4096)


@settings(max_examples=200, deadline=None)
@given(payload=st.integers(min_value=1, max_value=1 << 20), preset=st.sampled_from(LINKS))
def test_achieved_bandwidth_never_exceeds_raw(payload, preset):
    lk = build_device(preset)
    for stream in (True, False):
        assert lk.achieved_bw_GBps(payload, stream) <= lk.effective_bw_GBps * (1 + 1e-12) <= lk.raw_bw_GBps
    assert payload / lk.transfer_ns(payload) <= lk.raw_bw_GBps


def test_bound_factor_follows_from_the_flit_format(link):
    """max(1 + (one flit + header and partial slot) / latency, 1 / (efficiency × slot share))."""
    over = link.flit_ns * (1 + (link.header_slots + 1) / link.slots_per_flit)
    assert link.bound_factor("message") == pytest.approx(max(1 + over / 77, 1 / (link.efficiency * link.slot_fraction)))
    assert link.bound_ns("message", 4096) == pytest.approx(77 + 4096 / link.raw_bw_GBps)


def test_costs_count_wire_bits(link):
    c = link.message_cost(64)
    assert c.size_B == link.wire_B(64) and c.time_ns == link.message_ns(64)
    assert c.energy_J == pytest.approx(c.size_B * 8 * link.params["energy_pJ_per_bit"] * 1e-12)
    s = link.stream_cost(100, 64)
    assert s.size_B == link.stream_flits(100, 64) * link.flit_B
    assert s.time_ns == pytest.approx(link.latency_ns + link.stream_ns(100, 64))
    assert link.energy_J(1000) == pytest.approx(1000 * 8 * 5e-12)


def test_microbench_saturates_a_direction_with_a_long_stream(link):
    out = microbench(link, {})
    assert out["latency_ns"] == {"up": link.message_ns(64), "down": link.message_ns(64)}
    n = (1 << 20) // 4096
    assert out["bw_GBps"]["up"] == pytest.approx((1 << 20) / link.stream_ns(n, 4096))
    assert out["bw_GBps"]["up"] <= link.effective_bw_GBps


def test_preset_rejects_inconsistent_flit(user_catalog):
    (user_catalog / "cxl_link").mkdir()
    (user_catalog / "cxl_link" / "bad.yaml").write_text(
        "version: 1\nfamily: cxl_link\ninherits: cxl_link/cxl2-x16\nparams:\n  slots_per_flit_count: {value: 5, source: test}\n"
    )
    with pytest.raises(ConfigError, match="slots_per_flit_count"):
        build_device("cxl_link/bad")
