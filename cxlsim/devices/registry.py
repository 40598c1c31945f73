"""Device families register here by name; a preset's ``family:`` key selects one.

Contract of a family (see :class:`DeviceFamily`): a parameter :class:`~cxlsim.config.params.Schema`,
a ``build(params) -> model`` returning the family's pure timing model (usable without simpy), and
optionally ``microbench(model, options) -> dict`` returning the JSON-ready characterisation that
``cxlsim microbench`` prints. Family modules in :mod:`cxlsim.devices` call :func:`register` at import;
:func:`load_families` imports them all (the registry does not list them).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cxlsim.config.params import ParamSet, Schema, unknown_key_message
from cxlsim.errors import ConfigError


@dataclass(frozen=True)
class DeviceFamily:
    """One device family: its schema, model constructor and microbenchmark."""

    name: str
    doc: str
    schema: Schema
    build: Callable[[ParamSet], Any]
    microbench: Callable[[Any, Mapping[str, Any]], dict[str, Any]] | None = None


_FAMILIES: dict[str, DeviceFamily] = {}
_LOADED = False


def register(family: DeviceFamily) -> DeviceFamily:
    """Register ``family`` under its name (idempotent for the same object)."""
    existing = _FAMILIES.get(family.name)
    if existing is not None and existing is not family:
        raise ValueError(f"device family {family.name!r} registered twice")
    _FAMILIES[family.name] = family
    return family


def load_families() -> dict[str, DeviceFamily]:
    """Import every module of :mod:`cxlsim.devices` so that each registers its family."""
    global _LOADED
    if not _LOADED:
        import cxlsim.devices as pkg

        for info in pkgutil.iter_modules(pkg.__path__):
            if not info.name.startswith("_") and info.name not in ("registry", "base"):
                importlib.import_module(f"cxlsim.devices.{info.name}")
        _LOADED = True
    return dict(_FAMILIES)


def get_family(name: str, where: str = "family") -> DeviceFamily:
    families = load_families()
    if name not in families:
        raise ConfigError(where, "family", f"unknown device family {name!r}" + unknown_key_message(name, families)[len("unknown key"):])
    return families[name]


def family_schema(name: str, where: str) -> Schema:
    return get_family(name, where).schema


def build_device(preset: str, overrides: Mapping[str, Any] | None = None) -> Any:
    """Load preset ``family/name`` (with parameter ``overrides``) and build its timing model."""
    from cxlsim.config.catalog import load_preset

    p = load_preset(preset, overrides)
    return get_family(p.family).build(p.params)
