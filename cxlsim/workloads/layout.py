"""Address layout of the embedding tables in the CXL-MEM data region.

Tables are stored one after another, row-major, with no padding: table ``t`` holds global rows
``[row_base[t], row_base[t] + rows[t])`` and global row ``g`` starts at byte
``base_B + g * row_B`` with ``row_B = dim * 4`` (fp32). Lines (the 256 B PMEM XPLine) and memory
controllers are derived from addresses by :mod:`cxlsim.kernels.access`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.kernels.embedding import EMBEDDING_DTYPE

#: Bytes per embedding element (fp32).
ELEMENT_B = np.dtype(EMBEDDING_DTYPE).itemsize


@dataclass(frozen=True)
class TableLayout:
    """Where every (table, row) lives. Build with :meth:`of` or :meth:`from_workload`."""

    rows: np.ndarray  # (tables,) int64 rows per table
    row_base: np.ndarray  # (tables,) int64 first global row id of each table
    row_B: int  # bytes per row
    base_B: int = 0  # byte address of the data region's first row

    @classmethod
    def of(cls, rows_per_table, dim: int, base_B: int = 0) -> TableLayout:
        rows = np.asarray(rows_per_table, dtype=np.int64)
        row_base = np.concatenate(([0], np.cumsum(rows)[:-1])).astype(np.int64)
        return cls(rows, row_base, int(dim) * ELEMENT_B, int(base_B))

    @classmethod
    def from_workload(cls, workload, row_scale: float = 1.0, base_B: int = 0) -> TableLayout:
        return cls.of(workload.rows_per_table_scaled(row_scale), workload.dim, base_B)

    @property
    def tables(self) -> int:
        return int(self.rows.size)

    @property
    def total_rows(self) -> int:
        return int(self.rows.sum())

    @property
    def total_B(self) -> int:
        return self.total_rows * self.row_B

    def global_row(self, table, row):
        """Global row id of ``row`` of ``table`` (scalars or broadcastable arrays)."""
        return self.row_base[table] + row

    def address_B(self, table, row):
        """Byte address of the first byte of ``row`` of ``table``."""
        return self.base_B + self.global_row(table, row) * self.row_B

    def table_of(self, global_row):
        """Table holding a global row id (scalar or array)."""
        return np.searchsorted(self.row_base, global_row, side="right") - 1

    def tables_reversed(self, rows: np.ndarray) -> np.ndarray:
        """Ascending global ``rows`` regrouped last table first, ascending within each table
        (the order of an update that runs the tables in reverse of the lookup's)."""
        cuts = np.searchsorted(rows, self.row_base[1:])
        return np.concatenate(np.split(rows, cuts)[::-1]) if rows.size else rows

    def line_of(self, table, row, line_B: int = 256):
        """Line id (``address // line_B``) of the first byte of ``row`` of ``table``."""
        return self.address_B(table, row) // line_B
