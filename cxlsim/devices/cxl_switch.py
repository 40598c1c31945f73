"""CXL switch (family ``cxl_switch``) and multi-level switch trees.

Contract (units: time ns, data B, rate B/ns == GB/s, energy J):

* A switch adds ``hop_latency_ns`` one way per traversal (cut-through forwarding), *including* the
  ports and wire of the extra link it inserts (CXL-DMSim measures a switch as +≈200 ns round trip
  over direct attach, so the inserted link is not charged again), and
  ``forward_pJ_per_bit`` per forwarded bit; it has ``ports_count`` ports, each a link of preset
  ``link_preset_name``. ``path_latency_ns(hops)`` = hops × hop latency (switches only; the links
  of the path are charged by :mod:`cxlsim.devices.cxl_link`).
* :class:`SwitchTree` (``levels``, ``fanout``): the host sits above the root switch; every switch of
  level < ``levels`` has ``fanout`` child switches, every leaf switch ``fanout`` devices, so there are
  ``fanout**levels`` devices, numbered 0.. left to right. ``hops(src, dst)`` counts switches on the
  path: host↔device = ``levels``; device↔device = ``2 (levels - k) - 1`` where ``k`` is the depth of
  their common ancestor below the root (peer traffic turns at the lowest common switch). Each
  switch uses ``fanout + 1`` ports (one upstream), which must not exceed ``ports_count``; CXL 3.0
  allows at most ``MAX_DEVICES`` devices per root port.
* Analytic bound of a path transfer: ``link latency + hops × hop latency + size / raw bw``.

Simpy: :class:`SwitchTreeComponent` creates one server per direction for every link of the tree
(device↔leaf switch, switch↔parent switch, root↔host). A transfer holds every link of its path for
its serialisation time (cut-through: the links overlap, and links are acquired in a fixed global
order, so paths cannot deadlock), then flies the path latency. Transfers that share an upstream port
therefore queue on it.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

from cxlsim.config.params import Param, Schema
from cxlsim.devices.base import BandwidthServer, Cost, check_non_negative
from cxlsim.devices.cxl_link import CxlLink
from cxlsim.devices.registry import DeviceFamily, build_device, register
from cxlsim.engine.component import Component, Simulation
from cxlsim.units import PJ, MiB

#: CXL 3.0: up to 4095 devices in the fabric of one root port (12-bit port-based routing ids).
MAX_DEVICES = 4095
HOST = "host"

SCHEMA = Schema(
    "cxl_switch",
    (
        Param("hop_latency_ns", float, "one-way latency added by one traversal of the switch", minimum=0),
        Param("ports_count", int, "ports of the switch (one is the upstream port in a tree)", minimum=2, maximum=1024),
        Param("link_preset_name", str, "cxl_link preset of each port's link"),
        Param("forward_pJ_per_bit", float, "switch-core energy per forwarded bit (links charged separately)", minimum=0),
        Param("idle_power_W", float, "switch power while idle", minimum=0),
    ),
)


class CxlSwitch:
    """Pure timing model of one switch; ``link`` is the model of its ports' links."""

    def __init__(self, params: Mapping[str, Any], link: CxlLink | None = None) -> None:
        self.params = params
        self.hop_latency_ns: float = params["hop_latency_ns"]
        self.ports: int = params["ports_count"]
        self.link: CxlLink = link if link is not None else build_device(params["link_preset_name"])

    def path_latency_ns(self, hops: int) -> float:
        """Latency the switches of a path add, one way: hops × hop latency (ns)."""
        check_non_negative(hops=hops)
        return hops * self.hop_latency_ns

    def path_ns(self, payload_B: float, hops: int) -> float:
        """Unloaded one-way time of one message over ``hops`` switches (hops + 1 links), ns.

        Cut-through: the message serialises once (all links have the same rate), pays one link
        latency and every switch's hop latency (which covers the link the switch inserts).
        """
        return self.link.latency_ns + self.path_latency_ns(hops) + self.link.transfer_ns(payload_B)

    def path_bound_ns(self, payload_B: float, hops: int) -> float:
        """Analytic bound of :meth:`path_ns`: latencies + payload / raw bandwidth, ns."""
        return self.link.latency_ns + self.path_latency_ns(hops) + payload_B / self.link.raw_bw_GBps

    def forward_energy_J(self, wire_B: float, hops: int) -> float:
        """Energy of ``wire_B`` bytes crossing ``hops`` switches and ``hops + 1`` links, J."""
        per_bit = self.params["forward_pJ_per_bit"] * hops + self.link.params["energy_pJ_per_bit"] * (hops + 1)
        return wire_B * 8 * per_bit * PJ

    def path(self, payload_B: float, hops: int) -> Cost:
        """One lone message over a path: time, wire bytes (per link), energy of all links and switches."""
        wire = self.link.wire_B(payload_B)
        return Cost(self.path_ns(payload_B, hops), wire, self.forward_energy_J(wire, hops))

    def tree(self, levels: int, fanout: int) -> SwitchTree:
        return SwitchTree(levels, fanout, self.ports)


@dataclass(frozen=True)
class SwitchTree:
    """A ``levels``-deep tree of switches with ``fanout`` children each; devices at the leaves."""

    levels: int
    fanout: int
    ports_count: int = 1024

    def __post_init__(self) -> None:
        if self.levels < 1 or self.fanout < 1:
            raise ValueError("a switch tree needs levels >= 1 and fanout >= 1")
        if self.fanout + 1 > self.ports_count:
            raise ValueError(f"fanout {self.fanout} + 1 upstream port exceeds the switch's {self.ports_count} ports")
        if self.n_devices > MAX_DEVICES:
            raise ValueError(f"{self.n_devices} devices exceed CXL 3.0's {MAX_DEVICES} per root port")

    @property
    def n_devices(self) -> int:
        return self.fanout**self.levels

    @property
    def n_switches(self) -> int:
        return sum(self.fanout**i for i in range(self.levels))

    def _digits(self, device: int) -> tuple[int, ...]:
        if not 0 <= device < self.n_devices:
            raise ValueError(f"device {device} outside 0..{self.n_devices - 1}")
        out = []
        for _ in range(self.levels):
            device, r = divmod(device, self.fanout)
            out.append(r)
        return tuple(reversed(out))

    def hops(self, src: int | str, dst: int | str) -> int:
        """Switches traversed from ``src`` to ``dst`` (device numbers or ``"host"``)."""
        if src == dst:
            return 0
        if src == HOST or dst == HOST:
            self._digits(dst if src == HOST else src)  # range check
            return self.levels
        a, b = self._digits(int(src)), self._digits(int(dst))
        k = next(i for i in range(self.levels) if a[i] != b[i])
        return 2 * (self.levels - k) - 1

    def upward_nodes(self, device: int) -> list[str]:
        """Nodes from ``device`` up to the root switch: ``dev<i>``, then switch ids ``s<level>.<idx>``."""
        digits = self._digits(device)
        nodes = [f"dev{device}"]
        for level in range(self.levels, 0, -1):
            idx = 0
            for d in digits[: level - 1]:
                idx = idx * self.fanout + d
            nodes.append(f"s{level}.{idx}")
        return nodes

    def path_links(self, src: int | str, dst: int | str) -> list[tuple[str, str]]:
        """Links of the path as ``(child_node, direction)``; a link is named by its lower node."""
        if src == dst:
            return []
        if src == HOST:
            up = self.upward_nodes(int(dst))
            return [(n, "down") for n in reversed(up)]
        if dst == HOST:
            return [(n, "up") for n in self.upward_nodes(int(src))]
        ua, ub = self.upward_nodes(int(src)), self.upward_nodes(int(dst))
        common = set(ua) & set(ub)
        lca = next(n for n in ua if n in common)
        a_links = [(n, "up") for n in ua[: ua.index(lca)]]
        b_links = [(n, "down") for n in reversed(ub[: ub.index(lca)])]
        return a_links + b_links


class SwitchTreeComponent(Component):
    """Simpy model of a switch tree: per-link, per-direction servers shared by all paths."""

    def __init__(self, sim: Simulation, name: str, switch: CxlSwitch, tree: SwitchTree) -> None:
        super().__init__(sim, name)
        self.switch = switch
        self.tree = tree
        self.links: dict[tuple[str, str], BandwidthServer] = {}
        nodes = [f"dev{i}" for i in range(tree.n_devices)]
        for level in range(1, tree.levels + 1):
            nodes += [f"s{level}.{i}" for i in range(tree.fanout ** (level - 1))]
        for node in nodes:
            for d in ("up", "down"):
                self.links[(node, d)] = BandwidthServer(sim, f"{name}.{node}.{d}", 1, lane=f"switch.{name}.{node}.{d}")
        self._order = {key: i for i, key in enumerate(self.links)}

    def transfer(self, src: int | str, dst: int | str, payload_B: float, label: str = "", batch: int = -1) -> Generator[Any, Any, float]:
        """Process: move one message of ``payload_B`` from ``src`` to ``dst``; returns arrival (ns)."""
        path = self.tree.path_links(src, dst)
        hops = self.tree.hops(src, dst)
        duration = self.switch.link.transfer_ns(payload_B)
        ordered = sorted(path, key=self._order.__getitem__)
        requests = []
        for key in ordered:  # fixed global order: no deadlock between crossing paths
            server = self.links[key]
            assert server.resource is not None
            req = server.resource.request()
            requests.append((server, req))
            yield req
        start = self.env.now
        yield self.env.timeout(duration)
        for server, req in requests:
            server.resource.release(req)
            server.busy.add(duration)
            server.requests.add(1)
            self.sim.trace.record(server.lane, start, self.env.now, label, batch)
        yield self.env.timeout(self.switch.link.latency_ns + self.switch.path_latency_ns(hops))
        return float(self.env.now)


# -- microbenchmark --------------------------------------------------------------------------
def microbench(switch: CxlSwitch, options: Mapping[str, Any]) -> dict[str, Any]:
    """Measure by simulation: one switch between host and device (latency of a 64 B message,
    saturated 4 KiB bandwidth per direction), hop counts of a 2-level tree, and the bandwidth that
    devices under different leaf switches share on the root's upstream port."""
    fanout = min(4, switch.ports - 1)
    one_level, two_level = SwitchTree(1, fanout, switch.ports), SwitchTree(2, fanout, switch.ports)
    size, n = 4096, int(MiB // 4096)

    def run(tree: SwitchTree, pairs: list[tuple[Any, Any]], count: int, payload: float) -> float:
        """Time until the last of ``count`` messages per pair, all offered at t = 0, arrives (ns)."""
        sim = Simulation(seed=0, trace=False)
        comp = SwitchTreeComponent(sim, "probe", switch, tree)
        ends: list[float] = []

        def one(s, d):
            ends.append((yield from comp.transfer(s, d, payload)))

        for s, d in pairs:
            for _ in range(count):
                sim.env.process(one(s, d))
        sim.run()
        return max(ends)

    def flight(tree: SwitchTree, hops: int) -> float:  # latency after serialisation
        return switch.link.latency_ns + switch.path_latency_ns(hops)

    lat = {"up": run(one_level, [(0, HOST)], 1, 64), "down": run(one_level, [(HOST, 0)], 1, 64)}
    bw = {
        d: n * size / (run(one_level, [pair], n, size) - flight(one_level, 1))
        for d, pair in (("up", (0, HOST)), ("down", (HOST, 0)))
    }
    senders = [(i * fanout, HOST) for i in range(fanout)]  # one device under each leaf switch
    per = n // len(senders)
    aggregate = len(senders) * per * size / (run(two_level, senders, per, size) - flight(two_level, 2))
    last = two_level.n_devices - 1
    return {
        "latency_ns": lat,
        "bw_GBps": bw,
        "hop_latency_ns": switch.hop_latency_ns,
        "tree": {"levels": two_level.levels, "fanout": fanout, "devices": two_level.n_devices},
        "hops": {"host-dev0": two_level.hops(HOST, 0), "dev0-dev1": two_level.hops(0, 1), f"dev0-dev{last}": two_level.hops(0, last)},
        "path_64B_ns": {k: switch.path_ns(64, h) for k, h in (("host-dev0", two_level.hops(HOST, 0)), ("dev0-dev1", two_level.hops(0, 1)), (f"dev0-dev{last}", two_level.hops(0, last)))},
        "shared_root_port": {"senders": len(senders), "aggregate_bw_GBps": aggregate, "per_sender_bw_GBps": aggregate / len(senders)},
    }


FAMILY = register(
    DeviceFamily(
        name="cxl_switch",
        doc="one CXL switch: per-hop latency, ports, forwarding energy; trees of switches",
        schema=SCHEMA,
        build=CxlSwitch,
        microbench=microbench,
    )
)
