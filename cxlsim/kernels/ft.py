"""Failure-tolerance kernels: access counters, modified-row bit vectors, quantization, parity.

Pure numba functions over numpy arrays (no simulator objects). Each kernel ``name`` has a plain
numpy reference ``name_ref`` with the same contract; tests hold them together.

Contracts (units: element counts and array values; no time):

- ``count_accesses(indices, counters)``: ``counters[i] += 1`` for every ``i`` in ``indices``
  (CPR-MFU's 4-byte per-row counters); returns ``counters`` (updated in place).
- ``mark_modified(indices, bits)``: set bit ``i`` of the packed bit vector ``bits`` (uint8, bit
  ``i & 7`` of byte ``i >> 3``) for every ``i`` (Check-N-Run's modified-row tracking, 1 bit per row).
  ``count_bits(bits)`` counts set bits; ``unpack_bits(bits, n)`` gives a bool array.
- ``quantize_rows(x, bits, mode)`` quantizes every row (embedding vector) of ``x`` (float32, n × d)
  to ``bits`` bits: returns ``(q uint8 n × d, scale float32 n, offset float32 n)`` with
  ``x ≈ scale·q + offset`` (:func:`dequantize_rows`). ``mode``: :data:`SYMMETRIC` (range
  [−max|X|, max|X|]), :data:`ASYMMETRIC` (the row's own min..max), :data:`ADAPTIVE` (greedy
  range search of Check-N-Run: each step moves x_min up or x_max down by
  ``(X_max − X_min)/num_bins``, whichever lowers the ℓ2 error, for ``ratio·num_bins`` steps,
  keeping the best range).
- ``kmeans_rows(x, bits, iters)``: per-row 1-D k-means with ``2**bits`` centroids (codebook per
  row); returns ``(codes uint8, codebook float32 n × 2**bits)``.
- Parity (ECRec, k data units + 1 parity): ``parity_encode(data)`` sums the k rows of ``data``
  (k × m) in float64; ``parity_decode(parity, survivors)`` recovers the missing unit by
  subtraction; ``parity_server(stripe, servers)`` rotates the parity position RAID-5 style;
  ``apply_delta(parity, delta)`` is difference propagation (parity += new − old of one unit).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Quantization modes (ints so numba can branch on them).
SYMMETRIC = 0
ASYMMETRIC = 1
ADAPTIVE = 2
MODES = {"symmetric": SYMMETRIC, "asymmetric": ASYMMETRIC, "adaptive": ADAPTIVE}

#: Check-N-Run's adaptive search defaults: bins the range is divided into, fraction of bins searched.
ADAPTIVE_NUM_BINS = 200
ADAPTIVE_RATIO = 0.16

BITS_PER_BYTE = 8


# ----------------------------------------------------------------------------- access counters
@njit(cache=True)
def count_accesses(indices: np.ndarray, counters: np.ndarray) -> np.ndarray:
    for i in range(indices.shape[0]):
        counters[indices[i]] += 1
    return counters


def count_accesses_ref(indices: np.ndarray, counters: np.ndarray) -> np.ndarray:
    np.add.at(counters, indices, 1)
    return counters


# ----------------------------------------------------------------------------- bit vectors
def new_bit_vector(rows: int) -> np.ndarray:
    """A cleared bit vector for ``rows`` rows (uint8, ceil(rows/8) bytes)."""
    return np.zeros((rows + BITS_PER_BYTE - 1) // BITS_PER_BYTE, dtype=np.uint8)


@njit(cache=True)
def mark_modified(indices: np.ndarray, bits: np.ndarray) -> np.ndarray:
    for i in range(indices.shape[0]):
        r = indices[i]
        bits[r >> 3] |= np.uint8(1 << (r & 7))
    return bits


def mark_modified_ref(indices: np.ndarray, bits: np.ndarray) -> np.ndarray:
    flags = np.unpackbits(bits, bitorder="little").astype(bool)
    flags[np.asarray(indices, dtype=np.int64)] = True
    bits[:] = np.packbits(flags, bitorder="little")[: bits.shape[0]]
    return bits


@njit(cache=True)
def count_bits(bits: np.ndarray) -> int:
    total = 0
    for i in range(bits.shape[0]):
        b = bits[i]
        while b:
            total += b & 1
            b >>= 1
    return total


def count_bits_ref(bits: np.ndarray) -> int:
    return int(np.unpackbits(bits).sum())


def unpack_bits(bits: np.ndarray, rows: int) -> np.ndarray:
    return np.unpackbits(bits, bitorder="little")[:rows].astype(bool)


# ----------------------------------------------------------------------------- quantization
@njit(cache=True)
def _row_error(row: np.ndarray, lo: float, hi: float, levels: int) -> float:
    """Squared ℓ2 error of uniform quantization of ``row`` on [lo, hi] with ``levels`` steps."""
    scale = (hi - lo) / levels if hi > lo else 1.0
    err = 0.0
    for j in range(row.shape[0]):
        v = min(max(row[j], lo), hi)
        q = np.floor((v - lo) / scale + 0.5)
        d = row[j] - (scale * q + lo)
        err += d * d
    return err


@njit(cache=True)
def _adaptive_range(row: np.ndarray, levels: int, num_bins: int, ratio: float) -> tuple[float, float]:
    x_min = float(row.min())
    x_max = float(row.max())
    step = (x_max - x_min) / num_bins
    best_lo, best_hi = x_min, x_max
    best = _row_error(row, x_min, x_max, levels)
    lo, hi = x_min, x_max
    for _ in range(int(ratio * num_bins)):
        e_lo = _row_error(row, lo + step, hi, levels)
        e_hi = _row_error(row, lo, hi - step, levels)
        if e_lo < e_hi:
            lo += step
            cur = e_lo
        else:
            hi -= step
            cur = e_hi
        if cur < best:
            best, best_lo, best_hi = cur, lo, hi
    return best_lo, best_hi


@njit(cache=True)
def quantize_rows(x: np.ndarray, bits: int, mode: int, num_bins: int = ADAPTIVE_NUM_BINS,
                  ratio: float = ADAPTIVE_RATIO):
    n, d = x.shape
    levels = (1 << bits) - 1
    q = np.zeros((n, d), dtype=np.uint8)
    scale = np.zeros(n, dtype=np.float32)
    offset = np.zeros(n, dtype=np.float32)
    for i in range(n):
        row = x[i]
        if mode == SYMMETRIC:
            hi = float(np.abs(row).max())
            lo = -hi
        elif mode == ASYMMETRIC:
            lo = float(row.min())
            hi = float(row.max())
        else:
            lo, hi = _adaptive_range(row, levels, num_bins, ratio)
        s = (hi - lo) / levels if hi > lo else 1.0
        for j in range(d):
            v = min(max(float(row[j]), lo), hi)
            q[i, j] = np.uint8(np.floor((v - lo) / s + 0.5))
        scale[i] = s
        offset[i] = lo
    return q, scale, offset


def quantize_rows_ref(x: np.ndarray, bits: int, mode: int, num_bins: int = ADAPTIVE_NUM_BINS,
                      ratio: float = ADAPTIVE_RATIO):
    x = np.asarray(x, dtype=np.float64)
    levels = (1 << bits) - 1
    if mode == SYMMETRIC:
        hi = np.abs(x).max(axis=1)
        lo = -hi
    elif mode == ASYMMETRIC:
        lo, hi = x.min(axis=1), x.max(axis=1)
    else:
        lo, hi = np.empty(len(x)), np.empty(len(x))
        for i, row in enumerate(x):
            lo[i], hi[i] = _adaptive_range_ref(row, levels, num_bins, ratio)
    s = np.where(hi > lo, (hi - lo) / levels, 1.0)
    v = np.clip(x, lo[:, None], hi[:, None])
    q = np.floor((v - lo[:, None]) / s[:, None] + 0.5).astype(np.uint8)
    return q, s.astype(np.float32), lo.astype(np.float32)


def _row_error_ref(row, lo, hi, levels):
    s = (hi - lo) / levels if hi > lo else 1.0
    q = np.floor((np.clip(row, lo, hi) - lo) / s + 0.5)
    return float(((row - (s * q + lo)) ** 2).sum())


def _adaptive_range_ref(row, levels, num_bins, ratio):
    lo, hi = float(row.min()), float(row.max())
    step = (hi - lo) / num_bins
    best, best_lo, best_hi = _row_error_ref(row, lo, hi, levels), lo, hi
    for _ in range(int(ratio * num_bins)):
        e_lo = _row_error_ref(row, lo + step, hi, levels)
        e_hi = _row_error_ref(row, lo, hi - step, levels)
        if e_lo < e_hi:
            lo, cur = lo + step, e_lo
        else:
            hi, cur = hi - step, e_hi
        if cur < best:
            best, best_lo, best_hi = cur, lo, hi
    return best_lo, best_hi


@njit(cache=True)
def dequantize_rows(q: np.ndarray, scale: np.ndarray, offset: np.ndarray) -> np.ndarray:
    n, d = q.shape
    out = np.empty((n, d), dtype=np.float32)
    for i in range(n):
        for j in range(d):
            out[i, j] = scale[i] * np.float32(q[i, j]) + offset[i]
    return out


def dequantize_rows_ref(q, scale, offset):
    return (scale[:, None] * q.astype(np.float32) + offset[:, None]).astype(np.float32)


@njit(cache=True, inline="always")
def _nearest(c, v):
    """Index of the centroid in ``c`` nearest to ``v`` (the first on ties)."""
    best, bm = np.inf, 0
    for m in range(c.shape[0]):
        dist = abs(v - c[m])
        if dist < best:
            best, bm = dist, m
    return bm


@njit(cache=True)
def kmeans_rows(x: np.ndarray, bits: int, iters: int):
    """Per-row 1-D k-means (Lloyd), centroids initialised at the row's quantiles."""
    n, d = x.shape
    k = 1 << bits
    codes = np.zeros((n, d), dtype=np.uint8)
    book = np.zeros((n, k), dtype=np.float32)
    for i in range(n):
        srt = np.sort(x[i])
        c = np.empty(k)
        for m in range(k):
            c[m] = srt[min(d - 1, int((m + 0.5) * d / k))]
        for _ in range(iters):
            sums = np.zeros(k)
            cnts = np.zeros(k)
            for j in range(d):
                bm = _nearest(c, x[i, j])
                codes[i, j] = bm
                sums[bm] += x[i, j]
                cnts[bm] += 1
            for m in range(k):
                if cnts[m] > 0:
                    c[m] = sums[m] / cnts[m]
        for j in range(d):
            codes[i, j] = _nearest(c, x[i, j])
        for m in range(k):
            book[i, m] = c[m]
    return codes, book


def kmeans_dequantize(codes: np.ndarray, book: np.ndarray) -> np.ndarray:
    return np.take_along_axis(book, codes.astype(np.int64), axis=1)


def mean_l2_error(x: np.ndarray, y: np.ndarray) -> float:
    """Check-N-Run's metric: mean over vectors of the ℓ2 norm of the difference."""
    return float(np.linalg.norm(np.asarray(x, np.float64) - np.asarray(y, np.float64), axis=1).mean())


# ----------------------------------------------------------------------------- parity (ECRec)
@njit(cache=True)
def parity_encode(data: np.ndarray) -> np.ndarray:
    k, m = data.shape
    out = np.zeros(m, dtype=np.float64)
    for u in range(k):
        for j in range(m):
            out[j] += data[u, j]
    return out


def parity_encode_ref(data: np.ndarray) -> np.ndarray:
    return np.asarray(data, dtype=np.float64).sum(axis=0)


@njit(cache=True)
def parity_decode(parity: np.ndarray, survivors: np.ndarray) -> np.ndarray:
    out = parity.copy()
    for u in range(survivors.shape[0]):
        for j in range(out.shape[0]):
            out[j] -= survivors[u, j]
    return out


def parity_decode_ref(parity: np.ndarray, survivors: np.ndarray) -> np.ndarray:
    return parity - np.asarray(survivors, dtype=np.float64).sum(axis=0)


@njit(cache=True)
def apply_delta(parity: np.ndarray, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    for j in range(parity.shape[0]):
        parity[j] += new[j] - old[j]
    return parity


def parity_server(stripe: int, servers: int) -> int:
    """Server holding stripe ``stripe``'s parity: rotates backwards one server per stripe (RAID-5)."""
    return (servers - 1 - stripe) % servers


def stripe_layout(stripe: int, servers: int, k: int) -> tuple[list[int], int]:
    """(data servers, parity server) of ``stripe`` on ``servers`` servers with k data units."""
    if k + 1 > servers:
        raise ValueError(f"k + 1 = {k + 1} units need at least that many servers, got {servers}")
    p = parity_server(stripe, servers)
    data = [(p + 1 + u) % servers for u in range(k)]
    return data, p
