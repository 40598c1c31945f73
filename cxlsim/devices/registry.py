"""Device families register here by name; a preset's ``family:`` key selects one.

Contract of a family (see :class:`DeviceFamily`): a parameter :class:`~cxlsim.config.params.Schema`,
a ``build(params) -> model`` returning the family's pure model (:mod:`cxlsim.devices.base` states
the API every model follows), and optionally ``microbench(model, options) -> dict`` returning the
JSON-ready characterisation that ``cxlsim microbench`` prints (``options`` carries built models,
never preset names: the command line resolves those).

Convention: family ``x`` lives in module ``cxlsim.devices.x``, which calls :func:`register` when it
is imported. :func:`get_family` imports that one module on first use, so using a family imports
nothing else (the tool modules ``gpu_table`` and ``gpu_measure`` and helpers such as ``cxl_path``,
``cxl_dcoh``, ``media`` and ``media_kernel`` are never imported to register anything). Families of
other packages call :func:`register` themselves before their presets are loaded.
:func:`family_names` lists the families without importing any model.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cxlsim.config.catalog import Preset, catalog_roots, resolve_preset
from cxlsim.config.params import ParamSet, Schema, unknown_key_message
from cxlsim.errors import ConfigError

PACKAGE = "cxlsim.devices"


@dataclass(frozen=True)
class DeviceFamily:
    """One device family: its schema, model constructor and microbenchmark."""

    name: str
    doc: str
    schema: Schema
    build: Callable[[ParamSet], Any]
    microbench: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None


_FAMILIES: dict[str, DeviceFamily] = {}


def register(family: DeviceFamily) -> DeviceFamily:
    """Register ``family`` under its name (idempotent for the same object)."""
    existing = _FAMILIES.get(family.name)
    if existing is not None and existing is not family:
        raise ValueError(f"device family {family.name!r} registered twice")
    _FAMILIES[family.name] = family
    return family


def _module_of(name: str) -> str | None:
    """The module that holds family ``name`` by convention, if it exists."""
    if not name.isidentifier() or name.startswith("_"):
        return None
    module = f"{PACKAGE}.{name}"
    try:
        return module if importlib.util.find_spec(module) is not None else None
    except (ImportError, ValueError):
        return None


def family_names() -> list[str]:
    """Names of the known families, sorted: those registered plus every family folder of the preset
    catalogs (``devices/<family>/``). Imports no model."""

    names = set(_FAMILIES)
    for root in catalog_roots("devices"):
        if root.is_dir():
            names.update(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    return sorted(names)


def get_family(name: str, where: str = "family") -> DeviceFamily:
    """The family ``name``, importing ``cxlsim.devices.<name>`` on first use."""
    if name not in _FAMILIES:
        module = _module_of(name)
        if module is not None:
            importlib.import_module(module)
    if name not in _FAMILIES:
        hint = unknown_key_message(name, family_names())[len("unknown key"):]
        raise ConfigError(where, "family", f"unknown device family {name!r}" + hint)
    return _FAMILIES[name]


def family_schema(name: str, where: str) -> Schema:
    return get_family(name, where).schema


def load_preset(name_or_path: str, overrides: Mapping[str, Any] | None = None,
                overrides_where: str = "--set") -> Preset:
    """Load, resolve and validate preset ``family/name`` (or a YAML path) against its family's
    schema, with parameter ``overrides`` (source ``overrides_where``)."""
    return resolve_preset(name_or_path, family_schema, overrides, overrides_where)


def build_device(preset: str, overrides: Mapping[str, Any] | None = None) -> Any:
    """Load preset ``family/name`` (with parameter ``overrides``) and build its model."""
    p = load_preset(preset, overrides)
    return get_family(p.family).build(p.params)
