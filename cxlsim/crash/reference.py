"""The fault-free functional training run: real tables, a flat MLP, seeded gradients.

Batch ``n`` (0 … N−1) applies the embedding SGD update of its sparse indices (numba kernel
:func:`~cxlsim.kernels.embedding.embedding_sgd_update`, one table at a time) and an SGD step of the
flat MLP. Every state is kept: ``table(m)`` / ``mlp(m)`` are the parameters after batch ``m``
(``m = -1``: the initial ones). With the relaxed lookup (docs/design.md#relaxed-embedding-lookup)
the run also pools batch ``n`` on the table before batch ``n−1``'s update, corrects it with that
update's deltas (:func:`~cxlsim.kernels.relaxed.relaxed_correction`) and records how far it is from
the dependent lookup (float32 rounding only).

All states live in one byte :class:`Pool`, which also holds every payload the persistence protocol
writes (row ids, flag lines), so a write event is a list of (destination, pool offset, length) copies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cxlsim.crash import sources
from cxlsim.kernels.embedding import embedding_bag_sum, embedding_sgd_update
from cxlsim.kernels.relaxed import relaxed_correction
from cxlsim.workloads.catalog import Workload
from cxlsim.workloads.generator import Batch
from cxlsim.workloads.layout import TableLayout
from cxlsim.workloads.source import input_batches

ALIGN_B = 64
#: Pool room for the protocol's own payloads (flag lines, chunk tables) beyond the reference's.
MISC_POOL_B = 1 << 20


class Pool:
    """A byte buffer with a bump allocator; offsets are ``ALIGN_B``-aligned."""

    def __init__(self, nbytes: int) -> None:
        self.buf = np.zeros(-(-int(nbytes) // ALIGN_B) * ALIGN_B, np.uint8)
        self.top = 0

    def alloc(self, nbytes: int) -> int:
        off = -(-self.top // ALIGN_B) * ALIGN_B
        if off + nbytes > self.buf.size:
            raise MemoryError(f"pool full: {off + nbytes} > {self.buf.size} bytes")
        self.top = off + int(nbytes)
        return off

    def reserve(self, nbytes: int) -> None:
        """Make room for ``nbytes`` more (the buffer may move: take views after reserving)."""
        need = -(-(self.top + int(nbytes) + ALIGN_B) // ALIGN_B) * ALIGN_B
        if need > self.buf.size:
            buf = np.zeros(need, np.uint8)
            buf[:self.top] = self.buf[:self.top]
            self.buf = buf

    def put(self, arr: np.ndarray) -> int:
        raw = np.ascontiguousarray(arr).view(np.uint8).ravel()
        off = self.alloc(raw.size)
        self.buf[off:off + raw.size] = raw
        return off

    def view(self, off: int, dtype, shape) -> np.ndarray:
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return self.buf[off:off + n].view(dtype).reshape(shape)


def train_step(table: np.ndarray, mlp: np.ndarray, batch: Batch, layout: TableLayout, seed: int,
               lr: float) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
    """Apply batch ``batch.number`` to ``table`` ``(rows, dim)`` and ``mlp`` IN PLACE.

    Returns the batch's ascending unique global rows and, per table, (local rows, deltas).
    """
    p_tables, bsz = batch.tables, batch.batch_size
    grads = sources.embedding_grads(seed, batch.number, p_tables, bsz, table.shape[1])
    per_table = []
    rows = []
    for t in range(p_tables):
        lo = int(layout.row_base[t])
        w = table[lo:lo + int(layout.rows[t])]
        local, deltas = embedding_sgd_update(w, batch.table(t), batch.offsets[t], grads[t], lr)
        per_table.append((local, deltas))
        rows.append(local + lo)
    g = sources.mlp_grads(seed, batch.number, mlp.size)
    mlp -= np.float32(sources.MLP_LEARNING_RATE) * g
    return np.concatenate(rows).astype(np.int64), per_table


def index_stream(workload: Workload, seed: int, n: int) -> Iterator[Batch]:
    """The run's sparse inputs (the same stream the timing model analyses)."""
    return input_batches(workload, seed=seed, n=n, dense=False)


@dataclass
class Reference:
    """Every state of the fault-free run (see module docstring)."""

    workload: Workload
    layout: TableLayout
    seed: int
    n_batches: int
    mlp_n: int
    pool: Pool
    table_off: np.ndarray  # (N+1,) pool offset of the tables after batch i-1
    mlp_off: np.ndarray  # (N+1,)
    unique_rows: list[np.ndarray]  # per batch, ascending global rows the update writes
    ids_off: np.ndarray  # per batch, pool offset of unique_rows (int64)
    relaxed_max_abs_err: float | None = None

    @property
    def rows(self) -> int:
        return self.layout.total_rows

    @property
    def dim(self) -> int:
        return self.layout.row_B // 4

    @property
    def table_B(self) -> int:
        return self.layout.total_B

    def table_offset(self, m: int) -> int:
        return int(self.table_off[m + 1])

    def mlp_offset(self, m: int) -> int:
        return int(self.mlp_off[m + 1])

    def table(self, m: int) -> np.ndarray:
        """Tables after batch ``m`` (``-1``: initial), ``(rows, dim)`` float32 (a view: do not write)."""
        return self.pool.view(self.table_offset(m), np.float32, (self.rows, self.dim))

    def mlp(self, m: int) -> np.ndarray:
        return self.pool.view(self.mlp_offset(m), np.float32, (self.mlp_n,))


def run_reference(workload: Workload, seed: int, n_batches: int, mlp_n: int, relaxed_lookup: bool) -> Reference:
    """Run ``n_batches`` fault-free batches of ``workload`` (already scaled) and keep every state."""
    layout = TableLayout.from_workload(workload)
    p = workload.params
    per_batch = workload.lookups_per_batch
    ids_bound = n_batches * min(layout.total_rows, per_batch) * 8
    states_B = (n_batches + 1) * (layout.total_B + mlp_n * 4 + 2 * ALIGN_B)
    pool = Pool(states_B + ids_bound + n_batches * ALIGN_B + MISC_POOL_B)
    table_off = np.array([pool.alloc(layout.total_B) for _ in range(n_batches + 1)], np.int64)
    mlp_off = np.array([pool.alloc(mlp_n * 4) for _ in range(n_batches + 1)], np.int64)
    dim = p.dim
    shape = (layout.total_rows, dim)
    sources.initial_tables(seed, layout.total_rows, dim, pool.view(int(table_off[0]), np.float32, shape))
    sources.initial_mlp(seed, mlp_n, pool.view(int(mlp_off[0]), np.float32, (mlp_n,)))
    unique, ids_off = [], []
    prev_deltas = None
    max_err = 0.0 if relaxed_lookup else None
    for b in index_stream(workload, seed, n_batches):
        n = b.number
        table = pool.view(int(table_off[n + 1]), np.float32, shape)
        table[:] = pool.view(int(table_off[n]), np.float32, shape)
        mlp = pool.view(int(mlp_off[n + 1]), np.float32, (mlp_n,))
        mlp[:] = pool.view(int(mlp_off[n]), np.float32, (mlp_n,))
        if relaxed_lookup and prev_deltas is not None:
            before_prev = pool.view(int(table_off[n - 1]), np.float32, shape)
            after_prev = pool.view(int(table_off[n]), np.float32, shape)
            max_err = max(max_err, _relaxed_error(b, layout, before_prev, after_prev, prev_deltas))
        rows, prev_deltas = train_step(table, mlp, b, layout, seed, p.learning_rate)
        unique.append(rows)
        ids_off.append(pool.put(rows))
    return Reference(workload, layout, seed, n_batches, mlp_n, pool, table_off, mlp_off, unique,
                     np.asarray(ids_off, np.int64), max_err)


def _relaxed_error(b: Batch, layout: TableLayout, before_prev: np.ndarray, after_prev: np.ndarray,
                   prev: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Largest |relaxed-and-corrected − dependent| pooled element of batch ``b``
    (docs/design.md#relaxed-embedding-lookup)."""
    err = 0.0
    for t in range(b.tables):
        lo, hi = int(layout.row_base[t]), int(layout.row_base[t] + layout.rows[t])
        idx, off = b.table(t), b.offsets[t]
        relaxed = embedding_bag_sum(before_prev[lo:hi], idx, off)
        corrected = relaxed_correction(relaxed, idx, off, prev[t][0], prev[t][1])
        dependent = embedding_bag_sum(after_prev[lo:hi], idx, off)
        err = max(err, float(np.max(np.abs(corrected - dependent))) if corrected.size else 0.0)
    return err
