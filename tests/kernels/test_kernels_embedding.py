"""Embedding lookup/update, undo log and relaxed-lookup correction against their numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.access import BUCKET_KEYS
from cxlsim.kernels.embedding import (
    PREFETCH_DISTANCE,
    accumulate_by_row_sorted,
    accumulate_by_row_split,
    embedding_bag_sum,
    embedding_bag_sum_ref,
    embedding_sgd_update,
    embedding_sgd_update_ref,
)
from cxlsim.kernels.relaxed import relaxed_correction, relaxed_correction_ref
from cxlsim.kernels.undo_log import (
    undo_log_restore,
    undo_log_restore_ref,
    undo_log_save,
    undo_log_save_ref,
)


def make_bags(rng, rows, bags, max_len, fixed=False):
    lengths = np.full(bags, max_len) if fixed else rng.integers(0, max_len + 1, bags)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    # skewed so that duplicates within and across bags are common
    indices = (rows * rng.random(offsets[-1]) ** 3).astype(np.int64)
    return indices, offsets


def dyadic(rng, shape, lo=-8, hi=8):
    """Small multiples of 1/4: sums of a few hundred stay exact in float32."""
    return (rng.integers(lo * 4, hi * 4 + 1, shape) / 4).astype(np.float32)


@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 50), bags=st.integers(1, 20),
       max_len=st.integers(0, 12), dim=st.sampled_from([1, 3, 16]))
@settings(max_examples=40, deadline=None)
def test_lookup_matches_reference_bit_for_bit(seed, rows, bags, max_len, dim):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows, dim)).astype(np.float32)
    idx, off = make_bags(rng, rows, bags, max_len)
    np.testing.assert_array_equal(embedding_bag_sum(w, idx, off), embedding_bag_sum_ref(w, idx, off))


def test_lookup_empty_bags_are_zero():
    w = np.ones((4, 2), np.float32)
    out = embedding_bag_sum(w, np.array([1, 1, 3], np.int64), np.array([0, 0, 3, 3], np.int64))
    np.testing.assert_array_equal(out, [[0, 0], [3, 3], [0, 0]])


@pytest.mark.slow
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 40), bags=st.integers(1, 16),
       max_len=st.integers(0, 10), dim=st.sampled_from([1, 4, 8]),
       lr=st.sampled_from([0.1, 0.01, 1.0]))
@settings(max_examples=40, deadline=None)
def test_update_matches_reference_bit_for_bit(seed, rows, bags, max_len, dim, lr):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows, dim)).astype(np.float32)
    grads = rng.standard_normal((bags, dim)).astype(np.float32)
    idx, off = make_bags(rng, rows, bags, max_len)
    w_ref = w.copy()
    r1, d1 = embedding_sgd_update(w, idx, off, grads, lr)
    r2, d2 = embedding_sgd_update_ref(w_ref, idx, off, grads, lr)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(w, w_ref)


def test_update_accumulates_duplicates_and_is_reproducible():
    w = np.zeros((3, 1), np.float32)
    grads = np.array([[1.0], [2.0]], np.float32)
    idx = np.array([2, 2, 0, 2], np.int64)  # bag 0: rows 2, 2; bag 1: rows 0, 2
    off = np.array([0, 2, 4], np.int64)
    rows, deltas = embedding_sgd_update(w, idx, off, grads, 0.5)
    np.testing.assert_array_equal(rows, [0, 2])
    np.testing.assert_array_equal(deltas, [[-1.0], [-2.0]])  # -(0.5 * 2) and -(0.5 * (1 + 1 + 2))
    np.testing.assert_array_equal(w[:, 0], [-1.0, 0.0, -2.0])

    rng = np.random.default_rng(7)
    base = rng.standard_normal((1000, 16)).astype(np.float32)
    idx, off = make_bags(rng, 1000, 256, 20, fixed=True)
    g = rng.standard_normal((256, 16)).astype(np.float32)
    a, b = base.copy(), base.copy()
    embedding_sgd_update(a, idx, off, g, 0.1)
    embedding_sgd_update(b, idx, off, g, 0.1)
    assert a.tobytes() == b.tobytes()


@pytest.mark.slow
@given(seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([BUCKET_KEYS - 1, 5 * BUCKET_KEYS + 7, 2**20]),
       bags=st.integers(1, 48), max_len=st.integers(0, 40), dim=st.sampled_from([2, 33, 48]),
       fixed=st.booleans())
@settings(max_examples=30, deadline=None)
def test_kernels_match_references_on_large_tables(seed, rows, bags, max_len, dim, fixed):
    # tables spanning many buckets of the update's split, the sorted fallback (2**20 rows for at
    # most ~2,000 lookups), rows over several cache lines (dims 33, 48) and runs longer than the
    # prefetch distance
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows, dim)).astype(np.float32)
    idx, off = make_bags(rng, rows, bags, max_len, fixed)
    assert embedding_bag_sum(w, idx, off).tobytes() == embedding_bag_sum_ref(w, idx, off).tobytes()
    grads = rng.standard_normal((bags, dim)).astype(np.float32)
    w_ref = w.copy()
    r1, d1 = embedding_sgd_update(w, idx, off, grads, 0.1)
    r2, d2 = embedding_sgd_update_ref(w_ref, idx, off, grads, 0.1)
    np.testing.assert_array_equal(r1, r2)
    assert d1.tobytes() == d2.tobytes() and w.tobytes() == w_ref.tobytes()


@pytest.mark.parametrize("high_bits", [0, 3, 8])
def test_split_and_sorted_accumulation_agree(high_bits):
    rng = np.random.default_rng(high_bits)
    rows = BUCKET_KEYS << high_bits
    idx, off = make_bags(rng, rows, 200, 3 * PREFETCH_DISTANCE)
    grads = rng.standard_normal((200, 8)).astype(np.float32)
    r1, a1 = accumulate_by_row_split(idx, off, grads, high_bits)
    r2, a2 = accumulate_by_row_sorted(idx, off, grads)
    np.testing.assert_array_equal(r1, r2)
    assert a1.tobytes() == a2.tobytes()


def test_lookup_on_unaligned_and_strided_tables():
    rng = np.random.default_rng(5)
    base = rng.standard_normal((3000, 70)).astype(np.float32)
    idx, off = make_bags(rng, 3000, 64, 2 * PREFETCH_DISTANCE)
    for w in (base[:, 3:35], base[:, ::2], np.asfortranarray(base)):  # off-line rows, strides
        assert embedding_bag_sum(w, idx, off).tobytes() == embedding_bag_sum_ref(w, idx, off).tobytes()


@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 30), dim=st.sampled_from([1, 5]))
@settings(max_examples=25, deadline=None)
def test_undo_log_save_restore(seed, rows, dim):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows, dim)).astype(np.float32)
    sel = np.unique(rng.integers(0, rows, rng.integers(0, rows + 1))).astype(np.int64)
    log = undo_log_save(w, sel)
    np.testing.assert_array_equal(log, undo_log_save_ref(w, sel))
    before = w.copy()
    w[sel] += 1.0
    w2 = w.copy()
    undo_log_restore(w, sel, log)
    undo_log_restore_ref(w2, sel, log)
    np.testing.assert_array_equal(w, before)
    np.testing.assert_array_equal(w2, before)


def relaxed_vs_dependent(rng, w, rows, bags, length, values):
    dim = w.shape[1]
    idx_n, off = make_bags(rng, rows, bags, length, fixed=True)
    idx_n1, _ = make_bags(rng, rows, bags, length, fixed=True)
    grads = values(rng, (bags, dim))
    pooled_early = embedding_bag_sum(w, idx_n1, off)  # batch n+1's lookup before n's update
    table = w.copy()
    prev_rows, prev_deltas = embedding_sgd_update(table, idx_n, off, grads, 0.5)
    dependent = embedding_bag_sum(table, idx_n1, off)  # lookup after the update
    relaxed = relaxed_correction(pooled_early, idx_n1, off, prev_rows, prev_deltas)
    np.testing.assert_array_equal(relaxed, relaxed_correction_ref(pooled_early, idx_n1, off, prev_rows, prev_deltas))
    return relaxed, dependent


@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 60), bags=st.integers(1, 24),
       length=st.integers(1, 10), dim=st.sampled_from([1, 4]))
@settings(max_examples=40, deadline=None)
def test_relaxed_correction_equals_dependent_lookup_exactly_on_dyadic_data(seed, rows, bags, length, dim):
    rng = np.random.default_rng(seed)
    relaxed, dependent = relaxed_vs_dependent(rng, dyadic(rng, (rows, dim)), rows, bags, length, dyadic)
    np.testing.assert_array_equal(relaxed, dependent)


def test_relaxed_correction_matches_to_float32_rounding():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((500, 32)).astype(np.float32)
    relaxed, dependent = relaxed_vs_dependent(
        rng, w, 500, 128, 20, lambda r, s: r.standard_normal(s).astype(np.float32))
    scale = np.abs(dependent).max()
    assert np.abs(relaxed - dependent).max() <= 64 * np.finfo(np.float32).eps * scale
    assert not np.array_equal(relaxed, embedding_bag_sum(w, *make_bags(np.random.default_rng(3), 500, 128, 20, True)))


@pytest.mark.parametrize("n_prev", [0, 1])
def test_relaxed_correction_no_shared_rows_is_identity(n_prev):
    pooled = np.arange(6, dtype=np.float32).reshape(3, 2)
    idx = np.array([1, 2, 3], np.int64)
    off = np.array([0, 1, 2, 3], np.int64)
    prev_rows = np.array([7], np.int64)[:n_prev]
    out = relaxed_correction(pooled, idx, off, prev_rows, np.ones((n_prev, 2), np.float32))
    np.testing.assert_array_equal(out, pooled)
