"""CXL switch and fabric paths: the switch core's re-derived hop, path latency/serialisation/energy,
tree hop counts, the microbenchmark (path bounds vs factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

from functools import cache

import pytest

from cxlsim.devices import build_device as _build
from cxlsim.devices.fabric.cxl_path import FabricPath
from cxlsim.devices.fabric.cxl_switch import HOST, SwitchTree, microbench

#: The path model before the switch was reduced to its core: one link latency + hops × 100 ns
#: (the measured per-switch latency, inserted link included) + one serialisation.
MEASURED_HOP_NS = 100.0


@cache
def _cached(preset: str):
    return _build(preset)


def build_device(preset: str, overrides=None):
    return _cached(preset) if overrides is None else _build(preset, overrides)


@pytest.fixture(scope="module")
def switch():
    return build_device("cxl_switch/cxl3-x16")


@pytest.fixture(scope="module")
def link():
    return build_device("cxl_link/cxl3-x16")


def test_hop_is_the_switch_core_only(switch, link):
    """CXL-DMSim's +100 ns one way per switch includes the link it inserts (77 ns): core 23 ns."""
    assert link.latency_ns == 62 + 15
    assert switch.hop_latency_ns == MEASURED_HOP_NS - link.latency_ns == 23.0
    assert switch.path_latency_ns(3) == 69.0
    assert not hasattr(switch, "link")


@pytest.mark.parametrize("hops", [0, 1, 2, 3])
@pytest.mark.parametrize("payload", [0, 8, 64, 256, 4096])
def test_identical_links_reproduce_the_measured_switch_latency(switch, link, hops, payload):
    """hops + 1 identical links and hops switches: exactly the old one-link + hops × 100 ns path
    (every golden timing stays bit-identical)."""
    path = FabricPath([link] * (hops + 1), switch)
    old = link.latency_ns + hops * MEASURED_HOP_NS + link.transfer_ns(payload)
    assert path.message_ns(payload) == old
    assert path.hops == hops and path.latency_ns == (hops + 1) * 77 + hops * 23


def test_a_path_asks_its_switch_for_the_hops_latency(switch, link):
    """FabricPath takes the switch's own rule for its hops (``path_latency_ns``), not a copy of it:
    a switch whose traversals cost otherwise (here: a fixed 1 µs whatever the hops) is honoured."""

    class FlatSwitch(type(switch)):
        def path_latency_ns(self, hops: int) -> float:
            return 1000.0 if hops else 0.0

    path = FabricPath([link] * 4, FlatSwitch(switch.params))
    assert path.hops == 3 and path.latency_ns == 4 * link.latency_ns + 1000.0


def test_a_path_serialises_once_at_its_slowest_link(switch):
    slow, fast = build_device("cxl_link/cxl2-x16"), build_device("cxl_link/cxl3-x16")
    path = FabricPath([fast, slow, fast], switch)
    assert path.latency_ns == 3 * 77 + 2 * 23
    for payload in (0, 64, 4096):
        assert path.transfer_ns(payload) == max(slow.transfer_ns(payload), fast.transfer_ns(payload))
        assert path.per_message_ns(payload) == slow.per_message_ns(payload)
        assert path.message_ns(payload) == path.latency_ns + path.transfer_ns(payload)
    assert path.raw_bw_GBps == slow.raw_bw_GBps
    assert path.stream_ns(100, 64) == slow.stream_ns(100, 64)
    assert path.bound_ns("message", 4096) == path.latency_ns + 4096 / slow.raw_bw_GBps


def test_path_energy_sums_links_and_forwarding_switches(switch):
    slow, fast = build_device("cxl_link/cxl2-x16"), build_device("cxl_link/cxl3-x16")
    path = FabricPath([slow, fast], switch)
    c = path.message_cost(64)
    wire = [slow.wire_B(64), fast.wire_B(64)]  # 2 × 68 B flits, one 256 B flit
    assert wire == [136, 256] and c.size_B == 256
    hand = (136 * 5 + 256 * 5 + 136 * 2) * 8e-12  # links at 5 pJ/bit, the switch forwards what enters it
    assert c.energy_J == pytest.approx(hand, rel=1e-12)
    assert switch.forward_energy_J(136) == pytest.approx(136 * 8 * 2e-12)
    # identical links: links + switches per bit, as the energy model's path pJ/bit
    same = FabricPath([fast] * 3, switch)
    s = same.stream_cost(1000, 64)
    assert s.energy_J == pytest.approx(s.size_B * 8 * (3 * 5 + 2 * 2) * 1e-12, rel=1e-12)


def test_path_needs_links_and_a_switch_between_them(link):
    assert FabricPath([link]).hops == 0
    with pytest.raises(ValueError, match="switch"):
        FabricPath([link, link])
    with pytest.raises(ValueError, match="at least one link"):
        FabricPath([])


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
    # CXL 3.0's 4095 routing ids bound the devices attached (systems.topology), not a deep tree's leaf ports
    deep = SwitchTree(4, 15, 16)
    assert deep.n_devices == 50625 and deep.hops(0, deep.n_devices - 1) == 7


def test_microbench_over_paths_of_the_given_link(switch, link):
    out = microbench(switch, {"link": link})
    one = FabricPath([link] * 2, switch)
    assert out["latency_ns"] == {"up": one.message_ns(64), "down": one.message_ns(64)}
    assert out["latency_ns"]["up"] == pytest.approx(177 + link.transfer_ns(64))  # 2 links, 1 switch
    assert out["hops"] == {"host-dev0": 2, "dev0-dev1": 1, "dev0-dev15": 3}
    assert out["path_64B_ns"]["dev0-dev15"] == FabricPath([link] * 4, switch).message_ns(64)
    shared = out["shared_root_port"]  # four senders share the root's upstream port
    assert shared["per_sender_bw_GBps"] * 4 == pytest.approx(shared["aggregate_bw_GBps"])
    assert shared["aggregate_bw_GBps"] == pytest.approx(out["bw_GBps"]["up"])
    with pytest.raises(ValueError, match="link"):
        microbench(switch, {})


def test_switch_parameters_reach_the_path(link):
    slow = build_device("cxl_switch/cxl3-x16", {"hop_latency_ns": 9999.0})
    assert FabricPath([link] * 2, slow).message_ns(64) - FabricPath([link] * 2, build_device("cxl_switch/cxl3-x16")).message_ns(64) == 9999.0 - 23.0
