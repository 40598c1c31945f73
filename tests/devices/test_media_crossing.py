"""A requester across a fabric path (:class:`~cxlsim.devices.memory.media.media.Crossing`): the kernel
and its reference agree; a zero path is no path; the path's times are held in the requester's slots,
so a closed loop's bandwidth follows Little's law on the lengthened latency."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices.memory.media.media import AccessStream, Crossing
from tests.devices.test_media import MODELS, _same, streams

CROSSINGS = st.builds(Crossing, request_ns=st.sampled_from([0.0, 1.5, 90.0, 700.0]),
                      response_ns=st.sampled_from([0.0, 2.0, 85.0, 1300.0]),
                      ns_per_B=st.sampled_from([0.0, 0.0078125, 0.25]))


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(MODELS)), s=streams(), modules=st.integers(1, 3), outstanding=st.integers(1, 9),
       crossing=CROSSINGS)
def test_a_crossing_requesters_kernel_equals_reference(name, s, modules, outstanding, crossing):
    m = MODELS[name]
    _same(m.serve(s, m.new_state(modules), outstanding, modules, crossing=crossing),
          m.serve(s, m.new_state(modules), outstanding, modules, reference=True, crossing=crossing))


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(MODELS)), s=streams(), modules=st.integers(1, 3), outstanding=st.integers(1, 9))
def test_a_zero_crossing_is_the_attached_requester(name, s, modules, outstanding):
    m = MODELS[name]
    _same(m.serve(s, m.new_state(modules), outstanding, modules, crossing=Crossing(0.0, 0.0, 0.0)),
          m.serve(s, m.new_state(modules), outstanding, modules))


@pytest.mark.parametrize("size_B", [64, 256, 320])
def test_a_lone_read_pays_request_media_and_response_with_its_data(size_B):
    m = MODELS["dram"]
    s = AccessStream.of(np.array([0.0]), np.array([0]), np.array([size_B]), np.array([False]))
    c = Crossing(request_ns=110.0, response_ns=95.0, ns_per_B=0.125)
    alone = m.serve(s, m.new_state(1), 1).done_ns
    across = m.serve(s, m.new_state(1), 1, crossing=c).done_ns
    assert across - alone == pytest.approx(110.0 + 95.0 + 0.125 * size_B)


def test_a_lone_write_carries_its_data_there_and_its_completion_back():
    m = MODELS["dram"]
    s = AccessStream.of(np.array([0.0]), np.array([0]), np.array([256]), np.array([True]))
    c = Crossing(request_ns=110.0, response_ns=95.0, ns_per_B=0.125)
    alone = m.serve(s, m.new_state(1), 1)
    across = m.serve(s, m.new_state(1), 1, crossing=c)
    assert across.ack_ns[0] - alone.ack_ns[0] == pytest.approx(110.0 + 0.125 * 256 + 95.0)
    assert across.complete_ns[0] - alone.complete_ns[0] == pytest.approx(110.0 + 0.125 * 256)  # in place: no return


@pytest.mark.parametrize("outstanding", [1, 4])
def test_the_path_is_held_in_the_requesters_slots(outstanding):
    """A latency-bound closed loop (few slots, spread over many banks): each access holds its slot
    for the media latency plus the path, so the stream's time grows by the path × accesses per slot."""
    m = MODELS["dram"]
    n = 64
    s = AccessStream.of(np.zeros(n), np.arange(n) * 8192, np.full(n, 64), np.zeros(n, bool))
    c = Crossing(request_ns=300.0, response_ns=300.0)
    alone = m.serve(s, m.new_state(4), outstanding, 4).done_ns
    across = m.serve(s, m.new_state(4), outstanding, 4, crossing=c).done_ns
    assert across - alone == pytest.approx(600.0 * n / outstanding, rel=0.05)


def test_a_crossing_refuses_negative_times():
    with pytest.raises(ValueError):
        Crossing(request_ns=-1.0, response_ns=0.0)
