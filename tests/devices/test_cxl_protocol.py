"""CXL.mem, CXL.cache + DCOH (MESI state, flush) and CXL.io timing over fabric paths (bounds vs
factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest

from cxlsim.cli import main
from cxlsim.devices import build_device as _build
from cxlsim.devices.fabric.cxl_bulk import one_way_ns
from cxlsim.devices.fabric.cxl_dcoh import EXCLUSIVE, INVALID, MODIFIED, SHARED, DcohState
from cxlsim.devices.fabric.cxl_path import FabricPath

PRESETS = ("cxl_protocol/asic", "cxl_protocol/fpga", "cxl_protocol/agilex7")


@cache
def _cached(preset: str):
    return _build(preset)


def build_device(preset: str, overrides=None):
    return _cached(preset) if overrides is None else _build(preset, overrides)


def path(hops: int = 1, link: str = "cxl_link/cxl3-x16", switch: str = "cxl_switch/cxl3-x16") -> FabricPath:
    """``hops`` switches between ``hops + 1`` links (TrainingCXL: one switch between devices)."""
    return FabricPath([build_device(link)] * (hops + 1), build_device(switch))


@pytest.fixture(scope="module", params=PRESETS)
def proto(request):
    return build_device(request.param)


def test_protocol_model_has_no_fabric(proto):
    assert not hasattr(proto, "link") and not hasattr(proto, "switch")
    assert "link_preset_name" not in proto.params and "switch_preset_name" not in proto.params


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
    t = s.flush()
    assert t.dirty == 1024
    p = path()
    cost = proto.flush_lines_cost(t, p)
    assert cost.time_ns == pytest.approx(proto.flush_ns(1024, p) + 3072 * proto.params["dcoh_occupancy_ns"])
    assert cost.size_B == proto.flush_cost(1024, p).size_B > 1024 * 64
    t2 = s.flush()
    clean = proto.flush_lines_cost(t2, p)
    assert t2.dirty == 0 and clean.size_B == 0
    assert clean.time_ns == pytest.approx(4096 * proto.params["dcoh_occupancy_ns"] + proto.params["dcoh_lookup_ns"])


# -- bulk flush ---------------------------------------------------------------------------------
def test_bulk_flush_pipelines(proto):
    p = path()
    one = proto.flush_ns(1, p)
    n = 4096
    assert proto.flush_ns(n, p) < 0.05 * n * one
    assert proto.flush_ns(n, p) == pytest.approx(one + (n - 1) * proto.flush_interval_ns(p))
    assert proto.flush_interval_ns(p) >= max(proto.params["dcoh_occupancy_ns"], proto.line_transfer_ns(p))
    assert proto.flush_ns(0, p) == 0.0
    first = (proto.params["dcoh_lookup_ns"] + proto.params["dcoh_state_change_ns"]
             + 2 * proto.params["device_protocol_ns"] + p.message_ns(64))
    assert one == first


def test_flush_energy_is_the_paths(proto):
    p = path()
    c = proto.flush_cost(1000, p)
    link = p.links[0]
    assert c.size_B == link.stream_flits(1000, 64) * link.flit_B
    assert c.energy_J == pytest.approx(c.size_B * 8 * (2 * 5 + 2) * 1e-12, rel=1e-12)  # two links, one switch


# -- CXL.mem ------------------------------------------------------------------------------------
def test_mem_line_closed_form(proto):
    p = path()
    assert proto.read_line_ns(100.0, p) == pytest.approx(proto.proto_ns + p.message_ns(0) + 100 + p.message_ns(64))
    assert proto.write_line_ns(100.0, p) == pytest.approx(proto.proto_ns + p.message_ns(64) + 100 + p.message_ns(0))
    assert proto.read_ns(4096, 100.0, p) == proto.read_stream_ns(64, 100.0, p)


def test_mem_stream_bandwidth_below_link_and_media_limited(proto):
    n = 1 << 16
    p = path()
    bw = n * 64 / proto.read_stream_ns(n, 100.0, p)
    assert bw <= p.links[0].effective_bw_GBps
    slow = proto.read_stream_ns(n, 100.0, p, media_interval_ns=10.0)  # media at 6.4 GB/s
    assert n * 64 / slow == pytest.approx(6.4, rel=0.01)


def test_mem_latency_grows_by_switch_round_trip(proto):
    """CXL-DMSim: a switch adds ≈200 ns to a load's round trip (its core and the link it inserts)."""
    d = proto.read_line_ns(100.0, path(2)) - proto.read_line_ns(100.0, path(1))
    assert d == pytest.approx(2 * (77 + 23)) == pytest.approx(200.0)


def test_mem_direct_attach_adder_vs_published():
    """Validation (docs/devices-fabric.md): direct-attach adder over the media time.

    Pond reports +70-90 ns over local DRAM and CXL-DMSim measures 284 ns on an ASIC device (≈154 ns
    over its local DDR5); the cxlsim2 port latency (62 ns per link traversal) makes ours larger:
    we assert the documented band, not the published value."""
    adder = build_device("cxl_protocol/asic").read_line_ns(0.0, path(0))
    assert 150 <= adder <= 200


def test_cost_reports_bytes_and_energy(proto):
    p = path()
    c = proto.read_cost(4096, 100.0, p)
    assert c.time_ns == pytest.approx(proto.read_ns(4096, 100.0, p))
    link = p.links[0]
    assert c.size_B == (link.stream_flits(64, 0) + link.stream_flits(64, 64)) * link.flit_B > 4096
    assert c.energy_J == pytest.approx(p.energy_J([c.size_B, c.size_B]))


def test_fabric_parameters_reach_every_op(proto):
    """The path is what the protocol times: a slower switch or link port changes each operation."""
    base = path()
    slow_switch = FabricPath(base.links, build_device("cxl_switch/cxl3-x16", {"hop_latency_ns": 9999.0}))
    slow_link = FabricPath([build_device("cxl_link/cxl3-x16", {"port_latency_ns": 500.0})] * 2, base.switch)
    for p in (slow_switch, slow_link):
        assert proto.read_ns(4096, 0.0, p) > proto.read_ns(4096, 0.0, base)
        assert proto.flush_ns(100, p) > proto.flush_ns(100, base)
        assert proto.cache_fill_ns(100, 0.0, p) > proto.cache_fill_ns(100, 0.0, base)
        assert proto.configure_batch_ns(4, 4096, p) > proto.configure_batch_ns(4, 4096, base)
        assert proto.snoop_ns(True, p) > proto.snoop_ns(True, base)


# -- CXL.io -------------------------------------------------------------------------------------
def test_mmio_is_microsecond_scale(proto):
    p = path()
    assert 0.2e3 <= proto.mmio_write_ns(p) <= 2e3
    assert 0.5e3 <= proto.mmio_read_ns(p) <= 3e3
    assert proto.mmio_read_ns(p) > proto.mmio_write_ns(p)


def test_configure_batch_dma_beats_mmio_for_indices():
    dma = build_device("cxl_protocol/asic")
    mmio = build_device("cxl_protocol/asic", {"index_transfer_policy": "mmio"})
    idx = 2048 * 80 * 20 * 4  # RM1-like batch: 2048 samples × 20 tables × 80 lookups × 4 B
    p = path()
    assert dma.configure_batch_ns(8, idx, p) < 0.01 * mmio.configure_batch_ns(8, idx, p)
    assert dma.configure_batch_ns(8, 0, p) == pytest.approx(11 * dma.params["mmio_write_ns"] + dma.proto_ns + p.message_ns(8))
    chunks = -(-idx // 256)
    first = dma.params["dma_setup_ns"] + one_way_ns(p, 0) + dma.params["host_memory_ns"] + one_way_ns(p, 256)
    assert dma.configure_batch_ns(8, idx, p) == pytest.approx(
        dma.configure_batch_ns(8, 0, p) + first + (chunks - 1) * p.per_message_ns(256))


def test_cli_microbench_composes_paths_from_options(capsys):
    assert main(["microbench", "cxl_protocol/fpga", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["link"], out["switch"]) == ("cxl_link/cxl3-x16", "cxl_switch/cxl3-x16")
    fpga = build_device("cxl_protocol/fpga")
    assert out["latency_ns"]["read"] == fpga.read_line_ns(0.0, path(1))
    assert out["read_line_ns_by_hops"]["3"] == fpga.read_line_ns(0.0, path(3))
    assert "flush_ns_simulated" not in out
    assert main(["microbench", "cxl_protocol/fpga", "--json", "--link", "cxl_link/cxl2-x16",
                 "--switch", "cxl_switch/cxl2-x16"]) == 0
    out2 = json.loads(capsys.readouterr().out)
    assert out2["latency_ns"]["read"] == fpga.read_line_ns(0.0, path(1, "cxl_link/cxl2-x16", "cxl_switch/cxl2-x16"))
    assert main(["microbench", "cxl_protocol/fpga", "--link", "pmem/paper"]) == 2
    assert main(["microbench", "cxl_protocol/fpga", "--medium", "dram/ddr4-2666"]) == 2
