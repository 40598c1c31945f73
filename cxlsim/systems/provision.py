"""Capacity-driven provisioning: how many memory modules each system holds, and so powers.

Contract: :func:`provision` ``(devices, workload)`` maps every memory role of a system's
:class:`~cxlsim.systems.graph.DeviceGraph` (families of the memory kind) to a :class:`ModulePool`
of that role's model, whose ``modules`` is the larger of the configured count (the timing model's
interleaving) and the count its data needs at the model's ``capacity_GB``. What each role holds:

* the role holding the tables: all embedding tables at full size plus the MLP parameters (``mlp_param_width``),
  plus the checkpoint area when the checkpoint lives there;
* a separate checkpoint role: the checkpoint area (the persistence scheme's
  ``checkpoint_role`` and ``checkpoint_B``, :mod:`cxlsim.systems.axes`);
* the host's DRAM: the software footprint (``cpu.software_memory_GB``) plus the vector cache, in
  the role the device graph names (``host_dram``, or the table role of the ``dram`` system), else an
  implicit ``host_memory`` pool of the graph's host-memory module (every host has DRAM even where a
  config names none).

The redo and undo schemes' checkpoint area (:func:`checkpoint_B`) is two batches' worth of logged rows (every lookup a distinct row, every bag its most: the undo log's
two slots, or a redo record kept until the next is complete) plus one copy of the MLP parameters.
Capacities are decimal (1 GB = 1e9 B), as module capacities are quoted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cxlsim.config.bounds import MAX_MODULES_PER_ROLE, check_bound
from cxlsim.systems import axes
from cxlsim.systems.graph import DeviceGraph
from cxlsim.units import GB
from cxlsim.workloads.catalog import Workload

#: Name of the implicit host-DRAM pool of systems whose config has no DRAM role.
HOST_MEMORY = "host_memory"


@dataclass(frozen=True)
class ModulePool:
    """Modules of one memory role: its module model, configured and needed counts."""

    role: str
    model: Any  # a media model (one module)
    configured: int
    needed_GB: float
    family: str  # the model's device family


    @property
    def capacity_GB(self) -> float:
        return float(self.model.params.capacity_GB)

    @property
    def needed(self) -> int:
        """Modules the data needs at this preset's capacity."""
        return math.ceil(self.needed_GB / self.capacity_GB - 1e-12) if self.needed_GB > 0 else 0

    @property
    def modules(self) -> int:
        """Modules provisioned: at least the configured count, at least what the data needs."""
        return max(self.configured, self.needed)

    @property
    def background_W(self) -> float:
        """Background power of all provisioned modules, W."""
        return self.modules * float(self.model.params.background_W)


def model_B(workload: Workload) -> float:
    """Bytes of the whole model: embedding tables at full size plus MLP parameters (at
    ``mlp_param_width``)."""
    return float(workload.embedding_bytes + workload.mlp_param_count * workload.mlp_param_B)


def checkpoint_B(workload: Workload) -> float:
    """Bytes of the checkpoint area (module docstring)."""
    rows_B = workload.lookups_per_batch * workload.row_B  # bags of at most their table's largest
    return float(2 * rows_B + workload.mlp_param_count * workload.mlp_param_B)


def per_device_roles(devices: DeviceGraph) -> set[str]:
    """The memory roles every memory device carries its own modules of: the tables' role and the
    persistence scheme's checkpoint role (if it has one), except the host's DRAM."""
    p = devices.config.pipeline
    ckpt_role = axes.of(p, "persistence").checkpoint_role(p)
    return {p.tables_on, *([ckpt_role] if ckpt_role is not None else [])} - {devices.host_memory_role}


def provision(devices: DeviceGraph, workload: Workload, mems: int = 1) -> dict[str, ModulePool]:
    """Memory pools of a system running ``workload`` on ``mems`` memory devices (each with the
    table (and checkpoint) role's configured modules; see the module docstring). A system without a
    dataflow pipeline (model ``tpu_ps``) provisions none: its chips' memory is of the
    ``accelerator_memory`` kind and its hosts' DRAM is in their power."""
    cfg = devices.config
    p = cfg.pipeline
    if p is None:
        return {}
    holds: dict[str, float] = dict.fromkeys(devices.memory_roles(), 0.0)
    scheme = axes.of(p, "persistence")
    ckpt_role = scheme.checkpoint_role(p)
    holds[p.tables_on] += model_B(workload)
    if ckpt_role is not None:
        holds[ckpt_role] += scheme.checkpoint_B(workload, p)
    host = cfg.role("host_cpu").params.software_memory_GB * GB + p.vector_cache_GB * GB
    pools: dict[str, ModulePool] = {}
    if devices.host_memory_role is not None:
        holds[devices.host_memory_role] += host
    else:
        pools[HOST_MEMORY] = ModulePool(HOST_MEMORY, devices.host_memory, 0, host / GB, devices.host_memory_family)
    per_device = per_device_roles(devices)
    for role, nbytes in holds.items():
        # a role spread over several CXL memory devices holds each one's channels
        count = cfg.devices[role].count * cfg.devices[role].via_count * (mems if role in per_device else 1)
        pools[role] = ModulePool(role, devices[role], count, nbytes / GB, devices.family(role))
    return pools


def check_provision(devices: DeviceGraph, workload: Workload, mems: int = 1) -> None:
    """Refuse, before a run, a memory role whose data needs more modules at its preset's
    ``capacity_GB`` than one device can hold (:data:`~cxlsim.config.bounds.MAX_MODULES_PER_ROLE`):
    a capacity far too small for the tables, or tables far too large for the system. The error names
    the input that set the capacity (a system or platform file and its key, or ``--set``), else the
    system file."""
    cfg = devices.config
    each_device = per_device_roles(devices)
    for role, pool in provision(devices, workload, mems).items():
        per_device = pool.needed / (mems if role in each_device else 1)
        dev = cfg.devices.get(role)
        key = f"devices.{role}.params.capacity_GB" if dev is not None else "devices.host_cpu.params.software_memory_GB"
        where, there = cfg.source, key
        if cfg.origins is not None and cfg.origins.given(key):  # set by a file, the platform or a --set: name it
            where, there = cfg.origins.of(key)
        check_bound(where, there, math.ceil(per_device), MAX_MODULES_PER_ROLE,
                    f"modules of {pool.capacity_GB:g} GB ({dev.preset.name if dev else 'host DRAM'}) that {role}'s {pool.needed_GB:.4g} GB on "
                    f"{workload.name} needs per device", "modules in one device")


def provisioned_modules(devices: DeviceGraph, workload: Workload, mems: int = 1) -> dict[str, int]:
    """Role → modules provisioned (the ``config.provisioned_modules`` key of results)."""
    return {role: pool.modules for role, pool in provision(devices, workload, mems).items()}
