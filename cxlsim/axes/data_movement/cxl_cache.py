"""``data_movement: cxl_cache``: DCOH flushes over CXL.cache, the CXL.io engine DMAs the indices,
the all-reduce writes CXL.mem lines GPU to GPU over the switch tree (docs/design.md#data-movement,
docs/design.md#scale-out)."""

from __future__ import annotations

import math

from cxlsim.axes.data_movement import DataMover
from cxlsim.engine.executor import OpOutcome
from cxlsim.systems.activity import cxl_path_key
from cxlsim.systems.machine import CONFIG_REGISTERS
from cxlsim.units import WIRE_INDEX_B

#: the CXL fabric's roles (links, switch, protocol costs)
FABRIC_ROLES = ["fabric_link", "gpu_link", "host_link", "switch", "cxl_protocol"]


class CxlCache(DataMover):
    """Transfers on the CXL fabric: each holds every link direction of its path."""

    lane = "cxl.link"
    over_fabric = True

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return list(FABRIC_ROLES)

    def config(self, n: int, t: float, m: int) -> OpOutcome:
        """The host posts the registers; the device's CXL.io engine DMAs the indices itself."""
        mc = self.m
        idx_B = mc.batch(n, m).n_indices * WIRE_INDEX_B
        path = mc.path("host", ("mem", m))
        mc.count_link(cxl_path_key("host", mc.endpoint(("mem", m))), mc.cxl.read_cost(idx_B, 0.0, path).size_B)  # index DMA
        return OpOutcome(t + mc.cxl.configure_batch_ns(CONFIG_REGISTERS, idx_B, path, mc.cpu))

    def move(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        """A DCOH flush of ``nbytes`` over the path, timed by the CXL memory model's bulk form
        (:meth:`~cxlsim.devices.fabric.cxl_protocol.CxlProtocol.flush_ns`); it holds the path's
        link directions (:meth:`transfer_lanes`) while it runs."""
        mc = self.m
        path = mc.path(src, dst)
        lines = math.ceil(nbytes / mc.cxl.line_B)
        mc.count_link(cxl_path_key(src, dst), mc.cxl.flush_cost(lines, path).size_B)
        return OpOutcome(t + mc.cxl.flush_ns(lines, path))

    def move_class(self, nbytes: float, src, dst) -> tuple[float, list[tuple[str, float]]]:
        """The ``groups`` transfers one after another on the source's link, each on its own path
        of the full tree and timed alone by the CXL memory model's bulk form (a DCOH flush,
        :meth:`~cxlsim.devices.fabric.cxl_protocol.CxlProtocol.flush_ns`), ``ρ`` times as long as
        alone while every group's traffic shares its trunks
        (:meth:`~cxlsim.systems.symmetry.SystemFabric.load`: full detail's rule, a transfer holds its
        path's lanes); each trunk's transfer time is kept for
        :meth:`~cxlsim.systems.machine.TrainingMachine.trunk_busy_ns`."""
        mc = self.m
        phase = "pooled" if src[0] == "mem" else "grads"
        lines = math.ceil(nbytes / mc.cxl.line_B)
        total, counts = 0.0, []
        for a, b in mc.reduction.represented(src, dst):
            path = mc.system_fabric.path(a, b)
            alone = mc.cxl.flush_ns(lines, path)
            total += mc.trunk_load(a, b, phase) * alone
            counts.append((cxl_path_key(a, b), mc.cxl.flush_cost(lines, path).size_B))
            for node, direction in mc.system_fabric.links(a, b):
                if not node.startswith("dev"):
                    mc.record_trunk(phase, node, direction, alone)
        return total, counts

    def transfer_lanes(self, src, dst) -> tuple[str, ...]:
        if self.m.fabric is None:
            return ()
        return self.m.fabric.lanes(src, dst)

    def ring_step_ns(self, size_B: float) -> float:
        """A link direction that several sends cross serialises them: the step takes the longest
        path latency plus the busiest link's serialisation (CXL.mem line writes, 64 B each); a
        reduced run times the whole system's ring. Not yet the CXL memory model's bulk form (its
        acknowledged writes, credit waves and egress sharing): moving the ring onto it slowed
        `cxl` RM4 on 16 GPUs x 16 CXL-MEMs by 38 % and split the reduced run's bottleneck from full
        detail's, a change left for its own review (docs/validation.md, "Known gaps")."""
        mc = self.m
        fabric = mc.system_fabric
        lines = math.ceil(size_B / mc.cxl.line_B)
        busy: dict[str, float] = {}
        latency = 0.0
        for src, dst in mc.system_ring():
            path = fabric.path(src, dst)
            latency = max(latency, mc.cxl.write_line_ns(0.0, path))
            for lane, link in zip(fabric.lanes(src, dst), path.links, strict=True):
                busy[lane] = busy.get(lane, 0.0) + link.stream_ns(lines, mc.cxl.line_B)
        return latency + max(busy.values())

    def count_ring_edge(self, src, dst, steps: int, shard_B: float) -> None:
        mc = self.m
        path = mc.system_fabric.path(src, dst)
        mc.count_link(cxl_path_key(src, dst), steps * mc.cxl.write_cost(shard_B, 0.0, path).size_B)

    def declare_unused(self) -> None:
        if not self.m.engine.on_device:
            _skip_mmio(self.m)
        _skip_cache_ops(self.m)


def _skip_cache_ops(machine) -> None:
    """The CXL.cache op parameters no data movement of these systems times (docs/devices-fabric.md,
    "CXL.cache operations and coherence tracking"): flushes write back lines the device owns (no
    new tracking entry, no push write) and no step's time is a hit in a device's cache; an MLP pull
    over CXL.cache declares the tracking cap itself (:class:`~cxlsim.axes.mlp_pull.cxl_cache.CxlCachePull`)."""
    cxl = machine.cxl.params
    if not getattr(getattr(machine, "puller", None), "over_cxl_cache", False):
        cxl.skip("coherence_alloc_interval_ns", "no step allocates a coherence-tracking entry (flushed lines stay tracked)")
    cxl.skip("home_write_interval_ns", "no step pushes lines with ItoMWr/WOWrInvF (flushes are writebacks of owned lines)")
    cxl.skip("device_cache_hit_ns", "no step's time is a hit in a device's cache")


def _skip_mmio(machine) -> None:
    machine.cpu.params.skip("mmio_write_instructions", "the host configures no CXL device's registers here (it "
                            "dispatches the embedding operator itself, or copies the indices over PCIe)")
