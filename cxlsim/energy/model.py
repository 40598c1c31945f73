"""Energy of one batch by component, from its activity and the system's device models.

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

Every joule comes from a device model's energy method (``static_energy_J``, ``active_energy_J``,
``traffic_energy_J``, ``ops_energy_J``, ``dma_energy_J``, link and path ``energy_J``) on the
models of the system's :class:`~cxlsim.systems.graph.DeviceGraph` (the objects that timed the run):
device energy is computed in one place, the device library.
"""

from __future__ import annotations

from cxlsim.systems.activity import BatchActivity
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.provision import ModulePool

COMPONENTS = ("gpu", "cpu", "dram", "pmem", "ssd", "cxl_mem_logic", "links")
PARTS = ("static", "active", "dynamic")


def _zero() -> dict[str, dict[str, float]]:
    return {c: dict.fromkeys(PARTS, 0.0) for c in COMPONENTS}


def pcie_links(devices: DeviceGraph) -> int:
    """PCIe links a system powers: the GPU's, plus the memory card's when the embedding engine is on
    a card the software reaches over PCIe."""
    if not devices.has("pcie"):
        return 0
    p = devices.config.pipeline
    return 1 + (1 if p.embedding_engine == "ndp" and p.data_movement == "software" else 0)


def cxl_links(devices: DeviceGraph) -> list:
    """The CXL links a system powers: CXL-MEM's, GPU's, host's and the trunks between switches."""
    if devices.gpu_path is None:
        return []
    return [devices["fabric_link"], devices["gpu_link"], devices["host_link"]] + [devices["fabric_link"]] * devices.trunk_links


def batch_energy(act: BatchActivity, devices: DeviceGraph, pools: dict[str, ModulePool],
                 dim: int) -> dict[str, dict[str, float]]:
    """Energy of one batch by component and part (module docstring), J."""
    e = _zero()
    T = act.wall_ns
    gpu, cpu = devices["gpu"], devices["host_cpu"]
    e["gpu"]["static"], e["gpu"]["active"] = gpu.static_energy_J(T), gpu.active_energy_J(act.lane_busy_ns.get("gpu", 0.0))
    e["cpu"]["static"], e["cpu"]["active"] = cpu.static_energy_J(T), cpu.active_energy_J(act.host_core_busy_ns)

    for role, pool in pools.items():
        part = e[pool.family]
        part["static"] += pool.model.static_energy_J(T, pool.modules)
        if role in act.media:
            tr = act.media[role]
            part["dynamic"] += pool.model.traffic_energy_J(tr.media_read_B, tr.media_write_B, tr.requested_B)

    logic = e["cxl_mem_logic"]
    if devices.has("ndp"):
        ndp, w = devices["ndp"], act.logic
        logic["static"] += ndp.static_energy_J(T)
        logic["dynamic"] += ndp.ops_energy_J(dim, w.pooled_vectors, w.updated_rows, w.gradient_vectors, w.corrected_vectors)
    if devices.has("ckpt_logic"):
        ckpt = devices["ckpt_logic"]
        logic["static"] += ckpt.static_energy_J(T)
        logic["dynamic"] += ckpt.dma_energy_J(act.logic.dma_B)

    links = e["links"]
    n_pcie = pcie_links(devices)
    if n_pcie:
        links["static"] += devices["pcie"].static_energy_J(T, n_pcie)
        links["dynamic"] += devices["pcie"].energy_J(act.link_B.get("pcie", 0.0))
    for link in cxl_links(devices):
        links["static"] += link.static_energy_J(T)
    if devices.switches:
        links["static"] += devices["switch"].static_energy_J(T, devices.switches)
    for name, path in (("cxl_gpu", devices.gpu_path), ("cxl_host", devices.host_path)):
        if path is not None and act.link_B.get(name):
            links["dynamic"] += path.energy_J([act.link_B[name]] * len(path.links))
    return e
