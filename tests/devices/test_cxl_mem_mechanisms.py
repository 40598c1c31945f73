"""Mechanisms of the cxl_mem kind's queueing model, pinned through its public names
(``cxlsim.validate.cxl_mlc.fabric_of`` / ``peak_bw_GBps``): each in its own test, so that a move of
the model can repoint it in one place."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device
from cxlsim.validate import cxl_mlc as mlc

OPTANE_BACKED = "cxl_mem/trainingcxl-physical"  # four Optane modules behind a CXL 3.0 x16 link


def _write_only_peak_GBps(read_bw: float, write_bw: float, count: int) -> tuple[float, object]:
    dev = build_device(OPTANE_BACKED, {"media.params.read_bw_GBps": read_bw, "media.params.write_bw_GBps": write_bw,
                                       "media_count": count})
    return mlc.peak_bw_GBps(mlc.fabric_of(dev), mlc.MIXES["0:1"], requests=mlc.REQUESTS).bw_GBps, dev


def _read_modify_write_GBps(dev) -> float:
    """Random 64 B writes on media that read a whole access unit before writing it: each line
    holds its channel for a unit read at the read bandwidth and a unit write at the write
    bandwidth, so ``media_count`` channels take ``media_count × 64 / unit ÷ (1 / read_bw + 1 /
    write_bw)`` GB/s (the banks share the channel's rate either way)."""
    p = dev.media_preset.params
    unit = max(mlc.LINE_B, p["access_unit_B"])
    return dev.media_count * mlc.LINE_B / unit / (1 / p["read_bw_GBps"] + 1 / p["write_bw_GBps"])


@settings(max_examples=4, deadline=None)
@given(read_bw=st.sampled_from([6.0, 7.5, 8.5, 12.0]), write_bw=st.sampled_from([0.5, 1.0, 1.7, 2.2, 3.3, 5.0]),
       count=st.integers(1, 6))  # discrete draws: a failure shrinks in a few probes
def test_a_composites_write_only_peak_is_its_medias_read_modify_write(read_bw, write_bw, count):
    """Random write-only traffic (MLC 0:1) with the link far from binding, served on the media
    model: each 64 B line that misses the write-combining buffer is a read-modify-write of its
    access unit (the Optane composite: 256 B XPLines), so the peak is the channels' unit rate at
    the read and the write bandwidth in series; it moves with either bandwidth."""
    peak, dev = _write_only_peak_GBps(read_bw, write_bw, count)
    assert dev.media_preset.params["read_modify_write"]
    assert peak < 0.5 * dev.link.raw_bw_GBps  # the link does not bind
    assert peak == pytest.approx(_read_modify_write_GBps(dev), rel=0.02)
    faster_reads, _ = _write_only_peak_GBps(read_bw * 2, write_bw, count)
    assert faster_reads > peak * 1.01


def test_the_optane_composites_write_only_peak_is_below_its_medias_write_bandwidth():
    """The Optane composite's 0:1 peak: four modules' read-modify-writes (1.64 GB/s), below the
    modules' 2.2 GB/s of whole-XPLine writes."""
    dev = build_device(OPTANE_BACKED)
    peak = mlc.peak_bw_GBps(mlc.fabric_of(dev), mlc.MIXES["0:1"]).bw_GBps
    assert peak == pytest.approx(_read_modify_write_GBps(dev), rel=0.02)
    assert peak < 0.8 * dev.media_preset.params["write_bw_GBps"]
