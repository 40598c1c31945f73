"""Read priority in the media controller: posted writes yield their bank to reads, drain when the
bank is idle or the write queue is full, and are forced out by an access to their unit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from cxlsim.devices import build_device
from cxlsim.devices.memory.media.media import AccessStream

# one Optane module without a write-combining buffer: every write is one posted media write
PLAIN = {"wcb_entries": 0, "read_modify_write": False, "parallel_units_count": 1,
         "controller_outstanding_count": 0}  # the read-priority mechanism alone: no controller limit


def _model(read_priority: bool, **extra):
    return build_device("pmem/optane-100", {**PLAIN, "read_priority": read_priority, **extra})


def test_a_read_goes_ahead_of_queued_writes():
    """Four writes at 0, then a read of another unit on the same bank at 100 ns: with read
    priority it waits only for the write already on the bank (posted at 0, started then on the
    idle bank); in arrival order it waits for all four."""
    lat = {}
    for rp in (False, True):
        m = _model(rp)
        st = m.new_state()
        m.serve(AccessStream.of(0.0, np.arange(4) * 256, 256, True), st, 4)
        r = m.serve(AccessStream.of(100.0, [256 * 100], 64, False), st, 1)
        lat[rp] = r.complete_ns[0] - 100.0
    occ_w = _model(True).occ_write_ns
    assert lat[True] == pytest.approx(occ_w - 100.0 + m.read_latency_ns("random"), rel=1e-9)
    assert lat[False] >= lat[True] + 3 * occ_w


def test_a_read_of_a_queued_unit_forces_its_write():
    m = _model(True)
    st = m.new_state()
    m.serve(AccessStream.of(0.0, np.arange(4) * 256, 256, True), st, 4)
    assert st.pq_n[0] > 0 and st.pending_until_ns(3) == np.inf  # queued, not yet started
    r = m.serve(AccessStream.of(100.0, [3 * 256], 64, False), st, 1)
    assert r.raw_stall_count == 1
    assert st.pq_n[0] == 0  # the writes ahead of it on its bank went first
    assert r.complete_ns[0] > 4 * m.occ_write_ns  # after all four writes


def test_the_write_queue_bounds_what_is_posted_and_acks_wait_for_room():
    m = _model(True, write_queue_entries=4)
    st = m.new_state()
    r = m.serve(AccessStream.of(0.0, np.arange(40) * 256, 256, True), st, 40)
    assert st.pq_n[0] <= 4
    # ack k waits until the write k-4 has started on the bank
    assert r.ack_ns[-1] >= (40 - 4 - 1) * m.occ_write_ns


def test_writes_conserve_bank_time():
    """A write-only stream takes the same media time with and without read priority: 500 unit
    writes back to back on the one bank, from the first media write's start (posted: when the
    controller holds it, at 0; in arrival order: at its acknowledgement)."""
    ends = []
    for rp in (False, True):
        m = _model(rp)
        st = m.new_state()
        r = m.serve(AccessStream.of(0.0, np.arange(500) * 256, 256, True), st, 64)
        ends.append(m.drain(st, r.end_ns).end_ns)
    first = {False: m.params.write_latency_ns, True: 0.0}
    for k, rp in enumerate((False, True)):
        assert ends[k] - first[rp] == pytest.approx(500 * m.occ_write_ns, rel=1e-12)


def test_a_copy_is_bank_bound_with_read_priority():
    """Gather 16 rows, write them as one 4 KiB burst, repeat (a log copy): in arrival order each
    burst's reads queue behind the previous burst's writes; with read priority the copy takes
    about its media time (the pmem/paper preset)."""
    rng = np.random.default_rng(0)
    k, modules = 300, 4
    rows = rng.integers(0, 1 << 22, (k, 16)) * 256
    addr = np.concatenate([np.append(rows[j], (1 << 33) + j * 4096) for j in range(k)])
    size = np.tile(np.append(np.full(16, 256), 4096), k)
    wr = np.tile(np.append(np.zeros(16, bool), True), k)
    took = {}
    for rp in (False, True):
        m = build_device("pmem/paper", {"read_priority": rp})
        st = m.new_state(modules, 4096)
        r = m.serve(AccessStream.of(0.0, addr, size, wr), st, 32, modules, 4096)
        took[rp] = r.done_ns
    media_ns = (k * 16 * 256 / m.params.read_bw_GBps + k * 4096 / m.params.write_bw_GBps) / modules
    assert took[True] <= 1.1 * media_ns
    # ≈1.3× since the requester's slots free out of order (in issue order the closed loop also
    # idled the other modules behind a queued read: > 1.5×)
    assert took[False] > 1.25 * took[True]


def test_undo_logs_are_read_starved_without_read_priority():
    """System level (`cxl-b`, RM1, a small batch): the embedding log gathers rows and writes 4 KiB
    bursts on the same PMEM; with the controllers' read priority it is shorter, and the batch too."""
    from cxlsim.api import simulate

    spans = {}
    for rp in (False, True):
        r = simulate("cxl-b", "rm1", batches=1, warmup=1, seed=1, trace=False,
                     workload_sets={"batch_size": 64},
                     # the log after the lookup, so that it runs alone on the media
                     sets={"devices.table_memory.params.read_priority": rp, "pipeline.undo_log_start": "lookup"})
        rec = r.executor.records[("emb_log", 1)]
        spans[rp] = (rec.end_ns - rec.start_ns, float(r.batch_times_ns[0]))
    # 0.83× since the requester's slots free out of order (0.8× bound before: the in-order loop
    # also idled modules behind a read queued on a write)
    assert spans[True][0] < 0.9 * spans[False][0]
    assert spans[True][1] < spans[False][1]


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("banks", [1, 2])
def test_one_access_posting_more_than_the_queue_holds_never_overfills_it(banks, reference):
    """A module's write queue holds ``write_queue_entries`` posted writes. One access posting more
    (10 units against 4 entries) starts the earliest queued write before each post beyond: after
    every access the queue holds at most its capacity, each bank's ring holds what the module
    counts, and every unit still queued is in a ring (so a read of it can force it out)."""
    cap, units = 4, 10
    m = _model(True, write_queue_entries=cap, parallel_units_count=banks)
    st = m.new_state()
    assert st.pq_g.shape[1:] == (banks, cap)
    for k in range(3):
        base = k * units * 256
        m.serve(AccessStream.of(1e4 * k, [base], units * 256, True), st, 1, reference=reference)
        assert st.pq_n[0] <= cap, f"module 0's write queue holds {st.pq_n[0]} posted writes, capacity {cap}"
        assert st.pq_len[0].sum() == st.pq_n[0] and (st.pq_len[0] <= cap).all()
        queued = sorted(g for b in range(banks) for g, _ in st.posted_writes(0, b))
        assert queued == [g for g in range(base // 256, base // 256 + units) if st.pending_until_ns(g) == np.inf]
        assert len(queued) == min(cap, units)


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_each_banks_head_ready_time_follows_its_ring(seed, reference):
    """The drain reads each ring's oldest ready time from ``pq_hr`` (inf when the ring is empty),
    kept beside the rings: after every serve, mixed reads and writes of several sizes over two
    modules of four banks and a small queue (posts, drains by a full queue, by an idle bank, by an
    access to a queued unit), and after the final drain, it is each ring's head."""
    rng = np.random.default_rng(seed)
    m = _model(True, write_queue_entries=6, parallel_units_count=4)
    st = m.new_state(2, 512)
    t = 0.0
    for _ in range(6):
        n = 40
        issue = t + np.cumsum(rng.exponential(30.0, n))
        t = float(issue[-1])
        addr = rng.integers(0, 64, n) * 64
        size = rng.choice([64, 256, 1024], n)
        m.serve(AccessStream.of(issue, addr, size, rng.random(n) < 0.6), st, 4, modules=2, interleave_B=512,
                reference=reference)
        for mod in range(2):
            for b in range(4):
                heads = st.posted_writes(mod, b)
                assert st.pq_hr[mod, b] == (heads[0][1] if heads else np.inf), (mod, b)
        assert np.isfinite(st.pq_hr).sum() == (st.pq_len > 0).sum()
    m.drain(st, t + 1.0)
    assert np.isinf(st.pq_hr).all() and st.pq_n.sum() == 0


@pytest.mark.parametrize("reference", [False, True])
@settings(max_examples=30, deadline=None)
@given(preset=hst.sampled_from(["dram/ddr4-2666", "dram/ddr5-4800"]), write_latency_ns=hst.floats(1.0, 400.0),
       offset=hst.floats(0.0, 1.0), bank=hst.integers(4, 15), size_B=hst.sampled_from([64, 128, 256]))
def test_a_posted_write_holds_the_bus_for_its_burst_not_its_acknowledgement(reference, preset, write_latency_ns,
                                                                             offset, bank, size_B):
    """With read priority a posted write takes its channel's command and bus slot when the
    controller holds it; its acknowledgement latency is the requester's wait. So a read of another
    bank that reaches an idle channel after the write, any time up to past its acknowledgement,
    waits at most the write's bursts (and its command) beyond the read's idle latency, however long
    the acknowledgement."""
    m = build_device(preset, {"write_latency_ns": write_latency_ns})
    arrival = offset * (write_latency_ns + 20.0)
    addr = bank * 64 + 4096  # a bank none of the write's units (banks 0 to 3) is on
    lone = m.serve(AccessStream.of(arrival, [addr], 64, False), m.new_state(), 1, reference=reference)
    state = m.new_state()
    w = m.serve(AccessStream.of(0.0, [0], size_B, True), state, 1, reference=reference)
    assert w.ack_ns[0] == pytest.approx(write_latency_ns)  # the requester still waits for the ack
    r = m.serve(AccessStream.of(arrival, [addr], 64, False), state, 1, reference=reference)
    burst_ns = m.cmd_write_ns + (size_B // 64) * m.bus_write_ns
    assert m.bus_write_ns > 0
    assert r.complete_ns[0] - lone.complete_ns[0] <= burst_ns + 1e-9
