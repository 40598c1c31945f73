"""Symmetry reduction of data-parallel scale-out (docs/design.md#scale-out; docs/scale-out.md,
"Symmetry").

When the GPUs, the CXL-MEMs (or PCIe cards) and their table shards are identical, the system is
``k`` identical *groups*: ``k = min(G, M)`` and group ``j`` holds GPUs ``j, j + k, j + 2k, …``
(``g = G / k`` of them) and memory devices ``j, j + k, …`` (``m = M / k``). Batches are lock-step
(data-parallel training), so every group does the same work at the same time. A reduced run
simulates group 0's places in full detail (its ``g`` GPUs on ``g × batch_size`` samples, its ``m``
memory devices, their lanes, media and logic) and models what the other groups add analytically:

* **The memory devices serve the busiest device's streams.** A lock-step batch waits for the
  slowest memory device, the one holding the system's hottest rows; the representative's devices
  serve the streams of the group holding it (:func:`representative_streams`,
  :mod:`cxlsim.systems.device_streams`): each its own part of the whole system's batches, drawn
  without the system's streams.

* **A transfer of the representative stands for its class.** Memory device ``b`` of the group
  (device ``b·k`` of the system) sends pooled vectors to every GPU: the representative op
  ``pooled.<b>.<a>`` is the ``k`` transfers to GPU ``a`` of every group (``a·k + j``, ``j < k``),
  each of the full system's size and on its own path of the full switch tree, one after another on
  the device's link (as the full system's transfers from one device serialise on its port). The
  gradients mirror them. So each device link of the group carries exactly the bytes and transfers
  it carries in the full system.
* **Shared links** (the trunks between switch levels): in the full system a trunk ``ℓ`` carries
  ``n_ℓ`` of the phase's transfers (all groups, time-aligned). Full detail holds every link
  direction of a transfer's path for the whole transfer (latency included), so the phase lasts at
  least ``n_ℓ`` transfer times. The reduced run's own lanes already serialise the group's ops: a
  memory device's link carries its ``G`` pooled transfers, a GPU's its ``M`` gradients, and the
  other end's link (``M`` pooled, ``G`` gradients) serialises the group's ops to it, so the group's
  busiest lane carries ``max(G, M)`` transfers per phase. A represented transfer therefore takes
  ``ρ = max(1, n_ℓ / max(G, M))`` times its own time, ``ℓ`` the most loaded trunk of its path
  (:meth:`SystemFabric.load`): the busiest lane's transfers then end when ``ℓ`` has carried every
  group's (named approximation, *deterministic trunk sharing*: the groups' transfers interleave on
  the trunk in equal shares; its error is measured in docs/scale-out.md).
* **The all-reduce** is timed over the full system's ring (its busiest link direction, as in
  full detail) and holds the group's GPU links (the system's ring crosses them all); the host,
  shared by every group, issues ``k`` times the representative's software copies (``pcie``).
* **Accounting**: every batch's ledger is the group's; :attr:`Reduction.groups` scales it to the
  system in the energy model. Utilisation is the representative devices' and the trunks' as full
  detail would count them (:meth:`~cxlsim.systems.machine.TrainingMachine.trunk_busy_ns`).

Refused (:class:`SymmetryRefused`, one line, exit 2), with the reason: a GPU count that is not a
multiple of the group's (neither count divides the other), uneven table shards (``whole`` tables
that do not split equally over the memory devices), a host-CPU embedding engine (one host serves
every GPU: nothing splits into groups). Presets cannot be mixed within a role (one preset per
role), so devices of a role are identical by construction.

Policy (``topology.symmetry``): ``off`` (full detail), ``on`` (reduce wherever the system has at
least two groups, else refuse), ``auto`` (the default: reduce from :data:`AUTO_MIN_GPUS` GPUs on,
refusing an asymmetric configuration there with the ``--set`` that runs it; full detail below,
where every golden runs). Each refusal names the setting that fixes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cxlsim.devices.fabric.cxl_switch import HOST
from cxlsim.errors import InputError
from cxlsim.systems import axes
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.topology import Fabric, Placement
from cxlsim.workloads.layout import TableLayout

#: The setting that runs a configuration the reduction refuses in full detail (named in refusals).
OFF = "--set topology.symmetry=off"
#: ``auto`` reduces from this many GPUs on: full detail at 16 GPUs × 16 CXL-MEMs already costs
#: ≈ 12 s and 1.3 GB per batch (``cxlsim bench``) and grows linearly with the devices.
AUTO_MIN_GPUS = 32


class SymmetryRefused(InputError):
    """The configuration is not symmetric (or has one group): the reduction cannot apply."""


#: The settings a symmetry refusal is blamed on, the first one given (else the system file).
SYMMETRY_SETTINGS = ("topology.symmetry", "topology.gpus_count", "topology.cxl_mems_count", "topology.tables_policy")


def located_refusal(cfg: SystemConfig, exc: SymmetryRefused) -> SymmetryRefused:
    """``exc`` (which says ``topology.symmetry: POLICY: ...``) naming where the setting that caused
    it was given: ``--set: topology.gpus_count: ...``, ``--symmetry: ...``, a file and its key."""
    where, there = cfg.origin_of(*SYMMETRY_SETTINGS)
    text = str(exc)
    if there in ("", "topology.symmetry", "symmetry") or there.endswith(".symmetry"):
        text = text.removeprefix("topology.symmetry: ")
    return SymmetryRefused(f"{where}: {there}: {text}" if there else f"{where}: {text}")


@dataclass(frozen=True)
class Reduction:
    """A system of ``gpus`` GPUs and ``mems`` memory devices as ``groups`` identical groups of
    ``group_gpus`` and ``group_mems`` (module docstring)."""

    gpus: int
    mems: int
    group_gpus: int
    group_mems: int
    tables_per_mem: int  # tables whose rows one memory device holds in the full system

    @property
    def groups(self) -> int:
        return self.gpus // self.group_gpus

    def full(self, ep: Any) -> Any:
        """The system endpoint of the representative's endpoint ``ep`` (group 0)."""
        if ep == HOST:
            return HOST
        kind, i = ep
        return (kind, i * self.groups)

    def represented(self, src: Any, dst: Any) -> list[tuple[Any, Any]]:
        """The system's transfers a representative transfer ``src → dst`` stands for: from the
        source's system device to the destination's counterpart in every group."""
        s, (kind, i) = self.full(src), self.full(dst)
        return [(s, (kind, i + j)) for j in range(self.groups)]

    def summary(self) -> dict[str, Any]:
        return {"reduced": True, "groups": self.groups, "group_gpus": self.group_gpus,
                "group_mems": self.group_mems}


def plan(cfg: SystemConfig, layout: TableLayout) -> Reduction | None:
    """The reduction ``cfg``'s ``topology.symmetry`` asks for, or ``None`` for full detail.
    Raises :class:`SymmetryRefused` (the reason) where it must reduce and cannot."""
    topo, p = cfg.topology, cfg.pipeline
    policy = topo.symmetry
    G, M = topo.gpus_count, topo.cxl_mems_count
    if policy == "off" or (policy == "auto" and G < AUTO_MIN_GPUS):
        return None
    why = f"topology.symmetry: {policy}: {cfg.name} with {G} GPUs and {M} memory devices is not symmetric: "
    if not axes.of(p, "embedding_engine").on_device:
        raise SymmetryRefused(why + "one host CPU serves every GPU's embeddings, so nothing splits into groups: "
                              f"{OFF} runs it in full detail")
    k = min(G, M)
    if G % k or M % k:
        raise SymmetryRefused(why + "the GPU count is not a multiple of the memory devices' (or the reverse), "
                              f"so they do not split into identical groups: {OFF} runs it in full detail, or "
                              "counts of which one divides the other reduce")
    if k < 2:
        raise SymmetryRefused(f"topology.symmetry: {policy}: {cfg.name} with {G} GPU(s) and {M} memory device(s) "
                              f"is one group: there is nothing to reduce ({OFF})")
    tables = shard_tables(layout, M, topo.tables_policy, why)
    return Reduction(G, M, G // k, M // k, tables)


def shard_tables(layout: TableLayout, mems: int, policy: str, why: str) -> int:
    """Tables on each of ``mems`` devices, checking that every device holds an equal shard
    (``whole``: as many tables of equal rows; ``row_sharded``: every table's rows split into ranges
    that differ by at most one row)."""
    rows = np.diff(np.append(layout.row_base, layout.total_rows))
    if policy == "row_sharded" or mems == 1:
        if mems > 1 and int(rows.min()) < mems:
            raise SymmetryRefused(why + f"a table of {int(rows.min())} rows cannot be row-sharded over {mems} devices "
                                  f"into equal shards: {OFF} runs it in full detail")
        return int(rows.size)
    pl = Placement.of(layout, mems, policy)
    per_mem = np.bincount(pl.table_mem, minlength=mems)
    bytes_per = np.bincount(pl.table_mem, weights=rows, minlength=mems)
    if per_mem.min() != per_mem.max() or bytes_per.min() != bytes_per.max():
        raise SymmetryRefused(why + f"its {rows.size} whole tables do not split into equal shards over {mems} devices "
                              f"({int(per_mem.min())}-{int(per_mem.max())} tables each): --set "
                              "topology.tables_policy=row_sharded splits every table (or leave it unset: it then "
                              "follows from the topology)")
    return int(per_mem[0])


@dataclass
class SystemFabric:
    """The full system's switch tree seen from a reduced run: its paths, and per phase the
    transfers each shared link direction carries (module docstring)."""

    fabric: Fabric
    gpus: int
    mems: int
    _counts: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    _loaded: dict[tuple, float] = field(default_factory=dict)

    def counts(self, phase: str) -> dict[tuple[str, str], int]:
        """``(node, direction) → transfers`` of ``phase`` (``pooled``: every memory device to
        every GPU; ``grads``: the reverse) crossing each trunk of the tree, in closed form: a link
        above a subtree of ``a`` memory devices and ``b`` GPUs carries ``a (G − b)`` pooled
        transfers up and ``b (M − a)`` down."""
        if phase not in self._counts:
            tree = self.fabric.tree
            inside: dict[str, list[int]] = {}
            if tree is not None:
                for (kind, _), leaf in self.fabric.leaf.items():
                    for node in tree.upward_nodes(leaf)[1:]:
                        inside.setdefault(node, [0, 0])[0 if kind == "mem" else 1] += 1
            out: dict[tuple[str, str], int] = {}
            for node, (a, b) in inside.items():
                up, down = a * (self.gpus - b), b * (self.mems - a)
                out[(node, "up")], out[(node, "down")] = (up, down) if phase == "pooled" else (down, up)
            self._counts[phase] = out
        return self._counts[phase]

    def load(self, src: Any, dst: Any, phase: str) -> float:
        """``ρ``: how many times as long a transfer from ``src`` to ``dst`` (system endpoints)
        takes while every group's traffic of ``phase`` shares the tree: the largest
        ``max(1, n_ℓ / max(G, M))`` over the trunks ``ℓ`` of its path (module docstring)."""
        key = (src, dst, phase)
        if key not in self._loaded:
            busiest_lane = max(self.gpus, self.mems)
            counts = self.counts(phase)
            n = max((counts.get(link, 0) for link in self.fabric.links(src, dst) if not link[0].startswith("dev")),
                    default=0)
            self._loaded[key] = max(1.0, n / busiest_lane)
        return self._loaded[key]


def representative_streams(red: Reduction, workload: Any, policy: str, seed: int, n: int) -> list:
    """The streams of the representative's memory devices: those of the group holding the system's
    busiest device (:func:`~cxlsim.systems.device_streams.busiest_device`; a lock-step batch waits
    for it), each device's part of the whole system's batches
    (:class:`~cxlsim.systems.device_streams.DeviceStreams`)."""
    from cxlsim.systems.device_streams import DeviceStreams, busiest_device, heads

    if workload.params.trace:
        raise SymmetryRefused(f"topology.symmetry: the reduction draws a device's stream from the generator's "
                              f"distribution, which a trace ({workload.params.trace}) does not follow: {OFF} runs "
                              "it in full detail")
    layout = TableLayout.from_workload(workload)
    placement = Placement.of(layout, red.mems, policy)
    hs = heads(workload, layout, seed)
    group = busiest_device(hs, placement) % red.groups
    return [DeviceStreams(workload, red.gpus, placement, group + i * red.groups, seed, n, hs)
            for i in range(red.group_mems)]


def group_ring_edges(red: Reduction) -> list[tuple[Any, Any]]:
    """The full ring's edges that leave the representative's GPUs (``groups`` of them make the ring)."""
    return [(("gpu", a * red.groups), ("gpu", (a * red.groups + 1) % red.gpus)) for a in range(red.group_gpus)]


def chips_group(chips: int, policy: str, name: str) -> int | None:
    """The representative chips of a ``tpu-ps`` run of ``chips`` chips (every chip trains the same
    per-chip batch: the group's per-chip distinct ids are tiled over the chips), or ``None``."""
    if policy == "off" or (policy == "auto" and chips < AUTO_MIN_GPUS):
        return None
    group = math.gcd(chips, TPU_GROUP_CHIPS)
    if chips // group < 2:
        raise SymmetryRefused(f"topology.symmetry: {policy}: {name} with {chips} chip(s) is one group: there is "
                              f"nothing to reduce ({OFF})")
    return group


#: Chips a reduced ``tpu-ps`` run draws samples for (their distinct ids per table stand for every chip's).
TPU_GROUP_CHIPS = 16
