"""Per-batch access analysis: what a batch's sparse indices touch in the data region.

Inputs are plain arrays: a batch's local row indices ``(tables, lookups)`` and each table's first
global row id (``row_base``, ascending; see :class:`cxlsim.workloads.layout.TableLayout`). A global
row ``g`` occupies bytes ``[base_B + g*row_B, base_B + (g+1)*row_B)``; a *line* is the aligned
``line_B``-byte block (the PMEM XPLine, 256 B) with id ``address // line_B``; line ``l`` belongs to
memory controller ``(l*line_B // interleave_B) % controllers``.

The timing model consumes the outputs (wrapped by :func:`cxlsim.workloads.analysis.analyze_batch`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cxlsim.kernels.sorting import radix_sort_perm, unique_counts_sorted


@njit(cache=True)
def unique_global_rows(indices: np.ndarray, row_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ascending unique global row ids of a batch ``(tables, lookups)`` and their multiplicity."""
    tables, m = indices.shape
    uniq = np.empty(tables * m, np.int64)
    counts = np.empty(tables * m, np.int64)
    k = 0
    for t in range(tables):
        keys, _ = radix_sort_perm(indices[t])
        u, c = unique_counts_sorted(keys)
        base = row_base[t]
        for i in range(u.size):
            uniq[k + i] = u[i] + base
            counts[k + i] = c[i]
        k += u.size
    return uniq[:k], counts[:k]


@njit(cache=True)
def member_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mask over ascending unique ``a``: is ``a[i]`` in ascending ``b``? (a linear merge)."""
    out = np.zeros(a.size, np.bool_)
    j = 0
    for i in range(a.size):
        while j < b.size and b[j] < a[i]:
            j += 1
        if j < b.size and b[j] == a[i]:
            out[i] = True
    return out


@njit(cache=True)
def intersect_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Values of ascending unique ``a`` that are also in ascending ``b``."""
    return a[member_sorted(a, b)]


@njit(cache=True)
def lines_of_rows(
    rows: np.ndarray, counts: np.ndarray, row_B: int, line_B: int, base_B: int
) -> tuple[np.ndarray, np.ndarray]:
    """Ascending unique line ids spanned by ascending global ``rows``, and the row-lookups per line.

    A row spanning several lines counts its lookups on each of them.
    """
    cap = 0
    for i in range(rows.size):
        first = (base_B + rows[i] * row_B) // line_B
        last = (base_B + rows[i] * row_B + row_B - 1) // line_B
        cap += last - first + 1
    lines = np.empty(cap, np.int64)
    reads = np.empty(cap, np.int64)
    k = -1
    for i in range(rows.size):
        first = (base_B + rows[i] * row_B) // line_B
        last = (base_B + rows[i] * row_B + row_B - 1) // line_B
        for line in range(first, last + 1):
            if k >= 0 and lines[k] == line:
                reads[k] += counts[i]
            else:
                k += 1
                lines[k] = line
                reads[k] = counts[i]
    return lines[: k + 1], reads[: k + 1]


@njit(cache=True)
def controller_histogram(
    lines: np.ndarray, weights: np.ndarray, line_B: int, interleave_B: int, controllers: int
) -> np.ndarray:
    """Sum of ``weights`` per memory controller (pass ones to count lines)."""
    hist = np.zeros(controllers, np.int64)
    for i in range(lines.size):
        hist[(lines[i] * line_B // interleave_B) % controllers] += weights[i]
    return hist


def unique_global_rows_ref(indices: np.ndarray, row_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numpy reference of :func:`unique_global_rows`."""
    g = (indices + row_base[:, None]).ravel()
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
