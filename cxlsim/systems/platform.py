"""Platforms: the apparatus a system runs on (docs/design.md#platforms).

A run is a **system** (the architecture: ``configs/<name>.yaml``, its pipeline) on a **platform**
(the apparatus: which device fills each role): ``configs/platforms/<name>.yaml``::

    version: 1
    name: prototype
    description: the machine the paper measured
    pipeline:                       # optional: defaults of apparatus-dependent pipeline settings
      grads_handoff: after_interaction   # (a system file or --set pipeline.* still wins)
    energy:                         # optional: defaults of the energy readings (as pipeline:)
      emulated_media: as_emulated
    roles:                          # every system: role -> device (as a system's devices: entry)
      gpu: gpu/rtx3090
      table_memory: {preset: pmem/optane-100, count: 4, interleave_B: 4096}
    groups:                         # systems built differently on this platform, applied in order
      - systems: [pcie, cxl-d, cxl-b, cxl]
        why: the Alveo U200 card
        roles: {table_memory: {preset: ...}}   # merged over ``roles`` (and earlier groups)

Contract: :func:`load_platform` validates a platform (unknown keys, shapes) and raises
:class:`~cxlsim.errors.ConfigError` naming the file and key (the system layer's
:func:`~cxlsim.systems.config.check_platform` then refuses role names no system has, groups naming
systems the catalog has not, and entries no system could build); :meth:`Platform.role_spec` gives the
device entry of a role for a system (its groups', in file order, deep-merged over the defaults) or
``None``. The system layer fills only the roles a system's pipeline
needs, and a system file's own ``devices:`` entries are merged over the platform's.
:data:`DEFAULT_PLATFORM` is the platform of a run that names none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cxlsim.config.catalog import catalog_file, catalog_roots
from cxlsim.config.params import unknown_key_message
from cxlsim.config.yamlio import check_version, read_yaml
from cxlsim.errors import ConfigError

#: The platform of a run that names none: every system on the same real devices, so systems differ
#: only in architecture (``docs/validation.md`` says why; the paper's apparatus is ``prototype``).
DEFAULT_PLATFORM = "physical"
#: A platform file's keys and what each holds.
PLATFORM_KEYS = {
    "version": "file format version (1)",
    "name": "the platform's name (default: the file's stem)",
    "description": "one line shown in listings",
    "source": "where the apparatus is described (a publication)",
    "roles": "role -> device entry for every system (family/name, or a devices: entry of a system file)",
    "groups": "systems built differently on this platform: a list of {systems, why, roles}, applied in order",
    "pipeline": "defaults of apparatus-dependent pipeline settings (pipeline.*; a system file or --set wins)",
    "energy": "defaults of the energy readings (energy.*; a system file or --set wins)",
}
#: The keys of one ``groups:`` item.
GROUP_KEYS = {
    "systems": "the systems (by name; their descendants too) the group applies to",
    "why": "why these systems are built differently here",
    "roles": "role -> device entry, merged over roles: (and earlier groups)",
}
FOLDER = "platforms"


@dataclass(frozen=True)
class Platform:
    name: str
    description: str
    path: str
    roles: dict[str, Any]  # role -> device entry, every system
    groups: tuple[tuple[tuple[str, ...], dict[str, Any]], ...]  # (systems, role -> entry), as in the file
    pipeline: dict[str, Any] = field(default_factory=dict)  # pipeline defaults (dataflow systems)
    energy: dict[str, Any] = field(default_factory=dict)  # energy-reading defaults (systems.config.ENERGY)

    def role_spec(self, system: str | tuple[str, ...], role: str) -> dict[str, Any] | None:
        """The device entry of ``role`` for ``system`` (its groups', in file order, over the
        defaults), or None. ``system``: a name, or a name and the systems it inherits from: a group
        naming any of them applies (a system built on ``cxl-d`` is built like ``cxl-d``)."""
        spec = None
        for _, entry in self.role_layers(system, role):
            # a layer naming a device of another family starts afresh: the earlier layers' modules,
            # interleaving and parameters were another family's
            spec = entry if spec is not None and _family(entry) not in (None, _family(spec)) else merge(spec or {}, entry)
        return spec

    def role_layers(self, system: str | tuple[str, ...], role: str) -> list[tuple[str, dict[str, Any]]]:
        """The entries :meth:`role_spec` merges, in order, each with its key path in the file
        (``roles.ROLE``, ``groups[i].roles.ROLE``): an error then names the entry that gave a value."""
        names = {system} if isinstance(system, str) else set(system)
        out = [(f"roles.{role}", _entry(self.roles[role]))] if self.roles.get(role) is not None else []
        for i, (systems, roles) in enumerate(self.groups):
            if names.intersection(systems) and role in roles and roles[role] is not None:
                out.append((f"groups[{i}].roles.{role}", _entry(roles[role])))
        return out


def _family(entry: dict[str, Any]) -> str | None:
    """The family part of an entry's ``preset`` (``family/name``), or None when it names none."""
    name = entry.get("preset")
    return str(name).split("/")[0] if name is not None else None


def _entry(spec: Any) -> dict[str, Any] | None:
    """``family/name`` is short for ``{preset: family/name}``."""
    if spec is None:
        return None
    return {"preset": spec} if isinstance(spec, str) else dict(spec)


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` deep-merged over ``base`` (mappings merge, anything else replaces)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def list_platforms() -> list[str]:
    names: set[str] = set()
    for root in catalog_roots("configs"):
        folder = root / FOLDER
        if folder.is_dir():
            names.update(p.stem for p in folder.glob("*.yaml"))
    return sorted(names)


def platform_path(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml"):
        return p
    found = catalog_file("configs", f"{FOLDER}/{name_or_path}.yaml")
    if found is None:
        hint = unknown_key_message(name_or_path, list_platforms())[len("unknown key"):]
        raise ConfigError("--platform", "", f"no such platform {name_or_path!r}{hint} (known: {', '.join(list_platforms())})")
    return found


def load_platform(name_or_path: str) -> Platform:
    """Read and validate ``configs/platforms/<name>.yaml`` (or a path)."""
    if not isinstance(name_or_path, str) or not name_or_path:
        raise ConfigError("--platform", "", f"expected a platform name, got {name_or_path!r}")
    path = platform_path(name_or_path)
    where = str(path)
    doc = read_yaml(path)
    check_version(doc, where)
    for key in doc:
        if key not in PLATFORM_KEYS:
            raise ConfigError(where, key, unknown_key_message(key, PLATFORM_KEYS))
    roles = _roles(doc.get("roles") or {}, where, "roles")
    groups = []
    groups_doc = doc.get("groups") or []
    if not isinstance(groups_doc, list):
        raise ConfigError(where, "groups", "expected a list of {systems: [...], roles: {...}}")
    for i, group in enumerate(groups_doc):
        kp = f"groups[{i}]"
        if not isinstance(group, dict):
            raise ConfigError(where, kp, "expected {systems: [...], roles: {...}}")
        for key in group:
            if key not in GROUP_KEYS:
                raise ConfigError(where, f"{kp}.{key}", unknown_key_message(key, GROUP_KEYS))
        systems = group.get("systems")
        if not isinstance(systems, list) or not systems or not all(isinstance(s, str) for s in systems):
            raise ConfigError(where, f"{kp}.systems", "expected a list of system names")
        groups.append((tuple(systems), _roles(group.get("roles") or {}, where, f"{kp}.roles")))
    pipeline = doc.get("pipeline") or {}
    if not isinstance(pipeline, dict):
        raise ConfigError(where, "pipeline", "expected a mapping of pipeline setting: value")
    energy = doc.get("energy") or {}
    if not isinstance(energy, dict):
        raise ConfigError(where, "energy", "expected a mapping of energy setting: value")
    name = str(doc.get("name", path.stem))
    return Platform(name, str(doc.get("description", "")), where, roles, tuple(groups), dict(pipeline), dict(energy))


def _roles(doc: Any, where: str, kp: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise ConfigError(where, kp, "expected a mapping role: device")
    for role, spec in doc.items():
        if not isinstance(spec, (str, dict)):
            raise ConfigError(where, f"{kp}.{role}", "expected family/name or {preset: family/name, ...}")
    return dict(doc)
