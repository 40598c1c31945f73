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


@settings(max_examples=4, deadline=None)
@given(read_bw=st.sampled_from([6.0, 7.5, 8.5, 12.0]), write_bw=st.sampled_from([0.5, 1.0, 1.7, 2.2, 3.3, 5.0]),
       count=st.integers(1, 6))  # discrete draws: a failure shrinks in a few probes
def test_a_composites_write_only_peak_follows_its_medias_write_bandwidth(read_bw, write_bw, count):
    """Random write-only traffic (MLC 0:1) with the link far from binding: each 64 B line holds its
    channel for one media access unit at the media's write bandwidth, so the peak is ``media_count ×
    64 / access_unit_B × write_bw_GBps`` (the Optane composite, 4 channels of 256 B units: its media's
    write bandwidth), whatever the media's read bandwidth."""
    peak, dev = _write_only_peak_GBps(read_bw, write_bw, count)
    unit = max(mlc.LINE_B, dev.media_preset.params["access_unit_B"])
    want = count * mlc.LINE_B / unit * write_bw
    assert want < 0.5 * dev.link.raw_bw_GBps  # the link does not bind
    assert peak == pytest.approx(want, rel=0.02)
    other, _ = _write_only_peak_GBps(18.0 - read_bw, write_bw, count)
    assert other == pytest.approx(peak, rel=1e-9)


def test_the_optane_composites_write_only_peak_is_its_medias_write_bandwidth():
    dev = build_device(OPTANE_BACKED)
    w = dev.media_preset.params["write_bw_GBps"]
    assert w != dev.media_preset.params["read_bw_GBps"]
    assert mlc.peak_bw_GBps(mlc.fabric_of(dev), mlc.MIXES["0:1"]).bw_GBps == pytest.approx(w, rel=0.02)
