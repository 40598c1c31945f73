"""Energy of one batch by component, from its activity and the system's device parameters.

Contract: :func:`batch_energy` returns ``{component: {"static": J, "active": J, "dynamic": J}}`` for
every component in :data:`COMPONENTS` (zeros where a system lacks it):

* ``static``  — background / idle / static power of what is provisioned × the batch's wall time;
* ``active``  — the GPU's and CPU's power above idle × their busy time;
* ``dynamic`` — energy per byte or per operation (media, links, near-data and checkpointing logic).

Components: ``gpu``; ``cpu`` (host package); ``dram``, ``pmem``, ``ssd`` (every memory pool of that
family, capacity-provisioned: :mod:`cxlsim.systems.provision`); ``cxl_mem_logic`` (the memory
device's near-data computing and checkpointing logic: CXL-MEM's, or the PCIe card's for ``pcie``);
``links`` (PCIe links, CXL links and switches). Link topology: a software system has the GPU's
PCIe link, plus the memory card's when the embedding engine is on the card; a CXL system has the
host's, the GPU's (``gpu_link``) and the CXL-MEM's (``fabric_link``) links to a chain of ``levels``
switches joined by ``levels − 1`` links; the host's link is the ``host_link`` role, the inter-switch
links are of the ``fabric_link`` role.
"""

from __future__ import annotations

from typing import Any

from cxlsim.energy import formulas as F
from cxlsim.systems.activity import BatchActivity
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.provision import ModulePool

COMPONENTS = ("gpu", "cpu", "dram", "pmem", "ssd", "cxl_mem_logic", "links")
PARTS = ("static", "active", "dynamic")


def _zero() -> dict[str, dict[str, float]]:
    return {c: dict.fromkeys(PARTS, 0.0) for c in COMPONENTS}


def link_topology(cfg: SystemConfig) -> dict[str, Any]:
    """Links and switches a system powers, and the energy per bit of each CXL path.

    Returns ``pcie_links`` (count), ``cxl_links`` (role or preset params per link), ``switches``
    (count) and ``path_pJ_per_bit`` for the paths the machine counts (``pcie``, ``cxl_gpu``,
    ``cxl_host``): the sum over the links crossed and the switches forwarding.
    """
    p = cfg.pipeline
    top: dict[str, Any] = {"pcie_links": 0, "cxl_links": [], "switches": 0, "path_pJ_per_bit": {}}
    if cfg.has("pcie"):
        pcie = cfg.role("pcie").params
        top["pcie_links"] = 1 + (1 if p.embedding_engine == "ndp" and p.data_movement == "software" else 0)
        top["path_pJ_per_bit"]["pcie"] = pcie.energy_pJ_per_bit
    if cfg.has("fabric_link"):
        mem = cfg.role("fabric_link").params
        gpu = cfg.role("gpu_link").params
        levels = cfg.role("switch").levels if cfg.has("switch") else 0
        fwd = cfg.role("switch").params.forward_pJ_per_bit if cfg.has("switch") else 0.0
        between = max(levels - 1, 0)
        host = cfg.role("host_link").params
        top["cxl_links"] = [mem, gpu, host] + [mem] * between  # CXL-MEM, GPU, host, inter-switch
        top["switches"] = levels
        core = between * mem.energy_pJ_per_bit + levels * fwd
        top["path_pJ_per_bit"]["cxl_gpu"] = mem.energy_pJ_per_bit + gpu.energy_pJ_per_bit + core
        top["path_pJ_per_bit"]["cxl_host"] = host.energy_pJ_per_bit + mem.energy_pJ_per_bit + core
    return top


def batch_energy(act: BatchActivity, cfg: SystemConfig, pools: dict[str, ModulePool],
                 dim: int) -> dict[str, dict[str, float]]:
    """Energy of one batch by component and part (module docstring), J."""
    e = _zero()
    T = act.wall_ns

    e["gpu"]["static"], e["gpu"]["active"] = F.gpu_J(cfg.role("gpu").params, act.lane_busy_ns.get("gpu", 0.0), T)
    e["cpu"]["static"], e["cpu"]["active"] = F.cpu_J(cfg.role("host_cpu").params, act.host_core_busy_ns, T)

    for role, pool in pools.items():
        part = e[pool.family]
        part["static"] += F.background_J(pool.preset.params.background_W, pool.modules, T)
        if role in act.media:
            part["dynamic"] += F.media_dynamic_J(pool.preset.params, vars(act.media[role]))

    logic = e["cxl_mem_logic"]
    if cfg.has("ndp"):
        ndp = cfg.role("ndp").params
        logic["static"] += F.background_J(ndp.static_W, 1, T)
        w = act.logic
        logic["dynamic"] += F.ndp_dynamic_J(ndp, dim, w.pooled_vectors, w.updated_rows, w.gradient_vectors,
                                            w.corrected_vectors)
    if cfg.has("ckpt_logic"):
        ckpt = cfg.role("ckpt_logic").params
        logic["static"] += F.background_J(ckpt.static_W, 1, T)
        logic["dynamic"] += F.dma_J(ckpt, act.logic.dma_B)

    links = e["links"]
    top = link_topology(cfg)
    if top["pcie_links"]:
        links["static"] += F.background_J(cfg.role("pcie").params.idle_power_W, top["pcie_links"], T)
    for link in top["cxl_links"]:
        links["static"] += F.background_J(link.idle_power_W, 1, T)
    if top["switches"]:
        links["static"] += F.background_J(cfg.role("switch").params.idle_power_W, top["switches"], T)
    for path, nbytes in act.link_B.items():
        if path in top["path_pJ_per_bit"]:
            links["dynamic"] += F.per_bit_J(top["path_pJ_per_bit"][path], nbytes)
    return e
