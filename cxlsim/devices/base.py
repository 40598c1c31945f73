"""Shared contracts of device models.

Pure timing API (what other studies import): family models expose methods that take request sizes
in bytes and return :class:`Cost` (time in ns, bytes moved, energy in J) or plain floats in the
units their names state. They keep no simpy state; where a model has state (a write-combining
buffer, a DCOH directory), it lives in an explicit state object passed in and returned.

Simpy side: :class:`BandwidthServer` turns a pure service-time function into a contended resource
with ``servers`` parallel units, recording busy intervals on a trace lane.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import simpy

from cxlsim.engine.component import Component, Simulation


@dataclass(frozen=True)
class Cost:
    """Result of a pure timing call: service time (ns), bytes moved, dynamic energy (J)."""

    time_ns: float
    bytes: float = 0.0
    energy_J: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.time_ns + other.time_ns, self.bytes + other.bytes, self.energy_J + other.energy_J)


def check_non_negative(**values: float) -> None:
    """Raise ``ValueError`` naming the first argument that is negative (request sizes, counts)."""
    for key, v in values.items():
        if v < 0:
            raise ValueError(f"{key} must be >= 0, got {v!r}")


class BandwidthServer(Component):
    """A resource with ``servers`` parallel units; :meth:`serve` holds one unit for a duration.

    Contract: requests are served first-come first-served; the busy interval of every request is
    recorded on ``lane`` with ``label``; ``busy_ns`` and ``requests_count`` statistics accumulate.
    """

    def __init__(self, sim: Simulation, name: str, servers: int = 1, lane: str | None = None) -> None:
        super().__init__(sim, name)
        self.servers = servers
        self.lane = lane or name
        self.resource: simpy.Resource | None = None

    def elaborate(self) -> None:
        self.resource = simpy.Resource(self.env, capacity=self.servers)
        self.busy = self.stat("busy_ns", "ns", "time any unit was serving")
        self.requests = self.stat("requests_count", "count", "requests served")
        self.sim.trace.declare_lane(self.lane)

    def serve(self, duration_ns: float, label: str = "", batch: int = -1) -> Generator[Any, Any, float]:
        """Process: wait for a unit, hold it ``duration_ns``; returns the completion time."""
        assert self.resource is not None, "elaborate() not called"
        with self.resource.request() as req:
            yield req
            start = self.env.now
            yield self.env.timeout(duration_ns)
            self.busy.add(duration_ns)
            self.requests.add(1)
            self.sim.trace.record(self.lane, start, self.env.now, label, batch)
        return float(self.env.now)
