"""High-bandwidth memory on an accelerator package, read by the chip's own cores (family ``hbm``).

Not a ``memory``-kind module (no media API, not provisioned by the system): the chip's HBM is a
capacity and a bandwidth, of kind ``accelerator_memory``.

Contract (units: GiB, GB/s, W, pJ/bit, J; pure, no simulation engine):

* Parameters: ``capacity_GiB`` and ``bw_GBps`` per chip's stacks, ``gather_efficiency_fraction``
  (share of streaming bandwidth random row gathers reach), ``background_W`` (refresh, PHY idle),
  ``pJ_per_bit`` (access energy).
* :meth:`HbmModel.gather_Bps` = ``bw_GBps`` × 10⁹ × ``gather_efficiency_fraction`` (bytes/s).
* Energy hook over ``count`` chips' HBM: static ``count`` × ``background_W`` × wall; dynamic
  8 × ``moved_B`` × ``pJ_per_bit``.
"""

from __future__ import annotations

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import DeviceModel, Energy, Usage, static_energy_J
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import GB, PJ

BITS_PER_B = 8

SCHEMA = Schema("hbm", (
    Param("capacity_GiB", float, "HBM capacity per chip", minimum=0, exclusive_minimum=True),
    Param("bw_GBps", float, "HBM bandwidth per chip", minimum=0, exclusive_minimum=True),
    Param("gather_efficiency_fraction", float, "share of HBM bandwidth random row gathers reach", minimum=0,
          maximum=1, exclusive_minimum=True),
    Param("background_W", float, "HBM background power per chip's stacks", minimum=0),
    Param("pJ_per_bit", float, "HBM access energy", minimum=0),
))


class HbmModel(DeviceModel):
    """One chip's HBM (module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    def gather_Bps(self) -> float:
        """Bytes/s random row gathers reach."""
        p = self.params
        return p.bw_GBps * GB * p.gather_efficiency_fraction

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        return static_energy_J(self.params.background_W, wall_ns, count)


def energy(model: HbmModel, use: Usage) -> Energy:
    """Background power; access energy per byte moved (module docstring)."""
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count),
                  dynamic_J=BITS_PER_B * use.moved_B * model.params.pJ_per_bit * PJ)


FAMILY = register(DeviceFamily(name="hbm", doc="high-bandwidth memory on an accelerator package", schema=SCHEMA,
                               build=HbmModel, kind="accelerator_memory", energy=energy))
