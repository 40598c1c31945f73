"""One way to plug in: a registry of named implementations per entry-point group.

Every pluggable concept of cxlsim has one :class:`Registry`, bound to one entry-point group:

- ``cxlsim.axes.<axis>``: a pipeline axis's implementations (:mod:`cxlsim.systems.axes`);
- ``cxlsim.ft_schemes``: cluster-level failure-tolerance schemes (:mod:`cxlsim.ft.schemes`);
- ``cxlsim.system_models``: simulation models a system's ``model:`` names (:mod:`cxlsim.systems.run`);
- ``cxlsim.executors``: where sweep points run (:mod:`cxlsim.sweep.executors`).

Contract: the built-in implementations are declared in cxlsim's own ``pyproject.toml`` exactly as
a third party declares its own, one line each::

    [project.entry-points."cxlsim.ft_schemes"]
    my-scheme = "my_study.ft:MyScheme"

A name is resolved lazily: :meth:`Registry.names` lists the declared and registered names without
importing any implementation; :meth:`Registry.get` imports the one asked for (and memoises it).
:meth:`Registry.register` adds an implementation at run time (a test, a notebook), under a name no
other implementation has. An unknown name raises one line naming the concept, the group and the
known names. Two distributions declaring the same name with different targets are refused when the
name is resolved (which one wins would depend on ``sys.path``).

This module sits in the lowest import layer but one (pyproject.toml ``[tool.importlinter]``), so
every layer can hold a registry.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from cxlsim.errors import ConfigError, InputError


class Registry:
    """Named implementations of one concept (``kind``, e.g. "ft scheme"), declared through the
    entry-point group ``group`` or registered at run time (module docstring).

    ``adopt(name, obj)``, if given, is called once when ``obj`` first resolves under ``name`` (an
    axis implementation learns its own name)."""

    def __init__(self, group: str, kind: str, adopt: Callable[[str, Any], None] | None = None) -> None:
        self.group = group
        self.kind = kind
        self._adopt = adopt
        self._loaded: dict[str, Any] = {}
        self._runtime: dict[str, Any] = {}
        self._declared: dict[str, list[EntryPoint]] | None = None

    # -- declarations -----------------------------------------------------------------------------
    def _entry_points(self) -> dict[str, list[EntryPoint]]:
        if self._declared is None:
            found: dict[str, list[EntryPoint]] = {}
            for ep in entry_points(group=self.group):
                if all(ep.value != e.value for e in found.get(ep.name, [])):
                    found.setdefault(ep.name, []).append(ep)
            self._declared = found
        return self._declared

    def refresh(self) -> None:
        """Read the group's entry points again (a distribution put on ``sys.path`` after first use)."""
        self._declared = None

    def names(self) -> tuple[str, ...]:
        """Every declared or registered name, sorted (no implementation is imported)."""
        return tuple(sorted({*self._entry_points(), *self._runtime}))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._runtime or name in self._entry_points())

    def __iter__(self):
        return iter(self.names())

    # -- resolution -------------------------------------------------------------------------------
    def unknown_message(self, name: object) -> str:
        """The one-line refusal of ``name``: the concept, the group and the known names."""
        known = ", ".join(self.names()) or ("none (cxlsim's built-ins are entry points of its installed "
                                            "metadata: is cxlsim installed, pip install -e .?)")
        return f"unknown {self.kind} {name!r}; choose from {known} (entry-point group {self.group})"

    def get(self, name: str, where: str | None = None, key: str = "") -> Any:
        """The implementation registered as ``name``. Unknown: :class:`~cxlsim.errors.ConfigError`
        naming ``where`` and ``key`` if ``where`` is given, else :class:`~cxlsim.errors.InputError`."""
        if name in self._loaded:
            return self._loaded[name]
        if name in self._runtime:
            obj = self._runtime[name]
        else:
            eps = self._entry_points().get(name) if isinstance(name, str) else None
            if not eps:
                if where is not None:
                    raise ConfigError(where, key, self.unknown_message(name))
                raise InputError(self.unknown_message(name))
            if len(eps) > 1:
                raise InputError(f"{self.kind} {name!r} is declared more than once in entry-point group "
                                 f"{self.group}: {', '.join(e.value for e in eps)}")
            try:
                obj = eps[0].load()
            except (ImportError, AttributeError) as exc:
                raise ImportError(f"{self.kind} {name!r}: entry point {eps[0].value!r} of group {self.group} "
                                  f"does not load ({exc}); if it is cxlsim's own, reinstall cxlsim "
                                  "(pip install -e .) so its metadata follows pyproject.toml") from exc
        if self._adopt is not None:
            self._adopt(name, obj)
        self._loaded[name] = obj
        return obj

    def load_all(self) -> dict[str, Any]:
        """Every implementation by name (imports them all)."""
        return {name: self.get(name) for name in self.names()}

    def register(self, name: str, obj: Any) -> Any:
        """Add ``obj`` as ``name`` at run time and return it. A name another object already has
        (declared or registered) is refused: an implementation cannot silently replace another."""
        if name in self:
            known = self.get(name)
            if known is not obj:
                where = getattr(known, "__module__", "") + "." + getattr(known, "__qualname__", repr(known))
                raise ValueError(f"{self.kind} {name!r} is already registered ({where})")
            return obj
        self._runtime[name] = obj
        return obj

    def unregister(self, name: str) -> None:
        """Remove a name registered at run time (a test's toy implementation)."""
        self._runtime.pop(name, None)
        self._loaded.pop(name, None)
