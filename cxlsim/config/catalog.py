"""Catalogs of named presets: ``devices/<family>/<name>.yaml``.

A preset file::

    version: 1
    family: pmem                  # must match the folder
    description: one module ...
    source: note for values that carry none of their own   # optional
    inherits: pmem/optane-100     # optional: start from another preset of the same family
    emulates: {preset: pmem/optane-100, source: "..."}   # optional: the device this apparatus
                                  # emulates (same family); read only for energy (below)
    params:
      read_latency_random_ns: {value: 305, source: "OptaneStudy ..."}
      write_bw_GBps: {ratio: 0.1, of: "dram/ddr4-2666:write_bw_GBps", source: "paper Table 2"}
      xpline_B: 256               # plain value: the file's `source:` applies

Contract: a resolved preset is a :class:`Preset` whose ``params`` passed its family's schema; every
value has a non-empty source (its own, the file's, or ``schema default``), or loading fails.
``emulates`` names the preset of the same family that an emulation apparatus stands in for (the
prototype's DDR4 controllers that delay responses to emulate PMEM), with a required ``source:``;
it is inherited through ``inherits:`` and a child may name another. Timing never reads it: the
energy model prices the role's energy as the emulated device's under ``energy.emulated_media:
as_emulated`` (:mod:`cxlsim.energy.model`); :attr:`Preset.emulates` is its name.
Search path (:func:`catalog_roots`, the one place that knows where catalogs are): the shipped
catalog first, then ``<folder>/devices`` for each folder in ``$CXLSIM_PATH`` (``:``-separated; each
folder may hold ``devices/``, ``workloads/`` and ``configs/``), later roots shadowing earlier ones by
name. The shipped catalogs are the repository's top-level ``devices/``, ``workloads/`` and
``configs/``, packaged as ``cxlsim.catalogs.<kind>`` (``pyproject.toml`` maps them) and read with
:mod:`importlib.resources`, so an editable install, ``pip install .`` and a built wheel all find them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cxlsim.config.params import ParamSet, Schema, relocated_warnings, unknown_key_message
from cxlsim.config.yamlio import check_version, read_yaml
from cxlsim.errors import ConfigError

#: Catalog kinds and the packages that ship them (the repository's top-level folders of that name).
CATALOG_PACKAGES = {
    "devices": "cxlsim.catalogs.devices",
    "workloads": "cxlsim.catalogs.workloads",
    "configs": "cxlsim.catalogs.configs",
}
PRESET_KEYS = {"version", "family", "description", "source", "inherits", "emulates", "params"}
EMULATES_KEYS = {"preset", "source"}


@dataclass(frozen=True)
class Preset:
    """A resolved, validated device preset (one module: one DIMM, one SSD, one link...)."""

    name: str  # "family/stem"
    family: str
    description: str
    params: ParamSet
    path: str
    emulates: str | None = None  # the preset this apparatus emulates (module docstring), or None
    emulates_source: str = ""


def shipped_root(kind: str) -> Path:
    """Folder of the ``kind`` catalog shipped with cxlsim (package data of ``cxlsim.catalogs``)."""
    if kind not in CATALOG_PACKAGES:
        raise ValueError(f"unknown catalog kind {kind!r}; expected one of {', '.join(CATALOG_PACKAGES)}")
    root = resources.files(CATALOG_PACKAGES[kind])
    if not isinstance(root, Path):  # e.g. imported from a zip archive: catalogs need a file system
        raise RuntimeError(f"cxlsim's {kind} catalog is not on a file system ({root!r}); install cxlsim "
                           "as an ordinary (unzipped) package")
    return root


def catalog_roots(kind: str = "devices") -> list[Path]:
    """Folders searched for ``kind`` catalogs (``devices``, ``workloads``, ``configs``), in order.

    The shipped catalog first, then ``<folder>/<kind>`` for each folder in ``$CXLSIM_PATH``
    (``:``-separated, read at every call); a name found in a later root shadows earlier ones.
    Roots need not exist (callers skip missing folders). This is the only function that knows
    where catalogs are; every lookup of a preset, workload, system or timing table goes through it.
    """
    roots = [shipped_root(kind)]
    for extra in filter(None, os.environ.get("CXLSIM_PATH", "").split(os.pathsep)):
        roots.append(Path(extra) / kind)
    return roots


def catalog_file(kind: str, relative: str) -> Path | None:
    """The file ``relative`` of the last ``kind`` catalog root holding it (later roots shadow
    earlier ones), or ``None``."""
    found = None
    for root in catalog_roots(kind):
        candidate = root / relative
        if candidate.is_file():
            found = candidate
    return found


def preset_path(name: str) -> Path:
    """Path of preset ``family/stem`` (later roots shadow earlier ones)."""
    if name.count("/") != 1:
        raise ConfigError(name, "", "a preset is named family/name, e.g. pmem/optane-100")
    found = catalog_file("devices", f"{name}.yaml")
    if found is None:
        known = list_presets()
        raise ConfigError(name, "", "no such preset" + _hint(name, known))
    return found


def list_presets(family: str | None = None) -> list[str]:
    """All preset names, sorted, optionally of one family."""
    names: set[str] = set()
    for root in catalog_roots("devices"):
        if not root.is_dir():
            continue
        for path in root.glob("*/*.yaml"):
            fam = path.parent.name
            if family is None or fam == family:
                names.add(f"{fam}/{path.stem}")
    return sorted(names)


def _hint(name: str, known: list[str]) -> str:
    msg = unknown_key_message(name, known)
    return msg[len("unknown key") :] if msg.startswith("unknown key") else ""


#: ``schema_of(family, where)``: the parameter schema of a device family (the device registry's
#: :func:`~cxlsim.devices.registry.family_schema`), raising ConfigError naming ``where`` if unknown.
SchemaOf = Callable[[str, str], Schema]


def resolve_preset(
    name_or_path: str | Path,
    schema_of: SchemaOf,
    overrides: Mapping[str, Any] | None = None,
    overrides_where: str | Mapping[str, str] = "--set",
) -> Preset:
    """Load, resolve and validate a preset by name (``pmem/paper``) or by file path, against the
    schemas ``schema_of`` gives (the catalog knows files, not families: the device layer passes its
    registry; :func:`cxlsim.devices.load_preset` is the usual entry point).

    ``overrides`` maps parameter names to values, applied after inheritance and derivation, with
    source ``overrides_where`` (one file or option for all, or each override's). An error in a
    value names its source: the override's, or this file for the preset's own values.
    """
    path = locate_preset(name_or_path)
    doc = read_yaml(path)
    where = str(path)
    check_version(doc, where)
    for key in doc:
        if key not in PRESET_KEYS:
            raise ConfigError(where, key, unknown_key_message(key, PRESET_KEYS))
    family = doc.get("family")
    if not isinstance(family, str):
        raise ConfigError(where, "family", "missing; name the device family (e.g. pmem)")
    schema = schema_of(family, where)
    values, sources = _raw_params(path, doc, schema, schema_of, stack=())
    origin = {k: overrides_where if isinstance(overrides_where, str) else overrides_where.get(k, "--set")
              for k in overrides or {}}
    own = dict(values)
    for key, value in (overrides or {}).items():
        values[key] = value
        sources[key] = f"override ({origin[key]})"
    def relocate(at: str, key: str) -> tuple[str, str]:  # an override's value names its origin
        name = key.removeprefix("params.")
        return (origin[name], key) if at == where and key.startswith("params.") and name in origin else (at, key)

    try:
        with relocated_warnings(relocate):
            params = schema.validate(values, sources, where, "params.")
    except ConfigError as exc:
        raise _blame(exc, schema, own, overrides or {}, origin, where) from None
    name = f"{family}/{path.stem}" if path.parent.name == family else str(path)
    emulates, emulates_source = _emulates(path, doc, ())
    if emulates is not None and emulates in (name, where):
        raise ConfigError(where, "emulates.preset", f"{name} cannot emulate itself")
    return Preset(name, family, str(doc.get("description", "")), params, where, emulates, emulates_source)


def _emulates(path: Path, doc: dict[str, Any], stack: tuple[str, ...]) -> tuple[str | None, str]:
    """The ``emulates:`` entry of a preset document, or the one it inherits (module docstring):
    ``(preset name, source)`` or ``(None, "")``. The named preset must exist and be of the
    document's family (cycles of ``inherits`` are refused by :func:`_raw_params`, read first)."""
    where = str(path)
    entry = doc.get("emulates")
    if entry is None:
        parent = doc.get("inherits")
        if not isinstance(parent, str) or where in stack:
            return None, ""
        ppath = locate_preset(parent)
        return _emulates(ppath, read_yaml(ppath), stack + (where,))
    if not isinstance(entry, dict):
        raise ConfigError(where, "emulates", "expected {preset: family/name, source: ...}: the device this "
                          f"apparatus emulates and why, got {entry!r:.40}")
    for k in entry:
        if k not in EMULATES_KEYS:
            raise ConfigError(where, f"emulates.{k}", unknown_key_message(k, EMULATES_KEYS))
    name, source = entry.get("preset"), entry.get("source")
    if not isinstance(name, str) or not name:
        raise ConfigError(where, "emulates.preset", f"expected a preset name family/name, got {name!r}")
    if not isinstance(source, str) or not source.strip():
        raise ConfigError(where, "emulates.source", "no source: say why this is the device emulated")
    try:
        epath = locate_preset(name)
    except ConfigError as exc:
        raise ConfigError(where, "emulates.preset", f"{name}: {exc.message}") from None
    edoc = read_yaml(epath)
    if edoc.get("family") != doc.get("family"):
        raise ConfigError(where, "emulates.preset", f"{name} is of family {edoc.get('family')!r}, not "
                          f"{doc.get('family')!r}: an emulation is priced as a device of its own family")
    return name, source


def _blame(exc: ConfigError, schema: Schema, own: dict[str, Any], overrides: Mapping[str, Any],
           origin: dict[str, str], where: str) -> ConfigError:
    """A preset's validation error ``exc`` (raised naming the preset file ``where``) naming the
    input that holds the fault: an override's value; the file's own, when it fails alone; else the
    override without which the others pass (the check's key then leads the message)."""
    key = exc.key.removeprefix("params.")
    if exc.where != where or not exc.key.startswith("params.") or not origin:
        return exc
    if key in origin:
        return ConfigError(origin[key], exc.key, exc.message)
    try:
        schema.validate(own, {}, where, "params.")
    except ConfigError as alone:
        if alone.key.removeprefix("params.") not in origin:  # not one an override supplies
            return alone
    culprit = list(origin)[-1]  # the last given, if none alone is to blame
    for k in origin:
        try:
            schema.validate({**own, **{o: v for o, v in overrides.items() if o != k}}, {}, where, "params.")
        except ConfigError:
            continue
        culprit = k
        break
    return ConfigError(origin[culprit], f"params.{culprit}", f"{key} {exc.message}")


def preset_value(name_or_path: str | Path, key: str, schema_of: SchemaOf) -> Any:
    """The value preset ``name_or_path`` gives parameter ``key`` (after inheritance and
    derivation, not validated), or None if it gives none: for tools that make what a parameter
    names (a GPU's timing table) before the preset can validate."""
    path = locate_preset(name_or_path)
    doc = read_yaml(path)
    check_version(doc, str(path))
    schema = schema_of(str(doc.get("family")), str(path))
    values, _ = _raw_params(path, doc, schema, schema_of, stack=())
    return values.get(key)


def locate_preset(name_or_path: str | Path) -> Path:
    """The file of preset ``family/name`` or path ``name_or_path``; a ConfigError naming it if none."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        if not p.is_file():
            raise ConfigError(str(p), "", "file not found")
        return p
    return preset_path(str(name_or_path))


def _raw_params(
    path: Path, doc: dict[str, Any], schema: Schema, schema_of: SchemaOf, stack: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Values and sources of a preset document after inheritance and ratio derivation."""
    where = str(path)
    if where in stack:
        raise ConfigError(where, "inherits", "inheritance cycle: " + " -> ".join(stack + (where,)))
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    parent = doc.get("inherits")
    if parent is not None:
        if not isinstance(parent, str) or not parent:
            raise ConfigError(where, "inherits", f"expected a preset name family/name or a YAML path, got {parent!r}")
        try:
            ppath = locate_preset(parent)
        except ConfigError as exc:
            raise ConfigError(where, "inherits", f"{parent}: {exc.message}") from None
        pdoc = read_yaml(ppath)
        check_version(pdoc, str(ppath))
        if pdoc.get("family") != doc.get("family"):
            raise ConfigError(where, "inherits", f"{parent} is of family {pdoc.get('family')!r}")
        values, sources = _raw_params(ppath, pdoc, schema, schema_of, stack + (where,))
    file_source = doc.get("source")
    params = doc.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(where, "params", "expected a mapping of parameter: value")
    declared = schema.by_name()
    for key, entry in params.items():
        kp = f"params.{key}"
        if key not in declared:
            raise ConfigError(where, kp, unknown_key_message(key, declared))
        value, source = _entry(entry, where, kp, schema_of, stack + (where,))
        source = source or file_source
        if not source:
            raise ConfigError(where, kp, "no source: give `source:` for the value or the file")
        values[key] = value
        sources[key] = str(source)
    return values, sources


def _entry(entry: Any, where: str, kp: str, schema_of: SchemaOf,
           stack: tuple[str, ...]) -> tuple[Any, str | None]:
    if not isinstance(entry, dict):
        return entry, None
    allowed = {"value", "source", "ratio", "of"}
    for k in entry:
        if k not in allowed:
            raise ConfigError(where, f"{kp}.{k}", unknown_key_message(k, allowed))
    source = entry.get("source")
    if "value" in entry:
        if "ratio" in entry or "of" in entry:
            raise ConfigError(where, kp, "give either value or ratio+of, not both")
        return entry["value"], source
    if "ratio" in entry and "of" in entry:
        ratio = entry["ratio"]
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0:
            raise ConfigError(where, f"{kp}.ratio", f"expected a positive number, got {ratio!r}")
        base = _derived_base(str(entry["of"]), where, f"{kp}.of", schema_of, stack)
        if isinstance(base, bool) or not isinstance(base, (int, float)):
            raise ConfigError(where, f"{kp}.of", f"{entry['of']} is not a number")
        note = f"{ratio:g} × {entry['of']}"
        return base * ratio, f"{source} ({note})" if source else note
    raise ConfigError(where, kp, "expected a value, {value: ..., source: ...} or {ratio: ..., of: ...}")


def _derived_base(ref: str, where: str, kp: str, schema_of: SchemaOf, stack: tuple[str, ...]) -> Any:
    """Value of ``family/name:key`` for ratio-derived parameters."""
    if ":" not in ref:
        raise ConfigError(where, kp, "expected family/name:key")
    preset, key = ref.split(":", 1)
    try:
        path = locate_preset(preset)
    except ConfigError as exc:
        raise ConfigError(where, kp, f"{preset}: {exc.message}") from None
    doc = read_yaml(path)
    check_version(doc, str(path))
    schema = schema_of(str(doc.get("family")), str(path))
    values, _ = _raw_params(path, doc, schema, schema_of, stack)
    if key not in values:
        declared = schema.by_name()
        if key in declared and not declared[key].required:
            return declared[key].default
        raise ConfigError(where, kp, f"{preset} has no parameter {key!r}")
    return values[key]
