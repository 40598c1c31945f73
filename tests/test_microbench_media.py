"""The media microbenchmark's dimensions (issue 19 item 1): threads, modules, pattern, store + flush,
loaded latency, persist latency; for every memory preset."""

from __future__ import annotations

import json
from functools import cache

import pytest

from cxlsim.cli import main
from cxlsim.config.catalog import list_presets
from cxlsim.devices import build_device
from cxlsim.devices.media_bench import THREAD_LINES, microbench, outstanding_for

MEDIA = [p for p in list_presets() if p.split("/")[0] in ("dram", "pmem", "ssd")]


@cache
def bench(preset: str, threads: int | None = None, modules: int = 1, pattern: str = "random") -> dict:
    return microbench(build_device(preset), {"threads": threads, "modules": modules, "pattern": pattern})


@pytest.mark.parametrize("preset", MEDIA)
def test_every_memory_preset_has_the_new_keys(preset):
    b = bench(preset, threads=2, modules=2)
    for key in ("read_bw_GBps", "write_bw_GBps", "store_flush_bw_GBps", "persist_latency_ns"):
        assert all(v > 0 for v in b[key].values()), key
    rows = b["loaded_latency"]
    assert rows and all(set(r) == {"offered_GBps", "bw_GBps", "latency_ns"} for r in rows)
    # latency rises with load (bank and queue contention) and is never below the idle latency
    lat = [r["latency_ns"] for r in rows]
    assert lat[-1] > lat[0] >= 0.99 * build_device(preset).params.read_latency_random_ns
    assert all(r["bw_GBps"] == pytest.approx(r["offered_GBps"], rel=0.1) for r in rows[:-1])


def test_outstanding_per_thread_is_its_fill_buffers():
    m = build_device("dram/ddr4-2666")
    assert outstanding_for(3, 64, m, 1) == 3 * THREAD_LINES
    assert outstanding_for(3, 256, m, 1) == 3 * THREAD_LINES // 4
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
