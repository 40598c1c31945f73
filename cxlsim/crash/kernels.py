"""Numba kernels of the crash checker: applying write events to a byte image (whole, or torn at
64 B granularity with an undo journal), checking restored rows against a reference state, and
matching MLP log chunks to reference states.

Arrays only: ``img`` is the durable image (uint8), ``pool`` the payload buffer (uint8); events are
given by their segment ranges (``seg_lo``/``seg_hi``) into flat ``seg_dst``/``seg_src``/
``seg_len``. :func:`landed` and :func:`apply_torn` have plain-Python references (``*_ref``); the
checks (:func:`restore_check`, :func:`mlp_chunk_states`, :func:`apply_events`' mismatch flags) are
held by the tests to small worked cases and, point by point, to the materialised comparison of
:meth:`cxlsim.crash.checker.Checker.evaluate_slow`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cxlsim.kernels.jit import refcount_free_jit

#: In-flight writes are torn at this granularity (docs/design.md#crash-and-recovery;
#: cxlsim.devices.memory.media.media.TORN_GRANULE_B).
TORN_GRANULE_B = 64
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@refcount_free_jit
def mix64(x: np.uint64) -> np.uint64:
    """SplitMix64's finaliser: a well-spread 64-bit hash."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@refcount_free_jit
def landed(key: np.uint64, event: int, granule: int) -> bool:
    """Did 64 B granule ``granule`` (address // 64) of in-flight ``event`` reach the media?
    A seeded coin per (crash key, event, granule)."""
    h = mix64(key ^ mix64(np.uint64(event) * _GOLDEN + np.uint64(granule)))
    return (h >> np.uint64(63)) == np.uint64(1)


@refcount_free_jit
def differs(img, img64, a, pool, pool64, b, n) -> bool:
    """Do ``img[a:a+n]`` and ``pool[b:b+n]`` differ? ``img64``/``pool64`` are the same buffers
    viewed as uint64, used when all three are multiples of 8 (no early exit: the loop vectorises)."""
    if ((a | b | n) & 7) == 0:
        acc = np.uint64(0)
        wa, wb = a >> 3, b >> 3
        for i in range(n >> 3):
            acc |= img64[wa + i] ^ pool64[wb + i]
        return acc != 0
    acc8 = np.uint8(0)
    for i in range(n):
        acc8 |= img[a + i] ^ pool[b + i]
    return acc8 != 0


@refcount_free_jit
def row_differs(img: np.ndarray, a: int, pool: np.ndarray, b: int, n: int) -> bool:
    """:func:`differs` for one call (buffers whose sizes are multiples of 8)."""
    return differs(img, img.view(np.uint64), a, pool, pool.view(np.uint64), b, n)


@refcount_free_jit
def count_at(flags: np.ndarray, rows: np.ndarray) -> int:
    """Number of true ``flags[rows[i]]``."""
    k = 0
    for i in range(rows.size):
        if flags[rows[i]]:
            k += 1
    return k


@refcount_free_jit
def read_i64(img: np.ndarray, a: int) -> int:
    """The little-endian int64 at byte ``a``."""
    v = np.uint64(0)
    for i in range(8):
        v |= np.uint64(img[a + i]) << np.uint64(8 * i)
    return np.int64(v)


@njit(cache=True)  # slice assignment: needs numba's reference counting
def apply_events(img, pool, lo, hi, seg_lo, seg_hi, seg_dst, seg_src, seg_len, ev_region, region_count,
                 data_end, row_B, ref_offs, mis, cnt):
    """Apply events ``lo … hi−1`` (ack order) whole. For data-region bytes (``< data_end``), keep
    ``mis[j, row]`` = (row differs from the reference state at pool offset ``ref_offs[j]``) and
    ``cnt[j]`` = its number of true entries up to date."""
    img64, pool64 = img.view(np.uint64), pool.view(np.uint64)
    for e in range(lo, hi):
        region_count[ev_region[e]] += 1
        for s in range(seg_lo[e], seg_hi[e]):
            d, src, n = seg_dst[s], seg_src[s], seg_len[s]
            img[d:d + n] = pool[src:src + n]
            if d < data_end and ref_offs.size:
                for r in range(d // row_B, (min(d + n, data_end) - 1) // row_B + 1):
                    for j in range(ref_offs.size):
                        diff = differs(img, img64, r * row_B, pool, pool64, ref_offs[j] + r * row_B, row_B)
                        if diff != mis[j, r]:
                            mis[j, r] = diff
                            cnt[j] += 1 if diff else -1


@refcount_free_jit
def mismatch_rows(img, pool, ref_off, n_rows, row_B, out):
    """``out[r]`` = row ``r`` of the data region (at address 0) differs from the reference state at
    pool offset ``ref_off``; returns the number of differing rows."""
    img64, pool64 = img.view(np.uint64), pool.view(np.uint64)
    k = 0
    for r in range(n_rows):
        out[r] = differs(img, img64, r * row_B, pool, pool64, ref_off + r * row_B, row_B)
        if out[r]:
            k += 1
    return k


@njit(cache=True)  # slice assignment: needs numba's reference counting
def apply_torn(img, pool, events, seg_lo, seg_hi, seg_dst, seg_src, seg_len, ev_region, key,
               j_addr, j_len, j_bytes, region_touched, data_end, row_B, rows_touched):
    """Land the chosen 64 B pieces of in-flight ``events``; save overwritten bytes in the journal
    (``j_addr``/``j_len``/``j_bytes``, ``TORN_GRANULE_B`` bytes per entry). Marks touched regions
    and lists touched data rows. Returns (journal entries, rows listed, pieces landed, pieces)."""
    nj = 0
    nr = 0
    n_land = 0
    n_all = 0
    for i in range(events.size):
        e = events[i]
        for s in range(seg_lo[e], seg_hi[e]):
            d, src, n = seg_dst[s], seg_src[s], seg_len[s]
            g0 = d // TORN_GRANULE_B
            g1 = (d + n - 1) // TORN_GRANULE_B
            for g in range(g0, g1 + 1):
                a = max(d, g * TORN_GRANULE_B)
                b = min(d + n, (g + 1) * TORN_GRANULE_B)
                n_all += 1
                if not landed(key, e, g):
                    continue
                n_land += 1
                j_addr[nj] = a
                j_len[nj] = b - a
                base = nj * TORN_GRANULE_B
                j_bytes[base:base + b - a] = img[a:b]
                nj += 1
                img[a:b] = pool[src + (a - d):src + (b - d)]
                region_touched[ev_region[e]] = True
                if a < data_end:
                    rows_touched[nr] = a // row_B
                    nr += 1
    return nj, nr, n_land, n_all


@njit(cache=True)  # slice assignment: needs numba's reference counting
def revert_journal(img, nj, j_addr, j_len, j_bytes):
    """Undo :func:`apply_torn` (entries in reverse order)."""
    for i in range(nj - 1, -1, -1):
        a, n = j_addr[i], j_len[i]
        base = i * TORN_GRANULE_B
        img[a:a + n] = j_bytes[base:base + n]


@refcount_free_jit
def restore_check(img, ids_off, vals_off, nrows, pool, ref_off, row_B, total_rows, seen, out_rows):
    """Undo-log / redo-record restore, checked without materialising the table.

    Restores ``k`` are applied in order (``ids_off[k]``: int64 row ids, ``vals_off[k]``: rows of
    ``row_B`` bytes, ``nrows[k]`` of them; a later write of a row wins). Returns
    ``(n_rows, n_bad, first_bad, err)``: the distinct rows written (listed in ``out_rows``), how many
    of them end different from the reference state at pool offset ``ref_off``, the lowest such row
    (−1 if none) and ``err`` = 1 if a row id is out of range (nothing else is valid then).
    ``seen`` (bool, one per row) must be all False and is left so.
    """
    img64, pool64 = img.view(np.uint64), pool.view(np.uint64)
    k = 0
    n_bad = 0
    first_bad = -1
    err = 0
    for q in range(ids_off.size - 1, -1, -1):
        for i in range(nrows[q] - 1, -1, -1):
            r = read_i64(img, ids_off[q] + 8 * i)
            if r < 0 or r >= total_rows:
                err = 1
                break
            if seen[r]:
                continue
            seen[r] = True
            out_rows[k] = r
            k += 1
            if differs(img, img64, vals_off[q] + i * row_B, pool, pool64, ref_off + r * row_B, row_B):
                n_bad += 1
                if first_bad < 0 or r < first_bad:
                    first_bad = r
        if err:
            break
    for i in range(k):
        seen[out_rows[i]] = False
    return k, n_bad, first_bad, err


@njit(cache=True)  # allocates its result: needs numba's reference counting
def mlp_chunk_states(img, off, n_params, chunk, pool, mlp_offs, m, claimed):
    """For each ``chunk``-parameter chunk of the MLP image at ``off``: the reference state it
    equals, tried first at ``claimed[c]`` then from batch ``m`` down to −1 (``mlp_offs[x + 1]`` is
    the pool offset of the MLP after batch x); −2 where none ≤ m matches."""
    img64, pool64 = img.view(np.uint64), pool.view(np.uint64)
    n_chunks = (n_params + chunk - 1) // chunk
    out = np.full(n_chunks, -2, np.int64)
    for c in range(n_chunks):
        lo = c * chunk * 4
        n = (min(n_params, (c + 1) * chunk) - c * chunk) * 4
        x0 = claimed[c]
        if -1 <= x0 <= m and not differs(img, img64, off + lo, pool, pool64, mlp_offs[x0 + 1] + lo, n):
            out[c] = x0
            continue
        for x in range(m, -2, -1):
            if not differs(img, img64, off + lo, pool, pool64, mlp_offs[x + 1] + lo, n):
                out[c] = x
                break
    return out


def landed_ref(key: int, event: int, granule: int) -> bool:
    """Plain-Python reference of :func:`landed`."""
    mask = (1 << 64) - 1

    def mix(x: int) -> int:
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    h = mix(key ^ mix((event * 0x9E3779B97F4A7C15 + granule) & mask))
    return (h >> 63) == 1


def apply_torn_ref(img: np.ndarray, pool: np.ndarray, events, ev, key: int) -> int:
    """Plain-Python reference of :func:`apply_torn` (no journal); returns pieces landed."""
    n_land = 0
    for e in events:
        for s in range(ev.seg_lo[e], ev.seg_hi[e]):
            d, src, n = int(ev.seg_dst[s]), int(ev.seg_src[s]), int(ev.seg_len[s])
            for g in range(d // TORN_GRANULE_B, (d + n - 1) // TORN_GRANULE_B + 1):
                a, b = max(d, g * TORN_GRANULE_B), min(d + n, (g + 1) * TORN_GRANULE_B)
                if landed_ref(key, int(e), g):
                    img[a:b] = pool[src + a - d:src + b - d]
                    n_land += 1
    return n_land
