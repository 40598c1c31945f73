"""Batch-aware undo log (docs/design.md#batch-aware-undo-log): copy the rows a batch will update,
and put them back.

``rows`` are a batch's unique rows of one table (any order; duplicates are harmless); the log is a
``(len(rows), dim)`` float32 buffer in the same order.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def undo_log_save(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """A new log buffer holding ``weights[rows]``."""
    dim = weights.shape[1]
    log = np.empty((rows.size, dim), weights.dtype)
    for i in range(rows.size):
        r = rows[i]
        for d in range(dim):
            log[i, d] = weights[r, d]
    return log


@njit(cache=True)
def undo_log_restore(weights: np.ndarray, rows: np.ndarray, log: np.ndarray) -> None:
    """Write the logged rows back into ``weights`` IN PLACE."""
    dim = weights.shape[1]
    for i in range(rows.size):
        r = rows[i]
        for d in range(dim):
            weights[r, d] = log[i, d]


def undo_log_save_ref(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Numpy reference of :func:`undo_log_save`."""
    return weights[rows].copy()


def undo_log_restore_ref(weights: np.ndarray, rows: np.ndarray, log: np.ndarray) -> None:
    """Numpy reference of :func:`undo_log_restore`."""
    weights[rows] = log
