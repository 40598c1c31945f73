"""Component lifecycle and the simulation that runs components.

Lifecycle (desmod-style), called by :class:`Simulation` in this order for every component:

1. construct  - ``__init__(sim, name, ...)``: store parameters; nothing else.
2. connect    - :meth:`Component.connect`: look up the components this one talks to.
3. elaborate  - :meth:`Component.elaborate`: create simpy resources, register statistics and lanes.
4. run        - the generators from :meth:`Component.processes` run on the simpy clock (ns).
5. finalize   - :meth:`Component.finalize`: compute derived statistics after the clock stops.

Randomness has one source: the simulation seed. :meth:`Simulation.rng` gives each named stream an
independent generator derived from (seed, name), so adding a component does not perturb others.
"""

from __future__ import annotations

import zlib
from collections.abc import Generator, Iterable
from typing import Any

import numpy as np
import simpy

from cxlsim.engine.stats import StatsRegistry
from cxlsim.engine.trace import TraceRecorder

#: simpy's clock unit inside cxlsim.
TIME_UNIT = "ns"


class Simulation:
    """A simpy environment (clock in ns), a seed, a statistics registry and a trace recorder."""

    def __init__(self, seed: int = 0, trace: bool = True) -> None:
        self.seed = int(seed)
        self.env = simpy.Environment()
        self.stats = StatsRegistry()
        self.trace = TraceRecorder(enabled=trace)
        self.components: dict[str, Component] = {}
        self._phase = "construct"

    def rng(self, stream: str) -> np.random.Generator:
        """Independent generator for ``stream``, a pure function of (seed, stream)."""
        key = zlib.crc32(stream.encode("utf-8"))
        return np.random.default_rng(np.random.SeedSequence([self.seed, key]))

    def add(self, component: Component) -> None:
        if self._phase != "construct":
            raise RuntimeError("components must be added before the simulation runs")
        if component.name in self.components:
            raise ValueError(f"component {component.name!r} added twice")
        self.components[component.name] = component

    def component(self, name: str) -> Component:
        return self.components[name]

    @property
    def now_ns(self) -> float:
        return float(self.env.now)

    def run(self, until_ns: float | None = None) -> None:
        """Connect, elaborate, run the processes until quiescence (or ``until_ns``), finalize."""
        comps = list(self.components.values())
        self._phase = "connect"
        for c in comps:
            c.connect()
        self._phase = "elaborate"
        for c in comps:
            c.elaborate()
        self._phase = "run"
        for c in comps:
            for proc in c.processes():
                self.env.process(proc)
        self.env.run(until=until_ns)
        self._phase = "finalize"
        for c in comps:
            c.finalize()
        self._phase = "done"


class Component:
    """Base class of simulated components; see the module docstring for the lifecycle."""

    def __init__(self, sim: Simulation, name: str) -> None:
        self.sim = sim
        self.env = sim.env
        self.name = name
        sim.add(self)

    def connect(self) -> None:
        """Find peers (``self.sim.component(name)``)."""

    def elaborate(self) -> None:
        """Create resources, register statistics and trace lanes."""

    def processes(self) -> Iterable[Generator[Any, Any, Any]]:
        """Generators to start when the clock starts."""
        return ()

    def finalize(self) -> None:
        """Derive statistics after the run."""

    def stat(self, name: str, unit: str, desc: str):
        return self.sim.stats.register(f"{self.name}.{name}", unit, desc)
