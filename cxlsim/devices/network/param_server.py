"""A CPU parameter server holding embedding rows in DRAM and serving them over RPC (family ``param_server``).

Contract (units: µs, ns, W, J; pure, no simulation engine):

* Parameters: ``cores_count``, ``rpc_cpu_us`` (server CPU time per RPC), ``rpc_latency_us``
  (network round trip of one RPC), ``row_ns`` (server CPU time to gather or update one row),
  ``idle_W``, ``busy_W`` (power above idle with every core busy).
* Energy hook over ``count`` servers: static ``count`` × ``idle_W`` × wall; active ``busy_W`` /
  ``cores_count`` × ``busy_ns`` (core time summed over the servers).
"""

from __future__ import annotations

from cxlsim.config.bounds import PLAUSIBLE_CPU_CORES
from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import DeviceModel, Energy, Usage, static_energy_J
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import watts_over

SCHEMA = Schema("param_server", (
    Param("cores_count", int, "CPU cores per parameter server", minimum=1, plausible=PLAUSIBLE_CPU_CORES),
    Param("rpc_cpu_us", float, "server CPU time per RPC", minimum=0),
    Param("rpc_latency_us", float, "network round trip of one RPC", minimum=0),
    Param("row_ns", float, "server CPU time per row gathered or updated", minimum=0),
    Param("idle_W", float, "parameter-server power when idle", minimum=0),
    Param("busy_W", float, "parameter-server power above idle with every core busy", minimum=0),
))


class ParamServerModel(DeviceModel):
    """One parameter server (module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        return static_energy_J(self.params.idle_W, wall_ns, count)


def energy(model: ParamServerModel, use: Usage) -> Energy:
    """Idle power; busy power per core over the core time (module docstring)."""
    p = model.params
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count),
                  active_J=watts_over(p.busy_W / p.cores_count, use.busy_ns))


FAMILY = register(DeviceFamily(name="param_server", doc="a CPU parameter server (embedding rows over RPC)",
                               schema=SCHEMA, build=ParamServerModel, kind="network", energy=energy))
