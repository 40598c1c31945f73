"""Per-batch access analysis: what a batch's sparse indices touch in the data region.

Inputs are plain arrays: a batch's local row indices (``(tables, lookups)``, or one table-major array with
each table's start: :func:`unique_table_rows_into`) and each table's first
global row id (``row_base``, ascending; see :class:`cxlsim.workloads.layout.TableLayout`). A global
row ``g`` occupies bytes ``[base_B + g*row_B, base_B + (g+1)*row_B)``; a *line* is the aligned
``line_B``-byte block (the PMEM XPLine, 256 B) with id ``address // line_B``; line ``l`` belongs to
memory controller ``(l*line_B // interleave_B) % controllers``.

Speed (the timing model analyses every batch of every run; RM2 has 2.46 M lookups a batch): each
table's distinct rows come from an MSD split (keys to buckets by their high bits, then an L1-resident
counter array and bitmap per bucket give the bucket's distinct rows in order with their counts: no
comparison sort, no per-lookup hash probe); membership and intersection are merges run as four
independent lanes so that the core overlaps them; divisions by power-of-two geometry (lines,
interleave, controllers) are shifts and masks. Results equal the numpy references bit for bit.

The timing model consumes the outputs (wrapped by :func:`cxlsim.workloads.analysis.analyze_batch`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from cxlsim.kernels.sorting import key_bits, radix_sort_perm, unique_counts_sorted

#: Distinct rows per table: a bucket spans 2**BUCKET_LOW_BITS keys, so its counters (int64) and
#: bitmap fit in L1 and the bitmap's words fit one summary word (64 words of 64 bits).
BUCKET_LOW_BITS = 12
BUCKET_KEYS = 1 << BUCKET_LOW_BITS
BUCKET_LOW_MASK = BUCKET_KEYS - 1
WORD_BITS = 64
WORD_SHIFT = 6
WORD_MASK = WORD_BITS - 1
#: More buckets than keys means mostly empty buckets (RM4's large tables with one lookup per
#: sample): such tables are radix-sorted instead.
MAX_BUCKETS_PER_KEY = 1


@njit(cache=True)
def pow2_shift(x: int) -> int:
    """``log2(x)`` when ``x`` is a power of two, else -1 (then divide instead of shifting)."""
    if x <= 0 or x & (x - 1):
        return -1
    s = 0
    while (1 << s) < x:
        s += 1
    return s


@njit(cache=True)
def bucket_bits(keys: np.ndarray) -> int:
    """High-bit count of the MSD split of ``keys`` (>= 0), or -1 where sorting is cheaper."""
    top = 0
    for i in range(keys.size):
        top = max(top, keys[i])
    bits = max(key_bits(top) - BUCKET_LOW_BITS, 0)
    return bits if (1 << bits) <= MAX_BUCKETS_PER_KEY * keys.size + 1 else -1


@njit(cache=True)
def distinct_counts_split(
    keys: np.ndarray,
    high_bits: int,
    start: np.ndarray,
    cursor: np.ndarray,
    low: np.ndarray,
    counter: np.ndarray,
    bitmap: np.ndarray,
    rows_out: np.ndarray,
    counts_out: np.ndarray,
) -> int:
    """Ascending distinct ``keys`` and their multiplicity into ``rows_out``/``counts_out``; returns
    how many. ``keys < 2**(high_bits + BUCKET_LOW_BITS)``; scratch: ``start`` and ``cursor``
    (``2**high_bits + 1``), ``low`` (``keys.size``, uint16), ``counter`` (``BUCKET_KEYS``) and
    ``bitmap`` (``BUCKET_KEYS / WORD_BITS``) zero on entry, left zero.
    """
    buckets = 1 << high_bits
    start[: buckets + 1] = 0
    for i in range(keys.size):
        start[(keys[i] >> BUCKET_LOW_BITS) + 1] += 1
    for b in range(buckets):
        start[b + 1] += start[b]
    cursor[:buckets] = start[:buckets]
    for i in range(keys.size):  # counting-sort scatter of the low bits, bucket by bucket
        b = keys[i] >> BUCKET_LOW_BITS
        low[cursor[b]] = keys[i] & BUCKET_LOW_MASK
        cursor[b] += 1
    n = 0
    for b in range(buckets):
        summary = 0  # bit w: bitmap word w is non-zero
        for i in range(start[b], start[b + 1]):
            v = np.int64(low[i])
            counter[v] += 1
            bitmap[v >> WORD_SHIFT] |= 1 << (v & WORD_MASK)
            summary |= 1 << (v >> WORD_SHIFT)
        high = b << BUCKET_LOW_BITS
        while summary:  # set bits in ascending order: the bucket's distinct keys, sorted
            w = trailing_zeros(summary)
            summary &= summary - 1
            word = bitmap[w]
            bitmap[w] = 0
            while word:
                v = (w << WORD_SHIFT) | trailing_zeros(word)
                word &= word - 1
                rows_out[n] = high | v
                counts_out[n] = counter[v]
                counter[v] = 0
                n += 1
    return n


@njit(cache=True)
def unique_table_rows_into(
    indices: np.ndarray, starts: np.ndarray, row_base: np.ndarray, rows_out: np.ndarray, counts_out: np.ndarray
) -> int:
    """Ascending distinct global rows of a batch held table-major in one array (table ``t``'s
    lookups are ``indices[starts[t]:starts[t + 1]]``, tables of any lengths: bags of variable
    size) and their multiplicity, into caller-allocated outputs (``indices.size`` each); returns
    how many rows were written."""
    tables = starts.size - 1
    m = 0
    for t in range(tables):
        m = max(m, starts[t + 1] - starts[t])
    start = np.empty(MAX_BUCKETS_PER_KEY * m + 2, np.int64)
    cursor = np.empty_like(start)
    low = np.empty(m, np.uint16)
    counter = np.zeros(BUCKET_KEYS, np.int64)
    bitmap = np.zeros(BUCKET_KEYS // WORD_BITS, np.int64)
    k = 0
    for t in range(tables):
        keys = indices[starts[t] : starts[t + 1]]
        if keys.size == 0:
            continue
        high_bits = bucket_bits(keys)
        if high_bits >= 0:
            n = distinct_counts_split(keys, high_bits, start, cursor, low, counter, bitmap, rows_out[k:], counts_out[k:])
        else:
            rows, c = unique_counts_sorted(radix_sort_perm(keys)[0])
            n = rows.size
            rows_out[k : k + n] = rows
            counts_out[k : k + n] = c
        base = row_base[t]
        for i in range(k, k + n):
            rows_out[i] += base
        k += n
    return k


@njit(cache=True)
def unique_global_rows_into(
    indices: np.ndarray, row_base: np.ndarray, rows_out: np.ndarray, counts_out: np.ndarray
) -> int:
    """:func:`unique_global_rows` into caller-allocated outputs (``indices.size`` each); returns
    how many rows were written (:func:`unique_table_rows_into` over equal-length tables)."""
    tables, m = indices.shape
    starts = np.arange(tables + 1) * m
    return unique_table_rows_into(np.ascontiguousarray(indices).reshape(indices.size), starts, row_base,
                                  rows_out, counts_out)


@njit(cache=True)
def unique_global_rows(indices: np.ndarray, row_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ascending unique global row ids of a batch ``(tables, lookups)`` and their multiplicity.

    Tables hold disjoint, ascending global ranges, so each table's sorted distinct rows are
    appended in turn.
    """
    rows = np.empty(indices.size, np.int64)
    counts = np.empty(indices.size, np.int64)
    n = unique_global_rows_into(indices, row_base, rows, counts)
    return rows[:n], counts[:n]


@njit(inline="always")
def _merge_step(a: np.ndarray, b: np.ndarray, out: np.ndarray, i: int, j: int) -> tuple[int, int]:
    """One branch-free step of the membership merge: ``out[i]`` is rewritten until ``a[i]`` is
    passed, and its last write is the answer."""
    x = a[i]
    y = b[j]
    out[i] = x == y
    return i + (x <= y), j + (y <= x)


@njit(inline="always")
def _merge_rest(a: np.ndarray, b: np.ndarray, out: np.ndarray, i: int, i_end: int, j: int, j_end: int) -> None:
    while i < i_end and j < j_end:
        i, j = _merge_step(a, b, out, i, j)


@njit(cache=True)
def member_sorted_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """:func:`member_sorted` into a caller-allocated mask (``a.size``).

    A merge split into four lanes at quarters of ``a`` (each lane's part of ``b`` found by binary
    search) whose branch-free steps are interleaved: the lanes' dependency chains overlap.
    """
    na = a.size
    nb = b.size
    out[:na] = False
    if na == 0 or nb == 0:
        return
    i1 = na // 4
    i2 = na // 2
    i3 = 3 * na // 4
    i0, e0, e1, e2 = 0, i1, i2, i3
    j0 = 0
    j1 = np.searchsorted(b, a[i1])
    j2 = np.searchsorted(b, a[i2])
    j3 = np.searchsorted(b, a[i3])
    f0, f1, f2 = j1, j2, j3
    while i0 < e0 and j0 < f0 and i1 < e1 and j1 < f1 and i2 < e2 and j2 < f2 and i3 < na and j3 < nb:
        i0, j0 = _merge_step(a, b, out, i0, j0)
        i1, j1 = _merge_step(a, b, out, i1, j1)
        i2, j2 = _merge_step(a, b, out, i2, j2)
        i3, j3 = _merge_step(a, b, out, i3, j3)
    _merge_rest(a, b, out, i0, e0, j0, f0)
    _merge_rest(a, b, out, i1, e1, j1, f1)
    _merge_rest(a, b, out, i2, e2, j2, f2)
    _merge_rest(a, b, out, i3, na, j3, nb)


@njit(cache=True)
def member_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mask over ascending unique ``a``: is ``a[i]`` in ascending unique ``b``?"""
    out = np.empty(a.size, np.bool_)
    member_sorted_into(a, b, out)
    return out


@njit(cache=True)
def intersect_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Values of ascending unique ``a`` that are also in ascending unique ``b``."""
    return a[member_sorted(a, b)]


@njit(cache=True)
def max_lines(n_rows: int, row_B: int, line_B: int) -> int:
    """At most how many lines ``n_rows`` distinct rows span (a row spans at most this many)."""
    return n_rows * ((row_B + line_B - 1) // line_B + 1)


@njit(cache=True)
def lines_of_rows_into(
    rows: np.ndarray,
    counts: np.ndarray,
    row_B: int,
    line_B: int,
    base_B: int,
    lines_out: np.ndarray,
    reads_out: np.ndarray,
) -> int:
    """:func:`lines_of_rows` into caller-allocated outputs (:func:`max_lines` each); returns how
    many lines were written."""
    shift = pow2_shift(line_B)
    k = -1
    for i in range(rows.size):
        start = base_B + rows[i] * row_B
        end = start + row_B - 1
        if shift >= 0:
            first = start >> shift
            last = end >> shift
        else:
            first = start // line_B
            last = end // line_B
        c = counts[i]
        for line in range(first, last + 1):
            if k >= 0 and lines_out[k] == line:
                reads_out[k] += c
            else:
                k += 1
                lines_out[k] = line
                reads_out[k] = c
    return k + 1


@njit(cache=True)
def lines_of_rows(
    rows: np.ndarray, counts: np.ndarray, row_B: int, line_B: int, base_B: int
) -> tuple[np.ndarray, np.ndarray]:
    """Ascending unique line ids spanned by ascending global ``rows``, and the row-lookups per line.

    A row spanning several lines counts its lookups on each of them.
    """
    cap = max_lines(rows.size, row_B, line_B)
    lines = np.empty(cap, np.int64)
    reads = np.empty(cap, np.int64)
    n = lines_of_rows_into(rows, counts, row_B, line_B, base_B, lines, reads)
    return lines[:n], reads[:n]


@njit(cache=True)
def controller_histogram(
    lines: np.ndarray, weights: np.ndarray, line_B: int, interleave_B: int, controllers: int
) -> np.ndarray:
    """Sum of ``weights`` per memory controller (pass ones to count lines)."""
    return controller_histograms(lines, weights, line_B, interleave_B, controllers)[1]


@njit(cache=True)
def controller_histograms(
    lines: np.ndarray, weights: np.ndarray, line_B: int, interleave_B: int, controllers: int
) -> tuple[np.ndarray, np.ndarray]:
    """Lines per memory controller and the sum of ``weights`` per controller, in one pass."""
    n_lines = np.zeros(controllers, np.int64)
    summed = np.zeros(controllers, np.int64)
    per_block = interleave_B // line_B
    block_shift = pow2_shift(per_block) if interleave_B % line_B == 0 else -1
    ctrl_mask = controllers - 1 if pow2_shift(controllers) >= 0 else -1
    for i in range(lines.size):
        if block_shift >= 0:  # (l*line_B // interleave_B) == l // per_block when it divides
            block = lines[i] >> block_shift
        else:
            block = lines[i] * line_B // interleave_B
        c = block & ctrl_mask if ctrl_mask >= 0 else block % controllers
        n_lines[c] += 1
        summed[c] += weights[i]
    return n_lines, summed


def unique_global_rows_ref(indices: np.ndarray, row_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`unique_global_rows`."""
    g = (indices + row_base[:, None]).ravel()
    u, c = np.unique(g, return_counts=True)
    return u.astype(np.int64), c.astype(np.int64)


def unique_table_rows_ref(indices: np.ndarray, starts: np.ndarray, row_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`unique_table_rows_into` (its outputs trimmed)."""
    g = indices + np.repeat(row_base, np.diff(starts))
    u, c = np.unique(g, return_counts=True)
    return u.astype(np.int64), c.astype(np.int64)


def lines_of_rows_ref(
    rows: np.ndarray, counts: np.ndarray, row_B: int, line_B: int, base_B: int
) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`lines_of_rows`."""
    first = (base_B + rows * row_B) // line_B
    last = (base_B + rows * row_B + row_B - 1) // line_B
    span = last - first + 1
    all_lines = np.repeat(first, span) + (np.arange(span.sum()) - np.repeat(np.cumsum(span) - span, span))
    all_reads = np.repeat(counts, span)
    lines, inv = np.unique(all_lines, return_inverse=True)
    reads = np.zeros(lines.size, np.int64)
    np.add.at(reads, inv.ravel(), all_reads)
    return lines.astype(np.int64), reads


def controller_histogram_ref(
    lines: np.ndarray, weights: np.ndarray, line_B: int, interleave_B: int, controllers: int
) -> np.ndarray:
    """Numpy reference of :func:`controller_histogram`."""
    ctrl = (lines * line_B // interleave_B) % controllers
    return np.bincount(ctrl, weights=weights, minlength=controllers).astype(np.int64)
