"""Software copies that cross host memory are charged both legs: the ``pcie`` system's MLP
checkpoint goes GPU -> host -> card, as its pooled vectors and gradients do; and ``pipeline.bounce:
chunked`` overlaps the legs."""

from __future__ import annotations

import pytest

import cxlsim
from cxlsim.devices import build_device
from cxlsim.devices.fabric.pcie import microbench
from cxlsim.units import US, MiB

SMALL = {"rows_per_table": 4096, "batch_size": 64, "tables": 4}


def machine(system, sets=()):
    return cxlsim.simulate(system, workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                           sets=[("platform", "prototype"), *sets]).machine


def test_pcie_mlp_pull_is_the_microbenchmarks_bounced_copy():
    """The pull equals a stream sync plus the link microbenchmark's bounced memcpy (both legs)."""
    m = machine("pcie")
    link, host = m.pcie, m.cpu
    bench = microbench(link, {"host": host})
    size = 64 * MiB
    assert m.pull_mlp_ns(size) == pytest.approx(link.sync_ns(host) + bench["memcpy_bounce_us"]["64MiB"] * US)
    # both legs, each at its direction: GPU -> host (d2h), then host -> card (h2d)
    legs = (bench["memcpy_us"]["up"]["64MiB"] + bench["memcpy_us"]["down"]["64MiB"]) * US
    assert m.pull_mlp_ns(size) == pytest.approx(link.sync_ns(host) + legs)
    assert m.pull_mlp_ns(size) >= 2 * bench["memcpy_us"]["up"]["64MiB"] * US


def test_host_checkpoint_pull_crosses_pcie_once():
    """pmem's host writes its own record: the MLP crosses PCIe once (GPU -> host)."""
    m = machine("pmem")
    size = 64 * MiB
    assert m.pull_mlp_ns(size) == pytest.approx(m.pcie.sync_ns(m.cpu) + m.pcie.memcpy_ns(size, "d2h", m.cpu))


def test_every_pcie_copy_to_the_card_bounces():
    m = machine("pcie")
    assert m.engine.bounces and m.agent.bounces


@pytest.mark.parametrize("preset", ["pcie/gen4-x16", "pcie/u200-gen3-x16"])
@pytest.mark.parametrize("size", [4096, 3 * MiB, 64 * MiB + 17])
def test_chunked_bounce_overlaps_the_legs_and_keeps_its_bound(size, preset):
    link = build_device(preset)
    host = build_device("cpu/i5-9600k")
    chunk = 4 * MiB
    serial = link.memcpy_ns(size, "d2h2d", host)
    chunked = link.memcpy_ns(size, "d2h2d", host, chunk)
    one_leg = link.memcpy_ns(size, "d2h", host)
    if size <= chunk:  # one chunk: nothing to overlap
        assert chunked == pytest.approx(serial)
    else:  # between one leg and both legs in sequence
        assert one_leg < chunked < serial
    bound = link.bound_ns("memcpy", size, "d2h2d", host, chunk)
    assert bound <= chunked <= link.bound_factor("memcpy") * bound * (1 + 1e-12)


def test_chunked_bounce_reaches_the_pcie_system():
    serial = machine("pcie")
    chunked = machine("pcie", [("pipeline.bounce", "chunked")])
    size = 64 * MiB
    assert chunked.pull_mlp_ns(size) < serial.pull_mlp_ns(size)
