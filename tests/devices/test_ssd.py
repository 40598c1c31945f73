"""SSD presets: Table 2 ratios (ssd/paper), Intel 750 data sheet, page RMW, queue-depth-limited IOPS."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from cxlsim.devices import build_device
from cxlsim.devices.memory.media.media import AccessStream
from cxlsim.validate.media_bench import microbench


@cache
def bench(preset: str) -> dict:
    return microbench(build_device(preset), {})


@pytest.mark.slow
@pytest.mark.parametrize("key", ["read_latency_ns", "write_latency_ns"])
def test_paper_latency_165x(key):
    assert bench("ssd/paper")[key]["random"] / bench("dram/ddr4-2666")[key]["random"] == pytest.approx(165, rel=0.05)


@pytest.mark.parametrize("key", ["read_bw_GBps", "write_bw_GBps"])
def test_paper_bandwidth_002x_for_pages(key):
    assert bench("ssd/paper")[key]["4096"] / bench("dram/ddr4-2666")[key]["4096"] == pytest.approx(0.02, rel=0.05)


def test_intel_750_data_sheet():
    b = bench("ssd/intel-750")
    assert b["read_latency_ns"]["random"] == pytest.approx(20000, rel=0.02)
    assert b["read_bw_GBps"]["4096"] * 1e9 / 4096 == pytest.approx(460e3, rel=0.05)  # IOPS-limited
    assert b["write_bw_GBps"]["4096"] * 1e9 / 4096 == pytest.approx(290e3, rel=0.15)
    assert b["write_amplification"]["65536"] == pytest.approx(64)  # a 64 B write rewrites a page


@pytest.mark.slow
def test_sub_page_write_read_modify_writes():
    m = build_device("ssd/intel-750")
    r = m.serve(AccessStream.of(0.0, [0, 8192], [512, 4096], True), m.new_state(), 2)
    assert r.rmw_count == 1 and r.media_read_B == 4096 and r.media_write_B == 8192


@pytest.mark.parametrize("qd", [1, 4])
def test_queue_depth_limits_iops(qd):
    m = build_device("ssd/intel-750")
    n = 400
    addr = np.random.default_rng(0).choice(1 << 20, n, replace=False) * 4096
    r = m.serve(AccessStream.of(0.0, addr, 4096, False), m.new_state(), qd)
    iops = n / r.end_ns * 1e9
    assert iops == pytest.approx(qd / 20e-6, rel=0.15)
