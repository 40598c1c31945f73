"""CXL switch (family ``cxl_switch``) and multi-level switch trees.

Contract (units: time ns, data B, rate B/ns == GB/s, energy J; the API of
:mod:`cxlsim.devices.base`):

* A switch is its core only: it adds ``hop_latency_ns`` one way per traversal (cut-through
  forwarding) and ``forward_pJ_per_bit`` per forwarded bit; it has ``ports_count`` ports. The links
  on either side are separate link models: a path of links and switches is a
  :class:`~cxlsim.devices.fabric.cxl_path.FabricPath`, which charges every link's latency and every
  switch's hop (``hop_latency_ns`` is derived so that link + switch core reproduce the measured
  per-switch latency; see the preset's ``source:``).
* ``forward_energy_J(wire_B)``: one switch forwarding ``wire_B`` bytes, J;
  ``static_energy_J(wall_ns, count=1)``: ``idle_power_W`` per switch. No bounded op (the switch
  alone has no detailed model to bound; paths have one).
* :class:`SwitchTree` (``levels``, ``fanout``): the host sits above the root switch; every switch of
  level < ``levels`` has ``fanout`` child switches, every leaf switch ``fanout`` devices, so there are
  ``fanout**levels`` devices, numbered 0.. left to right. ``hops(src, dst)`` counts switches on the
  path: host↔device = ``levels``; device↔device = ``2 (levels - k) - 1`` where ``k`` is the depth of
  their common ancestor below the root (peer traffic turns at the lowest common switch). A path of
  ``hops`` switches crosses ``hops + 1`` links. Each switch uses ``fanout + 1`` ports (one
  upstream), which must not exceed ``ports_count``. CXL 3.0 gives at most ``MAX_DEVICES`` attached
  devices a port-based routing id per root port: a bound on the devices a fabric attaches
  (:class:`cxlsim.systems.topology.Fabric`), not on the tree's leaf ports, most of which a deep tree
  leaves empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cxlsim.config.params import Param, Schema
from cxlsim.devices.base import (
    PoweredModel,
    Usage,
    bit_energy_J,
    check_non_negative,
    powered_energy,
)
from cxlsim.devices.fabric.cxl_path import FabricPath
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import MiB

#: CXL 3.0: up to 4095 devices in the fabric of one root port (12-bit port-based routing ids).
MAX_DEVICES = 4095
HOST = "host"

SCHEMA = Schema(
    "cxl_switch",
    (
        Param("hop_latency_ns", float, "one-way latency of one traversal of the switch core (its links are charged by the path)", minimum=0),
        Param("ports_count", int, "ports of the switch (one is the upstream port in a tree)", minimum=2, maximum=1024),
        Param("forward_pJ_per_bit", float, "switch-core energy per forwarded bit (links charged separately)", minimum=0),
        Param("idle_power_W", float, "switch power while idle", minimum=0),
    ),
)


class CxlSwitch(PoweredModel):
    """Pure model of one switch core (no links: see :class:`~cxlsim.devices.fabric.cxl_path.FabricPath`)."""

    STATIC_POWER_PARAM = "idle_power_W"

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self.hop_latency_ns: float = params["hop_latency_ns"]
        self.ports: int = params["ports_count"]

    def path_latency_ns(self, hops: int) -> float:
        """Latency ``hops`` traversals of this switch add, one way: hops × hop latency (ns)."""
        check_non_negative(hops=hops)
        return hops * self.hop_latency_ns

    def forward_energy_J(self, wire_B: float) -> float:
        """Energy of one switch forwarding ``wire_B`` bytes, J."""
        return bit_energy_J(wire_B, self.params["forward_pJ_per_bit"])

    def dynamic_energy_J(self, use: Usage) -> float:
        """Forwarding energy of ``use.moved_B`` wire bytes (J)."""
        return self.forward_energy_J(use.moved_B)

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


# -- microbenchmark --------------------------------------------------------------------------
def microbench(switch: CxlSwitch, options: Mapping[str, Any]) -> dict[str, Any]:
    """One switch between host and device (latency of a 64 B message, saturated 4 KiB bandwidth
    per direction), hop counts and 64 B path times of a 2-level tree, and the bandwidth that
    devices under different leaf switches share on the root's upstream port. Every port is a
    link of ``options["link"]`` (a :class:`~cxlsim.devices.fabric.cxl_link.CxlLink`, required)."""
    link = options.get("link")
    if link is None:
        raise ValueError("the cxl_switch microbenchmark needs options['link'], the ports' link model")
    fanout = min(4, switch.ports - 1)
    one_level, two_level = SwitchTree(1, fanout, switch.ports), SwitchTree(2, fanout, switch.ports)
    size, n = 4096, int(MiB // 4096)

    def path(hops: int) -> FabricPath:
        return FabricPath([link] * (hops + 1), switch)

    one = path(one_level.hops(HOST, 0))
    lat = dict.fromkeys(("up", "down"), one.message_ns(64))
    bw = dict.fromkeys(("up", "down"), n * size / one.stream_ns(n, size))  # a saturated direction
    senders = [(i * fanout, HOST) for i in range(fanout)]  # one device under each leaf switch
    aggregate = n * size / path(two_level.hops(*senders[0])).stream_ns(n, size)  # the root's upstream port
    last = two_level.n_devices - 1
    pairs = {"host-dev0": (HOST, 0), "dev0-dev1": (0, 1), f"dev0-dev{last}": (0, last)}
    return {
        "latency_ns": lat,
        "bw_GBps": bw,
        "hop_latency_ns": switch.hop_latency_ns,
        "tree": {"levels": two_level.levels, "fanout": fanout, "devices": two_level.n_devices},
        "hops": {k: two_level.hops(*pair) for k, pair in pairs.items()},
        "path_64B_ns": {k: path(two_level.hops(*pair)).message_ns(64) for k, pair in pairs.items()},
        "shared_root_port": {"senders": len(senders), "aggregate_bw_GBps": aggregate,
                             "per_sender_bw_GBps": aggregate / len(senders)},
    }


FAMILY = register(
    DeviceFamily(
        name="cxl_switch",
        doc="one CXL switch core: per-hop latency, ports, forwarding energy; trees of switches",
        schema=SCHEMA,
        build=CxlSwitch,
        kind="switch",
        energy=powered_energy,
        microbench=microbench,
    )
)
