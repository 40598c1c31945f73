"""Which input gave each value of a document built in layers, so that an error names it.

A system's configuration is built from several inputs: its platform's role entries and pipeline
defaults, the system file and the files it ``inherits:``, then ``--set`` (or a sweep spec's axes and
base, which reach a point as sets). A value that fails validation must be blamed on the input that
holds it (docs/design.md#interfaces: "a one-line message naming the file and key"), whatever else
was given: a device error in a system file is not blamed on ``--set`` just because some ``--set``
was given.

:class:`Origins` records, for every key path a layer gives, the layer's rank, the file or option
(``where``) and the key path there (``there``: ``roles.table_memory.count`` in a platform file for
``devices.table_memory.count`` in the system). :meth:`Origins.of` answers for a key path: the
highest-ranked layer that gave that very key, unless a higher-ranked layer replaced a mapping above
it (a ``--set`` of a whole mapping, or a value where a mapping was); a key no layer gave (a missing
one) takes its nearest enclosing key's origin among the layers that own what is missing there
(a platform's pipeline defaults do not: the system file is blamed).
"""

from __future__ import annotations

from typing import Any

from cxlsim.errors import ConfigError


def join(head: str, key: Any) -> str:
    return f"{head}.{key}" if head else str(key)


class Origins:
    """Where each key path of a layered document came from (module docstring)."""

    def __init__(self, default: str):
        self.default = default  # the file a key no layer gave is blamed on
        # key path -> [(rank, where, there, replaces, owns)], in the order recorded
        self._at: dict[str, list[tuple[tuple, str, str, bool]]] = {}

    def add(self, doc: Any, rank: tuple, where: str, there: str = "", here: str = "", replace: bool = False,
            owns: bool = True) -> None:
        """Record layer ``rank``'s value ``doc`` at key path ``here`` (key path ``there`` in
        ``where``) and every key under it. ``replace``: the value replaces what lower layers gave
        under ``here`` (a ``--set``); otherwise mappings merge and anything else replaces.
        ``owns``: a key missing under a mapping of this layer is this layer's to give (not so for
        defaults such as a platform's pipeline settings: the system gives the rest)."""
        if here and replace:  # a set creates the mappings above it that no layer gave
            parts = here.split(".")
            for i in range(1, len(parts)):
                head = ".".join(parts[:i])
                self._at.setdefault(head, [(rank, where, head if there == here else there, False, owns)])
        if here:
            self._at.setdefault(here, []).append((rank, where, there, replace or not isinstance(doc, dict), owns))
        if isinstance(doc, dict):
            for key, value in doc.items():
                self.add(value, rank, where, join(there, key), join(here, key), owns=owns)

    def of(self, key: str) -> tuple[str, str]:
        """``(where, key path there)`` of the value at key path ``key``."""
        parts = key.split(".") if key else []
        for n in range(len(parts), 0, -1):  # the key itself, else its nearest enclosing key
            # (a deeper record wins over an enclosing one of the same layer: tried first)
            best = None
            for i in range(n, 0, -1):
                head = ".".join(parts[:i])
                for rank, where, there, replaces, owns in self._at.get(head, ()):
                    if (owns or n == len(parts)) and (i == n or replaces) and (best is None or rank > best[0]):
                        best = (rank, where, join(there, ".".join(parts[i:])) if i < len(parts) else there)
            if best is not None:
                return best[1], best[2]
        return self.default, key

    def given(self, key: str) -> bool:
        """Whether some layer gave the key ``key`` itself (a platform entry, a system file, a set),
        as opposed to a value nobody wrote (a schema's or a preset's default): a setting derived
        when unset (:mod:`cxlsim.systems.scale`) yields to it."""
        return key in self._at

    def given_by(self, key: str) -> tuple[tuple, str, str] | None:
        """``(rank, where, there)`` of the highest-ranked layer that gave key path ``key`` itself,
        or None if no layer did."""
        layers = self._at.get(key)
        if not layers:
            return None
        rank, where, there, _, _ = max(layers, key=lambda layer: layer[0])
        return rank, where, there

    def where(self, key: str) -> str:
        return self.of(key)[0]

    def blame(self, exc: ConfigError, placeholder: str) -> ConfigError:
        """``exc`` raised naming ``placeholder`` (the system file, which a check names for any key
        it validates), re-raised naming the input that gave its key; other errors unchanged."""
        if exc.where != placeholder or not exc.key:
            return exc
        where, there = self.of(exc.key)
        return ConfigError(where, there, exc.message)
