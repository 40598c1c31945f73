"""The systems, workloads and platforms of a study, read from its catalog sweep.

Every study that runs a fixed set of systems (the paper's comparison, the goldens, the platform
study, Figure 12's points, the benchmarks) names them in a sweep YAML of the catalogs,
``configs/sweeps/<name>.yaml``, never in Python. A study's lists are that file's ``base.systems``
and ``base.workloads`` and its platforms: the values of a ``platform`` axis (``axes.grid`` or
``axes.zip``) or the one ``base.set.platform``, in file order. The last catalog root holding the
file wins (``$CXLSIM_PATH`` shadows the shipped one, read at every call).

Contract: :func:`sweep_lists` validates the whole file as a sweep spec (:func:`~cxlsim.sweep.spec.
load_spec`: unknown keys, unknown systems and workloads) and every platform against the catalog of
platforms, and checks that the lists the caller ``needs`` are there; any failure is a
:class:`~cxlsim.errors.ConfigError` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from cxlsim.config.catalog import catalog_file
from cxlsim.errors import ConfigError
from cxlsim.sweep.spec import load_spec
from cxlsim.systems.platform import list_platforms

#: Where the sweeps are inside the ``configs`` catalog.
FOLDER = "sweeps"
#: The lists a study may need, and the key each is read from (for errors).
LIST_KEYS = {"systems": "base.systems", "workloads": "base.workloads", "platforms": "axes.grid.platform"}


@dataclass(frozen=True)
class SweepLists:
    """A catalog sweep's lists, in file order (empty where the file gives none)."""

    name: str
    source: str  # the file read
    systems: tuple[str, ...]
    workloads: tuple[str, ...]
    platforms: tuple[str, ...]


def sweep_path(name: str) -> Path:
    """``configs/sweeps/<name>.yaml`` of the last catalog root holding it."""
    found = catalog_file("configs", f"{FOLDER}/{name}.yaml")
    if found is None:
        raise ConfigError(f"configs/{FOLDER}/{name}.yaml", "", "no such sweep in the catalogs")
    return found


def sweep_lists(name: str, needs: Sequence[str] = ()) -> SweepLists:
    """The lists of catalog sweep ``name``; ``needs`` (keys of :data:`LIST_KEYS`) must be non-empty."""
    path = sweep_path(name)
    lists = _read(str(path), path.stat().st_mtime_ns)
    for key in needs:
        if not getattr(lists, key):
            raise ConfigError(lists.source, LIST_KEYS[key], f"this study needs its {key} listed here")
    return lists


@lru_cache(maxsize=32)
def _read(path: str, mtime_ns: int) -> SweepLists:
    """The lists of the sweep file ``path`` as it was at ``mtime_ns`` (the cache's key)."""
    spec = load_spec(path)
    base = spec.document["base"]
    return SweepLists(name=Path(path).stem, source=path, systems=tuple(_names(base.get("systems"))),
                      workloads=tuple(_names(base.get("workloads"))), platforms=_platforms(spec.document, path))


def axis_values(name: str, key: str) -> tuple:
    """The values of axis ``key`` (``axes.grid`` or ``axes.zip``) of catalog sweep ``name``, in
    file order (a study's swept counts: the scale-out study's GPUs, say);
    :class:`~cxlsim.errors.ConfigError` naming the file and key when the sweep has no such axis."""
    path = sweep_path(name)
    values = _axis(str(path), path.stat().st_mtime_ns, key)
    if values is None:
        raise ConfigError(str(path), f"axes.grid.{key}", "this study needs this axis (in axes.grid or axes.zip)")
    return values


@lru_cache(maxsize=32)
def _axis(path: str, mtime_ns: int, key: str) -> tuple | None:
    axes = load_spec(path).document.get("axes") or {}
    for block in ("grid", "zip"):
        entry = (axes.get(block) or {}).get(key)
        if entry is not None:
            return tuple(entry["values"] if isinstance(entry, dict) else entry)
    return None


def _names(value: object) -> list[str]:
    """A validated ``base.systems`` / ``base.workloads``: a list, one name, or absent."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)  # type: ignore[arg-type]


def _platforms(doc: dict, where: str) -> tuple[str, ...]:
    """The values of the spec's ``platform`` axis, or its ``base.set.platform`` (a valid spec has
    at most one of them), each a catalog platform or a platform file."""
    axes = doc.get("axes") or {}
    for block in ("grid", "zip"):
        entry = (axes.get(block) or {}).get("platform")
        if entry is not None:
            values = entry["values"] if isinstance(entry, dict) else entry
            return tuple(_platform(v, where, f"axes.{block}.platform[{i}]") for i, v in enumerate(values))
    fixed = (doc["base"].get("set") or {}).get("platform")
    return () if fixed is None else (_platform(fixed, where, "base.set.platform"),)


def _platform(name: object, where: str, key: str) -> str:
    known = list_platforms()
    if isinstance(name, str) and (name in known or (Path(name).suffix in (".yaml", ".yml") and Path(name).is_file())):
        return name
    raise ConfigError(where, key, f"no such platform {name!r} (known: {', '.join(known)})")
