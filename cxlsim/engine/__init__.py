"""Simulation engine: simpy clock in ns, component lifecycle, statistics, trace."""

from cxlsim.engine.component import TIME_UNIT, Component, Simulation
from cxlsim.engine.stats import Stat, StatsRegistry
from cxlsim.engine.trace import Interval, TraceRecorder

__all__ = ["TIME_UNIT", "Component", "Interval", "Simulation", "Stat", "StatsRegistry", "TraceRecorder"]
