"""Device families register here by name; a preset's ``family:`` key selects one.

Contract of a family (see :class:`DeviceFamily`): a parameter :class:`~cxlsim.config.params.Schema`,
a ``build(params) -> model`` returning the family's pure model (:mod:`cxlsim.devices.base` states
the API every model follows), its ``kind`` (one of :data:`KINDS`: what the system layer may do with
it: a ``memory`` family's models are capacity-provisioned modules with the media API, and so on),
its one ``energy(model, usage) -> Energy`` hook (:class:`~cxlsim.devices.base.Usage` in,
:class:`~cxlsim.devices.base.Energy` out; ``None`` for a family with no energy of its own), and
optionally ``microbench(model, options) -> dict`` returning the JSON-ready characterisation that
``cxlsim microbench`` prints (``options`` carries built models, never preset names: the command
line resolves those; a family left without one is characterised by the tool of its kind or
capability, :func:`cxlsim.validate.microbench.microbench_of`). The energy model and provisioning read only the kind and the hook, never a
family's name, so a family registered from outside cxlsim is priced and provisioned like a shipped one.

Where a family lives: a family is found by name through the entry-point group
:data:`ENTRY_POINT_GROUP` (``cxlsim.device_families``): each entry point is named after the family
and names the module that calls :func:`register` when it is imported. The built-in families are
listed in cxlsim's own ``pyproject.toml`` exactly as a third party lists its own::

    [project.entry-points."cxlsim.device_families"]
    pmem = "cxlsim.devices.memory.pmem"

:func:`get_family` imports that one module on first use, so using a family imports nothing else
(the tools of :mod:`cxlsim.calibrate` and :mod:`cxlsim.validate` and helpers such as
``cxl_path``, ``cxl_dcoh``, ``media`` and ``media_kernel`` are never imported to register
anything). Code may also call :func:`register` at run time before its presets are loaded.
:func:`family_names` lists the families (registered, entry points, catalog folders) without
importing any model.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from cxlsim.config.catalog import Preset, catalog_roots, resolve_preset
from cxlsim.config.params import ParamSet, PlausibilityWarning, Schema, unknown_key_message
from cxlsim.errors import ConfigError

if TYPE_CHECKING:  # annotations only: listing families imports no model module, cxlsim.devices.base included
    from cxlsim.devices.base import Energy, Usage

#: The entry-point group naming each family's module (built-in and third-party alike).
ENTRY_POINT_GROUP = "cxlsim.device_families"


#: What a family's models are, for the system layer (roles take families by kind or by name).
KINDS = {
    "memory": "modules holding data: the media API of cxlsim.devices.memory.interface.MemoryModel (serve, new_state, "
              "read_ns/write_ns), capacity_GB and background power; roles give them count and interleave_B",
    "accelerator_memory": "memory on an accelerator package read by the chip's own cores: capacity and "
                          "bandwidth, no media API, not provisioned (bytes moved -> dynamic energy)",
    "compute": "a processor: GPU, host CPU, accelerator chip (busy time -> active energy)",
    "logic": "logic on a memory device: near-data computing, checkpointing (operations -> dynamic energy)",
    "link": "a point-to-point link (bytes moved -> dynamic energy)",
    "switch": "a switch between links (bytes forwarded -> dynamic energy)",
    "protocol": "a protocol controller; its costs are those of the paths it drives",
    "network": "a data-centre network element: NIC, parameter server (bytes or busy time -> energy)",
    "cxl_mem": "a composite CXL memory device: media behind a controller, a link and optionally a switch, built "
               "from other kinds' families (its parts are priced where a system uses them)",
}

#: Where each kind's contract is stated (``module:Protocol``; the module is the kind's
#: ``interface.py``, the ``typing.Protocol`` the one every family of the kind provides, its docstring
#: the contract): the contract tests (tests/contracts/test_device_contracts.py) hold every registered family of
#: the kind to it. Strings: listing kinds imports no model.
KIND_INTERFACES = {
    "memory": "cxlsim.devices.memory.interface:MemoryModel",
    "accelerator_memory": "cxlsim.devices.memory.interface:AcceleratorMemory",
    "compute": "cxlsim.devices.compute.interface:Compute",
    "logic": "cxlsim.devices.logic.interface:Logic",
    "link": "cxlsim.devices.fabric.interface:Link",
    "switch": "cxlsim.devices.fabric.interface:Switch",
    "protocol": "cxlsim.devices.fabric.interface:ProtocolController",
    "network": "cxlsim.devices.network.interface:NetworkElement",
    "cxl_mem": "cxlsim.devices.cxl_mem.interface:CxlMemory",
}


def kind_interface(kind: str) -> type:
    """The ``typing.Protocol`` every family of ``kind`` provides (:data:`KIND_INTERFACES`)."""
    module, name = KIND_INTERFACES[kind].split(":")
    return getattr(importlib.import_module(module), name)

#: What a family may declare it offers beyond its kind (:attr:`DeviceFamily.capabilities`): the
#: system layer asks for a capability, never for a family's name, so a family registered from
#: outside cxlsim that declares one is treated as a shipped one that does.
CAPABILITIES = {
    "media": "its models are modules of the shared media model (cxlsim.devices.memory.media.media.MediaModel: "
             "serve on the numba kernel, new_state(count, interleave_B)), interleaved by a memory role",
    "block_device": "a storage device the host reaches through its block layer: a host that maps it reads a row "
                    "not in memory as a page fault and writes it in blocks, not with non-temporal stores",
    "host_memory": "main memory a host's memory controller drives: a role of it on the host holds the host's own "
                   "memory (OS, framework, input pipeline) beside what the system puts there",
    "persistent": "its media keep their contents without power (the ADR domain of persistent memory)",
}


@dataclass(frozen=True)
class DeviceFamily:
    """One device family: its schema, model constructor, kind, energy hook and microbenchmark."""

    name: str
    doc: str
    schema: Schema
    build: Callable[[ParamSet], Any]
    kind: str
    energy: Callable[[Any, Usage], Energy] | None
    microbench: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None
    #: Optional: parameters resolved when a preset loads (files a preset names by stem, found in the
    #: catalog roots): ``resolve(params) -> {key: (value, source)}`` for keys the preset left empty.
    resolve: Callable[[ParamSet], Mapping[str, tuple[Any, str]]] | None = None
    #: The parameters :attr:`energy` reads, and no other: what a preset that ``emulates:`` another
    #: takes from the emulated preset when priced ``as_emulated`` (:mod:`cxlsim.energy.model`); a
    #: family without them has no preset that emulates.
    energy_params: tuple[str, ...] = ()
    #: What the family offers beyond its kind (keys of :data:`CAPABILITIES`).
    capabilities: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"device family {self.name!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        object.__setattr__(self, "capabilities", frozenset(self.capabilities))
        unknown = sorted(self.capabilities - set(CAPABILITIES))
        if unknown:
            raise ValueError(f"device family {self.name!r}: capabilities {unknown} are not among {', '.join(CAPABILITIES)}")


_FAMILIES: dict[str, DeviceFamily] = {}


def register(family: DeviceFamily) -> DeviceFamily:
    """Register ``family`` under its name (idempotent for the same object)."""
    existing = _FAMILIES.get(family.name)
    if existing is not None and existing is not family:
        raise ValueError(f"device family {family.name!r} registered twice")
    _FAMILIES[family.name] = family
    return family


def _entry_points() -> dict[str, str]:
    """``{family: module}`` of the entry-point group :data:`ENTRY_POINT_GROUP` (no import)."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _module_of(name: str) -> str | None:
    """The module that registers family ``name`` (its entry point), if any."""
    return _entry_points().get(name)


def family_names() -> list[str]:
    """Names of the known families, sorted: those registered, those of the entry-point group, and
    every family folder of the preset catalogs (``devices/<family>/``). Imports no model."""

    names = set(_FAMILIES) | set(_entry_points())
    for root in catalog_roots("devices"):
        if root.is_dir():
            names.update(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    return sorted(names)


def get_family(name: str, where: str = "family") -> DeviceFamily:
    """The family ``name``, importing the module of its entry point on first use."""
    if name not in _FAMILIES:
        module = _module_of(name)
        if module is not None:
            importlib.import_module(module)
    if name not in _FAMILIES:
        hint = unknown_key_message(name, family_names())[len("unknown key"):]
        raise ConfigError(where, "family", f"unknown device family {name!r}" + hint)
    return _FAMILIES[name]


def family_kind(name: str) -> str:
    """The kind of family ``name`` (:data:`KINDS`), importing it on first use."""
    return get_family(name).kind


def families_of_kind(kind: str | None, capability: str | None = None) -> list[str]:
    """Names of the known families of ``kind`` (any kind: ``None``) that declare ``capability`` (if
    given), sorted (imports each family's module)."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if capability is not None and capability not in CAPABILITIES:
        raise ValueError(f"capability {capability!r} is not one of {', '.join(CAPABILITIES)}")
    out = []
    for name in family_names():
        try:
            fam = get_family(name)
        except ConfigError:  # a catalog folder without a module: no family to list
            continue
        if (kind is None or fam.kind == kind) and (capability is None or capability in fam.capabilities):
            out.append(name)
    return out


def has_capability(name: str, capability: str) -> bool:
    """Whether family ``name`` declares ``capability`` (:data:`CAPABILITIES`)."""
    if capability not in CAPABILITIES:
        raise ValueError(f"capability {capability!r} is not one of {', '.join(CAPABILITIES)}")
    return capability in get_family(name).capabilities


def family_schema(name: str, where: str) -> Schema:
    return get_family(name, where).schema


def load_preset(name_or_path: str, overrides: Mapping[str, Any] | None = None,
                overrides_where: str | Mapping[str, str] = "--set") -> Preset:
    """Load, resolve and validate preset ``family/name`` (or a YAML path) against its family's
    schema, with parameter ``overrides`` (source ``overrides_where``: one for all, or each's); then the family's
    :attr:`DeviceFamily.resolve` fills what it resolves at load (each value with its source)."""
    preset = resolve_preset(name_or_path, family_schema, overrides, overrides_where)
    family = get_family(preset.family)
    if preset.emulates is not None and not family.energy_params:
        raise ConfigError(preset.path, "emulates", f"family {family.name!r} declares no energy parameters "
                          "(DeviceFamily.energy_params) to price as the emulated device's")
    found = family.resolve(preset.params) if family.resolve is not None else {}
    if not found:
        return preset
    values = {**preset.params.as_dict(), **{k: v for k, (v, _) in found.items()}}
    sources = {**preset.params.sources, **{k: src for k, (_, src) in found.items()}}
    with warnings.catch_warnings():  # the values were checked as given; what resolves is the family's
        warnings.simplefilter("ignore", PlausibilityWarning)
        params = family.schema.validate(values, sources, preset.path, "params.")
    return dataclasses.replace(preset, params=params)


def build_device(preset: str, overrides: Mapping[str, Any] | None = None) -> Any:
    """Load preset ``family/name`` (with parameter ``overrides``) and build its model."""
    p = load_preset(preset, overrides)
    return get_family(p.family).build(p.params)
