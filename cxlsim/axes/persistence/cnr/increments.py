"""Check-N-Run's increments, shared by the scheme (:mod:`.scheme`: timing) and its crash protocol
(:mod:`.crash`: recovery): which batches checkpoint, a row's quantised size and values, the union
of the rows modified since the last checkpoint."""

from __future__ import annotations

import math

import numpy as np

from cxlsim.units import FP32_B

QUANT_BITS = (0, 2, 3, 4, 8)
#: per quantised row: its min and scale, fp32 each
ROW_HEADER_B = 2 * FP32_B


def quant_row_B(row_B: int, bits: int) -> int:
    """Bytes one row takes in an increment: fp32 (``bits`` 0) or b-bit codes plus min and scale."""
    if bits == 0:
        return row_B
    return math.ceil(row_B // FP32_B * bits / 8) + ROW_HEADER_B


def quantise(rows: np.ndarray, bits: int) -> tuple[np.ndarray, float]:
    """Rows ``(n, dim)`` fp32 as recovery reads them back (dequantised, fp32) and the largest
    error it may show per element (0 for ``bits`` 0)."""
    if bits == 0 or rows.size == 0:
        return rows.copy(), 0.0
    x = rows.astype(np.float64)
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    scale = (hi - lo) / (2 ** bits - 1)
    q = np.round(np.divide(x - lo, scale, out=np.zeros_like(x), where=scale > 0))
    out = (scale * q + lo).astype(np.float32)
    bound = float(scale.max()) / 2 + float(np.abs(x).max()) * 2.0 ** -22  # half a step, plus fp32 rounding
    return out, bound


def is_checkpoint(p, n: int) -> bool:
    """Batch ``n`` ends an interval: its checkpoint is taken."""
    return (n + 1) % p.cnr_interval_batches == 0


def union_sorted(parts: list[np.ndarray]) -> np.ndarray:
    """The ascending distinct values of arrays each ascending and distinct (what ``np.unique`` of
    their concatenation gives): a stable sort merges the runs, then neighbours that repeat are
    dropped. ``np.unique`` hashes first, which took 0.3–6 s on RM2's five batches of rows."""
    if len(parts) == 1:
        return parts[0].copy()
    a = np.sort(np.concatenate(parts), kind="stable")
    keep = np.empty(a.size, np.bool_)
    keep[:1] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]
