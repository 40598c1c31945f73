"""A requester across a fabric path (:class:`~cxlsim.devices.memory.media.media.Crossing`, the stages of
the CXL memory timing model staged in issue order): the kernel and its reference agree; a zero path
is no path; a lone access pays every stage once; the path is held in the requester's slots (Little's
law); the link's servers and the device's queues bound a stream as they bound the probes."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device
from cxlsim.devices.memory.media.media import AccessStream, Crossing
from tests.devices.test_media import MODELS, _same, streams

CROSSINGS = st.builds(
    Crossing, request_ns=st.sampled_from([0.0, 1.5, 90.0, 700.0]), response_ns=st.sampled_from([0.0, 2.0, 85.0]),
    request_write_ns=st.sampled_from([None, 3.0, 120.0]), response_write_ns=st.sampled_from([None, 0.0, 60.0]),
    device_ns=st.sampled_from([0.0, 15.0]), up_hdr_ns=st.sampled_from([0.0, 0.54]),
    up_data_ns=st.sampled_from([0.0, 2.7, 40.0]), down_hdr_ns=st.sampled_from([0.0, 0.54]),
    down_data_ns=st.sampled_from([0.0, 2.7, 55.0]), read_queue_count=st.sampled_from([0, 1, 2, 5]),
    write_queue_count=st.sampled_from([0, 1, 3]))


def _one(size_B: int, write: bool) -> AccessStream:
    return AccessStream.of(np.array([0.0]), np.array([0]), np.array([size_B]), np.array([write]))


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(MODELS)), s1=streams(), s2=streams(), modules=st.integers(1, 3),
       outstanding=st.integers(1, 9), crossing=CROSSINGS)
def test_a_crossing_requesters_kernel_equals_reference_across_calls(name, s1, s2, modules, outstanding, crossing):
    m = MODELS[name]
    s2 = AccessStream.of(s2.issue_ns + s1.issue_ns[-1], s2.addr_B, s2.size_B, s2.is_write)
    fast, ref = m.new_state(modules), m.new_state(modules)
    for s in (s1, s2):  # the link's servers carry over from one call to the next
        _same(m.serve(s, fast, outstanding, modules, crossing=crossing),
              m.serve(s, ref, outstanding, modules, reference=True, crossing=crossing))
    np.testing.assert_array_equal(fast.link_free, ref.link_free)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(MODELS)), s=streams(), modules=st.integers(1, 3), outstanding=st.integers(1, 9))
def test_a_zero_crossing_is_the_attached_requester(name, s, modules, outstanding):
    m = MODELS[name]
    _same(m.serve(s, m.new_state(modules), outstanding, modules, crossing=Crossing(0.0, 0.0)),
          m.serve(s, m.new_state(modules), outstanding, modules))


C = Crossing(request_ns=110.0, response_ns=95.0, request_write_ns=130.0, response_write_ns=80.0, device_ns=15.0,
             up_hdr_ns=0.5, up_data_ns=2.5, down_hdr_ns=0.75, down_data_ns=3.0)


@pytest.mark.parametrize("size_B", [64, 65, 256, 320])
def test_a_lone_read_pays_each_stage_once_with_one_message_a_line(size_B):
    m = MODELS["dram"]
    lines = -(-size_B // 64)
    alone = m.serve(_one(size_B, False), m.new_state(1), 1).done_ns
    across = m.serve(_one(size_B, False), m.new_state(1), 1, crossing=C).done_ns
    assert across - alone == pytest.approx(lines * 0.5 + 110.0 + 15.0 + lines * 3.0 + 95.0)


@pytest.mark.parametrize("size_B", [64, 128, 129])
def test_a_lone_write_carries_its_data_there_and_its_completion_back(size_B):
    m = MODELS["dram"]
    lines = -(-size_B // 64)
    alone = m.serve(_one(size_B, True), m.new_state(1), 1)
    across = m.serve(_one(size_B, True), m.new_state(1), 1, crossing=C)
    there = lines * 2.5 + 130.0 + 15.0
    assert across.complete_ns[0] - alone.complete_ns[0] == pytest.approx(there)  # in place: nothing comes back
    assert across.ack_ns[0] - alone.ack_ns[0] == pytest.approx(there + lines * 0.75 + 80.0)


@pytest.mark.parametrize("outstanding", [1, 4])
def test_the_path_is_held_in_the_requesters_slots(outstanding):
    """A latency-bound closed loop (few slots, accesses spread over many banks): each access holds
    its slot for the media and the path, so the stream's time grows by the path × accesses a slot."""
    m = MODELS["dram"]
    n = 64
    s = AccessStream.of(np.zeros(n), np.arange(n) * 8192, np.full(n, 64), np.zeros(n, bool))
    c = Crossing(request_ns=300.0, response_ns=300.0)
    alone = m.serve(s, m.new_state(4), outstanding, 4).done_ns
    across = m.serve(s, m.new_state(4), outstanding, 4, crossing=c).done_ns
    assert across - alone == pytest.approx(600.0 * n / outstanding, rel=0.05)


def test_the_device_read_queue_bounds_a_stream_by_littles_law():
    """q entries, each held from arrival to data sent (device time d): at most q·64 B per d."""
    m = MODELS["dram"]
    n, q = 2000, 3
    s = AccessStream.of(np.zeros(n), np.arange(n) * 8192, np.full(n, 64), np.zeros(n, bool))
    c = Crossing(request_ns=500.0, response_ns=500.0, device_ns=15.0, read_queue_count=q)
    res = m.serve(s, m.new_state(8), 256, 8, crossing=c)
    lone = m.serve(_one(64, False), m.new_state(8), 1, 8).done_ns  # the media's idle read
    held = 15.0 + lone
    assert n * 64 / (res.done_ns - 1000.0) == pytest.approx(q * 64 / held, rel=0.05)


def test_the_response_server_bounds_reads_at_one_line_a_down_data_slot():
    m = MODELS["dram"]
    n = 3000
    s = AccessStream.of(np.zeros(n), np.arange(n) * 4096, np.full(n, 64), np.zeros(n, bool))
    c = Crossing(request_ns=100.0, response_ns=100.0, down_data_ns=8.0)
    res = m.serve(s, m.new_state(8), 512, 8, crossing=c)
    assert n * 64 / res.done_ns == pytest.approx(64 / 8.0, rel=0.03)


@pytest.mark.parametrize("name", ["cxl_mem/e3s-x8-spr", "cxl_mem/cz120-x8", "cxl_mem/apollo-pool-2x8"])
def test_a_cxl_memory_devices_lone_line_read_is_its_idle_latency(name):
    """The device's crossing on its media model gives, for one 64 B read, the timing model's
    closed form: one idle latency on the systems' path and the probes'."""
    d = build_device(name)
    media = d.media_model()
    got = media.serve(_one(64, False), media.new_state(d.media_count), 1, d.media_count, crossing=d.crossing()).done_ns
    assert got == pytest.approx(d.read_line_ns(), rel=1e-9)


def test_a_crossing_refuses_negative_times():
    with pytest.raises(ValueError):
        Crossing(request_ns=-1.0, response_ns=0.0)


def test_a_queue_of_line_requests_holds_fewer_multi_line_accesses():
    """The device queues 64 B requests: a stream of 256 B rows holds a quarter as many."""
    c = Crossing(0.0, 0.0, read_queue_count=33, write_queue_count=22)
    rows = AccessStream.of(np.zeros(4), np.arange(4) * 256, np.full(4, 256), np.array([False, False, True, True]))
    lines = AccessStream.of(np.zeros(2), np.arange(2) * 64, np.full(2, 64), np.array([False, True]))
    assert c.queue_entries(rows) == (8, 6)
    assert c.queue_entries(lines) == (33, 22)
    assert Crossing(0.0, 0.0).queue_entries(rows) == (1, 1)  # unbounded: the kernel never reads them


@functools.cache
def _probe_and_systems(threads: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """(bandwidth GB/s, mean latency ns) of ``threads`` closed-loop threads of 12 host reads of
    64 B on ``cxl_mem/e3s-x8-spr``: the probe's (its event model) and the systems' path's (the
    device's crossing on its media model; a read's latency from its slot to its data)."""
    from cxlsim.validate import cxl_mlc as mlc

    d = build_device("cxl_mem/e3s-x8-spr")
    probe = mlc.simulate(d.fabric(), threads=threads, requests=mlc.PEAK_REQUESTS)
    media = d.media_model()
    n = 20000
    addr = np.random.default_rng(1).integers(0, 1 << 30, n) * 64
    s = AccessStream.of(np.zeros(n), addr, np.full(n, 64), np.zeros(n, bool))
    res = media.serve(s, media.new_state(d.media_count, 4096), threads * mlc.LINES_PER_THREAD, d.media_count, 4096,
                      crossing=d.crossing())
    k = n // 5
    bw = (n - k) * 64 / (res.ack_ns[-1] - np.sort(res.ack_ns)[k])
    latency = float(np.mean((res.ack_ns - res.start_ns)[k:]))
    return (probe.bw_GBps, probe.latency_ns["bw"]), (bw, latency)


@pytest.mark.parametrize("threads", [1, 2, 4, 8, 16, 32])
def test_the_systems_path_follows_the_probes_curve(threads):
    """Host reads of 64 B lines through the device's crossing on its media model (the systems'
    path) against the probe's closed-loop threads (12 lines each) on the same media model,
    bandwidth and latency: the same below saturation (1 to 4 threads); from 8 threads on the read
    queue binds and the systems' ceiling is ≈ 5 % lower, their latency ≈ 5 % longer (the known
    gap, docs/devices-fabric.md, "The probes against the systems' path")."""
    (probe_bw, probe_ns), (bw, ns) = _probe_and_systems(threads)
    tol = 0.01 if threads <= 4 else 0.06
    assert bw == pytest.approx(probe_bw, rel=tol)
    assert ns == pytest.approx(probe_ns, rel=tol)


@pytest.mark.xfail(strict=True, reason="the systems' latency at saturation is 5.1 % above the probe's (bandwidth -4.8 %, "
                   "inside): the crossing's response server, staged in issue order, makes a read wait "
                   "6.1 ns against ~1 in the probe (docs/devices-fabric.md, 'The probes against the "
                   "systems' path')")
@pytest.mark.parametrize("threads", [8, 16, 32])
def test_the_systems_path_reproduces_the_probe_at_saturation_within_5_percent(threads):
    """The requirement the known gap misses: at and past saturation, bandwidth and latency within
    5 % (both serve the media on the media model; the bandwidth holds, the latency misses by 0.1 %)."""
    (probe_bw, probe_ns), (bw, ns) = _probe_and_systems(threads)
    assert bw == pytest.approx(probe_bw, rel=0.05)
    assert ns == pytest.approx(probe_ns, rel=0.05)
