"""Per-batch access analysis for the timing model: a thin wrapper over
:mod:`cxlsim.kernels.access` that carries the previous batch's state.

Contract: :func:`analyze_batch` takes a batch's local row indices (``(tables, lookups)``, or one
table-major array with ``table_starts`` for tables of any lengths: variable bags), a
:class:`~cxlsim.workloads.layout.TableLayout`, the memory geometry (``line_B``, ``controllers``,
``interleave_B``) and the previous batch's :class:`BatchAccess` (or None), and returns this batch's
:class:`BatchAccess`. Ids are global row ids (layout order) and absolute line ids
(``address // line_B``); all arrays are ascending where they are id lists.

Cost: the row view (``unique_rows``, ``counts``, ``shared_prev``) is computed by
:func:`analyze_batch`; the line view (``lines``, ``line_reads``, ``controller_*``, ``raw_lines``) is
derived from it on first access and kept, so a caller that needs rows only (the timing model's
:mod:`cxlsim.systems.streams`) does not pay for lines. Either way the values are the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from cxlsim.kernels.access import (
    controller_histograms,
    lines_of_rows_into,
    max_lines,
    member_sorted,
    member_sorted_into,
    unique_table_rows_into,
)
from cxlsim.workloads.layout import TableLayout

#: PMEM's internal access unit (Optane XPLine), the default line size.
XPLINE_B = 256


class LineView:
    """The lines a set of rows spans, computed on first use (held by :class:`BatchAccess`).

    It keeps only its own rows, so a batch's view of the previous batch does not chain back
    through earlier batches.
    """

    def __init__(self, rows: np.ndarray, counts: np.ndarray, row_B: int, base_B: int, line_B: int,
                 interleave_B: int, controllers: int) -> None:
        self.rows = rows
        self.counts = counts
        self.row_B = row_B
        self.base_B = base_B
        self.line_B = line_B
        self.interleave_B = interleave_B
        self.controllers = controllers

    @cached_property
    def lines_and_reads(self) -> tuple[np.ndarray, np.ndarray]:
        # numpy allocates the outputs: it backs large arrays with huge pages, where the kernels'
        # own allocations would take a page fault per 4 KiB of every batch's fresh output
        cap = max_lines(self.rows.size, self.row_B, self.line_B)
        lines = np.empty(cap, np.int64)
        reads = np.empty(cap, np.int64)
        n = lines_of_rows_into(self.rows, self.counts, self.row_B, self.line_B, self.base_B, lines, reads)
        return lines[:n], reads[:n]

    @cached_property
    def controller_histograms(self) -> tuple[np.ndarray, np.ndarray]:
        lines, reads = self.lines_and_reads
        return controller_histograms(lines, reads, self.line_B, self.interleave_B, self.controllers)


@dataclass(frozen=True)
class BatchAccess:
    """What one batch touches. Reads are the lookup's; the update writes ``unique_rows`` once each."""

    n_indices: int  # lookups in the batch (all tables)
    unique_rows: np.ndarray  # ascending unique global row ids
    counts: np.ndarray  # lookups per unique row
    shared_prev: np.ndarray  # bool per unique row: the previous batch touched it too
    line_B: int
    line_view: LineView = field(repr=False)
    prev_line_view: LineView | None = field(repr=False)

    @property
    def n_unique(self) -> int:
        return int(self.unique_rows.size)

    @property
    def reuse_prev_fraction(self) -> float:
        """Fraction of this batch's distinct (table, row) pairs the previous batch also touched."""
        return float(self.shared_prev.sum()) / self.n_unique if self.n_unique else 0.0

    @property
    def lines(self) -> np.ndarray:
        """Ascending unique line ids spanned by ``unique_rows``."""
        return self.line_view.lines_and_reads[0]

    @property
    def line_reads(self) -> np.ndarray:
        """Row lookups per line (with multiplicity)."""
        return self.line_view.lines_and_reads[1]

    @property
    def controller_lines(self) -> np.ndarray:
        """Unique lines per memory controller."""
        return self.line_view.controller_histograms[0]

    @property
    def controller_reads(self) -> np.ndarray:
        """Row lookups per memory controller (with multiplicity)."""
        return self.line_view.controller_histograms[1]

    @cached_property
    def raw_lines(self) -> np.ndarray:
        """Lines this batch reads that the previous batch's update wrote."""
        if self.prev_line_view is None:
            return np.empty(0, np.int64)
        prev_lines = self.prev_line_view.lines_and_reads[0]
        return self.lines[member_sorted(self.lines, prev_lines)]


def analyze_batch(
    indices: np.ndarray,
    layout: TableLayout,
    prev: BatchAccess | None = None,
    line_B: int = XPLINE_B,
    controllers: int = 1,
    interleave_B: int = XPLINE_B,
    table_starts: np.ndarray | None = None,
) -> BatchAccess:
    """Analyse one batch (see the module contract). ``interleave_B`` must be a multiple of
    ``line_B`` so that each line maps to one controller."""
    if interleave_B % line_B:
        raise ValueError(f"interleave_B={interleave_B} is not a multiple of line_B={line_B}")
    if table_starts is None:
        if indices.ndim != 2 or indices.shape[0] != layout.tables:
            raise ValueError(f"indices must be (tables={layout.tables}, lookups), got {indices.shape}")
        table_starts = np.arange(layout.tables + 1, dtype=np.int64) * indices.shape[1]
        indices = indices.reshape(-1)
    elif indices.ndim != 1 or table_starts.size != layout.tables + 1 or table_starts[-1] != indices.size:
        raise ValueError(f"indices must be one array of {layout.tables} tables' lookups with table_starts "
                         f"(tables + 1) ending at its size; got {indices.shape} and {table_starts.size} starts")
    uniq = np.empty(indices.size, np.int64)  # numpy-allocated, as in LineView
    counts = np.empty(indices.size, np.int64)
    n = unique_table_rows_into(indices, table_starts, layout.row_base, uniq, counts)
    uniq, counts = uniq[:n], counts[:n]
    shared = np.empty(n, np.bool_)
    if prev is not None:
        member_sorted_into(uniq, prev.unique_rows, shared)
    else:
        shared[:] = False
    return BatchAccess(
        n_indices=int(indices.size),
        unique_rows=uniq,
        counts=counts,
        shared_prev=shared,
        line_B=line_B,
        line_view=LineView(uniq, counts, layout.row_B, layout.base_B, line_B, interleave_B, controllers),
        prev_line_view=None if prev is None else prev.line_view,
    )
