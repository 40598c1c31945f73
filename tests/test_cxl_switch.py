"""CXL switch: per-hop latency, tree hop counts, shared upstream-port contention."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device as _build
from cxlsim.devices.cxl_switch import HOST, SwitchTree, SwitchTreeComponent
from cxlsim.engine.component import Simulation


@cache
def _cached(preset: str):
    return _build(preset)


def build_device(preset: str, overrides=None):
    return _cached(preset) if overrides is None else _build(preset, overrides)


@pytest.fixture(scope="module")
def switch():
    return build_device("cxl_switch/cxl3-x16")


def test_path_latency_is_hops_times_hop_latency(switch):
    assert switch.hop_latency_ns == 100.0
    assert switch.path_latency_ns(0) == 0 and switch.path_latency_ns(3) == 300.0
    # one message over one switch: one link latency, one hop (covering the inserted link), one
    # serialisation (cut-through)
    lk = switch.link
    assert switch.path_ns(64, 1) == pytest.approx(lk.latency_ns + 100 + lk.transfer_ns(64))


@pytest.mark.parametrize(
    ("levels", "fanout", "src", "dst", "hops"),
    [
        (1, 4, HOST, 3, 1),
        (1, 4, 0, 3, 1),  # peers under one switch
        (2, 4, HOST, 5, 2),
        (2, 4, 0, 1, 1),  # same leaf switch
        (2, 4, 0, 4, 3),  # leaf → root → leaf
        (3, 2, 0, 1, 1),
        (3, 2, 0, 2, 3),
        (3, 2, 0, 7, 5),  # through the root of a 3-level tree
        (3, 2, 7, HOST, 3),
        (3, 2, 5, 5, 0),
    ],
)
def test_tree_hop_counts(levels, fanout, src, dst, hops):
    t = SwitchTree(levels, fanout)
    assert t.hops(src, dst) == hops == t.hops(dst, src)
    assert len(t.path_links(src, dst)) == (hops + 1 if hops else 0)


def test_tree_limits(switch):
    assert SwitchTree(2, 4).n_devices == 16 and SwitchTree(2, 4).n_switches == 5
    with pytest.raises(ValueError, match="ports"):
        switch.tree(1, 16)  # 16 children + 1 upstream port > 16 ports
    with pytest.raises(ValueError, match="4095"):
        SwitchTree(3, 16)


@settings(max_examples=100, deadline=None)
@given(payload=st.integers(0, 1 << 20), hops=st.integers(0, 6))
def test_path_time_between_bound_and_factor(switch, payload, hops):
    b = switch.path_bound_ns(payload, hops)
    assert b <= switch.path_ns(payload, hops) <= 1.2 * b


def _run(switch, tree, pairs, count, size):
    sim = Simulation(seed=0, trace=False)
    comp = SwitchTreeComponent(sim, "t", switch, tree)
    ends = []

    def one(s, d):
        ends.append((yield from comp.transfer(s, d, size)))

    for s, d in pairs:
        for _ in range(count):
            sim.env.process(one(s, d))
    sim.run()
    return ends


def test_simpy_uncontended_equals_pure(switch):
    tree = SwitchTree(2, 4)
    for src, dst in ((HOST, 5), (0, 1), (0, 15), (9, HOST)):
        assert _run(switch, tree, [(src, dst)], 1, 4096) == [pytest.approx(switch.path_ns(4096, tree.hops(src, dst)))]


def test_shared_upstream_port_contention(switch):
    tree = SwitchTree(2, 4)
    size, n = 4096, 16
    tx = switch.link.transfer_ns(size)
    # four devices under different leaf switches: they share the root's upstream port → serialised
    shared = _run(switch, tree, [(0, HOST), (4, HOST), (8, HOST), (12, HOST)], n, size)
    # four peers under different leaf switches talking in disjoint pairs do not share any link
    disjoint = _run(switch, tree, [(0, 1), (4, 5), (8, 9), (12, 13)], n, size)
    assert max(shared) == pytest.approx(4 * n * tx + switch.path_ns(0, 2) - switch.link.transfer_ns(0))
    assert max(disjoint) == pytest.approx(n * tx + switch.path_ns(0, 1) - switch.link.transfer_ns(0))
