"""The chip-to-chip interconnect of an accelerator pod (family ``ici``).

Contract (units: GB/s, µs, W, pJ/bit, J; pure, no simulation engine):

* Parameters: ``a2a_GBps`` / ``a2a_latency_us`` (per-chip all-to-all bandwidth, one phase's
  latency), ``allreduce_GBps`` / ``allreduce_latency_us`` (per-chip ring all-reduce),
  ``links_per_chip_count`` (each link joins two chips), ``link_W`` (idle power per link),
  ``pJ_per_bit`` (transfer energy).
* Energy hook over ``count`` chips: static (``count`` × ``links_per_chip_count`` / 2 links) ×
  ``link_W`` × wall; dynamic 8 × ``moved_B`` × ``pJ_per_bit``.
"""

from __future__ import annotations

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import DeviceModel, Energy, Usage, static_energy_J
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import PJ

BITS_PER_B = 8

SCHEMA = Schema("ici", (
    Param("a2a_GBps", float, "all-to-all bandwidth per chip", minimum=0, exclusive_minimum=True),
    Param("a2a_latency_us", float, "latency of one all-to-all phase", minimum=0),
    Param("allreduce_GBps", float, "ring all-reduce bandwidth per chip", minimum=0, exclusive_minimum=True),
    Param("allreduce_latency_us", float, "latency of one all-reduce", minimum=0),
    Param("links_per_chip_count", int, "interconnect links per chip; each link joins two chips", minimum=1),
    Param("link_W", float, "idle power per interconnect link", minimum=0),
    Param("pJ_per_bit", float, "interconnect transfer energy", minimum=0),
))


class IciModel(DeviceModel):
    """The interconnect as one chip sees it (module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        """Idle power of the links of ``count`` chips (each link shared by two)."""
        return static_energy_J(self.params.link_W, wall_ns, 1) * (count * self.params.links_per_chip_count / 2)


def energy(model: IciModel, use: Usage) -> Energy:
    """Link idle power; transfer energy per byte moved (module docstring)."""
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count),
                  dynamic_J=BITS_PER_B * use.moved_B * model.params.pJ_per_bit * PJ)


FAMILY = register(DeviceFamily(name="ici", doc="an accelerator pod's chip-to-chip interconnect", schema=SCHEMA,
                               build=IciModel, kind="link", energy=energy))
