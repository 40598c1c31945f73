"""CXL-MEM computing logic and checkpointing logic: closed forms, scratchpad, DMA, flags, energy
(bounds vs factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.logic.ckpt_logic import LogCounters


@pytest.fixture(scope="module")
def ndp():
    return build_device("ndp/alveo-u200")


@pytest.fixture(scope="module")
def ckpt():
    return build_device("ckpt_logic/alveo-u200")


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 10**7), dim=st.integers(1, 256))
def test_update_within_two_rounded_cycles_of_its_bound(ndp, n, dim):
    """Same lanes for adds and multiplies, no duplicates: the bound misses only the rounding."""
    assert ndp.update_ns(n, dim) <= ndp.bound_ns("update", n, dim) + 2 * ndp.cycle_ns


def test_bound_closed_forms(ndp):
    cyc = 1e3 / 300
    assert ndp.bound_ns("pool", 80, 32) == pytest.approx((11 + 80 * 32 / 64) * cyc)
    assert ndp.bound_ns("update", 10, 32, 30) == pytest.approx((11 + 22 + 30 * 32 / 64) * cyc)
    assert ndp.bound_ns("stream", 1280, 1000, 1e6) == pytest.approx(10 * 1000)
    assert ndp.bound_ns("stream", 10, 1000, 1e6) == 1000  # one medium latency at least
    assert ndp.bound_factor("pool") == pytest.approx(1 + 1 / 11)
    assert ndp.bound_factor("update") == pytest.approx(2 + 2 / 11)


def test_compute_formula(ndp):
    cyc = 1e3 / 300
    assert ndp.pool_ns(80, 32) == pytest.approx((80 * 32 / 64 + 11) * cyc)
    assert ndp.update_ns(10, 32) == pytest.approx((10 * 32 / 64 + 22) * cyc)
    assert ndp.update_ns(10, 32, n_grads=30) == pytest.approx(ndp.update_ns(10, 32) + (20 * 32 / 64 + 11) * cyc)
    assert ndp.pool_ns(0, 32) == 0.0
    # 128 outstanding lines over a 1 us medium: Little's law dominates at high bandwidth
    assert ndp.stream_ns(1280, 1000, 1e6) == pytest.approx(10 * 1000)


def test_scratchpad(ndp):
    cap_bags = int(ndp.params.scratchpad_KiB * 1024 // (32 * 4))
    assert ndp.scratchpad_fits(cap_bags, 32) and not ndp.scratchpad_fits(cap_bags + 1, 32)
    assert ndp.spill_B(cap_bags, 32) == 0 and ndp.spill_B(cap_bags + 1, 32) == 128
    assert ndp.scratchpad_B(10, 32) == 1280


def test_energy_per_op(ndp):
    c = ndp.update_cost(100, 32, n_grads=150)
    assert c.energy_J == pytest.approx((150 * 32 * 5 + 100 * 32 * 20) * 1e-12)
    assert ndp.pool_cost(10, 32).energy_J == pytest.approx((10 * 32 * 5 + 2 * 10 * 32 * 4 * 5) * 1e-12)
    e = ndp.ops_energy_J(32, n_pooled=1000, n_rows_updated=300, n_grads=1000, n_corrected=50)
    hand = ((1000 + 1000 + 50) * 32 * 5 + 300 * 32 * 20 + 2 * 1000 * 32 * 4 * 5) * 1e-12
    assert e == pytest.approx(hand, rel=1e-12)
    ops = ndp.pool_cost(1000, 32).energy_J + ndp.update_cost(300, 32, 1000).energy_J + ndp.correction_cost(50, 32).energy_J
    assert e == pytest.approx(ops, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(size_B=st.integers(0, 10**9), segs=st.integers(1, 10**5), rd=st.floats(100, 10_000), wr=st.floats(100, 10_000))
def test_dma_concurrency_is_littles_law(ckpt, size_B, segs, rd, wr):
    """Reads and writes are separate channels: the slower one's Little's law bounds the copy."""
    p = ckpt.params
    t = ckpt.copy_concurrency_ns(size_B, rd, wr, segs)
    assert t >= size_B / (p.read_outstanding_count * p.burst_B) * rd
    assert t >= size_B / (p.write_outstanding_count * p.burst_B) * wr
    assert t == max(ckpt.copy_concurrency_ns(size_B, rd, 0.0, segs), ckpt.copy_concurrency_ns(size_B, 0.0, wr, segs))
    assert ckpt.outstanding == (p.read_outstanding_count, p.write_outstanding_count)


def test_dma_rows_cost_descriptors_and_flags(ckpt):
    # 1 MiB as 128 B rows, 2 beats each at 300 MHz: the Alveo preset prefetches descriptors, so each
    # row takes the longer of its 2 beats and its 4 setup cycles, plus one setup to fill the pipeline
    assert ckpt.params.descriptor_prefetch
    assert ckpt.copy_issue_ns(1 << 20, (1 << 20) // 128) == pytest.approx((8192 * 4 + 4) * 1e3 / 300)
    assert ckpt.requests(1 << 20, 1) == 256 and ckpt.requests(1 << 20, 8192) == 8192
    assert ckpt.bound_ns("copy_issue", 1 << 20, (1 << 20) // 128) == pytest.approx(8192 * 4 * 1e3 / 300)
    assert ckpt.bound_factor("copy_issue") == pytest.approx(2 + 1 / 4)
    serial = build_device("ckpt_logic/alveo-u200", {"descriptor_prefetch": False})  # setup, then the beats
    assert serial.copy_issue_ns(1 << 20, (1 << 20) // 128) == pytest.approx(8192 * 6 * 1e3 / 300)
    assert serial.bound_ns("copy_issue", 1 << 20, (1 << 20) // 128) == pytest.approx(8192 * (2 + 4) * 1e3 / 300)
    assert serial.bound_factor("copy_issue") == pytest.approx(1 + 1 / 4)
    assert ckpt.flag_write_B == 64
    assert ckpt.dma_energy_J(1000) == pytest.approx(1000 * 2e-12) == pytest.approx(ckpt.copy_cost(1000).energy_J)
    assert ckpt.copy_cost(1000).size_B == 1000
    c = LogCounters().log_rows(5).log_mlp_B(1024).set_flags(embedding=True)
    assert (c.rows_logged, c.mlp_logged_B, c.embedding_flag, c.mlp_flag) == (5, 1024, True, False)


@pytest.mark.parametrize("preset", ["ndp/alveo-u200", "ckpt_logic/alveo-u200", "gpu/rtx3090"])
def test_cli_show_and_microbench(preset, capsys):
    assert main(["devices", "show", preset, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(p["source"] for p in shown["params"])
    assert main(["microbench", preset, "--json"]) == 0
    json.loads(capsys.readouterr().out)
