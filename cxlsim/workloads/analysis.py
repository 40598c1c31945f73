"""Per-batch access analysis for the timing model: a thin wrapper over
:mod:`cxlsim.kernels.access` that carries the previous batch's state.

Contract: :func:`analyze_batch` takes a batch's ``(tables, lookups)`` local row indices, a
:class:`~cxlsim.workloads.layout.TableLayout`, the memory geometry (``line_B``, ``controllers``,
``interleave_B``) and the previous batch's :class:`BatchAccess` (or None), and returns this batch's
:class:`BatchAccess`. Ids are global row ids (layout order) and absolute line ids
(``address // line_B``); all arrays are ascending where they are id lists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.kernels.access import (
    controller_histogram,
    intersect_sorted,
    lines_of_rows,
    member_sorted,
    unique_global_rows,
)
from cxlsim.workloads.layout import TableLayout

#: PMEM's internal access unit (Optane XPLine), the default line size.
XPLINE_B = 256


@dataclass(frozen=True)
class BatchAccess:
    """What one batch touches. Reads are the lookup's; the update writes ``unique_rows`` once each."""

    n_indices: int  # lookups in the batch (all tables)
    unique_rows: np.ndarray  # ascending unique global row ids
    counts: np.ndarray  # lookups per unique row
    shared_prev: np.ndarray  # bool per unique row: the previous batch touched it too
    lines: np.ndarray  # ascending unique line ids spanned by unique_rows
    line_reads: np.ndarray  # row lookups per line (with multiplicity)
    controller_lines: np.ndarray  # unique lines per memory controller
    controller_reads: np.ndarray  # row lookups per memory controller (with multiplicity)
    raw_lines: np.ndarray  # lines this batch reads that the previous batch's update wrote
    line_B: int

    @property
    def n_unique(self) -> int:
        return int(self.unique_rows.size)

    @property
    def reuse_prev_fraction(self) -> float:
        """Fraction of this batch's distinct (table, row) pairs the previous batch also touched."""
        return float(self.shared_prev.sum()) / self.n_unique if self.n_unique else 0.0


def analyze_batch(
    indices: np.ndarray,
    layout: TableLayout,
    prev: BatchAccess | None = None,
    line_B: int = XPLINE_B,
    controllers: int = 1,
    interleave_B: int = XPLINE_B,
) -> BatchAccess:
    """Analyse one batch (see the module contract). ``interleave_B`` must be a multiple of
    ``line_B`` so that each line maps to one controller."""
    if interleave_B % line_B:
        raise ValueError(f"interleave_B={interleave_B} is not a multiple of line_B={line_B}")
    if indices.ndim != 2 or indices.shape[0] != layout.tables:
        raise ValueError(f"indices must be (tables={layout.tables}, lookups), got {indices.shape}")
    uniq, counts = unique_global_rows(indices, layout.row_base)
    lines, reads = lines_of_rows(uniq, counts, layout.row_B, line_B, layout.base_B)
    if prev is not None:
        shared = member_sorted(uniq, prev.unique_rows)
        raw = intersect_sorted(lines, prev.lines)
    else:
        shared = np.zeros(uniq.size, np.bool_)
        raw = np.empty(0, np.int64)
    return BatchAccess(
        n_indices=int(indices.size),
        unique_rows=uniq,
        counts=counts,
        shared_prev=shared,
        lines=lines,
        line_reads=reads,
        controller_lines=controller_histogram(lines, np.ones(lines.size, np.int64), line_B, interleave_B, controllers),
        controller_reads=controller_histogram(lines, reads, line_B, interleave_B, controllers),
        raw_lines=raw,
        line_B=line_B,
    )
