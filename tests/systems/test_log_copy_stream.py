"""The log copy's stream, built directly, equals the sort-based construction it replaced."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.systems.machine import log_copy_stream


def by_sort(src_B, dst_base, row_B, burst_B):
    n = src_B.size
    k = int(math.ceil(n * row_B / burst_B))
    dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
    burst_of = np.arange(n) // max(1, burst_B // row_B)
    key = np.concatenate([burst_of * 2, np.arange(k) * 2 + 1])
    order = np.argsort(key, kind="stable")
    addr = np.concatenate([src_B, dst])[order]
    size = np.concatenate([np.full(n, row_B), np.full(k, burst_B)])[order]
    return addr, size, np.concatenate([np.zeros(n, bool), np.ones(k, bool)])[order]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 70), row_B=st.sampled_from([64, 96, 128, 256, 512, 4096]),
       burst_B=st.sampled_from([64, 256, 1000, 1024, 4096]), base=st.integers(0, 2**40))
def test_equals_the_sort_construction(n, row_B, burst_B, base):
    src = np.random.default_rng(n).integers(0, 2**40, size=n).astype(np.int64)
    got = log_copy_stream(src, base, row_B, burst_B)
    want = by_sort(src, base, row_B, burst_B)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
