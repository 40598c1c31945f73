"""What the energy sensitivity study varies: the paper's op-graph systems, the baseline and the weak
energy parameters' variants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cxlsim.devices.registry import has_capability
from cxlsim.studies.paper.settings import dataflow_systems
from cxlsim.systems.config import SystemConfig

#: The paper sweep's op-graph systems (configs/sweeps/paper.yaml), in its order
SYSTEMS = dataflow_systems()
BASELINE = "pmem"
#: Optane DC PMM average power budget the PMEM presets derive their per-bit energies from (W).
PMEM_BUDGET_W = 15.0
Sets = list[tuple[str, Any]]


def _family_sets(cfg: SystemConfig, family: str, key: str, value: Any) -> Sets:
    return [(f"devices.{r}.params.{key}", value) for r, d in cfg.devices.items() if d.preset.family == family]


def _pmem_budget(cfg: SystemConfig, idle_W: float) -> Sets:
    """Idle power ``idle_W`` with the per-bit media energies scaled as the preset derives them,
    (budget − idle) / bandwidth: by (budget − idle_W) / (budget − the preset's idle)."""
    out: Sets = []
    for r, d in cfg.devices.items():
        if has_capability(d.preset.family, "persistent"):
            p = d.params
            scale = (PMEM_BUDGET_W - idle_W) / (PMEM_BUDGET_W - p.background_W)
            out += [(f"devices.{r}.params.background_W", idle_W),
                    (f"devices.{r}.params.read_media_pJ_per_bit", p.read_media_pJ_per_bit * scale),
                    (f"devices.{r}.params.write_media_pJ_per_bit", p.write_media_pJ_per_bit * scale)]
    return out


#: name -> (what it is, default, values, sets for one system's config and a value)
VARIANTS: dict[str, tuple[str, float, tuple[float, ...], Callable[[SystemConfig, float], Sets]]] = {
    "pmem_background_W": ("PMEM idle power per module (W)", 3.0, (1.0, 3.0, 6.0),
                          lambda c, v: _family_sets(c, "pmem", "background_W", v)),
    "pmem_budget_held": ("PMEM idle power, 15 W budget held (W)", 3.0, (1.0, 3.0, 6.0), _pmem_budget),
    "link_pJ_per_bit": ("PCIe/CXL link energy (pJ/bit)", 5.0, (1.0, 5.0, 10.0),
                        lambda c, v: _family_sets(c, "cxl_link", "energy_pJ_per_bit", v)
                        + _family_sets(c, "pcie", "energy_pJ_per_bit", v)),
    "switch_idle_W": ("CXL switch idle power (W)", 10.0, (0.0, 10.0, 20.0),
                      lambda c, v: _family_sets(c, "cxl_switch", "idle_power_W", v)),
    "cpu_busy_W": ("host CPU busy package power (W)", 95.0, (10.0, 50.0, 95.0),
                   lambda c, v: _family_sets(c, "cpu", "tdp_W", v)),
    "gpu_idle_W": ("GPU idle board power (W)", 30.0, (15.0, 30.0, 60.0),
                   lambda c, v: _family_sets(c, "gpu", "idle_power_W", v)),
}
