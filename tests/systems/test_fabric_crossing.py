"""Every access that crosses the CXL fabric pays it, and only those: generated from the registry of
embedding engines, on every shipped system with a fabric. Raising the fabric link's port latency
moves an engine's lookup and update exactly when the engine sits on the host, across the fabric from
the tables (the near-data engine sits beside them, and moves only by its media's contention with
what did cross)."""

from __future__ import annotations

import numpy as np
import pytest

import cxlsim
from cxlsim.errors import ConfigError
from cxlsim.systems import axes
from cxlsim.systems.config import list_systems, load_system

SMALL = {"batch_size": 16}
FABRIC_SYSTEMS = [s for s in list_systems() if "fabric_link" in load_system(s).devices and load_system(s).pipeline]
ENGINES = axes.names("embedding_engine")


def _accepted(system: str, engine: str) -> bool:
    """Whether ``system`` takes ``engine`` (a relaxed lookup, say, needs the near-data engine)."""
    try:
        load_system(system, [("pipeline.embedding_engine", engine)])
    except ConfigError:
        return False
    return True


#: every (system with a fabric, engine) pair the configuration accepts
CASES = [(s, e) for s in FABRIC_SYSTEMS for e in ENGINES if _accepted(s, e)]


def _run(system: str, engine: str, port_ns: float):
    return cxlsim.simulate(system, workload="rm1", batches=2, warmup=1, workload_sets=SMALL,
                           sets={"pipeline.embedding_engine": engine, "devices.fabric_link.params.port_latency_ns": port_ns})


def _lookup_ns(r) -> float:
    spans = [rec.end_ns - rec.start_ns for rec in r.executor.records.values() if rec.op.name.split(".")[0] == "lookup"]
    return float(np.mean([x for x in spans if np.isfinite(x)]))


def test_every_engine_meets_a_fabric_system():
    assert {e for _, e in CASES} == set(ENGINES)


@pytest.mark.parametrize(("system", "engine"), CASES)
def test_the_fabric_moves_exactly_the_accesses_that_cross_it(system, engine):
    """The requesters that reach a memory across the fabric are exactly those on the host (the
    engine, the checkpoint agent), for each memory device's table and log memory; a host engine's
    lookup slows as the link's port latency rises, a near-data engine's does not (it may share its
    media with an op that crossed, and move by that contention only)."""
    near, far = _run(system, engine, 62.0), _run(system, engine, 2000.0)
    m = near.machine
    on_host = {who for who, impl in (("engine", m.engine), ("agent", m.agent)) if impl is not None
               and impl.lane == "host_cpu"}
    memories = {mem.key for side in m.sides for mem in (side.tables, side.ckpt_mem)}
    assert set(m.crossings) == {(who, key) for who in on_host for key in memories}
    moved = _lookup_ns(far) - _lookup_ns(near)
    if engine == "host_cpu":
        assert ("engine", m.tables.key) in m.crossings
        assert moved > 0.2 * _lookup_ns(near)
    else:
        assert abs(moved) <= 1e-3 * _lookup_ns(near)
