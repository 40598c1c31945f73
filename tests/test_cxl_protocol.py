"""CXL.mem, CXL.cache + DCOH (MESI state, flush) and CXL.io timing."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device as _build
from cxlsim.devices.cxl_dcoh import EXCLUSIVE, INVALID, MODIFIED, SHARED, DcohState
from cxlsim.devices.cxl_link import LinkComponent
from cxlsim.devices.cxl_protocol import BOUND_FACTOR, DcohComponent
from cxlsim.engine.component import Simulation

PRESETS = ("cxl_protocol/asic", "cxl_protocol/fpga")


@cache
def _cached(preset: str):
    return _build(preset)


def build_device(preset: str, overrides=None):
    return _cached(preset) if overrides is None else _build(preset, overrides)


@pytest.fixture(scope="module", params=PRESETS)
def proto(request):
    return build_device(request.param)


# -- DCOH state ---------------------------------------------------------------------------------
def test_read_shared_then_write_exclusive():
    s = DcohState(8)
    t = s.read_shared([0, 1, 1, 2])  # duplicates count once
    assert (t.lines, t.misses, t.changed) == (3, 3, 3)
    assert list(s.state[:4]) == [SHARED, SHARED, SHARED, INVALID]
    assert s.read_shared([0]).misses == 0  # hit
    t = s.write([1, 3])  # S → M is an upgrade; I → M a miss (ownership request)
    assert (t.misses, t.upgrades, t.changed) == (1, 1, 2)
    assert s.state[1] == MODIFIED and s.state[3] == MODIFIED
    assert s.counts() == {"I": 4, "S": 2, "E": 0, "M": 2}


def test_snoops_invalidate_and_downgrade():
    s = DcohState(6)
    s.read_shared([0, 1])
    s.write([2, 3])
    t = s.snoop_invalidate([0, 2, 5])  # S → I, M → I (writeback), I stays
    assert (t.changed, t.dirty) == (2, 1)
    assert list(s.state[[0, 2, 5]]) == [INVALID] * 3
    t = s.snoop_shared([1, 3])  # M → S with writeback; S stays
    assert (t.changed, t.dirty) == (1, 1)
    assert list(s.state[[1, 3]]) == [SHARED, SHARED]


def test_flush_writes_back_dirty_lines_only():
    s = DcohState(100)
    s.read_shared(np.arange(0, 50))
    s.write(np.arange(40, 60))  # 40..59 dirty (10 upgraded from S, 10 from I)
    t = s.flush()
    assert t.dirty == 20 and t.lines == 100
    assert np.all(s.state[40:60] == EXCLUSIVE) and np.all(s.state[:40] == SHARED)
    assert s.flush().dirty == 0  # nothing dirty any more
    s.write([5])
    assert s.flush([5], keep=False).dirty == 1 and s.state[5] == INVALID


def test_flush_cost_charges_dirty_lines(proto):
    s = DcohState(4096)
    s.write(np.arange(0, 4096, 4))  # 1024 dirty
    cost, t = proto.flush(s)
    assert t.dirty == 1024
    assert cost.time_ns == pytest.approx(proto.flush_ns(1024) + 3072 * proto.params["dcoh_occupancy_ns"])
    assert cost.bytes == proto.flush_cost(1024).bytes > 1024 * 64
    clean_cost, t2 = proto.flush(s)
    assert t2.dirty == 0 and clean_cost.bytes == 0


# -- bulk flush ---------------------------------------------------------------------------------
def test_bulk_flush_pipelines(proto):
    one = proto.flush_ns(1)
    n = 4096
    assert proto.flush_ns(n) < 0.05 * n * one
    assert proto.flush_ns(n) == pytest.approx(one + (n - 1) * proto.flush_interval_ns())
    assert proto.flush_interval_ns() >= max(proto.params["dcoh_occupancy_ns"], proto.line_transfer_ns())
    assert proto.flush_ns(0) == 0.0


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 1 << 18), hops=st.integers(0, 3), preset=st.sampled_from(PRESETS))
def test_flush_between_bound_and_factor(n, hops, preset):
    pr = build_device(preset)
    b = pr.flush_bound_ns(n, hops)
    f = pr.flush_ns(n, hops)
    assert b <= f <= BOUND_FACTOR * b


def test_simpy_flush_equals_pure_and_contends_on_link(proto):
    def run(flushes):
        sim = Simulation(seed=0, trace=False)
        lc = LinkComponent(sim, "l", proto.link)
        dcs = [DcohComponent(sim, f"d{i}", proto, lc) for i in range(len(flushes))]
        ends = []

        def go(dc, n):
            ends.append((yield from dc.flush(n)))

        for dc, n in zip(dcs, flushes, strict=True):
            sim.env.process(go(dc, n))
        sim.run()
        return ends

    assert run([2048]) == [pytest.approx(proto.flush_ns(2048))]
    both = run([2048, 2048])  # two DCOHs flushing over one link direction queue on the link
    wire, occ = proto.link.stream_ns(2048, 64), 2048 * proto.params["dcoh_occupancy_ns"]
    tail = proto.flush_ns(2048) - max(wire, occ)
    assert max(both) == pytest.approx(max(2 * wire, occ) + tail)
    assert max(both) > proto.flush_ns(2048) or 2 * wire <= occ


# -- CXL.mem ------------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 1 << 20),
    media=st.floats(0, 1000),
    interval=st.sampled_from([0.0, 1.0, 10.0, 100.0]),
    hops=st.integers(0, 3),
    preset=st.sampled_from(PRESETS),
)
def test_mem_and_cache_fill_between_bound_and_factor(size, media, interval, hops, preset):
    pr = build_device(preset)
    n = max(1, -(-size // 64))
    for t, b in ((pr.read_ns(size, media, hops, interval), pr.read_bound_ns(size, media, hops, interval)),
                 (pr.write_ns(size, media, hops, interval), pr.write_bound_ns(size, media, hops, interval)),
                 (pr.cache_fill_ns(n, media, hops, interval), pr.cache_fill_bound_ns(n, media, hops, interval))):
        assert b <= t <= BOUND_FACTOR * b


def test_mem_stream_bandwidth_below_link_and_media_limited(proto):
    n = 1 << 16
    bw = n * 64 / proto.read_stream_ns(n, 100.0)
    assert bw <= proto.link.effective_bw_GBps
    slow = proto.read_stream_ns(n, 100.0, media_interval_ns=10.0)  # media at 6.4 GB/s
    assert n * 64 / slow == pytest.approx(6.4, rel=0.01)


def test_mem_latency_grows_by_switch_round_trip(proto):
    """CXL-DMSim: a switch adds ≈200 ns to a load's round trip."""
    d = proto.read_line_ns(100.0, 2) - proto.read_line_ns(100.0, 1)
    assert d == pytest.approx(2 * proto.switch.hop_latency_ns) == pytest.approx(200.0)


def test_mem_direct_attach_adder_vs_published():
    """Validation (docs/devices-fabric.md): direct-attach adder over the media time.

    Pond reports +70-90 ns over local DRAM and CXL-DMSim measures 284 ns on an ASIC device (≈154 ns
    over its local DDR5); the cxlsim2 port latency (62 ns per link traversal) makes ours larger:
    we assert the documented band, not the published value."""
    adder = build_device("cxl_protocol/asic").read_line_ns(0.0, 0)
    assert 150 <= adder <= 200


def test_cost_reports_bytes_and_energy(proto):
    c = proto.read_cost(4096, 100.0)
    assert c.time_ns == pytest.approx(proto.read_ns(4096, 100.0))
    assert c.bytes > 4096 and c.energy_J > 0


# -- CXL.io -------------------------------------------------------------------------------------
def test_mmio_is_microsecond_scale(proto):
    assert 0.2e3 <= proto.mmio_write_ns() <= 2e3
    assert 0.5e3 <= proto.mmio_read_ns() <= 3e3
    assert proto.mmio_read_ns() > proto.mmio_write_ns()


def test_configure_batch_dma_beats_mmio_for_indices():
    dma = build_device("cxl_protocol/asic")
    mmio = build_device("cxl_protocol/asic", {"index_transfer_policy": "mmio"})
    idx = 2048 * 80 * 20 * 4  # RM1-like batch: 2048 samples × 20 tables × 80 lookups × 4 B
    assert dma.configure_batch_ns(8, idx) < 0.01 * mmio.configure_batch_ns(8, idx)
    assert dma.configure_batch_bound_ns(8, idx) <= dma.configure_batch_ns(8, idx)
    assert dma.configure_batch_ns(8, 0) == pytest.approx(
        11 * dma.params["mmio_write_ns"] + dma.proto_ns + dma.path_ns(8))
