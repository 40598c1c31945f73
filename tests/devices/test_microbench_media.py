"""The media microbenchmark's dimensions: threads, modules, pattern, store + flush, loaded latency,
persist latency; for every memory preset."""

from __future__ import annotations

import json
import math
from functools import cache

import pytest

from cxlsim.cli import main
from cxlsim.config.catalog import list_presets
from cxlsim.devices import build_device
from cxlsim.validate import media_bench
from cxlsim.validate.media_bench import THREAD_LINES, microbench, outstanding_for

MEDIA = [p for p in list_presets() if p.split("/")[0] in ("dram", "pmem", "ssd")]


@cache
def bench(preset: str, threads: int | None = None, modules: int = 1, pattern: str = "random") -> dict:
    return microbench(build_device(preset), {"threads": threads, "modules": modules, "pattern": pattern})


@pytest.mark.parametrize("preset", MEDIA)
def test_every_memory_preset_has_the_new_keys(preset):
    b = bench(preset, threads=2, modules=2)
    for key in ("read_bw_GBps", "write_bw_GBps", "store_flush_bw_GBps", "persist_latency_ns",
                "persist_flush_latency_ns"):
        assert all(v > 0 for v in b[key].values()), key
    rows = b["loaded_latency"]
    assert rows and all(set(r) == {"offered_GBps", "bw_GBps", "latency_ns"} for r in rows)
    # latency rises with load (bank and queue contention; not on ssd/paper's single unit, which
    # evenly spaced requests never find busy) and is never below the idle latency
    lat = [r["latency_ns"] for r in rows]
    assert lat[-1] >= lat[0] >= 0.99 * build_device(preset).params.read_latency_random_ns
    assert list(b["loaded_latency_ns"].values()) == lat and list(b["loaded_latency_ns"]) == [
        "10", "25", "50", "70", "80", "90", "95"]
    # where the controller's requests in flight (Little's law), not the banks, set the peak, evenly
    # spaced requests never wait (D/D/c): pmem/u200-emulated's 16 requests of 64 B, 3.4 GB/s
    little = (b.get("little_bound_GBps") or {}).get("read", {}).get("64")
    controller_bound = little is not None and little <= 1.05 * max(r["bw_GBps"] for r in rows) / 0.95  # the curve ends at 95 % of peak
    if build_device(preset).params.parallel_units_count > 1 and not controller_bound:
        assert lat[-1] > 1.05 * lat[0]
    assert all(r["bw_GBps"] == pytest.approx(r["offered_GBps"], rel=0.1) for r in rows[:-1])


def test_outstanding_per_thread_is_its_fill_buffers():
    m = build_device("dram/ddr4-2666")
    assert outstanding_for(3, 64, m, 1) == 3 * THREAD_LINES
    assert outstanding_for(3, 256, m, 1) == 3 * THREAD_LINES // 4
    assert outstanding_for(1, 512, m, 1) == 2  # 12 lines = 1.5 accesses: the second is in flight
    assert outstanding_for(3, 4096, m, 1) == 3


def test_threads_raise_bandwidth_until_the_media_binds():
    one, four = bench("dram/ddr4-2666", threads=1), bench("dram/ddr4-2666", threads=4, modules=4)
    assert four["read_bw_GBps"]["256"] == pytest.approx(4 * one["read_bw_GBps"]["256"], rel=0.15)
    # one DRAM thread: at most 12 lines / idle random latency (Little's law on the requester side);
    # less where random lines meet on a bank
    assert 0.6 < one["read_bw_GBps"]["64"] / (THREAD_LINES * 64 / 101) <= 1.0


def test_persist_latency_is_write_acks_in_rounds_of_the_fill_buffers():
    b = bench("pmem/optane-100")
    assert b["persist_latency_ns"]["64"] == pytest.approx(90, rel=0.02)
    assert b["persist_latency_ns"]["4096"] >= 64 / THREAD_LINES * 90 * 0.99


@pytest.mark.parametrize("preset", ["dram/ddr4-2666", "pmem/optane-100"])
def test_loaded_latency_never_falls_with_load(preset):
    """The loaded-latency curve's shape (no published curve to hold it to): the idle random latency
    at low load, then non-decreasing with the offered load (more load, longer bank and queue waits)."""
    lat = list(bench(preset)["loaded_latency_ns"].values())
    assert lat[0] == pytest.approx(build_device(preset).params.read_latency_random_ns, rel=0.02)
    assert all(b >= a * (1 - 1e-9) for a, b in zip(lat, lat[1:], strict=False))
    assert lat[-1] > 1.3 * lat[0]


def test_persist_with_flushes_costs_a_read_per_line_and_grows_with_size():
    """store + clwb + sfence on uncached lines: a line costs at least its read for ownership, and
    4 KiB at least the lines' reads at the module's read bandwidth."""
    m = build_device("pmem/optane-100")
    p = bench("pmem/optane-100")["persist_flush_latency_ns"]
    assert p["64"] >= m.params.read_latency_random_ns * 0.99
    assert p["64"] < p["256"] < p["1024"] < p["4096"]
    assert p["4096"] >= 4096 / m.params.read_bw_GBps


def test_store_flush_costs_a_read_and_a_write():
    b = bench("pmem/optane-100")
    r, w, sf = (b[k]["4096"] for k in ("read_bw_GBps", "write_bw_GBps", "store_flush_bw_GBps"))
    assert sf == pytest.approx(1 / (1 / r + 1 / w), rel=0.1)


def test_sequential_pattern_and_interleaving():
    seq = bench("pmem/optane-100", pattern="sequential")
    assert seq["read_bw_GBps"]["64"] > bench("pmem/optane-100")["read_bw_GBps"]["64"]
    # 4 KiB interleaving: one 4 KiB access lives on one module, so one thread of them gains little
    # from six modules, while many threads spread over them
    one = bench("pmem/optane-100", threads=1, modules=1)["read_bw_GBps"]["4096"]
    six = bench("pmem/optane-100", threads=1, modules=6)["read_bw_GBps"]["4096"]
    assert six == pytest.approx(one, rel=0.1)


def test_cli_options(capsys):
    assert main(["microbench", "dram/ddr4-2666", "--threads", "2", "--modules", "2", "--pattern", "sequential",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["threads"], out["modules"], out["pattern"]) == (2, 2, "sequential")
    assert main(["microbench", "gpu/rtx3090", "--threads", "2"]) == 2
    assert main(["microbench", "dram/ddr4-2666", "--threads", "0"]) == 2


# --- mechanisms -----------------------------------------------------------------
def test_controller_outstanding_bounds_the_stream_by_littles_law():
    """Reads are held to count × modules, writes to the write-pending queue × controllers (three
    modules behind one controller: six modules, two queues)."""
    m = build_device("pmem/optane-100", {"read_contention_ratio": 0.0, "write_contention_ratio": 0.0})
    c, cw = m.params.controller_outstanding_count, m.params.controller_write_outstanding_count
    fp, admitted = m.loaded(1000, 3, 0.0)
    assert admitted == 3 * c and list(fp) == list(m._fp)  # no contention ratio: unchanged occupancies
    assert m.loaded(1000, 3, 1.0)[1] == cw and m.loaded(1000, 6, 1.0)[1] == 2 * cw
    assert m.loaded(5, 1, 0.0)[1] == 5 and m.loaded(5, 1, 1.0)[1] == 5


def test_contention_grows_occupancy_with_the_requests_waiting_beyond_the_controller():
    m = build_device("pmem/optane-100")
    p = m.params
    c, cw, q = p.controller_outstanding_count, p.controller_write_outstanding_count, p.host_queue_entries
    fp, _ = m.loaded(c + 6, 1, 0.0)
    assert fp[0] == pytest.approx(m.occ_read_ns * (1 + p.read_contention_ratio * 6 / c))
    assert fp[1] == m.occ_write_ns
    fp, _ = m.loaded(cw + 6, 1, 1.0)
    assert fp[1] == pytest.approx(m.occ_write_ns * (1 + p.write_contention_ratio * 6 / cw))
    # at most host_queue_entries per module wait in the host controller
    assert m.loaded(10 * q, 1, 0.0)[0][0] == pytest.approx(m.occ_read_ns * (1 + p.read_contention_ratio * (q - c) / c))
    assert m.loaded(10 * q, 1, 1.0)[0][1] == pytest.approx(m.occ_write_ns * (1 + p.write_contention_ratio * (q - cw) / cw))
    # spread over six modules the same reads do not contend; the writes wait at two controllers
    assert m.loaded(6 * c, 6, 0.0)[0] is m._fp
    assert m.loaded(6 * cw, 6, 1.0)[0][1] == pytest.approx(m.occ_write_ns * (1 + p.write_contention_ratio * 2))


def test_optane_bandwidth_falls_with_threads_on_one_dimm_not_on_six():
    one_few, one_many = bench("pmem/optane-100", threads=4), bench("pmem/optane-100", threads=24)
    assert one_many["write_bw_GBps"]["256"] < 0.5 * one_few["write_bw_GBps"]["256"]
    assert one_many["read_bw_GBps"]["256"] < 0.75 * one_few["read_bw_GBps"]["256"]
    six = bench("pmem/optane-100", threads=24, modules=6)
    assert six["read_bw_GBps"]["256"] > 4 * one_many["read_bw_GBps"]["256"]


def test_contention_parameters_do_not_apply_without_a_controller_limit():
    m = build_device("dram/ddr4-2666")
    assert m.controller_outstanding == 0
    assert "read_contention_ratio" in m.params.skipped and "controller_outstanding_count" in m.params.reads


# --- the emulated-PMEM preset -----------------------------------------------------
def test_emulated_pmem_idle_latencies_are_table2s_ratios_of_dram():
    em, dr = bench("pmem/u200-emulated"), bench("dram/ddr4-2666")
    for pat in ("sequential", "random"):
        assert em["read_latency_ns"][pat] == pytest.approx(3 * dr["read_latency_ns"][pat], rel=0.02)
        assert em["write_latency_ns"][pat] == pytest.approx(7 * dr["write_latency_ns"][pat], rel=0.02)


@pytest.mark.parametrize("size", ["64", "128", "256"])
def test_emulated_pmem_bandwidth_is_the_littles_law_bound(size):
    """Writes: the controller holds 16 requests, each until its delayed acknowledgement: bandwidth is
    the bound. Reads: random lines also meet on the channel's banks, which adds bank queueing to
    each request's time in the controller: within 20 % below the bound (docs/devices-media.md)."""
    b = bench("pmem/u200-emulated")
    bound = b["little_bound_GBps"]
    assert b["write_bw_GBps"][size] == pytest.approx(bound["write"][size], rel=0.02)
    assert 0.8 * bound["read"][size] <= b["read_bw_GBps"][size] <= bound["read"][size] * 1.001


def test_emulated_pmem_bandwidth_follows_the_outstanding_count_not_a_ratio():
    m2 = microbench(build_device("pmem/u200-emulated", {"controller_outstanding_count": 8}), {})
    b = bench("pmem/u200-emulated")
    assert m2["write_bw_GBps"]["256"] == pytest.approx(b["write_bw_GBps"]["256"] / 2, rel=0.02)
    # large accesses reach the DDR4-2400 channel's rate instead
    assert b["read_bw_GBps"]["4096"] == pytest.approx(build_device("pmem/u200-emulated").params.read_bw_GBps, rel=0.02)


def test_a_thread_keeps_six_streaming_store_lines_and_a_fraction_of_an_access_is_interpolated():
    """Ntstores hold STREAM_STORE_LINES (6) lines per thread, loads 12: six lines over 256 B
    accesses are 1.5 accesses, the mean of the rates at 1 and 2 in flight (Little's law, linear in
    the count while the acknowledgements take their idle 90 ns); on six DIMMs one thread writes 6 ×
    64 B / 90 ns = 4.27 GB/s. A persist of n lines takes ceil(n / 6) rounds."""
    assert media_bench.thread_slots(1, 256, media_bench.STREAM_STORE_LINES) == 1.5
    assert media_bench.thread_slots(2, 64, media_bench.STREAM_STORE_LINES) == 12
    six = bench("pmem/optane-100", threads=1, modules=6)
    assert six["write_bw_GBps"]["256"] == pytest.approx(6 * 64 / 90, rel=0.02)
    assert six["read_bw_GBps"]["256"] > six["write_bw_GBps"]["256"] * 0.55  # loads: 12 lines at 305 ns
    m = build_device("pmem/optane-100")
    assert media_bench.persist_latency_ns(m, 4096) == pytest.approx(math.ceil(64 / 6) * 90)
