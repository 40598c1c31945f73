"""A chunked bounce's chunk count (cxlsim.devices.fabric.pcie, ``PcieLink.memcpy_ns``): a copy of
``size`` bytes in chunks of at most ``c`` takes ``ceil(size / c)`` chunks (``n·c`` bytes take
``n``, ``n·c + 1`` take ``n + 1``), each its equal share, the legs overlapped chunk by chunk."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device
from cxlsim.units import MiB

HOST = build_device("cpu/i5-9600k")


def _pipeline_ns(link, size_B: float, chunks: int) -> float:
    """The two-leg pipeline over ``chunks`` equal chunks (d2h, h2d, the optional CPU copy)."""
    p = link.params
    c = size_B / chunks
    call = link.call_ns("memcpy", HOST)
    stages = [call + link.dma_ns(c, "d2h"), call + link.dma_ns(c, "h2d")]
    if p["bounce_host_copy"]:
        stages.append(c / p["host_copy_bw_GBps"])
    return sum(stages) + (chunks - 1) * max(stages)


@settings(max_examples=60, deadline=None)
@given(preset=st.sampled_from(["pcie/gen4-x16", "pcie/u200-gen3-x16"]), h2d=st.floats(0.3, 0.95),
       d2h=st.floats(0.3, 0.95), copy=st.booleans(), chunk_B=st.integers(1, 8 * MiB), n=st.integers(1, 5),
       extra=st.sampled_from([0, 1]))
@example(preset="pcie/gen4-x16", h2d=0.81, d2h=0.81, copy=False, chunk_B=4 * MiB, n=1, extra=1)  # 4 MiB + 1
def test_a_chunked_bounce_takes_the_ceiling_of_its_chunks(preset, h2d, d2h, copy, chunk_B, n, extra):
    link = build_device(preset, {"h2d_efficiency_fraction": h2d, "d2h_efficiency_fraction": d2h,
                                 "bounce_host_copy": copy})
    size = n * chunk_B + extra
    chunks = math.ceil(size / chunk_B)
    assert chunks == n + extra
    got = link.memcpy_ns(size, "d2h2d", HOST, chunk_B)
    if chunks == 1:  # one chunk: the legs in sequence, as an unchunked bounce
        assert got == pytest.approx(link.memcpy_ns(size, "d2h2d", HOST), rel=1e-12)
    else:
        assert got == pytest.approx(_pipeline_ns(link, size, chunks), rel=1e-12)


@pytest.mark.parametrize("fraction", [0.0, 0.5, 0.999])
def test_a_copy_below_one_chunk_is_one_chunk_and_between_one_and_two_is_two(fraction):
    link = build_device("pcie/gen4-x16", {"d2h_efficiency_fraction": 0.5})
    chunk = 4 * MiB
    below = int(chunk * max(fraction, 0.01))
    assert link.memcpy_ns(below, "d2h2d", HOST, chunk) == pytest.approx(link.memcpy_ns(below, "d2h2d", HOST))
    between = chunk + 1 + int(fraction * (chunk - 2))
    assert link.memcpy_ns(between, "d2h2d", HOST, chunk) == pytest.approx(_pipeline_ns(link, between, 2), rel=1e-12)
