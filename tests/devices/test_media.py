"""The shared media mechanism: kernel == reference (one closed loop or split read/write pools),
monotonicity, determinism, the idle-run twins, the occupancy bound of any stream, energy from
bytes (bounds vs factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.memory.media import media
from cxlsim.devices.memory.media.media import AccessStream

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
VARIANTS = {
    "dram": ("dram/ddr4-2666", {}),
    "dram-fifo": ("dram/ddr4-2666", {"read_priority": False, "write_queue_entries": 2}),
    "optane-small-buffer": ("pmem/optane-100", {"wcb_entries": 3, "wear_level_interval_count": 5}),
    "optane-small-buffer-fifo": ("pmem/optane-100", {"wcb_entries": 3, "wear_level_interval_count": 5,
                                                     "read_priority": False}),
    "optane": ("pmem/optane-100", {}),
    "optane-short-queue": ("pmem/optane-100", {"read_priority": True, "write_queue_entries": 2, "wcb_entries": 2}),
    "paper-forwarding": ("pmem/paper", {"write_forwarding": True, "write_queue_entries": 2}),
    "paper-write-through": ("pmem/paper", {"wcb_entries": 0, "read_priority": True, "write_queue_entries": 3,
                                           "wear_level_interval_count": 4}),
    "ssd": ("ssd/intel-750", {"write_queue_entries": 3}),
}
MODELS = {k: build_device(p, o) for k, (p, o) in VARIANTS.items()}


@st.composite
def streams(draw, max_n=40, writes=True):
    n = draw(st.integers(1, max_n))
    lines = draw(st.integers(1, 64))
    addr = [draw(st.integers(0, lines * 512)) for _ in range(n)]
    size = [draw(st.sampled_from([1, 8, 64, 100, 256, 300, 512, 4096])) for _ in range(n)]
    gaps = [draw(st.sampled_from([0.0, 0.0, 50.0, 400.0, 30000.0])) for _ in range(n)]
    wr = [draw(st.booleans()) if writes else False for _ in range(n)]
    return AccessStream.of(np.cumsum(gaps), addr, size, wr)


def _same(a, b, arrays=True):
    if arrays:
        for f in ("start_ns", "complete_ns", "ack_ns"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    for f in ("end_ns", "done_ns", "media_read_B", "media_write_B", "rmw_count", "raw_stall_count", "raw_stall_ns",
              "buffer_hits_count", "requested_B", "energy_J"):
        assert getattr(a, f) == getattr(b, f), f


@pytest.mark.slow
@FAST
@given(name=st.sampled_from(sorted(MODELS)), s1=streams(), s2=streams(), modules=st.integers(1, 3),
       outstanding=st.integers(1, 6))
def test_kernel_equals_reference_across_calls(monkeypatch, name, s1, s2, modules, outstanding):
    monkeypatch.setattr(media, "INITIAL_TABLE_SLOTS", 8)  # force pending-table rebuilds
    m = MODELS[name]
    s2 = AccessStream.of(s2.issue_ns + s1.issue_ns[-1], s2.addr_B, s2.size_B, s2.is_write)
    fast, ref = m.new_state(modules), m.new_state(modules)
    for s in (s1, s2):
        _same(m.serve(s, fast, outstanding, modules), m.serve(s, ref, outstanding, modules, reference=True))
    at = max(fast.horizon_ns, 0.0) + 1.0
    assert m.drain(fast, at) == m.drain(ref, at)


@FAST
@given(name=st.sampled_from(sorted(MODELS)), s=streams(max_n=120), modules=st.integers(1, 3),
       outstanding=st.integers(7, 70))
def test_kernel_equals_reference_with_many_slots(name, s, modules, outstanding):
    """Loser trees of several levels and partly empty (outstanding not a power of two): the kernel's
    earliest free slot is the reference's first minimum of a plain list."""
    m = MODELS[name]
    _same(m.serve(s, m.new_state(modules), outstanding, modules),
          m.serve(s, m.new_state(modules), outstanding, modules, reference=True))


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 70), values=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=300),
       now=st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=300))
def test_slot_tree_is_a_heap_of_free_times(k, values, now):
    """The kernel's loser tree against a binary heap (heapq), the reference structure: each access
    takes the earliest free slot (at ``max(now, root)``) and frees it later; the roots agree."""
    import heapq

    from cxlsim.devices.memory.media import media_kernel as K

    vals, idx = K.slot_tree(k)
    heap = [K.NO_TIME] * k
    t = 0.0
    for j, dv in enumerate(values):
        t = max(t, now[j % len(now)])  # issue times never decrease
        start = max(t, vals[0])
        assert vals[0] == heap[0]
        free_at = start + dv  # a slot frees no earlier than its access starts
        K._slot_replace_min.py_func(vals, idx, free_at)
        heapq.heapreplace(heap, free_at)
        assert sorted(vals[1:][idx[1:] < k].tolist() + [vals[0]]) == sorted(heap)


def test_slot_tree_is_fresh_per_call():
    """``slot_tree`` copies a shared template: a kernel's replays never reach the next call's tree."""
    from cxlsim.devices.memory.media import media_kernel as K

    vals, idx = K.slot_tree(5)
    K._slot_replace_min.py_func(vals, idx, 7.0)
    again = K.slot_tree(5)
    assert again[0][0] == K.NO_TIME and vals[0] == K.NO_TIME
    assert sorted(again[0][1:][again[1][1:] < 5].tolist() + [again[0][0]]) == [K.NO_TIME] * 5


@FAST
@given(entries=st.dictionaries(st.integers(0, 5000), st.floats(-1e3, 1e3, allow_nan=False), max_size=200),
       now=st.floats(-1e3, 1e3, allow_nan=False), room=st.integers(1, 5000), start=st.sampled_from([8, 64, 4096]))
def test_pending_rebuild_keeps_the_live_entries(monkeypatch, entries, now, room, start):
    """A rebuild (one pass moving the live entries out and emptying the table, then reinserting
    them, in place or into a table of the new size) keeps every entry pending after ``now``,
    drops the others, and leaves room for ``room`` more under the kernel's load limit."""
    from cxlsim.devices.memory.media import media_index as X
    from cxlsim.devices.memory.media import media_kernel as K

    monkeypatch.setattr(media, "INITIAL_TABLE_SLOTS", start)
    state = build_device("pmem/optane-100").new_state()
    state._rebuild(-np.inf, len(entries) + 1)
    for g, t in entries.items():
        K.pend_insert(state.keys, state.times, state.used, np.int64(g), float(t), -np.inf)
    state._rebuild(now, room)
    live = {g: t for g, t in entries.items() if t > now}
    assert state.used[0] == len(live)
    assert state.used[0] + room <= state.keys.shape[0] * X.MAX_LOAD_FRACTION
    for g in entries:
        assert state.pending_until_ns(g) == live.get(g, K.NO_TIME)


def test_slots_free_out_of_order():
    """A requester's slot frees when its access completes, not in issue order (a core's fill
    buffers free as their misses return): with two slots, a long read then short ones, the third
    access starts when the second (short) one completes, before the first."""
    m = build_device("dram/ddr4-2666")
    s = AccessStream.of(0.0, [0, 4096, 3 * 4096], [4096, 64, 64], False)  # modules 0, 1, 1
    r = m.serve(s, m.new_state(2), 2, 2)
    assert r.complete_ns[1] < r.complete_ns[0]
    assert r.start_ns[2] == r.complete_ns[1]


@FAST
@given(name=st.sampled_from(sorted(MODELS)), s1=streams(), s2=streams(), modules=st.integers(1, 3),
       reads=st.integers(1, 6), writes=st.integers(1, 6), after=st.booleans())
def test_kernel_equals_reference_with_split_pools(monkeypatch, name, s1, s2, modules, reads, writes, after):
    """Separate read and write loops (``outstanding=(reads, writes)``), with and without writes
    held for the reads before them: the kernel and its plain-Python twin agree, across calls and
    pending-table rebuilds (a rebuild resumes the kernel mid-stream with both loops' slots)."""
    monkeypatch.setattr(media, "INITIAL_TABLE_SLOTS", 8)
    m = MODELS[name]
    s2 = AccessStream.of(s2.issue_ns + s1.issue_ns[-1], s2.addr_B, s2.size_B, s2.is_write)
    fast, ref, totals = m.new_state(modules), m.new_state(modules), m.new_state(modules)
    for s in (s1, s2):
        a = m.serve(s, fast, (reads, writes), modules, write_after_reads=after)
        _same(a, m.serve(s, ref, (reads, writes), modules, reference=True, write_after_reads=after))
        _same(a, m.serve(s, totals, (reads, writes), modules, per_access=False, write_after_reads=after), arrays=False)
    at = max(fast.horizon_ns, 0.0) + 1.0
    assert m.drain(fast, at) == m.drain(ref, at)


@FAST
@given(name=st.sampled_from(sorted(MODELS)), s=streams(), modules=st.integers(1, 3), n=st.integers(1, 6),
       other=st.integers(1, 6))
def test_split_pools_of_one_kind_are_one_pool(name, s, modules, n, other):
    """A stream of one kind only uses that kind's loop: (n, any) on reads and (any, n) on writes
    give exactly one loop of n (the unused pool's size changes nothing)."""
    m = MODELS[name]
    for write in (False, True):
        one = AccessStream.of(s.issue_ns, s.addr_B, s.size_B, write)
        pair = (other, n) if write else (n, other)
        _same(m.serve(one, m.new_state(modules), pair, modules), m.serve(one, m.new_state(modules), n, modules))


def test_writes_after_reads_wait_for_their_data():
    """With ``write_after_reads`` a write starts no earlier than the data of the reads between it and
    the previous write is back; without it, a write pool with free slots issues it at once."""
    m = MODELS["dram"]
    s = AccessStream.of(0.0, [0, 4096, 1 << 20, 8192, 12288, (1 << 20) + 4096], [64, 64, 128, 64, 64, 128],
                        [False, False, True, False, False, True])
    free = m.serve(s, m.new_state(), (4, 4), 1)
    held = m.serve(s, m.new_state(), (4, 4), 1, write_after_reads=True)
    assert free.start_ns[2] == free.start_ns[5] == 0.0
    assert held.start_ns[2] == max(held.ack_ns[0], held.ack_ns[1])
    assert held.start_ns[5] == max(held.ack_ns[3], held.ack_ns[4])
    with pytest.raises(ValueError, match="split pools"):
        m.serve(s, m.new_state(), 4, 1, write_after_reads=True)
    with pytest.raises(ValueError, match="two limits"):
        m.serve(s, m.new_state(), (4, 0), 1)


def test_split_pools_are_admitted_and_contend_per_kind():
    """A controller queues reads and writes separately: the reads' pool is held to count × modules,
    the writes' to the write-pending queue × controllers (modules_per_controller modules share one),
    and each kind's waiting requests grow only its own occupancy; an absent kind offers none."""
    m = MODELS["optane"]  # 24 reads per module, 6 writes per controller of 3 modules
    c, cw, k = m.controller_outstanding, m.write_queue_count, m.modules_per_controller
    assert cw > 0 and k > 1
    fp, admitted = m.loaded((2 * c, cw), 2)
    assert fp is m._fp and admitted == (2 * c, cw)  # none waits: two modules behind one controller
    fp, admitted = m.loaded((2 * c, cw), 1)
    assert admitted == (c, cw)
    assert fp[1] == m.occ_write_ns and fp[0] == pytest.approx(m.occ_read_ns * (1 + m.contention[0]))
    fp, admitted = m.loaded((5, 4 * cw), 1)
    assert admitted == (5, cw) and fp[0] == m.occ_read_ns
    assert fp[1] == pytest.approx(m.occ_write_ns * (1 + m.contention[1] * 3))
    # six modules: two controllers, each with its own write-pending queue
    fp, admitted = m.loaded((0, 4 * cw), 6)
    assert admitted == (0, 2 * cw) and fp[1] == pytest.approx(m.occ_write_ns * (1 + m.contention[1]))
    fp, admitted = m.loaded((64, 0), 1)
    assert admitted == (c, 0) and fp[1] == m.occ_write_ns


def test_one_loop_offers_its_stream_share_of_writes_to_the_write_queue():
    """One closed loop on a controller with a write-pending queue of its own: the stream's share of
    writes is the loop's write pool, the rest its read pool; each is admitted and contends as the
    split pools do, and the loop holds their sum. Without the share the call is refused."""
    m = MODELS["optane"]
    cw = m.write_queue_count
    assert m.loaded(4 * cw, 1, 1.0)[1] == cw
    fp, admitted = m.loaded(4 * cw, 1, 0.0)  # reads only: within the read queue, none waits
    assert fp is m._fp and admitted == 4 * cw
    fp, admitted = m.loaded(4 * cw, 1, 0.5)
    assert admitted == 2 * cw + cw and fp[0] == m.occ_read_ns
    assert fp[1] == pytest.approx(m.loaded((2 * cw, 2 * cw), 1)[0][1])
    with pytest.raises(ValueError, match="write_fraction"):
        m.loaded(10, 1)
    # a preset without a write queue of its own keeps one count for both kinds
    u = build_device("pmem/u200-emulated")
    assert u.write_queue_count == 0 and u.loaded(100, 1)[1] == u.controller_outstanding
    # serve takes the share from the stream: on six modules (two controllers) a write-only loop is
    # held to two queues' worth (without contention the same times as a loop of that many), a
    # read-only loop is not
    m0 = build_device("pmem/optane-100", {"write_contention_ratio": 0.0, "read_contention_ratio": 0.0})
    addr = np.arange(512) * 4096 * 7 % (1 << 28)

    def end(write: bool, out: int) -> float:
        state = m0.new_state(6, 4096)
        return m0.serve(AccessStream.of(0.0, addr, 256, write), state, out, 6, 4096).done_ns

    assert end(True, 5 * cw) == end(True, 2 * cw)
    assert end(False, 5 * cw) < end(False, 2 * cw)


@pytest.mark.slow
@FAST
@given(name=st.sampled_from(sorted(MODELS)), s1=streams(), s2=streams(), modules=st.integers(1, 3),
       outstanding=st.integers(1, 6))
def test_totals_only_equal_per_access_totals(monkeypatch, name, s1, s2, modules, outstanding):
    """``per_access=False`` (what the systems use) gives the same totals and state; ``done_ns``
    is the latest acknowledgement and ``end_ns`` the latest completion or acknowledgement."""
    monkeypatch.setattr(media, "INITIAL_TABLE_SLOTS", 8)
    m = MODELS[name]
    s2 = AccessStream.of(s2.issue_ns + s1.issue_ns[-1], s2.addr_B, s2.size_B, s2.is_write)
    full, totals = m.new_state(modules), m.new_state(modules)
    for s in (s1, s2):
        a = m.serve(s, full, outstanding, modules)
        b = m.serve(s, totals, outstanding, modules, per_access=False)
        _same(a, b, arrays=False)
        assert b.ack_ns.size == 0
        assert a.done_ns == a.ack_ns.max() and a.end_ns == max(a.ack_ns.max(), a.complete_ns.max())
    at = max(full.horizon_ns, 0.0) + 1.0
    assert m.drain(full, at) == m.drain(totals, at)


def test_bad_streams_are_refused():
    m = MODELS["optane"]
    with pytest.raises(ValueError, match="must not decrease"):
        m.serve(AccessStream.of([0.0, 5.0, 4.0], [0, 256, 512], 64, False), m.new_state(), 1)
    state = m.new_state()
    m.serve(AccessStream.of(10.0, [0], 64, False), state, 1)
    with pytest.raises(ValueError, match="must not decrease"):
        m.serve(AccessStream.of(9.0, [0], 64, False), state, 1)
    with pytest.raises(ValueError, match="sizes must be"):
        m.serve(AccessStream.of(0.0, [0, 256], [64, 0], False), m.new_state(), 1)
    with pytest.raises(ValueError, match="addresses >= 0"):
        m.serve(AccessStream.of(0.0, [-256], 64, False), m.new_state(), 1)


def _distinct_stream(rng, m, n, size, write, region_units=1 << 16):
    units = m.units(size)
    picks = rng.choice(region_units // units, n, replace=False)
    return AccessStream.of(0.0, picks * units * m.unit_B, size, write)


@FAST
@given(name=st.sampled_from(sorted(MODELS)), s=streams(max_n=60), modules=st.integers(1, 4),
       outstanding=st.integers(1, 64))
def test_occupancy_bounds_any_stream_on_idle_modules(name, s, modules, outstanding):
    """The busiest bank, command processor and module (writes beyond what may still be in flight)
    and one unit's write chain bound ``done_ns`` from below, whatever the order and issue times."""
    m = MODELS[name]
    start = AccessStream.of(s.issue_ns - s.issue_ns[0], s.addr_B, s.size_B, s.is_write)
    r = m.serve(start, m.new_state(modules), outstanding, modules)
    assert r.done_ns >= m.occupancy_ns(start, modules) * (1 - 1e-12)


def test_idle_runs_are_the_kernel_on_consecutive_units():
    """read_ns/write_ns: n accesses to consecutive whole units, interleaved by unit, all at 0."""
    m = MODELS["optane"]
    assert m.read_ns(1, 64) == m.read_latency_ns("random")  # a lone read is random
    assert m.read_ns(0, 64) == 0.0 == m.bound_ns("read", 0, 64)
    # two modules, 8 units each on 2 banks, 4 deep per bank: the last one (sequential) after 3
    # occupancies of its bank
    n = 16
    assert m.read_ns(n, 256, 2) == pytest.approx(m.read_latency_ns("sequential") + 3 * m.occ_read_ns, rel=1e-12)
    state = m.new_state(2, 256)
    r = m.serve(AccessStream.of(0.0, np.arange(n) * 256, 256, True), state, n, 2, 256)
    assert m.write_ns(n, 256, 2) == m.drain(state, r.end_ns).end_ns
    with pytest.raises(ValueError, match="size_B"):
        m.read_ns(1, 0)


@pytest.mark.slow
@FAST
@given(name=st.sampled_from(sorted(MODELS)), seed=st.integers(0, 1000), n=st.integers(1, 200),
       size=st.sampled_from([64, 256, 4096]), write=st.booleans())
def test_more_modules_never_slower(name, seed, n, size, write):
    m = MODELS[name]
    s = _distinct_stream(np.random.default_rng(seed), m, n, size, write)
    ends = []
    for modules in (1, 2, 4):
        state = m.new_state(modules)
        r = m.serve(s, state, 16, modules)
        ends.append(m.drain(state, r.end_ns).end_ns if write else r.end_ns)
    assert ends[0] >= ends[1] >= ends[2]


@FAST
@given(name=st.sampled_from(sorted(MODELS)), s=streams(max_n=60))
def test_deterministic(name, s):
    m = MODELS[name]
    _same(m.serve(s, m.new_state(2), 4, 2), m.serve(s, m.new_state(2), 4, 2))


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("size", [1, 64, 256, 1000, 4096, 16384])
def test_access_cost_is_the_idle_single_access(name, size):
    m = MODELS[name]
    r = m.serve(AccessStream.of(0.0, [0], size, False), m.new_state(), 1)
    c = m.access_cost("read", size)
    assert c.time_ns == pytest.approx(r.complete_ns[0], rel=1e-12)
    assert c.size_B == r.media_read_B and c.energy_J == pytest.approx(r.energy_J, rel=1e-12)
    w = m.access_cost("write", size)
    assert w.time_ns == m.write_latency_ns("random")
    assert m.bound_ns("read", 1, min(size, m.unit_B)) == pytest.approx(m.read_latency_ns("sequential"))


def test_pending_writes_carry_across_calls():
    m = MODELS["optane"]
    state = m.new_state()
    m.serve(AccessStream.of(0.0, [0, 1024], 64, True), state, 4)  # batch n: updates
    r = m.serve(AccessStream.of(10.0, [0, 4096], 64, False), state, 4)  # batch n+1: lookups
    assert r.raw_stall_count == 1 and r.raw_stall_ns > 0
    assert r.complete_ns[0] - 10.0 > m.read_latency_ns("random")  # waited for the RMW fill


def test_stream_must_not_go_back_in_time():
    m = MODELS["optane"]
    state = m.new_state()
    m.serve(AccessStream.of(100.0, [0], 64, True), state, 1)
    with pytest.raises(ValueError, match="must not decrease"):
        m.serve(AccessStream.of(50.0, [0], 64, False), state, 1)


@pytest.mark.slow
def test_million_accesses_run():
    m = MODELS["optane"]
    rng = np.random.default_rng(3)
    n = 1_000_000
    s = AccessStream.of(np.arange(n) * 20.0, rng.integers(0, 1 << 32, n) // 64 * 64, 64, rng.random(n) < 0.3)
    r = m.serve(s, m.new_state(4), 64, 4)
    assert r.end_ns > 0 and r.rmw_count > 0


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["dram/ddr4-2666", "pmem/optane-100", "ssd/intel-750"])
def test_energy_is_computed_from_bytes_once(preset):
    """The kernel counts bytes; traffic_energy_J turns media and requested bytes into joules."""
    m = build_device(preset)
    p = m.params
    assert m.traffic_energy_J(1000, 300, 64) == pytest.approx(
        (1000 * p.read_media_pJ_per_bit + 300 * p.write_media_pJ_per_bit + 64 * p.io_pJ_per_bit) * 8e-12, rel=1e-12)
    state = m.new_state()
    r = m.serve(AccessStream.of(0.0, [0, 8192, 20000], [64, 4096, 100], [False, True, True]), state, 2)
    assert r.requested_B == 64 + 4096 + 100
    assert r.energy_J == m.traffic_energy_J(r.media_read_B, r.media_write_B, r.requested_B)
    d = m.drain(state, r.end_ns)
    assert d.energy_J == m.traffic_energy_J(0.0, d.media_write_B, 0.0)


def test_cli_microbench_json_and_devices_show(capsys):
    assert main(["microbench", "pmem/optane-100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"device", "modules", "threads", "pattern", "read_latency_ns", "write_latency_ns",
                        "read_bw_GBps", "write_bw_GBps", "store_flush_bw_GBps", "write_amplification",
                        "loaded_latency", "loaded_latency_ns", "persist_latency_ns", "persist_flush_latency_ns",
                        "little_bound_GBps"} - (
                            set() if "little_bound_GBps" in out else {"little_bound_GBps"})
    assert list(out["read_bw_GBps"]) == ["64", "128", "256", "512", "1024", "4096"]
    assert list(out["write_amplification"]) == ["4096", "8192", "16384", "32768", "65536"]
    assert main(["devices", "show", "pmem/paper"]) == 0
    assert "[kwon-micro23] Table 2" in capsys.readouterr().out
