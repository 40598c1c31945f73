"""Capacity-driven provisioning: how many memory modules each system holds, and so powers.

Contract: :func:`provision` maps every memory role of a system (DRAM, PMEM and SSD families) to a
:class:`ModulePool` whose ``modules`` is the larger of the configured count (the timing model's
interleaving) and the count its data needs at the preset's ``capacity_GB``. What each role holds:

* the role holding the tables: all embedding tables at full size plus the MLP parameters (fp32),
  plus the checkpoint area when the checkpoint lives there;
* a separate checkpoint role: the checkpoint area;
* the host's DRAM: the software footprint (``cpu.software_memory_GB``) plus the vector cache. It is
  the ``host_dram`` role if configured, else the table role if that is DRAM (the ``dram`` system),
  else an implicit ``host_memory`` pool of ``cpu.host_dram_preset_name`` modules (every host has
  DRAM even where a config names none).

The checkpoint area is two batches' worth of logged rows (every lookup a distinct row: the undo log's
two slots, or a redo record kept until the next is complete) plus one copy of the MLP parameters.
Capacities are decimal (1 GB = 1e9 B), as module capacities are quoted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cxlsim.config.catalog import Preset, load_preset
from cxlsim.systems.config import SystemConfig
from cxlsim.units import GB
from cxlsim.workloads.catalog import Workload

MEMORY_FAMILIES = ("dram", "pmem", "ssd")
FP32_B = 4
#: Name of the implicit host-DRAM pool of systems whose config has no DRAM role.
HOST_MEMORY = "host_memory"


@dataclass(frozen=True)
class ModulePool:
    """Modules of one memory role: preset, configured and needed counts, and what they hold."""

    role: str
    preset: Preset
    configured: int
    needed_GB: float

    @property
    def family(self) -> str:
        return self.preset.family

    @property
    def capacity_GB(self) -> float:
        return float(self.preset.params.capacity_GB)

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
        return self.modules * float(self.preset.params.background_W)


def model_B(workload: Workload) -> float:
    """Bytes of the whole model: embedding tables at full size plus MLP parameters (fp32)."""
    mlp = workload.mlp_params
    return float(workload.embedding_bytes + (mlp["bottom"] + mlp["top"]) * FP32_B)


def checkpoint_B(workload: Workload) -> float:
    """Bytes of the checkpoint area (module docstring)."""
    w = workload.params
    mlp = workload.mlp_params
    rows_B = w.batch_size * w.tables * w.lookups_per_table * workload.row_B
    return float(2 * rows_B + (mlp["bottom"] + mlp["top"]) * FP32_B)


def provision(cfg: SystemConfig, workload: Workload) -> dict[str, ModulePool]:
    """Memory pools of ``cfg`` running ``workload`` (see the module docstring)."""
    p = cfg.pipeline
    holds: dict[str, float] = {r: 0.0 for r, d in cfg.devices.items() if d.preset.family in MEMORY_FAMILIES}
    holds[p.tables_on] += model_B(workload)
    if p.persistence != "none":
        holds[p.checkpoint_on] += checkpoint_B(workload)
    cpu = cfg.role("host_cpu").params
    host = cpu.software_memory_GB * GB + p.vector_cache_GB * GB
    pools: dict[str, ModulePool] = {}
    if "host_dram" in holds:
        holds["host_dram"] += host
    elif cfg.devices[p.tables_on].preset.family == "dram":
        holds[p.tables_on] += host
    else:
        pools[HOST_MEMORY] = ModulePool(HOST_MEMORY, load_preset(cpu.host_dram_preset_name), 0, host / GB)
    for role, nbytes in holds.items():
        d = cfg.devices[role]
        pools[role] = ModulePool(role, d.preset, d.count, nbytes / GB)
    return pools


def provisioned_modules(cfg: SystemConfig, workload: Workload) -> dict[str, int]:
    """Role → modules provisioned (the ``config.provisioned_modules`` key of results)."""
    return {role: pool.modules for role, pool in provision(cfg, workload).items()}
