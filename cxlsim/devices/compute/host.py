"""An accelerator host as one power figure: its CPU, DRAM and board (family ``host``).

The host an accelerator system's chips sit in (the ``tpu-ps`` system's ``tpu_host`` role): the
model times nothing; it holds the host's power, drawn whenever the system runs.

Contract (units: W, ns, J; pure, no simulation engine):

* Parameters: ``power_W`` (one host: CPU, DRAM, board).
* Energy hook over ``count`` hosts: static ``count`` × ``power_W`` × wall; no active or dynamic part.
"""

from __future__ import annotations

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import DeviceModel, Energy, Usage, static_energy_J
from cxlsim.devices.registry import DeviceFamily, register

SCHEMA = Schema("host", (
    Param("power_W", float, "power of one host (CPU, DRAM, board)", minimum=0),
))


class HostModel(DeviceModel):
    """One host (module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        return static_energy_J(self.params.power_W, wall_ns, count)


def energy(model: HostModel, use: Usage) -> Energy:
    """The hosts' power over the wall time (module docstring)."""
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count))


FAMILY = register(DeviceFamily(name="host", doc="an accelerator host as one power figure (CPU, DRAM, board)",
                               schema=SCHEMA, build=HostModel, kind="compute", energy=energy))
