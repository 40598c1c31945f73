"""Criteo-like sparse input streams, batch by batch, seeded and reproducible
(docs/design.md#workloads).

For each table ``t`` (``n_t`` rows) and batch, every lookup position (the table's lookups in the
batch, bag after bag) either

- copies the row at the same position of the previous batch's lookups, with probability
  ``reuse_prev_fraction`` (FBGEMM's request generator uses the same ``reuse`` mechanism), or
- draws a fresh row: a popularity rank from a bounded power law with exponent
  ``popularity_exponent`` (:func:`cxlsim.kernels.sampling.power_law_ranks`), mapped to a row id by
  a keyed Feistel bijection of ``[0, n_t)`` (:func:`cxlsim.kernels.sampling.feistel_permute`), so hot
  rows are scattered over the table and nothing of size ``n_t`` is materialised. A position the
  previous batch did not have (it made fewer lookups) always draws.

Bags (one sample's lookups in one table; docs/workloads.md, "Readings the paper leaves open"): with
``bag_size: fixed`` every bag draws ``L = lookups_per_table`` positions; with ``dlrm_uniform``
``k = round(max(1, r·min(n_t, L)))`` of them, ``r`` uniform in [0, 1) per (batch, table, sample), as
the DLRM benchmark draws them ([dlrm-repo], ``dlrm_data_pytorch.py``); with ``per_table`` every bag
of table ``t`` draws ``table_bag_sizes[t]`` (MLPerf DLRM-DCNv2's multi-hot sizes; no random draw, so
the bag sizes' stream is not used). With ``bag_dedup`` a bag then looks up its distinct rows,
ascending (the benchmark's ``np.unique``); the next batch copies from the positions as drawn (before
de-duplication), so every position keeps the power law's popularity whatever the reading. Positions
are exchangeable (the samples are), so copying by position keeps the reuse knob's meaning, a
fraction of the draws, under every reading; ``fixed``
without ``bag_dedup`` is the stream as it was before the readings existed, draw for draw.

Randomness: one seed sequence per ``seed`` (:func:`cxlsim.rng.keyed`); its children give the per-table
permutation keys, the index stream, the dense-feature stream and the bag sizes' stream (independent
of each other).
Memory: only the current and previous batch's indices are held (RM2 full size: 2 × 26 MB).

``row_scale`` in (0, 1] shrinks every table (rows rounded, at least 1) keeping the exponent, the
reuse knob and the batch shape: functional runs materialise tables at this scale.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cxlsim.arrays import unique as sorted_unique
from cxlsim.kernels.sampling import draw_table
from cxlsim.rng import keyed, keyed_stream

#: Child-stream numbers under the user's seed (fixed forever: they define the streams).
STREAM_KEYS, STREAM_INDICES, STREAM_DENSE = 0, 1, 2
#: The bag sizes' stream (``bag_size: dlrm_uniform``); 3 is the device streams'.
STREAM_BAGS = 4


@dataclass(frozen=True)
class Batch:
    """One batch of inputs, DLRM-style: indices and per-table bag offsets.

    ``indices`` holds every table's local row ids in one array, table-major: table ``t``'s are
    ``indices[table_starts[t]:table_starts[t + 1]]``, sample-major within it; ``offsets[t]``
    (``batch_size + 1`` per table, relative to the table's start) gives its bags: sample ``b``'s bag
    is ``table(t)[offsets[t, b]:offsets[t, b + 1]]``. With fixed bags every table has
    ``batch_size × lookups_per_table`` lookups and every bag ``lookups_per_table``; with per-table
    bags table ``t`` has ``batch_size × table_bag_sizes[t]``. ``dense`` is
    ``(batch_size, dense_features)`` float32 (log-normal-like, standing in for Criteo's
    log-transformed counts) or None.
    """

    number: int
    indices: np.ndarray  # (lookups of all tables,) int64
    table_starts: np.ndarray  # (tables + 1,) int64
    offsets: np.ndarray  # (tables, batch_size + 1) int64
    dense: np.ndarray | None

    @property
    def batch_size(self) -> int:
        return self.offsets.shape[1] - 1

    @property
    def tables(self) -> int:
        return self.offsets.shape[0]

    def table(self, t: int) -> np.ndarray:
        """Table ``t``'s lookups (local row ids), sample-major."""
        return self.indices[self.table_starts[t] : self.table_starts[t + 1]]

    def bag(self, table: int, sample: int) -> np.ndarray:
        o = self.offsets[table]
        return self.table(table)[o[sample] : o[sample + 1]]

    @property
    def bag_sizes(self) -> np.ndarray:
        """Lookups per bag, ``(tables, batch_size)``."""
        return np.diff(self.offsets, axis=1)


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
    rng_bags = keyed_stream(seed, STREAM_BAGS)
    bag_max = workload.max_bag_sizes  # fixed: L each; per_table: table_bag_sizes
    rect = p.bag_size == "fixed" and not p.bag_dedup
    fixed_offsets = np.arange(0, m + 1, lookups, dtype=np.int64)
    rect_offsets = np.broadcast_to(fixed_offsets, (tables, bsz + 1))
    rect_starts = np.arange(tables + 1, dtype=np.int64) * m
    for a in (rect_offsets, rect_starts):
        a.setflags(write=False)
    empty = np.empty(0, np.int64)
    prev: list[np.ndarray] | np.ndarray | None = None
    number = 0
    while n is None or number < n:
        if rect:
            out = np.empty((tables, m), np.int64)
            for t in range(tables):
                v = rng_idx.random(m)
                out[t] = draw_table(empty if prev is None else prev[t], v, int(rows[t]),
                                    float(p.popularity_exponent), keys[t], float(p.reuse_prev_fraction))
            out.setflags(write=False)
            flat, starts, offsets, prev = out.reshape(-1), rect_starts, rect_offsets, out
        else:
            parts, drawn, offsets = [], [], np.zeros((tables, bsz + 1), np.int64)
            for t in range(tables):
                sizes = (dlrm_bag_sizes(rng_bags.random(bsz), int(rows[t]), lookups)
                         if p.bag_size == "dlrm_uniform" else np.full(bsz, bag_max[t], np.int64))
                v = rng_idx.random(int(sizes.sum()))
                idx = draw_table(empty if prev is None else prev[t], v, int(rows[t]),
                                 float(p.popularity_exponent), keys[t], float(p.reuse_prev_fraction))
                drawn.append(idx)
                if p.bag_dedup:
                    idx, sizes = dedup_bags(idx, sizes)
                parts.append(idx)
                np.cumsum(sizes, out=offsets[t, 1:])
            starts = np.zeros(tables + 1, np.int64)
            np.cumsum([a.size for a in parts], out=starts[1:])
            flat = np.concatenate(parts)
            prev = drawn
            for a in (flat, starts, offsets):
                a.setflags(write=False)
        feats = dense_batch(rng_dense, bsz, p.dense_features) if dense else None
        yield Batch(number, flat, starts, offsets, feats)
        number += 1


def dense_batch(rng: np.random.Generator, batch_size: int, features: int) -> np.ndarray:
    """One batch's dense features, ``(batch_size, features)`` float32: ``log1p`` of exponential draws
    from the dense stream ``rng`` (standing in for Criteo's log-transformed counts)."""
    return np.log1p(rng.exponential(1.0, size=(batch_size, features))).astype(np.float32)


def dlrm_bag_sizes(r: np.ndarray, rows: int, lookups: int) -> np.ndarray:
    """Bag sizes as the DLRM benchmark draws them without ``--num-indices-per-lookup-fixed``:
    ``np.round(max(1, r·min(rows, lookups)))`` for each ``r`` in [0, 1) (round half to even, as
    ``np.round``)."""
    return np.round(np.maximum(1.0, r * min(rows, lookups))).astype(np.int64)


def dedup_bags(idx: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each bag's distinct rows, ascending (``np.unique`` per bag, as the DLRM benchmark keeps
    them), of one table's lookups ``idx`` in bags of ``sizes``; returns them and the new sizes."""
    bsz = sizes.size
    sample = np.repeat(np.arange(bsz, dtype=np.int64), sizes)
    span = int(idx.max()) + 1 if idx.size else 1
    key = sorted_unique(sample * span + idx)  # ascending by (sample, row)
    return key % span, np.bincount(key // span, minlength=bsz).astype(np.int64)
