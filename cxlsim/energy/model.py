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

A symmetry-reduced run's activity is one of ``act.groups`` identical groups (:mod:`cxlsim.systems.symmetry`):
its dynamic and active energies are that many times the group's; static power is the whole system's.

Every joule comes from a device model's energy method (``static_energy_J``, ``active_energy_J``,
``traffic_energy_J``, ``ops_energy_J``, ``dma_energy_J``, link and path ``energy_J``) on the
models of the system's :class:`~cxlsim.systems.graph.DeviceGraph` (the objects that timed the run):
device energy is computed in one place, the device library.
"""

from __future__ import annotations

from dataclasses import dataclass

from cxlsim.systems.activity import CXL_PREFIX, PCIE, BatchActivity, cxl_path_endpoints
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.provision import ModulePool
from cxlsim.systems.topology import Fabric

COMPONENTS = ("gpu", "cpu", "dram", "pmem", "ssd", "cxl_mem_logic", "links")
PARTS = ("static", "active", "dynamic")


def _zero() -> dict[str, dict[str, float]]:
    return {c: dict.fromkeys(PARTS, 0.0) for c in COMPONENTS}


@dataclass(frozen=True)
class Deployment:
    """How many of each device a run used (SPEC §12) and the switch tree between them."""

    gpus: int = 1
    mems: int = 1
    fabric: Fabric | None = None


def pcie_links(devices: DeviceGraph, d: Deployment = Deployment()) -> int:
    """PCIe links a system powers: each GPU's, plus each memory card's when the embedding engine is
    on a card the software reaches over PCIe."""
    if not devices.has("pcie"):
        return 0
    p = devices.config.pipeline
    return d.gpus + (d.mems if p.embedding_engine == "ndp" and p.data_movement == "software" else 0)


def cxl_links(d: Deployment) -> list:
    """The CXL links a system powers: every link of its switch tree on some device's path to the
    host (each device's link, the trunks, the host's link)."""
    return d.fabric.powered_links() if d.fabric is not None else []


def _switches(d: Deployment) -> int:
    return d.fabric.powered_switches() if d.fabric is not None else 0


def batch_energy(act: BatchActivity, devices: DeviceGraph, pools: dict[str, ModulePool],
                 dim: int, d: Deployment = Deployment()) -> dict[str, dict[str, float]]:
    """Energy of one batch by component and part (module docstring), J."""
    e = _zero()
    T = act.wall_ns
    gpu, cpu = devices["gpu"], devices["host_cpu"]
    e["gpu"]["static"], e["gpu"]["active"] = gpu.static_energy_J(T, d.gpus), act.groups * gpu.active_energy_J(act.gpu_kernel_ns)
    e["cpu"]["static"], e["cpu"]["active"] = cpu.static_energy_J(T), cpu.active_energy_J(act.host_core_busy_ns)

    for role, pool in pools.items():
        part = e[pool.family]
        part["static"] += pool.model.static_energy_J(T, pool.modules)
        for key, tr in act.media.items():  # a role's traffic on every device that holds it
            if key.split(".")[0] == role:
                part["dynamic"] += act.groups * pool.model.traffic_energy_J(tr.media_read_B, tr.media_write_B,
                                                                            tr.requested_B)

    logic = e["cxl_mem_logic"]
    if devices.has("ndp"):
        ndp, w = devices["ndp"], act.logic
        logic["static"] += ndp.static_energy_J(T, d.mems)
        logic["dynamic"] += act.groups * ndp.ops_energy_J(dim, w.pooled_vectors, w.updated_rows, w.gradient_vectors,
                                                          w.corrected_vectors)
    if devices.has("ckpt_logic"):
        ckpt = devices["ckpt_logic"]
        logic["static"] += ckpt.static_energy_J(T, d.mems)
        logic["dynamic"] += act.groups * ckpt.dma_energy_J(act.logic.dma_B)

    links = e["links"]
    n_pcie = pcie_links(devices, d)
    if n_pcie:
        links["static"] += devices["pcie"].static_energy_J(T, n_pcie)
        links["dynamic"] += act.groups * devices["pcie"].energy_J(act.link_B.get(PCIE, 0.0))
    for link in cxl_links(d):
        links["static"] += link.static_energy_J(T)
    if _switches(d):
        links["static"] += devices["switch"].static_energy_J(T, _switches(d))
    for key, size_B in act.link_B.items():
        if key.startswith(CXL_PREFIX) and size_B:
            path = d.fabric.path(*cxl_path_endpoints(key))
            links["dynamic"] += act.groups * path.energy_J([size_B] * len(path.links))
    return e
