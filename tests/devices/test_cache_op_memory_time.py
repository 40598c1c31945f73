"""A CXL.cache op's home-memory time (cxlsim.devices.fabric.cxl_cache_ops): a read's latency holds
the home memory's access once, whatever it is, and a time of zero (a home whose data is already at
hand, a memory the caller models apart) is a time, not a missing value."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device
from cxlsim.devices.fabric.cxl_cache_ops import OPS, op_latency_ns, op_stream_ns
from cxlsim.devices.fabric.cxl_path import FabricPath

PRESETS = ("cxl_protocol/asic", "cxl_protocol/fpga", "cxl_protocol/agilex7")
LINKS = ("cxl_link/cxl2-x16", "cxl_link/cxl3-x16", "cxl_link/alveo-u200-gen3x16")
READS = [name for name, op in OPS.items() if op.read]


@settings(max_examples=40, deadline=None)
@given(preset=st.sampled_from(PRESETS), link=st.sampled_from(LINKS), op=st.sampled_from(READS),
       memory_ns=st.floats(0.0, 500.0), evict=st.booleans(), lines=st.integers(1, 1000))
@example(preset="cxl_protocol/agilex7", link="cxl_link/cxl2-x16", op="RdCurr", memory_ns=0.0, evict=True, lines=1)
def test_a_zero_home_memory_time_is_a_time(preset, link, op, memory_ns, evict, lines):
    """A read's latency is affine in the home memory's time with slope one, from zero on: at zero it
    is the latency less the preset's ``host_memory_ns``; a one-line stream is its first line."""
    pr, path = build_device(preset), FabricPath([build_device(link)])
    base = pr.params["host_memory_ns"]
    assert base > 0  # the preset's default differs from the zero the caller passes
    zero = op_latency_ns(pr, op, path, memory_ns=0.0, evict=evict)
    assert zero == pytest.approx(op_latency_ns(pr, op, path, evict=evict) - base, abs=1e-9)
    assert op_latency_ns(pr, op, path, memory_ns=memory_ns, evict=evict) == pytest.approx(zero + memory_ns, abs=1e-9)
    assert op_stream_ns(pr, op, 1, path, memory_ns=0.0, evict=evict) == pytest.approx(zero, abs=1e-9)
    assert op_stream_ns(pr, op, lines, path, memory_ns=0.0, evict=evict) <= op_stream_ns(
        pr, op, lines, path, memory_ns=memory_ns, evict=evict) + 1e-9
