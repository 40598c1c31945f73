"""CXL-MEM computing logic and checkpointing logic: times >= bounds, scratchpad, DMA, flags."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.ndp import LogCounters


@pytest.fixture(scope="module")
def ndp():
    return build_device("ndp/alveo-u200")


@pytest.fixture(scope="module")
def ckpt():
    return build_device("ckpt_logic/alveo-u200")


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 10**7), dim=st.integers(1, 256), extra=st.integers(0, 10**6),
       lat=st.floats(50, 10_000), bw=st.floats(0.5, 200))
def test_compute_and_stream_at_least_bounds(ndp, n, dim, extra, lat, bw):
    assert ndp.pool_ns(n, dim) >= ndp.pool_bound_ns(n, dim)
    assert ndp.update_ns(n, dim, n + extra) >= ndp.update_bound_ns(n, dim, n + extra)
    assert ndp.correction_ns(n, dim) >= ndp.correction_bound_ns(n, dim)
    assert ndp.lookup_ns(n, dim, lat, bw) >= ndp.lookup_bound_ns(n, dim, lat, bw)
    if n:  # within the pipeline fill of the bound
        fill = 2 * ndp.p.pipeline_latency_cycles + 2
        assert ndp.update_ns(n, dim) <= ndp.update_bound_ns(n, dim) + fill * ndp.cycle_ns


def test_compute_formula(ndp):
    cyc = 1e3 / 300
    assert ndp.pool_ns(80, 32) == pytest.approx((80 * 32 / 64 + 11) * cyc)
    assert ndp.update_ns(10, 32) == pytest.approx((10 * 32 / 64 + 22) * cyc)
    assert ndp.update_ns(10, 32, n_grads=30) == pytest.approx(ndp.update_ns(10, 32) + (20 * 32 / 64 + 11) * cyc)
    assert ndp.pool_ns(0, 32) == 0.0
    # 128 outstanding lines over a 1 us medium: Little's law dominates at high bandwidth
    assert ndp.stream_ns(1280, 1000, 1e6) == pytest.approx(10 * 1000)


def test_scratchpad(ndp):
    cap_bags = int(ndp.p.scratchpad_KiB * 1024 // (32 * 4))
    assert ndp.scratchpad_fits(cap_bags, 32) and not ndp.scratchpad_fits(cap_bags + 1, 32)
    assert ndp.spill_bytes(cap_bags, 32) == 0 and ndp.spill_bytes(cap_bags + 1, 32) == 128


def test_energy_per_op(ndp):
    c = ndp.update_cost(100, 32, n_grads=150)
    assert c.energy_J == pytest.approx((150 * 32 * 5 + 100 * 32 * 20) * 1e-12)
    assert ndp.pool_cost(10, 32).energy_J > 10 * 32 * 5e-12


@settings(max_examples=100, deadline=None)
@given(n_bytes=st.integers(0, 10**9), segs=st.integers(1, 10**5), rtt=st.floats(100, 10_000))
def test_dma_issue_at_least_bound(ckpt, n_bytes, segs, rtt):
    assert ckpt.copy_issue_ns(n_bytes, segs) >= ckpt.copy_issue_bound_ns(n_bytes)
    assert ckpt.copy_concurrency_ns(n_bytes, rtt, segs) >= n_bytes / (ckpt.p.outstanding_count * ckpt.p.burst_B) * rtt


def test_dma_rows_cost_descriptors_and_flags(ckpt):
    # 1 MiB as 128 B rows: 2 beats + 4 descriptor cycles per row at 300 MHz
    assert ckpt.copy_issue_ns(1 << 20, (1 << 20) // 128) == pytest.approx(8192 * 6 * 1e3 / 300)
    assert ckpt.requests(1 << 20, 1) == 256 and ckpt.requests(1 << 20, 8192) == 8192
    assert ckpt.flag_write_bytes == 64
    assert ckpt.copy_cost(1000).energy_J == pytest.approx(1000 * 2e-12)
    c = LogCounters().log_rows(5).log_mlp_bytes(1024).set_flags(embedding=True)
    assert (c.rows_logged, c.mlp_bytes_logged, c.embedding_flag, c.mlp_flag) == (5, 1024, True, False)


@pytest.mark.parametrize("preset", ["ndp/alveo-u200", "ckpt_logic/alveo-u200", "gpu/rtx3090"])
def test_cli_show_and_microbench(preset, capsys):
    assert main(["devices", "show", preset, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert all(p["source"] for p in shown["params"])
    assert main(["microbench", preset, "--json"]) == 0
    json.loads(capsys.readouterr().out)
