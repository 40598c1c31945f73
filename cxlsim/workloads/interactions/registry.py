"""The registry of interactions (:mod:`.interface`): name -> class.

Discovery: every interaction, the built-ins included, is an entry point of the group
:data:`ENTRY_POINT_GROUP` (``cxlsim.interactions``) naming a module whose import registers it (cxlsim's
own ``pyproject.toml`` lists ``dot``, ``cat`` and ``dcn`` exactly as a third party's would)::

    [project.entry-points."cxlsim.interactions"]
    my_interaction = "my_study.my_interaction"

:func:`register` (a class decorator) adds a class under its ``name``; a name registered twice by
different classes is refused (an implementation cannot silently replace another). A study that
does not install a package may also call :func:`register` before loading a workload.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TypeVar

ENTRY_POINT_GROUP = "cxlsim.interactions"

_REGISTRY: dict[str, type] = {}
_loaded = False

T = TypeVar("T", bound=type)


def register(cls: T) -> T:
    """Register ``cls`` under ``cls.name`` (class decorator)."""
    name = getattr(cls, "name", "")
    if not name:
        raise ValueError(f"{cls.__qualname__} has no name to register")
    known = _REGISTRY.get(name)
    if known is not None and known is not cls:
        raise ValueError(f"interaction {name!r} is already registered ({known.__module__}.{known.__qualname__})")
    _REGISTRY[name] = cls
    return cls


def load() -> None:
    """Import every ``cxlsim.interactions`` entry point (once). RuntimeError if the group is empty:
    cxlsim's own metadata is missing (a checkout used without ``pip install -e .``, or an editable
    install made before the group existed), and no workload could name its interaction."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    eps = list(entry_points(group=ENTRY_POINT_GROUP))
    if not eps:
        raise RuntimeError(f"no interactions: the entry-point group {ENTRY_POINT_GROUP} is empty; cxlsim's metadata "
                           "is missing or stale: run pip install -e . (or install cxlsim)")
    for ep in eps:
        ep.load()


def names() -> tuple[str, ...]:
    """The registered interactions, sorted."""
    load()
    return tuple(sorted(_REGISTRY))


def get(name: str) -> type:
    """The class registered as ``name``; KeyError naming the known ones (and the likely cause when
    none is: cxlsim's metadata not installed)."""
    load()
    cls = _REGISTRY.get(name)
    if cls is None:
        raise KeyError(f"no interaction {name!r} (known: {', '.join(sorted(_REGISTRY))})")
    return cls
