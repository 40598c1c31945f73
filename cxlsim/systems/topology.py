"""Scale-out topology (docs/design.md#scale-out): GPUs and CXL-MEMs on a switch tree, and where the
tables live.

Contract:

* :class:`Fabric` places ``topology.gpus_count`` GPUs and ``topology.cxl_mems_count`` CXL-MEMs on the
  leaves of a :class:`~cxlsim.devices.fabric.cxl_switch.SwitchTree` of ``devices.switch.levels`` levels and
  ``topology.fanout_count`` children per switch (0: the switch preset's ports less its upstream
  port); the host hangs above the root. ``attach_policy`` ``packed`` numbers the leaf ports GPUs
  first, then CXL-MEMs; ``interleaved`` alternates them. :meth:`Fabric.path` composes the
  :class:`~cxlsim.devices.fabric.cxl_path.FabricPath` between two endpoints (``("gpu", g)``, ``("mem", m)``
  or ``"host"``) from the role models: a device's own link is its role's (``gpu_link``,
  ``fabric_link``), the links between switch levels are ``fabric_link`` (trunks), the root's
  upstream link is ``host_link``. :meth:`Fabric.lanes` names the link directions a path holds
  (``link.<lower node>.<up|down>``): every link direction of the tree is an exclusive resource of
  the executor, so transfers that share a port queue on it. ``levels: 0`` is direct attach (one GPU
  and one CXL-MEM, no switch): every path is the one ``fabric_link``. Every CXL system's paths come
  from here, one GPU and one CXL-MEM included.
* :class:`Placement` says which CXL-MEM holds each row: ``whole`` spreads whole tables over the
  CXL-MEMs (largest first, onto the least-loaded device by bytes), ``row_sharded`` splits every
  table's rows into ``cxl_mems_count`` contiguous ranges. ``tables_on(m)`` counts the tables whose
  rows a device holds (a row-sharded device holds part of every table, so it pools and receives
  gradients for all of them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cxlsim.devices.fabric.cxl_path import FabricPath
from cxlsim.devices.fabric.cxl_switch import HOST, MAX_DEVICES, SwitchTree
from cxlsim.errors import ConfigError
from cxlsim.systems.graph import DeviceGraph
from cxlsim.workloads.layout import TableLayout

#: The settings that give a topology its devices: a refusal of their number names the one given.
COUNTS = ("topology.gpus_count", "topology.cxl_mems_count")

Endpoint = Any  # ("gpu", g) | ("mem", m) | "host"


@dataclass
class Fabric:
    """The switch tree of a CXL system and the devices on it (module docstring)."""

    devices: DeviceGraph
    gpus: int
    mems: int
    tree: SwitchTree | None  # None: direct attach
    leaf: dict[tuple[str, int], int]  # endpoint -> leaf device number of the tree
    _paths: dict[tuple, FabricPath] = field(default_factory=dict)

    @classmethod
    def of(cls, devices: DeviceGraph, gpus: int, mems: int) -> Fabric:
        cfg = devices.config
        topo = cfg.topology
        switch = devices["switch"]
        levels = cfg.role("switch").levels
        fanout = topo.fanout_count or switch.params.ports_count - 1
        if levels < 1:
            if gpus + mems > 2:
                raise ConfigError(*cfg.origin_of("devices.switch.levels"), "several GPUs or CXL-MEMs need at least one "
                                  "switch level (levels: 0 is one GPU attached directly to one CXL-MEM)")
            for key in ("fanout_count", "attach_policy"):
                topo.skip(key, "levels: 0 attaches the GPU directly to the CXL-MEM")
            return cls(devices, gpus, mems, None, {("gpu", 0): 0, ("mem", 0): 1})
        try:
            tree = SwitchTree(levels, fanout, switch.params.ports_count)
        except ValueError as exc:
            raise ConfigError(*cfg.origin_of("topology.fanout_count", "devices.switch.levels"), str(exc)) from None
        if gpus + mems > MAX_DEVICES:
            raise ConfigError(*cfg.origin_of(*COUNTS), f"{gpus} GPUs + {mems} CXL-MEMs exceed CXL 3.0's "
                              f"{MAX_DEVICES} port-based routing ids per root port")
        if gpus + mems > tree.n_devices:
            need = levels
            while fanout > 1 and fanout**need < gpus + mems:
                need += 1
            raise ConfigError(*cfg.origin_of(*COUNTS, "devices.switch.levels", "topology.fanout_count"),
                              f"{gpus} GPUs + {mems} CXL-MEMs exceed the "
                              f"{tree.n_devices} leaf ports of {levels} switch level(s) with fan-out {fanout}: "
                              f"--set devices.switch.levels={need} (or leave it unset: it then follows from the "
                              "topology), or a larger topology.fanout_count")
        order = ([("gpu", g) for g in range(gpus)] + [("mem", m) for m in range(mems)]
                 if topo.attach_policy == "packed" else _interleave(gpus, mems))
        return cls(devices, gpus, mems, tree, {ep: i for i, ep in enumerate(order)})

    def _node(self, ep: Endpoint) -> int | str:
        return HOST if ep == HOST else self.leaf[tuple(ep)]

    def _link_model(self, node: str) -> Any:
        d = self.devices
        if self.tree is None:
            return d["fabric_link"]
        if node == "s1.0":
            return d["host_link"]
        if node.startswith("dev"):
            i = int(node[3:])
            kind = next(k for k, v in self.leaf.items() if v == i)[0]
            return d["gpu_link"] if kind == "gpu" else d["fabric_link"]
        return d["fabric_link"]  # a trunk between switch levels

    def links(self, src: Endpoint, dst: Endpoint) -> list[tuple[str, str]]:
        """``(lower node, direction)`` of every link from ``src`` to ``dst``, in order."""
        if self.tree is None:  # direct attach: the CXL-MEM's link
            return [("dev1", "up" if src in (("mem", 0), "host") else "down")]
        return self.tree.path_links(self._node(src), self._node(dst))

    def path(self, src: Endpoint, dst: Endpoint) -> FabricPath:
        key = (src, dst)
        if key not in self._paths:
            models = [self._link_model(node) for node, _ in self.links(src, dst)]
            self._paths[key] = FabricPath(models, self.devices["switch"] if len(models) > 1 else None)
        return self._paths[key]

    def lanes(self, src: Endpoint, dst: Endpoint) -> tuple[str, ...]:
        """The executor lanes (link directions) a transfer from ``src`` to ``dst`` holds."""
        return tuple(f"link.{node}.{direction}" for node, direction in self.links(src, dst))

    def powered_links(self) -> list[Any]:
        """Every link the fabric powers (device links, trunks in use, the host's link): the
        union of the links of every device's path to the host."""
        nodes: dict[str, Any] = {}
        for ep in self.leaf:
            for node, _ in self.links(ep, HOST):
                nodes.setdefault(node, self._link_model(node))
        return list(nodes.values())

    def powered_switches(self) -> int:
        """Switches on some device's path to the host."""
        if self.tree is None:
            return 0
        return len({node for ep in self.leaf for node in self.tree.upward_nodes(self.leaf[ep])[1:]})


def _interleave(gpus: int, mems: int) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for i in range(max(gpus, mems)):
        if i < gpus:
            out.append(("gpu", i))
        if i < mems:
            out.append(("mem", i))
    return out


@dataclass(frozen=True)
class Placement:
    """Which CXL-MEM holds each row of the tables (module docstring)."""

    layout: TableLayout
    mems: int
    policy: str
    table_mem: np.ndarray  # whole: device of each table

    @classmethod
    def of(cls, layout: TableLayout, mems: int, policy: str) -> Placement:
        rows = np.diff(np.append(layout.row_base, layout.total_rows))
        table_mem = np.zeros(rows.size, np.int64)
        if policy == "whole" and mems > 1:
            load = np.zeros(mems)
            for t in np.argsort(-rows, kind="stable"):
                m = int(np.argmin(load))
                table_mem[t] = m
                load[m] += rows[t]
        return cls(layout, mems, policy, table_mem)

    def mem_of(self, rows: np.ndarray) -> np.ndarray:
        """The CXL-MEM of each global row."""
        if self.mems == 1:
            return np.zeros(rows.size, np.int64)
        table = np.searchsorted(self.layout.row_base, rows, side="right") - 1
        if self.policy == "whole":
            return self.table_mem[table]
        base = self.layout.row_base[table]
        sizes = np.diff(np.append(self.layout.row_base, self.layout.total_rows))[table]
        return (rows - base) * self.mems // sizes

    def tables_on(self, m: int) -> int:
        """Tables whose rows device ``m`` holds (all of them when row-sharded)."""
        if self.policy == "row_sharded" or self.mems == 1:
            return int(self.table_mem.size)
        return int(np.count_nonzero(self.table_mem == m))
