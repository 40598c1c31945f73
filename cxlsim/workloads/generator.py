"""Criteo-like sparse input streams, batch by batch, seeded and reproducible (SPEC §4).

For each table ``t`` (``n_t`` rows) and batch, every lookup position (``batch_size ×
lookups_per_table`` of them, fixed-length bags) either

- copies the row at the same position of the previous batch, with probability
  ``reuse_prev_fraction`` (FBGEMM's request generator uses the same ``reuse`` mechanism), or
- draws a fresh row: a popularity rank from a bounded power law with exponent
  ``popularity_exponent`` (:func:`cxlsim.kernels.sampling.power_law_ranks`), mapped to a row id by
  a keyed Feistel bijection of ``[0, n_t)`` (:func:`cxlsim.kernels.sampling.feistel_permute`), so hot
  rows are scattered over the table and nothing of size ``n_t`` is materialised.

Randomness: one seed sequence per ``seed`` (:func:`cxlsim.rng.keyed`); its children give the per-table
permutation keys, the index stream and the dense-feature stream (independent of each other).
Memory: only the current and previous batch's indices are held (RM2 full size: 2 × 26 MB).

``row_scale`` in (0, 1] shrinks every table (rows rounded, at least 1) keeping the exponent, the
reuse knob and the batch shape: functional runs materialise tables at this scale.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cxlsim.kernels.sampling import draw_table
from cxlsim.rng import keyed, keyed_stream

#: Child-stream numbers under the user's seed (fixed forever: they define the streams).
STREAM_KEYS, STREAM_INDICES, STREAM_DENSE = 0, 1, 2


@dataclass(frozen=True)
class Batch:
    """One batch of inputs.

    ``indices[t]`` holds table ``t``'s local row ids, ``batch_size × lookups`` of them, sample-major
    (sample ``b``'s bag is ``indices[t, b*L:(b+1)*L]``); ``offsets`` (``batch_size + 1``) gives the
    same bags DLRM-style and is shared by all tables. ``dense`` is ``(batch_size, dense_features)``
    float32 (log-normal-like, standing in for Criteo's log-transformed counts) or None.
    """

    number: int
    indices: np.ndarray  # (tables, batch_size * lookups) int64
    offsets: np.ndarray  # (batch_size + 1,) int64
    lookups: int
    dense: np.ndarray | None

    @property
    def batch_size(self) -> int:
        return self.offsets.size - 1

    @property
    def tables(self) -> int:
        return self.indices.shape[0]

    def bag(self, table: int, sample: int) -> np.ndarray:
        return self.indices[table, sample * self.lookups : (sample + 1) * self.lookups]


def table_keys(seed: int, tables: int) -> np.ndarray:
    """The per-table Feistel keys for ``seed`` (uint64)."""
    seq = keyed(seed, STREAM_KEYS)
    return seq.generate_state(tables, dtype=np.uint64)


def batches(
    workload,
    seed: int = 0,
    n: int | None = None,
    row_scale: float = 1.0,
    dense: bool = True,
) -> Iterator[Batch]:
    """Yield ``n`` batches (forever if None) of ``workload``'s inputs for ``seed``.

    The stream is a pure function of (workload parameters, seed, row_scale): batch ``k`` is the
    same whichever way it is consumed; ``dense=False`` skips dense features (the index stream is
    unchanged).
    """
    p = workload.params
    rows = np.asarray(workload.rows_per_table_scaled(row_scale), dtype=np.int64)
    tables, lookups, bsz = p.tables, p.lookups_per_table, p.batch_size
    m = bsz * lookups
    keys = table_keys(seed, tables)
    rng_idx = keyed_stream(seed, STREAM_INDICES)
    rng_dense = keyed_stream(seed, STREAM_DENSE)
    offsets = np.arange(0, m + 1, lookups, dtype=np.int64)
    offsets.setflags(write=False)
    empty = np.empty(0, np.int64)
    prev: np.ndarray | None = None
    number = 0
    while n is None or number < n:
        out = np.empty((tables, m), np.int64)
        for t in range(tables):
            v = rng_idx.random(m)
            out[t] = draw_table(empty if prev is None else prev[t], v, int(rows[t]),
                                float(p.popularity_exponent), keys[t], float(p.reuse_prev_fraction))
        feats = None
        if dense:
            feats = np.log1p(rng_dense.exponential(1.0, size=(bsz, p.dense_features))).astype(np.float32)
        out.setflags(write=False)
        yield Batch(number, out, offsets, lookups, feats)
        prev = out
        number += 1
