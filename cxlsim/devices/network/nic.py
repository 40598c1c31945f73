"""A data-centre network interface card (family ``nic``).

Contract (units: GB/s, W, pJ/bit, J; pure, no simulation engine):

* Parameters: ``bw_GBps`` (line rate), ``power_W`` (per NIC), ``pJ_per_bit`` (per bit through it).
* Energy hook over ``count`` NICs: static ``count`` × ``power_W`` × wall; dynamic 8 × ``moved_B``
  (bytes through the NICs, each NIC a byte crosses counted) × ``pJ_per_bit`` (read only where bytes
  crossed).
"""

from __future__ import annotations

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import DeviceModel, Energy, Usage, static_energy_J
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import PJ

BITS_PER_B = 8

SCHEMA = Schema("nic", (
    Param("bw_GBps", float, "NIC bandwidth (25 Gbps = 3.125)", minimum=0, exclusive_minimum=True),
    Param("power_W", float, "power per NIC", minimum=0),
    Param("pJ_per_bit", float, "transfer energy per bit through one NIC", minimum=0),
))


class NicModel(DeviceModel):
    """One NIC (module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        return static_energy_J(self.params.power_W, wall_ns, count)


def energy(model: NicModel, use: Usage) -> Energy:
    """Power per NIC; energy per byte through one (module docstring)."""
    dynamic = BITS_PER_B * use.moved_B * model.params.pJ_per_bit * PJ if use.moved_B else 0.0
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count), dynamic_J=dynamic)


FAMILY = register(DeviceFamily(name="nic", doc="a data-centre network interface card", schema=SCHEMA,
                               build=NicModel, kind="network", energy=energy))
