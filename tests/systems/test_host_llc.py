"""The host's last-level cache (cxlsim.systems.host_llc): its placement of lines against a line-keyed
reference, LRU properties, the CPU preset's parameters, and what it does in a host-engine run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cxlsim
from cxlsim.config.params import ParamSet
from cxlsim.devices.compute.cpu import SCHEMA, CpuModel
from cxlsim.devices.registry import load_preset
from cxlsim.errors import ConfigError
from cxlsim.kernels.vector_cache import cache_access_ref, new_cache_ref
from cxlsim.systems.host_llc import HostLlc

SMALL = {"batch_size": 16}
OFF = [("devices.host_cpu.params.llc_capacity_B", 0)]


def _cpu(capacity_B: int, ways: int, line_B: int = 64, bw_GBps: float = 100.0) -> CpuModel:
    p = ParamSet({"cache_line_B": line_B, "llc_capacity_B": capacity_B, "llc_ways_count": ways,
                  "cores_count": 1, "line_fill_buffers_count": 2, "llc_hit_latency_ns": 10.0,
                  "llc_hit_bw_GBps": bw_GBps}, {}, "cpu")
    return CpuModel(p)


def _llc(capacity_lines: int, ways: int, row_B: int = 128, base_B: int = 0) -> HostLlc:
    return HostLlc(_cpu(capacity_lines * 64, ways), base_B, row_B, base_B + 10**6 * row_B)


_calls = st.lists(st.tuples(st.lists(st.integers(0, 60), max_size=50), st.booleans()), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None)
@given(sets=st.integers(1, 6), ways=st.integers(1, 6), lines_per_row=st.sampled_from([1, 2, 3]), calls=_calls)
def test_rows_of_whole_lines_equal_a_line_keyed_cache_with_sibling_sets(sets, ways, lines_per_row, calls):
    """The per-row cache is the line-keyed one whose line j of a row goes to sibling set j of the
    row's set: each sibling (a line-keyed reference of the same sets and ways over the rows' j-th
    lines) hits and evicts exactly when the row does."""
    row_B = 64 * lines_per_row
    llc = _llc(sets * ways * lines_per_row, ways, row_B, base_B=4096)
    assert llc.whole_lines
    siblings = [new_cache_ref(sets * ways, ways) for _ in range(lines_per_row)]
    for rows, write in calls:
        r = np.asarray(rows, np.int64)
        acc = llc.access(4096 + r * row_B, write)
        dense = llc.state[0].dense()
        for ref in siblings:
            hit, ev = cache_access_ref(r, write, *ref)  # the j-th lines, keyed by their row, in sibling sets
            np.testing.assert_array_equal(acc.row_hit, hit)
            np.testing.assert_array_equal(acc.wb_addr_B, 4096 + ev * row_B)
            np.testing.assert_array_equal(dense, ref[0])
        assert acc.lines == r.size * lines_per_row and acc.hit_lines == acc.served_lines
        assert acc.hit_lines == lines_per_row * int(np.count_nonzero(acc.row_hit))
        assert (acc.wb_size_B == row_B).all()


@settings(max_examples=30, deadline=None)
@given(cap=st.integers(1, 24), ways=st.integers(1, 8), row_B=st.sampled_from([24, 40, 96]), calls=_calls)
def test_rows_sharing_lines_are_kept_per_line(cap, ways, row_B, calls):
    """Rows that share or straddle lines: every line of every row, in order, through the line-keyed
    reference; a row hits when all its lines do; write-backs are the evicted lines, one request per row."""
    ways = min(ways, cap)
    llc = _llc(cap - cap % ways, ways, row_B)
    assert not llc.whole_lines
    ref = new_cache_ref(cap - cap % ways, ways)
    for rows, write in calls:
        addr = np.asarray(rows, np.int64) * row_B
        acc = llc.access(addr, write)
        hits, evicted, per_row = [], [], []
        for a in addr.tolist():
            lines = np.arange(a // 64, (a + row_B - 1) // 64 + 1)
            h, e = cache_access_ref(lines, write, *ref)
            hits.append(h)
            evicted += e.tolist()
            per_row.append(bool(h.all()))
        np.testing.assert_array_equal(acc.row_hit, per_row)
        assert acc.hit_lines == sum(int(h.sum()) for h in hits)
        assert acc.wb_size_B.sum() == 64 * len(evicted)
        assert sorted(set((np.array(evicted, np.int64) * 64 // row_B).tolist())) == sorted(
            set((acc.wb_addr_B // row_B).tolist()))


@settings(max_examples=60, deadline=None)
@given(cap_rows=st.integers(1, 40), ways=st.integers(1, 8), calls=_calls)
def test_hits_never_exceed_lookups_and_dirty_lines_are_conserved(cap_rows, ways, calls):
    """Hits <= lines touched; every row written is, at the end, either written back or dirty in the cache."""
    ways = min(ways, cap_rows)
    llc = _llc(2 * (cap_rows - cap_rows % ways), ways)
    written_back = 0
    dirtied: set[int] = set()
    for rows, write in calls:
        acc = llc.access(np.asarray(rows, np.int64) * 128, write)
        assert 0 <= acc.hit_lines <= acc.lines and acc.served_lines <= acc.hit_lines
        written_back += acc.wb_addr_B.size
        if write:
            dirtied |= set(rows)
    dense = llc.state[0].dense()
    resident_dirty = int(np.count_nonzero(dense & 1))
    assert resident_dirty <= len(dirtied) <= written_back + resident_dirty


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 50), extra=st.integers(1, 30), seed=st.integers(0, 2**31 - 1))
def test_lru_working_sets(n, extra, seed):
    """Fully associative: a working set no larger than the cache hits whole after one pass (in any
    order); a cyclic scan over more distinct rows than it holds never hits (LRU evicts each row just
    before its next use)."""
    rng = np.random.default_rng(seed)
    fits = _llc(2 * n, 2 * n)  # n rows of two lines, one set of n ways
    rows = np.arange(n) * 7 + 3
    fits.access(rows * 128, False)
    again = fits.access(rng.permutation(rows) * 128, True)
    assert again.row_hit.all() and again.hit_lines == again.lines
    scan = _llc(2 * n, 2 * n)
    big = np.arange(n + extra)
    for _ in range(3):
        acc = scan.access(big * 128, True)
        assert not acc.row_hit.any()


def test_the_i5_preset_and_the_hit_cost():
    i5 = CpuModel(load_preset("cpu/i5-9600k").params)
    assert i5.params.llc_capacity_B == 9 * 2**20 and i5.params.llc_ways_count == 12
    assert i5.llc_lines == 147456 and i5.llc_lines // 12 == 12288  # 6 slices x 2048 sets
    assert CpuModel(load_preset("cpu/riscv-u200").params).llc_lines == 0
    cpu = _cpu(64 * 64, 4)  # 2 lines in flight, 10 ns, 100 GB/s
    assert cpu.llc_hit_ns(0) == 0.0
    assert cpu.llc_hit_ns(3) == pytest.approx(20.0)  # Little's law: 2 rounds of 10 ns
    assert cpu.llc_hit_ns(1000) == pytest.approx(500 * 10.0)
    assert _cpu(64 * 64, 4, bw_GBps=1.0).llc_hit_ns(1000) == pytest.approx(1000 * 64 / 1.0)  # bandwidth-bound


def test_a_capacity_that_is_not_whole_sets_is_refused():
    with pytest.raises(ConfigError, match="llc_capacity_B"):
        cxlsim.load_config("pmem", [("devices.host_cpu.params.llc_capacity_B", 1000)])
    assert any(p.name == "llc_capacity_B" and p.default == 0 for p in SCHEMA.params)


def _lookups(r) -> list[float]:
    return [rec.end_ns - rec.start_ns for (name, n), rec in sorted(r.executor.records.items(), key=lambda kv: kv[0][1])
            if name == "lookup" and n in r.measured]


def test_pmem_lookup_is_no_slower_with_the_llc_and_the_checkpoint_rereads_hit(monkeypatch):
    """pmem's lookups with the LLC take no longer than without; the host checkpoint agent's reads of
    the rows the update just wrote (a batch small enough for the cache) all hit, and the update's
    writes stay in the cache (no write-back while everything fits)."""
    seen = []
    orig = HostLlc.access

    def spy(self, addr_B, write, rows=None):
        acc = orig(self, addr_B, write, rows)
        seen.append((np.array(addr_B), write, acc))
        return acc

    monkeypatch.setattr(HostLlc, "access", spy)
    on = cxlsim.simulate("pmem", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, trace=False)
    monkeypatch.setattr(HostLlc, "access", orig)
    off = cxlsim.simulate("pmem", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, trace=False, sets=OFF)
    assert all(a <= b for a, b in zip(_lookups(on), _lookups(off), strict=True))
    rereads = [(acc, seen[i - 1]) for i, (addr, write, acc) in enumerate(seen)
               if not write and i and seen[i - 1][1] and np.array_equal(seen[i - 1][0], addr)]
    assert len(rereads) == 3  # one per batch (warm-up included), right after its update
    for acc, _ in rereads:
        assert acc.row_hit.all() and acc.hit_lines == acc.lines > 0
    assert all(acc.wb_addr_B.size == 0 for _, _, acc in seen)
    llc = on.to_dict()["host_llc"]
    assert 0 < llc["lookup_hit_fraction"] <= llc["hit_fraction"] <= 1 and llc["writeback_MB_per_batch"] == 0
    assert off.to_dict()["host_llc"] is None


def test_systems_without_a_host_llc_report_none():
    r = cxlsim.simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False)
    assert r.machine.llc is None and r.to_dict()["host_llc"] is None


def test_the_text_output_names_the_hit_fraction():
    from cxlsim.cli.run import render

    r = cxlsim.simulate("dram", workload="rm1", batches=1, warmup=1, workload_sets=SMALL, trace=False)
    d = r.to_dict()
    assert d["host_llc"]["hit_fraction"] is not None
    assert "host LLC" in render(d) and "host LLC" not in render(dict(d, host_llc=None))


def test_an_llc_too_small_for_the_working_set_writes_back_what_the_update_dirtied():
    """A 64-line LLC under RM1 (batch 16): the update's dirty rows leave it as write-backs, of whole
    rows, to the table memory; its media then sees them as writes."""
    sets = [("devices.host_cpu.params.llc_capacity_B", 64 * 64), ("devices.host_cpu.params.llc_ways_count", 4)]
    r = cxlsim.simulate("dram", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, trace=False, sets=sets)
    llc = r.to_dict()["host_llc"]
    assert llc["writeback_MB_per_batch"] > 0
    assert sum(a.media["table_memory"].media_write_B for a in r.activity) > 0


def test_the_vector_cache_sits_below_the_llc():
    """ssd: the rows the LLC misses, and only they, are looked up in the host-DRAM vector cache."""
    r = cxlsim.simulate("ssd", workload="rm1", batches=1, warmup=1, workload_sets=SMALL, trace=False)
    led = r.machine.ledgers[1]
    assert 0 < led.llc_lookup_hits < led.llc_lookup_lines
    assert led.cache_lookups == (led.llc_lookup_lines - led.llc_lookup_hits) // 2  # 128 B rows: 2 lines each


def test_the_llc_writes_back_into_the_vector_cache():
    """ssd: the update's writes stay in the LLC (no host-DRAM write while everything fits); a tiny LLC
    evicts them, dirty, into the vector cache: host-DRAM writes."""
    tiny = [("devices.host_cpu.params.llc_capacity_B", 64 * 64), ("devices.host_cpu.params.llc_ways_count", 4)]
    fits = cxlsim.simulate("ssd", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, trace=False)
    small = cxlsim.simulate("ssd", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, trace=False, sets=tiny)
    assert sum(a.media["host_dram"].media_write_B for a in fits.activity) == 0
    assert sum(a.media["host_dram"].media_write_B for a in small.activity) > 0
