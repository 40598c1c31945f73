"""Statistics registry: components register named statistics with a unit and a description.

Contract: a statistic's name is ``component.stat``; its unit is in its name (``busy_ns``) and also
stated; values are accumulated with :meth:`Stat.add` or set with :meth:`Stat.set`. The registry
serialises to a flat ``{name: {"value", "unit", "desc"}}`` mapping for result files.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Stat:
    name: str
    unit: str
    desc: str
    value: float = 0.0

    def add(self, amount: float) -> None:
        self.value += amount

    def set(self, value: float) -> None:
        self.value = value


class StatsRegistry:
    """All statistics of one simulation, by full name."""

    def __init__(self) -> None:
        self._stats: dict[str, Stat] = {}

    def register(self, name: str, unit: str, desc: str) -> Stat:
        if name in self._stats:
            raise ValueError(f"statistic {name!r} registered twice")
        stat = Stat(name, unit, desc)
        self._stats[name] = stat
        return stat

    def __getitem__(self, name: str) -> Stat:
        return self._stats[name]

    def __contains__(self, name: str) -> bool:
        return name in self._stats

    def values(self) -> dict[str, float]:
        return {n: s.value for n, s in self._stats.items()}

    def to_dict(self) -> dict[str, dict[str, object]]:
        return {n: {"value": s.value, "unit": s.unit, "desc": s.desc} for n, s in sorted(self._stats.items())}
