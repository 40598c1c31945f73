"""``pipeline.bounce`` reaches a run exactly where a software copy bounces through host memory: a
card engine's copies (``pcie``), a host-side checkpoint agent's bounced record, or several GPUs'
software all-reduce; elsewhere the run declares it unused (and an override of it is refused). A
mutation sample of the change that fixed it found no test here that pinned the condition."""

from __future__ import annotations

import pytest

import cxlsim
from cxlsim.systems import axes

SMALL = {"batch_size": 16}


def _bounce_read(system: str, gpus: int) -> tuple[bool, object]:
    sets = [("topology.gpus_count", gpus)] if gpus > 1 else []
    r = cxlsim.simulate(system, workload="rm1", batches=1, warmup=1, workload_sets=SMALL, sets=sets)
    return "bounce" in r.config.pipeline.reads, r


@pytest.mark.parametrize(("system", "gpus"), [("pcie", 1), ("pmem", 1), ("ssd", 1), ("dram", 1), ("cxl", 1),
                                              ("cxl-d", 1), ("pmem", 2), ("pcie", 2)])
def test_bounce_is_read_exactly_where_a_copy_bounces(system, gpus):
    read, r = _bounce_read(system, gpus)
    m = r.machine
    p = r.config.pipeline
    has_pcie = m.pcie is not None
    agent_bounces = m.agent is not None and m.agent.bounces
    expected = has_pcie and (m.engine.bounces or agent_bounces or m.system_gpus > 1)
    assert read == expected, (system, gpus, has_pcie, m.engine.bounces, agent_bounces, m.system_gpus)
    assert ("bounce" in p.skipped) == (not expected)  # declared unused exactly where nothing bounces
    assert axes.of(p, "embedding_engine") is type(m.engine)


def test_the_condition_is_met_both_ways():
    """The shipped systems hold both cases: one that bounces and one that does not."""
    assert _bounce_read("pcie", 1)[0] and not _bounce_read("pmem", 1)[0]


@pytest.mark.parametrize("bounce", ["serial", "chunked"])
def test_the_chunk_size_is_read_only_by_a_chunked_bounce(bounce):
    r = cxlsim.simulate("pcie", workload="rm1", batches=1, warmup=1, workload_sets=SMALL,
                        sets=[("pipeline.bounce", bounce)])
    pcie = r.machine.pcie.params
    assert ("bounce_chunk_B" in pcie.skipped) == (bounce != "chunked")
    assert ("bounce_chunk_B" in pcie.reads) == (bounce == "chunked")
