"""Pipeline axes: their interfaces and the registry of implementations (STYLE §1, Ramulator 2's
interface/implementation registry).

An *axis* is one choice a system's pipeline makes; the pipeline key of the same name picks the
implementation (``pipeline.persistence: undo``). The axes and what an implementation owns:

- ``persistence`` (none, redo, undo, ...): its steps in the batch dataflow and their timing, the
  roles it needs, the bytes it provisions, its functional crash protocol and recovery, and the
  activity its steps charge (:class:`Persistence`);
- ``embedding_engine`` (ndp, host_cpu): lookup and update compute, requests in flight, the lane;
- ``data_movement`` (cxl_cache, software): pooled vectors, gradients, configuration, all-reduce;
- ``checkpoint_agent`` (ckpt_logic, ndp, host_cpu): who copies rows into a checkpoint: its lane,
  burst, flag line and requests in flight;
- ``mlp_pull`` (cxl_cache, software): how MLP parameters reach the checkpoint;
- ``correction`` (fused, own_engine, serial): where the relaxed lookup's correction runs.

Contract: an implementation is a class registered with :func:`register` ``(axis, name)``; the
machine (:class:`~cxlsim.systems.machine.TrainingMachine`) builds each axis's implementation once,
``cls(machine)``, and binds its step functions at construction, so nothing is looked up per op.
Class-level hooks (``roles``, ``check``, provisioning, the crash protocol) take the pipeline
:class:`~cxlsim.config.params.ParamSet` and need no machine.

Discovery: the built-in implementations are the modules of the package :data:`BUILTIN_PACKAGE`
(imported on first use, as pytest imports its built-in plugins); a package outside cxlsim adds
implementations through the entry-point group :data:`ENTRY_POINT_GROUP` (``cxlsim.axes``): each
entry point names a module (or an object in one) whose import registers them, e.g. in the study's
``pyproject.toml``::

    [project.entry-points."cxlsim.axes"]
    my_scheme = "my_study.persistence"

A name registered twice is refused (an implementation cannot silently replace another).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, TypeVar

from cxlsim.errors import ConfigError

ENTRY_POINT_GROUP = "cxlsim.axes"
BUILTIN_PACKAGE = "cxlsim.axes"
#: The axes, each a pipeline key of the same name.
AXES = ("persistence", "embedding_engine", "data_movement", "checkpoint_agent", "mlp_pull", "correction")

_REGISTRY: dict[str, dict[str, type]] = {axis: {} for axis in AXES}
_loaded = False

T = TypeVar("T", bound=type)


def register(axis: str, name: str) -> Callable[[T], T]:
    """Class decorator: register the class as implementation ``name`` of ``axis``."""
    if axis not in _REGISTRY:
        raise ValueError(f"unknown pipeline axis {axis!r} (axes: {', '.join(AXES)})")

    def deco(cls: T) -> T:
        known = _REGISTRY[axis].get(name)
        if known is not None and known is not cls:
            raise ValueError(f"{axis} implementation {name!r} is already registered ({known.__module__}.{known.__qualname__})")
        cls.axis, cls.name = axis, name
        _REGISTRY[axis][name] = cls
        return cls

    return deco


def load() -> None:
    """Import the built-in implementations and every ``cxlsim.axes`` entry point (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    pkg = importlib.import_module(BUILTIN_PACKAGE)
    for mod in pkgutil.walk_packages(pkg.__path__, BUILTIN_PACKAGE + "."):
        importlib.import_module(mod.name)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def reload_entry_points() -> None:
    """Load entry points again (a distribution added to ``sys.path`` after the first use)."""
    load()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def names(axis: str) -> tuple[str, ...]:
    """The registered implementations of ``axis``, sorted."""
    load()
    return tuple(sorted(_REGISTRY[axis]))


def choices(axis: str) -> Callable[[], tuple[str, ...]]:
    """A ``Param(choices=...)`` callable: the names registered when a value is checked."""
    return lambda: names(axis)


def implementation(axis: str, name: str, where: str = "pipeline") -> Any:
    """The class registered as ``name`` of ``axis``; ConfigError naming ``where`` if none."""
    load()
    cls = _REGISTRY[axis].get(name)
    if cls is None:
        raise ConfigError(where, f"pipeline.{axis}", f"must be one of {', '.join(names(axis))}; got {name!r}")
    return cls


def of(pipeline: Any, axis: str) -> Any:
    """The implementation class a pipeline picks for ``axis``."""
    return implementation(axis, getattr(pipeline, axis))
