"""Crash consistency swept over seeds and topologies: 1–4 GPUs × 1–3 CXL-MEMs, GPUs attached packed
and interleaved, undo logs with and without the relaxed checkpoint. One seed on 2 × 2 passed while 4
GPUs × 3 CXL-MEMs lost data (recovery read a device's newest MLP log, a batch ahead of the batch
every device had persisted), so no single seed or topology stands for the rest.

RM1 at 1e-4 (4 batches): the smallest model whose schedule lets one CXL-MEM flag both logs of a
batch before another flags its embedding log of that batch (3 CXL-MEMs, 3–4 GPUs), which the tiny
model of the other crash tests never does. The fast tier runs a sample; the sweep is ``slow``."""

from __future__ import annotations

import pytest

from cxlsim.crash import prepare, run_points

SYSTEMS = ("cxl-b", "cxl")
SCALE, BATCHES = 1e-4, 4
#: (GPUs, CXL-MEMs, attach policy): interleaved differs from packed only with several of each
TOPOLOGIES = [(g, m, pol) for g in (1, 2, 3, 4) for m in (1, 2, 3) for pol in ("packed", "interleaved")
              if pol == "packed" or (g > 1 and m > 1)]
SEEDS = (1, 2, 3)
#: the fast tier's sample (a few seconds): the first failed before the fix (11 violations of 100 points)
SAMPLE = [("cxl-b", 3, 3, "packed", 3), ("cxl", 3, 2, "interleaved", 2), ("cxl-b", 1, 2, "packed", 4),
          ("cxl-b", 2, 1, "packed", 2)]


def topology(g: int, m: int, policy: str) -> list:
    return [("topology.gpus_count", g), ("topology.cxl_mems_count", m), ("topology.attach_policy", policy)]


def recovers(system: str, g: int, m: int, policy: str, seed: int, points: int, extra: tuple = (),
             scale: float = SCALE) -> None:
    cr = prepare(system, "rm1", scale, BATCHES, seed, None, topology(g, m, policy) + list(extra))
    assert len(cr.protocol.mems) == m
    rep = run_points(cr, points)
    s = rep.summary
    where = (system, g, m, policy, seed, extra)
    assert s["violations"] == 0, (where, s["first_violation"])
    assert all(r.done - 1 <= r.m <= r.c for r in rep.results), where
    if system == "cxl-b":
        assert s["recovered_exact"] == points, where


@pytest.mark.parametrize("system,g,m,policy,seed", SAMPLE)
def test_sampled_topology_and_seed_recovers(system, g, m, policy, seed):
    recovers(system, g, m, policy, seed, 100)


@pytest.mark.slow
@pytest.mark.parametrize("g,m,policy", TOPOLOGIES)
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_topology_recovers_over_seeds(system, g, m, policy):
    for seed in SEEDS:
        recovers(system, g, m, policy, seed, 150)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 7])
@pytest.mark.parametrize("extra", [(), (("devices.table_memory.params.controller_outstanding_count", 3),)])
def test_issue_command_recovers(seed, extra):
    """The default scale: cxl-b, RM1, 4 batches, 300 points, 4 GPUs × 3 CXL-MEMs interleaved (22
    violations on seed 7 before the fix), and with 3 requests in flight per memory controller."""
    recovers("cxl-b", 4, 3, "interleaved", seed, 300, extra, scale=1e-3)
