"""``data_movement: software``: the CUDA-like software path over PCIe (launch, copy, sync); a copy
to or from a PCIe card bounces through host memory (docs/design.md#pcie-and-the-software-path).
Every copy has its route (:data:`~cxlsim.devices.fabric.pcie.ROUTES`): the indices go host → card
(``h2d``); pooled vectors go host → GPU (``h2d``) and gradients GPU → host (``d2h``) where the
host's engine holds them, and bounce (``d2h2d``: device → host, host → device) where a card's does;
a ring step bounces."""

from __future__ import annotations

from cxlsim.axes.data_movement import DataMover
from cxlsim.axes.data_movement.cxl_cache import _skip_mmio
from cxlsim.engine.executor import OpOutcome
from cxlsim.units import WIRE_INDEX_B


def route(bounce: bool, src) -> str:
    """The route of a software copy from ``src`` (``("gpu", g)`` or ``("mem", m)``): a bounce
    through host memory, else GPU → host (``d2h``) or host → GPU (``h2d``)."""
    if bounce:
        return "d2h2d"
    return "d2h" if src[0] == "gpu" else "h2d"


class Software(DataMover):
    """Transfers issued by the host, one after another on its lane."""

    lane = "host_cpu"

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return ["pcie"]

    def config(self, n: int, t: float, m: int) -> OpOutcome:
        """The host copies every device's indices: in a reduced run, this device's in every group."""
        mc = self.m
        idx_B = mc.batch(n, m).n_indices * WIRE_INDEX_B
        mc.count_link("pcie", mc.pcie.memcpy_cost(idx_B, "h2d", mc.cpu).size_B)
        copies = mc.reduction.groups if mc.reduction else 1
        return OpOutcome(t + copies * (mc.pcie.launch_ns(mc.cpu) + mc.pcie.memcpy_ns(idx_B, "h2d", mc.cpu)))

    def _one_ns(self, nbytes: float, way: str) -> float:
        mc, host = self.m, self.m.cpu
        return mc.pcie.sync_ns(host) + mc.copy_ns(nbytes, way) + mc.pcie.launch_ns(host)

    def move(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        mc = self.m
        way = route(mc.engine.bounces, src)
        mc.count_link("pcie", mc.pcie.memcpy_cost(nbytes, way, mc.cpu).size_B)
        return OpOutcome(t + self._one_ns(nbytes, way))

    def move_class(self, nbytes: float, src, dst) -> tuple[float, list[tuple[str, float]]]:
        """``groups`` copies per group on the one host every group shares (``groups²`` copies)."""
        mc, red = self.m, self.m.reduction
        way = route(mc.engine.bounces, src)
        total = red.groups * red.groups * self._one_ns(nbytes, way)
        return total, [("pcie", red.groups * mc.pcie.memcpy_cost(nbytes, way, mc.cpu).size_B)]

    def ring_step_ns(self, size_B: float) -> float:
        """Each GPU's copy bounces through host memory, the host issuing them one after another."""
        mc, h = self.m, self.m.cpu
        return mc.system_gpus * (mc.copy_ns(size_B, "d2h2d") + mc.pcie.launch_ns(h)) + mc.pcie.sync_ns(h)

    def count_ring_edge(self, src, dst, steps: int, shard_B: float) -> None:
        mc = self.m
        mc.count_link("pcie", steps * mc.pcie.memcpy_cost(shard_B, "d2h2d", mc.cpu).size_B)

    def declare_unused(self) -> None:
        _skip_mmio(self.m)
