"""Kernels of the input generator: bounded power-law ranks and a keyed row permutation.

Popularity: rank ``k`` (0 = hottest) of a table with ``n`` rows is drawn from the continuous
power law ``p(x) ∝ x**-s`` on ``[1, n + 1)`` by inverse CDF and floored (``k = floor(x) - 1``), so
``P(k) ≈ ((k+1)**(1-s) - (k+2)**(1-s)) / (1 - (n+1)**(1-s))`` — a Zipf-like law with exponent ``s``
that needs no table of size ``n``.

Row ids: rank ``k`` is mapped to row ``perm(k)``, a bijection of ``[0, n)`` built from a
:data:`FEISTEL_ROUNDS`-round balanced Feistel network on the smallest even number of bits covering
``n``, with cycle-walking (re-apply until the value falls below ``n``; the domain is < 4n, so on
average fewer than 4 walks). Nothing of size ``n`` is ever materialised.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Feistel rounds; 4 rounds of a good round function give a pseudo-random permutation (Luby–Rackoff).
FEISTEL_ROUNDS = 4
#: splitmix64 constants (Steele, Lea & Flood 2014): the round function's mixer.
GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
MIX_MUL_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_MUL_2 = np.uint64(0x94D049BB133111EB)
SHIFT_30 = np.uint64(30)
SHIFT_27 = np.uint64(27)
SHIFT_31 = np.uint64(31)
#: Exponents closer to 1 than this use the s == 1 closed form (log-uniform) to avoid 0/0.
EXPONENT_ONE_TOL = 1e-9


@njit(cache=True)
def _mix64(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> SHIFT_30)) * MIX_MUL_1
    z = (z ^ (z >> SHIFT_27)) * MIX_MUL_2
    return z ^ (z >> SHIFT_31)


@njit(cache=True)
def feistel_half_bits(n: int) -> int:
    """Half the width, in bits, of the Feistel domain for ``n`` values (domain = 4**half >= n)."""
    half = 1
    while (np.int64(1) << (2 * half)) < n:
        half += 1
    return half


@njit(cache=True)
def feistel_permute(x: np.ndarray, n: int, key: np.uint64) -> np.ndarray:
    """Apply the keyed bijection of ``[0, n)`` to every element of ``x`` (each in ``[0, n)``)."""
    half = feistel_half_bits(n)
    hb = np.uint64(half)
    mask = (np.uint64(1) << hb) - np.uint64(1)
    un = np.uint64(n)
    out = np.empty(x.size, np.int64)
    for i in range(x.size):
        y = np.uint64(x[i])
        while True:
            left = y >> hb
            right = y & mask
            for r in range(FEISTEL_ROUNDS):
                f = _mix64(right ^ (key + np.uint64(r + 1) * GOLDEN_GAMMA)) & mask
                left, right = right, left ^ f
            y = (left << hb) | right
            if y < un:
                break
        out[i] = np.int64(y)
    return out


@njit(cache=True)
def feistel_inverse(y: np.ndarray, n: int, key: np.uint64) -> np.ndarray:
    """The inverse of :func:`feistel_permute`: the rank of every row of ``y`` (each in ``[0, n)``).
    Each round undone in reverse order, then cycle-walked back until the value falls below ``n``
    (the forward walk's first value below ``n`` is the row; every value it stepped over is ``≥ n``)."""
    half = feistel_half_bits(n)
    hb = np.uint64(half)
    mask = (np.uint64(1) << hb) - np.uint64(1)
    un = np.uint64(n)
    out = np.empty(y.size, np.int64)
    for i in range(y.size):
        x = np.uint64(y[i])
        while True:
            left = x >> hb
            right = x & mask
            for r in range(FEISTEL_ROUNDS - 1, -1, -1):
                f = _mix64(left ^ (key + np.uint64(r + 1) * GOLDEN_GAMMA)) & mask
                left, right = right ^ f, left
            x = (left << hb) | right
            if x < un:
                break
        out[i] = np.int64(x)
    return out


@njit(cache=True)
def power_law_ranks(u: np.ndarray, n: int, exponent: float) -> np.ndarray:
    """Ranks in ``[0, n)`` from uniforms ``u`` in ``[0, 1)`` under the bounded power law above."""
    out = np.empty(u.size, np.int64)
    top = float(n + 1)
    if abs(exponent - 1.0) < EXPONENT_ONE_TOL:
        log_top = np.log(top)
        for i in range(u.size):
            k = np.int64(np.exp(u[i] * log_top)) - 1
            out[i] = min(max(k, 0), n - 1)
    else:
        a = 1.0 - exponent
        span = top**a - 1.0
        inv = 1.0 / a
        for i in range(u.size):
            k = np.int64((1.0 + u[i] * span) ** inv) - 1
            out[i] = min(max(k, 0), n - 1)
    return out


@njit(cache=True)
def draw_table(
    prev: np.ndarray, v: np.ndarray, n: int, exponent: float, key: np.uint64, copy_fraction: float
) -> np.ndarray:
    """One table's row indices for one batch.

    Position ``i`` with a previous row (``i < prev.size``) copies ``prev[i]`` when ``v[i] <
    copy_fraction = c``, else draws a fresh row from the rescaled uniform ``(v[i] - c) / (1 - c)``;
    a position without one (``prev`` empty, or shorter than this batch: variable bags) draws from
    ``v[i]``.
    """
    m = v.size
    out = np.empty(m, np.int64)
    k = min(prev.size, m) if copy_fraction > 0.0 else 0
    c = copy_fraction
    scale = 1.0 / (1.0 - c) if c < 1.0 else 0.0
    fresh_pos = np.empty(m, np.int64)
    fresh_u = np.empty(m, np.float64)
    nf = 0
    for i in range(m):
        if i < k and v[i] < c:
            out[i] = prev[i]
        else:
            fresh_pos[nf] = i
            fresh_u[nf] = (v[i] - c) * scale if i < k else v[i]
            nf += 1
    rows = feistel_permute(power_law_ranks(fresh_u[:nf], n, exponent), n, key)
    for j in range(nf):
        out[fresh_pos[j]] = rows[j]
    return out
