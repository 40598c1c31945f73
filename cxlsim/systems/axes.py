"""Pipeline axes: their interfaces and the registry of implementations (after Ramulator 2's
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

Contract: an implementation is a class registered as ``name`` of ``axis``; the machine
(:class:`~cxlsim.systems.machine.TrainingMachine`) builds each axis's implementation once,
``cls(machine)``, and binds its step functions at construction, so nothing is looked up per op.
Class-level hooks (``roles``, ``check``, provisioning, the crash protocol) take the pipeline
:class:`~cxlsim.config.params.ParamSet` and need no machine. A resolved class learns its
``axis`` and ``name`` (class attributes).

Discovery (:class:`~cxlsim.plugins.Registry`, one per axis): each axis is the entry-point group
``cxlsim.axes.<axis>``, whose entries name the implementing classes. The built-ins are declared so
in cxlsim's own ``pyproject.toml``, and a package outside cxlsim declares its own the same way::

    [project.entry-points."cxlsim.axes.persistence"]
    my_scheme = "my_study.persistence:MyScheme"

Names are listed without importing an implementation; a class is imported when first asked for.
The older form still works: an entry point of the group :data:`ENTRY_POINT_GROUP` (``cxlsim.axes``)
naming a module whose import calls :func:`register` (a decorator), loaded before the first lookup.
A name registered twice is refused (an implementation cannot silently replace another).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, TypeVar

from cxlsim.errors import ConfigError
from cxlsim.plugins import Registry

#: Entry-point group of modules that register implementations when imported (the older form).
ENTRY_POINT_GROUP = "cxlsim.axes"
#: The axes, each a pipeline key of the same name (and the entry-point group ``cxlsim.axes.<axis>``).
AXES = ("persistence", "embedding_engine", "data_movement", "checkpoint_agent", "mlp_pull", "correction")


def _adopter(axis: str) -> Callable[[str, Any], None]:
    def adopt(name: str, cls: Any) -> None:
        cls.axis, cls.name = axis, name

    return adopt


#: One registry per axis (group ``cxlsim.axes.<axis>``).
REGISTRIES: dict[str, Registry] = {
    axis: Registry(f"{ENTRY_POINT_GROUP}.{axis}", f"{axis} implementation", _adopter(axis)) for axis in AXES}
_loaded = False

T = TypeVar("T", bound=type)


def register(axis: str, name: str) -> Callable[[T], T]:
    """Class decorator: register the class as implementation ``name`` of ``axis`` at run time."""
    if axis not in REGISTRIES:
        raise ValueError(f"unknown pipeline axis {axis!r} (axes: {', '.join(AXES)})")

    def deco(cls: T) -> T:
        REGISTRIES[axis].register(name, cls)
        cls.axis, cls.name = axis, name
        return cls

    return deco


def load() -> None:
    """Import the modules of the older ``cxlsim.axes`` entry points (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def reload_entry_points() -> None:
    """Read the entry points again (a distribution added to ``sys.path`` after the first use)."""
    global _loaded
    _loaded = False
    for reg in REGISTRIES.values():
        reg.refresh()
    load()


def names(axis: str) -> tuple[str, ...]:
    """The registered implementations of ``axis``, sorted (none is imported)."""
    load()
    return REGISTRIES[axis].names()


def choices(axis: str) -> Callable[[], tuple[str, ...]]:
    """A ``Param(choices=...)`` callable: the names registered when a value is checked."""
    return lambda: names(axis)


def implementation(axis: str, name: str, where: str = "pipeline") -> Any:
    """The class registered as ``name`` of ``axis``; ConfigError naming ``where`` if none."""
    load()
    reg = REGISTRIES[axis]
    if name not in reg:
        raise ConfigError(where, f"pipeline.{axis}", f"must be one of {', '.join(reg.names())}; got {name!r} "
                          f"(entry-point group {reg.group})")
    return reg.get(name)


def of(pipeline: Any, axis: str) -> Any:
    """The implementation class a pipeline picks for ``axis``."""
    return implementation(axis, getattr(pipeline, axis))
