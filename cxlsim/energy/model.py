"""Energy of one batch by component, from its activity and the system's device models.

Contract: :func:`batch_energy` returns ``{component: {"static": J, "active": J, "dynamic": J}}`` for
every component in :data:`COMPONENTS` (zeros where a system lacks it), then the component of every
other priced family among the system's roles (zeros where its devices drew nothing in the batch):

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

Every joule of a device comes from its family's one energy hook
(:attr:`cxlsim.devices.registry.DeviceFamily.energy`: a :class:`~cxlsim.devices.base.Usage` in, an
:class:`~cxlsim.devices.base.Energy` out) on the models of the system's
:class:`~cxlsim.systems.graph.DeviceGraph` (the objects that timed the run); the CXL fabric's
dynamic energy is its paths' (links and switches crossed, :class:`~cxlsim.devices.fabric.cxl_path.FabricPath`).
What a role did comes from the activity record: the role's own
:class:`~cxlsim.devices.base.Usage` where the model recorded one
(:attr:`~cxlsim.systems.activity.BatchActivity.usage`: an analytic model's devices, e.g. ``tpu-ps``'s
chips, HBM, interconnect, parameter servers, NICs and hosts, each with its count), else by the
family's kind, never by the family's name: ``memory`` — the role's media traffic and its provisioned
modules; ``compute`` — the role's busy time
(:meth:`~cxlsim.systems.activity.BatchActivity.compute_busy_ns`); ``logic`` — the memory
device's logic work; ``link`` / ``switch`` — the fabric's powered links and switches and the bytes
of each path. How many devices a role has is the system's (:data:`cxlsim.systems.config.ROLE_SCOPE`).
The component a family's energy goes to is its name for memory and compute families, ``cxl_mem_logic``
for logic, ``links`` for links and switches (:func:`component_of`); a family registered from
outside cxlsim is priced the same way, under its own name.

**Emulated media** (:func:`priced_pools`, the ``energy.emulated_media`` reading of
:data:`cxlsim.systems.config.ENERGY`): a memory role whose preset emulates another device
(``emulates:``, e.g. ``pmem/u200-emulated``: DDR4 behind controllers that delay its responses,
emulating ``pmem/optane-100``) is priced ``as_emulated`` (the default) as a pool of the emulated
preset's modules: their energy parameters (the family's
:attr:`~cxlsim.devices.registry.DeviceFamily.energy_params`) on the traffic the apparatus timed, and
their background power on the modules the emulated device would provision (the role's configured
count, or what the data needs at the emulated ``capacity_GB``); ``as_built`` prices the apparatus'
own modules. Timing is the apparatus' either way.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from cxlsim.devices.base import Usage
from cxlsim.devices.cxl_mem.queueing import LINE_B
from cxlsim.devices.registry import DeviceFamily, build_device, get_family
from cxlsim.systems import axes
from cxlsim.systems.activity import CXL_PREFIX, PCIE, BatchActivity, cxl_path_endpoints
from cxlsim.systems.config import ROLE_SCOPE, emulating_roles
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.provision import ModulePool
from cxlsim.systems.topology import Fabric

COMPONENTS = ("gpu", "cpu", "dram", "pmem", "ssd", "cxl_mem_logic", "links")
PARTS = ("static", "active", "dynamic")
#: The families of a CXL memory device's path parts (:data:`cxlsim.devices.cxl_mem.cxl_mem.PARTS`).
LINK_FAMILY, SWITCH_FAMILY = "cxl_link", "cxl_switch"

#: The component of the families of a kind, where it is not the family's own name.
KIND_COMPONENTS = {"logic": "cxl_mem_logic", "link": "links", "switch": "links"}


def component_of(family: DeviceFamily) -> str:
    """The energy component a family's devices are charged to (module docstring)."""
    return KIND_COMPONENTS.get(family.kind, family.name)


def _zero() -> dict[str, dict[str, float]]:
    return {c: dict.fromkeys(PARTS, 0.0) for c in COMPONENTS}


@dataclass(frozen=True)
class Deployment:
    """How many of each device a run used (docs/design.md#scale-out) and the switch tree between
    them."""

    gpus: int = 1
    mems: int = 1
    fabric: Fabric | None = None

    def count(self, role: str) -> int:
        """Devices of ``role`` the system powers (:data:`~cxlsim.systems.config.ROLE_SCOPE`)."""
        scope = ROLE_SCOPE.get(role, "system")
        return self.gpus if scope == "gpu" else self.mems if scope == "mem" else 1


def pcie_links(devices: DeviceGraph, d: Deployment = Deployment()) -> int:
    """PCIe links a system powers: each GPU's, plus each memory card's when the embedding engine is
    on a card the software reaches over PCIe."""
    if not devices.has("pcie"):
        return 0
    p = devices.config.pipeline
    # an engine on the memory card that software (not the CXL fabric) reaches: the card's PCIe link
    card_on_pcie = axes.of(p, "embedding_engine").on_device and not axes.of(p, "data_movement").over_fabric
    return d.gpus + (d.mems if card_on_pcie else 0)


def cxl_links(d: Deployment) -> list:
    """The CXL links a system powers: every link of its switch tree on some device's path to the
    host (each device's link, the trunks, the host's link)."""
    return d.fabric.powered_links() if d.fabric is not None else []


def _switches(d: Deployment) -> int:
    return d.fabric.powered_switches() if d.fabric is not None else 0


def _price_attached(led: _Ledger, device: Any, traffic: list, wall_ns: float, copies: int = 1) -> None:
    """``copies`` CXL memory devices' paths to the host (a pooled preset's copies are its
    endpoints: one switch for them all, a host-port link and an endpoint link each; any other
    device's path is its link, or its links and switch): their static power over ``wall_ns`` and
    the wire bits of the requested lines (one 64 B message each way a line, whichever device holds
    it; the links' pJ/bit covers both PHYs and controllers, ``cxl_link``), charged to ``links``; and
    each controller chip's power (``controller_static_W``) over ``wall_ns``, charged to
    ``cxl_mem_logic``'s static part (the memory device's own logic). The devices' media are the
    role's pool."""
    part = led.e.setdefault(KIND_COMPONENTS["logic"], dict.fromkeys(PARTS, 0.0))
    part["static"] += copies * device.params["controller_static_W"] * wall_ns * 1e-9
    path = device.path
    for link in path.links:
        led.charge(get_family(LINK_FAMILY), link, Usage(wall_ns, copies))
    if path.switch is not None:
        led.charge(get_family(SWITCH_FAMILY), path.switch, Usage(wall_ns, max(1, copies // device.devices)))
    lines = int(sum(tr.requested_B for tr in traffic) // LINE_B)
    if lines:
        wire = path.link_wire_B(lines, LINE_B)
        led.e.setdefault("links", dict.fromkeys(PARTS, 0.0))["dynamic"] += path.energy_J(wire)


def priced_pools(devices: DeviceGraph, pools: dict[str, ModulePool]) -> dict[str, ModulePool]:
    """``pools`` as the system's ``energy.emulated_media`` reading prices them (module docstring):
    under ``as_emulated`` each pool of a role whose preset emulates another holds the emulated
    preset's model (its energy parameters, its capacity for provisioning), and the role's own energy
    parameters are declared unused (:meth:`~cxlsim.config.params.ParamSet.skip`: an override of
    them is refused); under ``as_built`` the pools are the apparatus'. The setting is read only
    where some role emulates (elsewhere the system declared it unused when it loaded)."""
    cfg = devices.config
    out = dict(pools)
    for role, emulated in emulating_roles(cfg.devices).items():
        if role not in pools or cfg.energy.emulated_media != "as_emulated":
            continue
        params = cfg.devices[role].params
        for key in get_family(devices.family(role)).energy_params:
            params.skip(key, f"energy.emulated_media is as_emulated: {role} is priced as {emulated}, the device "
                        "its preset emulates (energy.emulated_media=as_built prices its own)")
        out[role] = dataclasses.replace(pools[role], model=build_device(emulated))
    return out


class _Ledger:
    """Energy by component and part, charged through the family hooks."""

    def __init__(self, groups: int) -> None:
        self.e = _zero()
        self.groups = groups

    def charge(self, family: DeviceFamily, model: object, use: Usage) -> None:
        if family.energy is None:
            return
        en = family.energy(model, use)
        part = self.e.setdefault(component_of(family), dict.fromkeys(PARTS, 0.0))
        part["static"] += en.static_J
        part["active"] += self.groups * en.active_J  # one group's work, ``groups`` groups
        part["dynamic"] += self.groups * en.dynamic_J


def batch_energy(act: BatchActivity, devices: DeviceGraph, pools: dict[str, ModulePool],
                 dim: int, d: Deployment = Deployment()) -> dict[str, dict[str, float]]:
    """Energy of one batch by component and part (module docstring), J. ``pools`` are priced as
    given: :func:`priced_pools` applies the system's emulated-media reading to them."""
    led = _Ledger(act.groups)
    T = act.wall_ns
    busy = act.compute_busy_ns()
    logic = vars(act.logic)
    links = cxl_links(d)
    for role, model in devices.models.items():
        family = get_family(devices.family(role))
        if family.energy is not None:  # every priced family's component, even where it drew nothing
            led.e.setdefault(component_of(family), dict.fromkeys(PARTS, 0.0))
        if role in act.usage:  # recorded by the model itself, with its device count
            led.charge(family, model, act.usage[role])
        elif family.kind == "compute" and role in busy:
            led.charge(family, model, Usage(T, d.count(role), busy_ns=busy[role]))
        elif family.kind == "logic":
            led.charge(family, model, Usage(T, d.count(role), moved_B=act.logic.dma_B, ops=logic, dim=dim))
        elif family.kind == "link" and role == PCIE and pcie_links(devices, d):  # the fabric's links: below
            led.charge(family, model, Usage(T, pcie_links(devices, d), moved_B=act.link_B.get(PCIE, 0.0)))
        elif family.kind == "switch" and _switches(d):
            led.charge(family, model, Usage(T, _switches(d)))

    for role, pool in pools.items():  # every memory role (and the host's implicit pool), provisioned
        family = get_family(pool.family)
        traffic = [tr for key, tr in act.media.items() if key.split(".")[0] == role]  # on every device holding it
        led.charge(family, pool.model, Usage(T, pool.modules, read_B=sum(tr.media_read_B for tr in traffic),
                                             write_B=sum(tr.media_write_B for tr in traffic),
                                             requested_B=sum(tr.requested_B for tr in traffic)))

    for link in links:  # the fabric's powered links: their static power
        led.charge(get_family(devices.family_of(link)), link, Usage(T))
    for role, device in devices.attached.items():  # a memory role behind CXL memory devices: their paths
        _price_attached(led, device, [tr for key, tr in act.media.items() if key.split(".")[0] == role], T,
                        devices.config.devices[role].via_count)
    e = led.e
    for key, size_B in act.link_B.items():
        if key.startswith(CXL_PREFIX) and size_B:
            path = d.fabric.path(*cxl_path_endpoints(key))
            e["links"]["dynamic"] += act.groups * path.energy_J([size_B] * len(path.links))
    return e
