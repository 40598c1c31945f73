"""Seeded, deterministic sources of the functional training run: initial parameters and gradients.

Gradients do not depend on the model state: the run under test and its fault-free reference see the
same gradients whatever happened in between, so a recovered state that equals the reference after
batch ``m`` resumes bit-identically (docs/design.md#crash-and-recovery). Every stream is a child of
one seed sequence per seed (:func:`cxlsim.rng.keyed`), numbered by the constants below (fixed
forever).
"""

from __future__ import annotations

import numpy as np

from cxlsim.rng import keyed_stream

STREAM_INIT_TABLES, STREAM_INIT_MLP, STREAM_EMB_GRADS, STREAM_MLP_GRADS = 10, 11, 12, 13
#: Initial embedding values are uniform in ±INIT_TABLE_RANGE (DLRM draws U(±sqrt(1/rows)); a fixed
#: range keeps scaled and full tables alike).
INIT_TABLE_RANGE = 0.05
INIT_MLP_STD = 0.05
#: Learning rate of the MLP's SGD step (the embedding update uses the workload's learning_rate).
MLP_LEARNING_RATE = 0.01


_rng = keyed_stream


def initial_tables(seed: int, rows: int, dim: int, out: np.ndarray) -> None:
    """Fill ``out`` ``(rows, dim)`` float32 with the initial embedding tables."""
    rng = _rng(seed, STREAM_INIT_TABLES)
    out[:] = rng.uniform(-INIT_TABLE_RANGE, INIT_TABLE_RANGE, size=(rows, dim)).astype(np.float32)


def initial_mlp(seed: int, n: int, out: np.ndarray) -> None:
    """Fill ``out`` ``(n,)`` float32 with the initial MLP parameters (flat)."""
    out[:] = (_rng(seed, STREAM_INIT_MLP).standard_normal(n, dtype=np.float32) * np.float32(INIT_MLP_STD))


def embedding_grads(seed: int, batch: int, tables: int, batch_size: int, dim: int) -> np.ndarray:
    """Per-bag gradients of batch ``batch``: ``(tables, batch_size, dim)`` float32."""
    return _rng(seed, STREAM_EMB_GRADS, batch).standard_normal((tables, batch_size, dim), dtype=np.float32)


def mlp_grads(seed: int, batch: int, n: int) -> np.ndarray:
    """Flat MLP gradient of batch ``batch``: ``(n,)`` float32."""
    return _rng(seed, STREAM_MLP_GRADS, batch).standard_normal(n, dtype=np.float32)
