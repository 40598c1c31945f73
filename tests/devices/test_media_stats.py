"""The media kernel's statistics (``serve(..., stats=...)``): the variant that counts them times
every access as the variant without; its counts are the per-access results' (latency by kind, the
slots' hold time), the crossing's link busy time is its messages' closed form, and the queues never
hold more than they have."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices.memory.media import media_index as MI
from cxlsim.devices.memory.media.media import AccessStream
from tests.devices.test_media import MODELS, _same, streams
from tests.devices.test_media_crossing import CROSSINGS

OUTSTANDING = st.one_of(st.integers(1, 9), st.tuples(st.integers(1, 5), st.integers(1, 5)))


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(MODELS)), s1=streams(), s2=streams(), modules=st.integers(1, 3),
       outstanding=OUTSTANDING, crossing=st.one_of(st.none(), CROSSINGS))
def test_stats_count_what_the_accesses_met_and_change_no_time(name, s1, s2, modules, outstanding, crossing):
    m = MODELS[name]
    s2 = AccessStream.of(s2.issue_ns + s1.issue_ns[-1], s2.addr_B, s2.size_B, s2.is_write)
    plain, counted = m.new_state(modules), m.new_state(modules)
    v = np.zeros(MI.N_S)
    lat = {False: [], True: []}
    up = 0.0
    for s in (s1, s2):  # the vector adds up across calls
        a = m.serve(s, plain, outstanding, modules, crossing=crossing)
        b = m.serve(s, counted, outstanding, modules, crossing=crossing, stats=v)
        _same(a, b)
        for w in (False, True):
            lat[w] += list((b.ack_ns - b.start_ns)[s.is_write == w])
        if crossing is not None:
            lines = -(-s.size_B // MI.PATH_LINE_B)
            up += float(np.sum(lines * np.where(s.is_write, crossing.up_data_ns, crossing.up_hdr_ns)))
    for w, (n_i, sum_i, max_i, base) in {False: (MI.S_READS, MI.S_READ_NS, MI.S_READ_MAX_NS, MI.S_HIST),
                                         True: (MI.S_WRITES, MI.S_WRITE_NS, MI.S_WRITE_MAX_NS,
                                                MI.S_HIST + MI.LAT_BUCKETS)}.items():
        x = np.asarray(lat[w])
        assert v[n_i] == x.size == v[base:base + MI.LAT_BUCKETS].sum()
        assert v[sum_i] == pytest.approx(x.sum(), rel=1e-12, abs=1e-9)
        assert v[max_i] == (x.max() if x.size else 0.0)
    assert v[MI.S_SLOT_HOLD_NS] == pytest.approx(sum(map(sum, lat.values())), rel=1e-12, abs=1e-9)
    n = len(s1) + len(s2)
    assert 0 <= v[MI.S_SLOT_WAITS] <= n
    assert v[MI.S_LINK_UP_NS] == pytest.approx(up, rel=1e-12, abs=1e-9)
    assert v[MI.S_WQ_MAX] <= plain.wq_ring.shape[1] and v[MI.S_WQ_FULL] <= v[MI.S_WRITES]
    assert v[MI.S_PQ_MAX] <= plain.pq_g.shape[2]
    if crossing is not None:
        assert v[MI.S_XR_FULL] <= v[MI.S_READS] and v[MI.S_XW_FULL] <= v[MI.S_WRITES]
        assert v[MI.S_XR_HOLD_NS] >= 0 and v[MI.S_XW_HOLD_NS] >= 0
    else:
        assert v[MI.S_LINK_DOWN_NS] == v[MI.S_XR_HOLD_NS] == v[MI.S_XW_HOLD_NS] == 0
    assert v[MI.S_BANK_NS] >= 0


@pytest.mark.parametrize("outstanding", [1, 3, 16])
def test_slot_waits_are_the_accesses_beyond_the_slots(outstanding):
    """Reads issued together: all but the first ``outstanding`` find every slot taken."""
    m = MODELS["dram"]
    n = 12
    s = AccessStream.of(np.zeros(n), np.arange(n) * 4096, 64, False)
    v = np.zeros(MI.N_S)
    m.serve(s, m.new_state(1), outstanding, 1, stats=v)
    assert v[MI.S_SLOT_WAITS] == max(0, n - outstanding)


@settings(max_examples=200, deadline=None)
@given(lat=st.one_of(st.floats(0.0, 2.0**41, allow_nan=False), st.integers(0, 2**20).map(float),
                     st.integers(3, 40).map(lambda e: float(2**e)), st.integers(3, 40).map(lambda e: float(2**e) - 1)))
def test_latency_bucket_holds_the_latency(lat):
    """The kernel's integer bucketing against its edges (octaves split in equal parts)."""
    from cxlsim.devices.memory.media import media_kernel as K

    k = K._lat_bucket(lat)
    low, high = MI.lat_bucket_edges(k)
    if k == MI.LAT_BUCKETS - 1:
        assert lat >= low
    else:
        assert low <= max(lat, 0.0) < high or (lat < 1 and k == 0)
