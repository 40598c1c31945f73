"""``mlp_pull: software`` (cxlsim.axes.mlp_pull.software): the GPU's parameters travel GPU -> host,
so a host agent's pull runs at the link's device-to-host rate (``d2h``), a card's bounce at both
legs' rates, whatever the link's two directions' rates are."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cxlsim
from cxlsim.units import MiB

SMALL = {"rows_per_table": 4096, "batch_size": 16, "tables": 4}


def _machine(system: str, h2d: float, d2h: float):
    sets = [("platform", "prototype"), ("devices.pcie.params.h2d_efficiency_fraction", h2d),
            ("devices.pcie.params.d2h_efficiency_fraction", d2h)]
    return cxlsim.simulate(system, workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                           sets=sets).machine


@settings(max_examples=2, deadline=None)
@given(h2d=st.sampled_from([0.35, 0.5, 0.81, 0.95]), d2h=st.sampled_from([0.3, 0.45, 0.81, 0.9]),
       size_MiB=st.integers(1, 256))
def test_a_host_agents_mlp_pull_runs_at_the_d2h_rate(h2d, d2h, size_MiB):
    """pmem's host agent: the pull's time per byte is the link's d2h DMA rate's (and a bounce's, the
    pcie card's, both legs')."""
    size = size_MiB * MiB
    m = _machine("pmem", h2d, d2h)
    assert not m.agent.bounces
    bw = m.pcie.dma_bw_GBps
    assert bw["d2h"] == pytest.approx(bw["h2d"] * d2h / h2d)
    assert m.pull_mlp_ns(2 * size) - m.pull_mlp_ns(size) == pytest.approx(size / bw["d2h"], rel=1e-9)
    card = _machine("pcie", h2d, d2h)
    assert card.agent.bounces
    cb = card.pcie.dma_bw_GBps
    assert card.pull_mlp_ns(2 * size) - card.pull_mlp_ns(size) == pytest.approx(size / cb["d2h"] + size / cb["h2d"],
                                                                                rel=1e-9)


def test_an_asymmetric_link_slows_a_host_agents_pull_by_its_d2h_rate_only():
    size = 64 * MiB
    slow_up = _machine("pmem", 0.8, 0.4)
    slow_down = _machine("pmem", 0.4, 0.8)
    assert slow_up.pull_mlp_ns(size) > slow_down.pull_mlp_ns(size)
