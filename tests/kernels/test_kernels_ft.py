"""Failure-tolerance kernels against their numpy references (examples and hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cxlsim.kernels import ft as K

ROWS = 200
index_arrays = arrays(np.int64, st.integers(0, 300), elements=st.integers(0, ROWS - 1))


@settings(max_examples=40, deadline=None)
@given(index_arrays)
def test_counters_and_bit_vectors_match_reference(idx):
    c = K.count_accesses(idx, np.zeros(ROWS, np.int64))
    assert np.array_equal(c, K.count_accesses_ref(idx, np.zeros(ROWS, np.int64)))
    bits = K.mark_modified(idx, K.new_bit_vector(ROWS))
    ref = K.mark_modified_ref(idx, K.new_bit_vector(ROWS))
    assert np.array_equal(bits, ref)
    assert K.count_bits(bits) == K.count_bits_ref(bits) == len(np.unique(idx))
    assert np.array_equal(K.unpack_bits(bits, ROWS), c > 0)


finite_rows = arrays(np.float32, st.tuples(st.integers(1, 6), st.integers(2, 24)),
                     elements=st.floats(-4, 4, width=32))


@settings(max_examples=40, deadline=None)
@given(finite_rows, st.sampled_from([2, 3, 4, 8]), st.sampled_from(["symmetric", "asymmetric", "adaptive"]))
def test_quantize_matches_reference_and_error_bound(x, bits, mode):
    q, s, o = K.quantize_rows(x, bits, K.MODES[mode])
    qr, sr, orf = K.quantize_rows_ref(x, bits, K.MODES[mode])
    assert np.abs(q.astype(int) - qr.astype(int)).max() <= 1  # float32/64 rounding at .5 ties
    assert np.allclose(s, sr, rtol=1e-5) and np.allclose(o, orf, rtol=1e-5, atol=1e-6)
    assert q.max() <= (1 << bits) - 1
    y = K.dequantize_rows(q, s, o)
    assert np.allclose(y, K.dequantize_rows_ref(q, s, o))
    if mode != "adaptive":  # inside the range, uniform quantization errs by at most half a step
        assert np.all(np.abs(y - x) <= s[:, None] / 2 + 1e-5 * (1 + np.abs(x)))


@pytest.mark.slow
def test_error_falls_with_bits_and_adaptive_beats_asymmetric():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.125, size=(256, 64)).astype(np.float32)
    errs = {}
    for mode in ("symmetric", "asymmetric", "adaptive"):
        for bits in (2, 3, 4, 8):
            q, s, o = K.quantize_rows(x, bits, K.MODES[mode])
            errs[mode, bits] = K.mean_l2_error(x, K.dequantize_rows(q, s, o))
    for mode in ("symmetric", "asymmetric", "adaptive"):
        assert errs[mode, 2] > errs[mode, 3] > errs[mode, 4] > errs[mode, 8]
    for bits in (2, 3, 4, 8):
        assert errs["adaptive", bits] <= errs["asymmetric", bits] + 1e-9
    codes, book = K.kmeans_rows(x[:32], 3, 8)
    assert K.mean_l2_error(x[:32], K.kmeans_dequantize(codes, book)) < errs["asymmetric", 3]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(1, 16), st.data())
def test_parity_decode_recovers_any_lost_unit(k, m, data):
    d = np.array(data.draw(st.lists(st.lists(st.integers(-1000, 1000), min_size=m, max_size=m),
                                    min_size=k, max_size=k)), dtype=np.float64)
    parity = K.parity_encode(d)
    assert np.array_equal(parity, K.parity_encode_ref(d))
    lost = data.draw(st.integers(0, k - 1))
    survivors = np.delete(d, lost, axis=0)
    assert np.array_equal(K.parity_decode(parity, survivors), d[lost])
    assert np.array_equal(K.parity_decode_ref(parity, survivors), d[lost])
    new = d[lost] + 7.0  # difference propagation keeps parity consistent
    K.apply_delta(parity, d[lost], new)
    d[lost] = new
    assert np.array_equal(parity, d.sum(axis=0))


@pytest.mark.parametrize(("servers", "k"), [(3, 2), (5, 2), (5, 4)])
def test_parity_rotates_raid5(servers, k):
    placements = [K.stripe_layout(s, servers, k) for s in range(servers)]
    assert sorted(p for _, p in placements) == list(range(servers))
    for data, p in placements:
        assert p not in data and len(set(data)) == k
    with pytest.raises(ValueError):
        K.stripe_layout(0, servers, servers)
