"""Radix sort, generator sampling kernels and the per-batch access analysis against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.access import (
    BUCKET_KEYS,
    bucket_bits,
    controller_histogram,
    controller_histogram_ref,
    controller_histograms,
    intersect_sorted,
    lines_of_rows,
    lines_of_rows_ref,
    member_sorted,
    pow2_shift,
    unique_global_rows,
    unique_global_rows_ref,
    unique_table_rows_into,
    unique_table_rows_ref,
)
from cxlsim.kernels.sampling import draw_table, feistel_inverse, feistel_permute, power_law_ranks
from cxlsim.kernels.sorting import radix_sort_perm, unique_counts_sorted
from cxlsim.workloads import TableLayout, analyze_batch


@given(st.lists(st.integers(0, 2**40), max_size=300))
@settings(max_examples=60, deadline=None)
def test_radix_sort_is_a_stable_sort(values):
    keys = np.array(values, np.int64)
    sorted_keys, perm = radix_sort_perm(keys)
    np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))
    np.testing.assert_array_equal(sorted_keys, np.sort(keys))
    u, c = unique_counts_sorted(sorted_keys)
    u2, c2 = np.unique(keys, return_counts=True)
    np.testing.assert_array_equal(u, u2)
    np.testing.assert_array_equal(c, c2)


@given(n=st.integers(1, 5000), key=st.integers(0, 2**64 - 1))
@settings(max_examples=40, deadline=None)
def test_feistel_is_a_bijection_of_0_n(n, key):
    out = feistel_permute(np.arange(n, dtype=np.int64), n, np.uint64(key))
    np.testing.assert_array_equal(np.sort(out), np.arange(n))


@given(n=st.integers(1, 5000), key=st.integers(0, 2**64 - 1))
@settings(max_examples=40, deadline=None)
def test_feistel_inverse_undoes_the_permutation(n, key):
    x = np.arange(n, dtype=np.int64)
    rows = feistel_permute(x, n, np.uint64(key))
    np.testing.assert_array_equal(feistel_inverse(rows, n, np.uint64(key)), x)
    np.testing.assert_array_equal(feistel_permute(feistel_inverse(x, n, np.uint64(key)), n, np.uint64(key)), x)


def test_feistel_keys_give_different_permutations():
    x = np.arange(1000, dtype=np.int64)
    assert not np.array_equal(feistel_permute(x, 1000, np.uint64(1)), feistel_permute(x, 1000, np.uint64(2)))


@pytest.mark.parametrize("exponent", [0.0, 1.0, 1.1])
def test_power_law_ranks_follow_the_bounded_law(exponent):
    n, draws = 1000, 200_000
    u = np.random.default_rng(0).random(draws)
    ranks = power_law_ranks(u, n, exponent)
    assert ranks.min() >= 0 and ranks.max() < n
    freq = np.bincount(ranks, minlength=n) / draws
    k = np.arange(n, dtype=float)
    if exponent == 1.0:
        expect = (np.log(k + 2) - np.log(k + 1)) / np.log(n + 1)
    else:
        a = 1 - exponent
        expect = ((k + 2) ** a - (k + 1) ** a) / ((n + 1) ** a - 1)
    assert np.abs(freq[:10] - expect[:10]).max() < 0.01
    assert abs(freq[n // 2 :].sum() - expect[n // 2 :].sum()) < 0.01


def test_draw_table_copies_positions_from_previous_batch():
    rng = np.random.default_rng(1)
    prev = np.full(10_000, 7, np.int64)
    out = draw_table(prev, rng.random(10_000), 1_000_000, 1.1, np.uint64(5), 0.25)
    copied = (out == 7).mean()
    assert 0.23 < copied < 0.27
    first = draw_table(np.empty(0, np.int64), rng.random(100), 10, 1.1, np.uint64(5), 0.25)
    assert first.min() >= 0 and first.max() < 10
    # a batch longer than the previous one (variable bags): only the positions it had may copy
    v = rng.random(20_000)
    longer = draw_table(prev, v, 1_000_000, 1.1, np.uint64(5), 0.25)
    assert 0.23 < (longer[:10_000] == 7).mean() < 0.27 and (longer[10_000:] == 7).mean() < 0.01
    np.testing.assert_array_equal(longer[10_000:], draw_table(np.empty(0, np.int64), v[10_000:], 1_000_000, 1.1,
                                                               np.uint64(5), 0.25))
    shorter = draw_table(prev, v[:5_000], 1_000_000, 1.1, np.uint64(5), 0.25)
    np.testing.assert_array_equal(shorter, draw_table(prev[:5_000], v[:5_000], 1_000_000, 1.1, np.uint64(5), 0.25))


def test_unique_table_rows_match_reference_on_ragged_tables():
    rng = np.random.default_rng(4)
    lengths = np.array([0, 7, 300, 1, 5000])
    starts = np.concatenate([[0], np.cumsum(lengths)])
    rows = np.array([9, 50, 100_000, 3, 2**20])
    idx = np.concatenate([rng.integers(0, r, n) for r, n in zip(rows, lengths, strict=True)]).astype(np.int64)
    base = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
    u = np.empty(idx.size, np.int64)
    c = np.empty(idx.size, np.int64)
    k = unique_table_rows_into(idx, starts, base, u, c)
    u2, c2 = unique_table_rows_ref(idx, starts, base)
    np.testing.assert_array_equal(u[:k], u2)
    np.testing.assert_array_equal(c[:k], c2)


@pytest.mark.slow
@given(seed=st.integers(0, 2**32 - 1), tables=st.integers(1, 5), m=st.integers(1, 40),
       row_B=st.sampled_from([64, 128, 192, 384]), base_B=st.sampled_from([0, 64, 4096]),
       controllers=st.integers(1, 6), interleave_lines=st.sampled_from([1, 4]))
@settings(max_examples=40, deadline=None)
def test_access_kernels_match_references(seed, tables, m, row_B, base_B, controllers, interleave_lines):
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 60, tables)
    layout = TableLayout.of(rows, row_B // 4, base_B)
    idx = np.stack([rng.integers(0, r, m) for r in rows]).astype(np.int64)
    u, c = unique_global_rows(idx, layout.row_base)
    u2, c2 = unique_global_rows_ref(idx, layout.row_base)
    np.testing.assert_array_equal(u, u2)
    np.testing.assert_array_equal(c, c2)
    lines, reads = lines_of_rows(u, c, row_B, 256, base_B)
    l2, r2 = lines_of_rows_ref(u, c, row_B, 256, base_B)
    np.testing.assert_array_equal(lines, l2)
    np.testing.assert_array_equal(reads, r2)
    inter = 256 * interleave_lines
    np.testing.assert_array_equal(controller_histogram(lines, reads, 256, inter, controllers),
                                  controller_histogram_ref(lines, reads, 256, inter, controllers))
    other = np.unique(rng.integers(0, rows.sum(), 30)).astype(np.int64)
    np.testing.assert_array_equal(member_sorted(u, other), np.isin(u, other))
    np.testing.assert_array_equal(intersect_sorted(u, other), np.intersect1d(u, other))


def test_analyze_batch_fields():
    layout = TableLayout.of([4, 6], dim=32)  # 128 B rows: 2 rows per 256 B line
    a = analyze_batch(np.array([[0, 0, 3], [1, 5, 5]], np.int64), layout, controllers=2)
    np.testing.assert_array_equal(a.unique_rows, [0, 3, 5, 9])  # table 1 starts at global row 4
    np.testing.assert_array_equal(a.counts, [2, 1, 1, 2])
    np.testing.assert_array_equal(a.lines, [0, 1, 2, 4])
    np.testing.assert_array_equal(a.line_reads, [2, 1, 1, 2])
    np.testing.assert_array_equal(a.controller_lines, [3, 1])
    np.testing.assert_array_equal(a.controller_reads, [5, 1])
    assert a.reuse_prev_fraction == 0.0 and a.raw_lines.size == 0
    b = analyze_batch(np.array([[1, 2, 2], [5, 5, 5]], np.int64), layout, prev=a, controllers=2)
    np.testing.assert_array_equal(b.unique_rows, [1, 2, 9])
    np.testing.assert_array_equal(b.shared_prev, [False, False, True])
    assert b.reuse_prev_fraction == pytest.approx(1 / 3)
    np.testing.assert_array_equal(b.raw_lines, [0, 1, 4])  # row 1 shares line 0 with row 0, row 2 line 1 with row 3
    assert layout.address_B(1, 5) == 9 * 128 and layout.line_of(1, 5) == 4 and layout.table_of(9) == 1
    with pytest.raises(ValueError):
        analyze_batch(np.zeros((2, 1), np.int64), layout, line_B=256, interleave_B=64)


@given(seed=st.integers(0, 2**32 - 1), tables=st.integers(1, 4), m=st.integers(0, 3000),
       key_bits=st.sampled_from([1, 12, 13, 20, 40]), skew=st.sampled_from([1.0, 4.0]))
@settings(max_examples=60, deadline=None)
def test_unique_global_rows_matches_reference_on_wide_skewed_keys(seed, tables, m, key_bits, skew):
    # bucketed split (keys spanning many BUCKET_KEYS ranges, hot keys repeated) and the radix
    # fallback (sparse keys: more buckets than lookups)
    rng = np.random.default_rng(seed)
    idx = ((2**key_bits) * rng.random((tables, m)) ** skew).astype(np.int64)
    row_base = np.cumsum(np.full(tables, 2**key_bits)) - 2**key_bits
    u, c = unique_global_rows(idx, row_base)
    u2, c2 = unique_global_rows_ref(idx, row_base)
    np.testing.assert_array_equal(u, u2)
    np.testing.assert_array_equal(c, c2)
    assert u.dtype == c.dtype == np.int64


def test_bucket_split_is_chosen_by_key_range():
    assert bucket_bits(np.arange(BUCKET_KEYS, dtype=np.int64)) == 0  # one bucket
    assert bucket_bits(np.array([0, 4 * BUCKET_KEYS - 1] * 4, np.int64)) == 2  # four buckets for eight keys
    assert bucket_bits(np.array([0, 2**40], np.int64)) == -1  # sparse: radix sort instead
    assert [pow2_shift(x) for x in (1, 2, 256, 3, 0, 768)] == [0, 1, 8, -1, -1, -1]


@given(a=st.lists(st.integers(0, 300), max_size=200), b=st.lists(st.integers(0, 300), max_size=200))
@settings(max_examples=80, deadline=None)
def test_member_and_intersect_match_numpy(a, b):
    a = np.unique(np.array(a, np.int64))
    b = np.unique(np.array(b, np.int64))
    np.testing.assert_array_equal(member_sorted(a, b), np.isin(a, b))
    np.testing.assert_array_equal(intersect_sorted(a, b), np.intersect1d(a, b))


@pytest.mark.parametrize(("line_B", "interleave_B", "controllers"), [(256, 256, 1), (256, 4096, 4), (256, 768, 3),
                                                                      (64, 96, 6), (96, 96, 5), (256, 128, 2)])
def test_controller_histograms_shift_and_divide_paths(line_B, interleave_B, controllers):
    rng = np.random.default_rng(line_B + controllers)
    lines = np.unique(rng.integers(0, 1 << 30, 5000)).astype(np.int64)
    reads = rng.integers(1, 9, lines.size).astype(np.int64)
    n_lines, summed = controller_histograms(lines, reads, line_B, interleave_B, controllers)
    np.testing.assert_array_equal(n_lines, controller_histogram_ref(lines, np.ones(lines.size, np.int64), line_B,
                                                                    interleave_B, controllers))
    np.testing.assert_array_equal(summed, controller_histogram_ref(lines, reads, line_B, interleave_B, controllers))


@pytest.mark.parametrize(("row_B", "line_B", "base_B"), [(128, 256, 0), (192, 256, 64), (100, 96, 12), (512, 256, 4096)])
def test_lines_of_rows_shift_and_divide_paths(row_B, line_B, base_B):
    rng = np.random.default_rng(row_B)
    rows = np.unique(rng.integers(0, 1 << 20, 3000)).astype(np.int64)
    counts = rng.integers(1, 5, rows.size).astype(np.int64)
    for got, want in zip(lines_of_rows(rows, counts, row_B, line_B, base_B),
                         lines_of_rows_ref(rows, counts, row_B, line_B, base_B), strict=True):
        np.testing.assert_array_equal(got, want)


def test_analyze_batch_line_view_is_lazy_and_independent_of_access_order():
    layout = TableLayout.of([5000, 3000, 70_000], dim=48, base_B=64)  # 192 B rows straddle lines
    rng = np.random.default_rng(11)
    batch = [np.stack([rng.integers(0, r, 400) for r in layout.rows]).astype(np.int64) for _ in range(3)]
    a = analyze_batch(batch[0], layout, controllers=3, interleave_B=768)
    b = analyze_batch(batch[1], layout, a, controllers=3, interleave_B=768)
    c = analyze_batch(batch[2], layout, b, controllers=3, interleave_B=768)
    raw_c = c.raw_lines  # before b's or c's lines were ever asked for
    rows = [unique_global_rows_ref(x, layout.row_base) for x in batch]
    lines = [lines_of_rows_ref(u, n, layout.row_B, 256, layout.base_B) for u, n in rows]
    np.testing.assert_array_equal(raw_c, np.intersect1d(lines[2][0], lines[1][0]))
    np.testing.assert_array_equal(b.raw_lines, np.intersect1d(lines[1][0], lines[0][0]))
    np.testing.assert_array_equal(c.shared_prev, np.isin(rows[2][0], rows[1][0]))
    for acc, (ln, rd) in zip((a, b, c), lines, strict=True):
        np.testing.assert_array_equal(acc.lines, ln)
        np.testing.assert_array_equal(acc.line_reads, rd)
        np.testing.assert_array_equal(acc.controller_reads, controller_histogram_ref(ln, rd, 256, 768, 3))
    assert c.lines is c.lines  # computed once


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=6), st.data())
def test_tables_reversed_regroups_last_table_first(rows_per_table, data):
    layout = TableLayout.of(rows_per_table, dim=4)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, max(layout.total_rows - 1, 0)), max_size=20)))
                    if layout.total_rows else [], np.int64)
    out = layout.tables_reversed(rows)
    np.testing.assert_array_equal(np.sort(out), rows)  # a permutation
    t = layout.table_of(out)
    assert np.all(np.diff(t) <= 0)  # last table first
    assert np.all(np.diff(out)[np.diff(t) == 0] > 0)  # ascending within a table
