"""Crash kernels against their references: torn writes (64 B pieces, journal), restores, MLP chunks,
and the write spreading that puts flags after the data they cover."""

from __future__ import annotations

import numpy as np
import pytest

from cxlsim.crash import image as im
from cxlsim.crash import kernels as K
from cxlsim.crash.points import point_key
from cxlsim.crash.timeline import spread_writes


def _events(n_events: int = 12, seed: int = 0):
    """A small layout with burst, row and line writes, all in flight at t = 1.0."""
    rng = np.random.default_rng(seed)
    lay = im.Layout()
    lay.add("data", 64 * 128)
    lay.add("log", 4 * im.BURST_B)
    pool = rng.integers(0, 256, 1 << 16, dtype=np.uint8)
    log = im.WriteLog(lay)
    log.add(im.in_place(np.arange(0, 64 * 128, 128 * 5, dtype=np.int64), np.arange(13, dtype=np.int64) * 128, 128),
            0.5, 2.0, im.DATA, "update", 0)
    log.add(im.gathered(lay["log"].base, 8192 + np.arange(40, dtype=np.int64) * 96, 128), 0.25, 3.0, im.LOG, "log", 0)
    log.add(im.line(lay["log"].base + 3 * im.BURST_B, 40000), 0.9, 1.5, im.FLAG, "flag", 0)
    ev = log.finish()
    img = rng.integers(0, 256, lay.total_B, dtype=np.uint8)
    return lay, ev, pool, img


def _tear(img, pool, ev, fl, key):
    n = int(ev.size[fl].sum())
    j_addr, j_len = np.empty(n, np.int64), np.empty(n, np.int64)
    j_bytes = np.empty(n * K.TORN_GRANULE_B, np.uint8)
    touched = np.zeros(8, np.bool_)
    rows = np.empty(n, np.int64)
    out = K.apply_torn(img, pool, fl, ev.seg_lo, ev.seg_hi, ev.seg_dst, ev.seg_src, ev.seg_len, ev.region,
                       np.uint64(key), j_addr, j_len, j_bytes, touched, 64 * 128, 128, rows)
    return out, (j_addr, j_len, j_bytes)


def test_landed_matches_reference():
    for key in (0, 1, 0xDEADBEEF, (1 << 64) - 1):
        for e in (0, 5, 1 << 20):
            for g in (0, 7, 1 << 30):
                assert K.landed(np.uint64(key), e, g) == K.landed_ref(key, e, g)


@pytest.mark.slow
def test_torn_write_lands_whole_64B_pieces_and_the_journal_reverts_it():
    _, ev, pool, img = _events()
    fl = ev.in_flight(1.0)
    assert fl.size == len(ev)
    key = point_key(7, 1.0)
    before = img.copy()
    want = img.copy()
    landed_ref = K.apply_torn_ref(want, pool, fl, ev, int(key))
    (nj, _, n_land, n_all), journal = _tear(img, pool, ev, fl, key)
    assert np.array_equal(img, want) and n_land == landed_ref and 0 < n_land < n_all
    # every 64 B granule a write covers holds either all old or all new bytes
    final = before.copy()
    for e in fl:
        for s in range(ev.seg_lo[e], ev.seg_hi[e]):
            d, src, n = ev.seg_dst[s], ev.seg_src[s], ev.seg_len[s]
            final[d:d + n] = pool[src:src + n]
    for g in range(0, img.size, K.TORN_GRANULE_B):
        new, old, fin = img[g:g + 64], before[g:g + 64], final[g:g + 64]
        assert np.array_equal(new, old) or np.array_equal(new, fin)
    K.revert_journal(img, nj, *journal)
    assert np.array_equal(img, before)


def test_torn_choice_is_seeded_and_fair():
    _, ev, pool, img = _events()
    fl = ev.in_flight(1.0)
    outs = []
    for key in (point_key(1, 1.0), point_key(1, 1.0), point_key(2, 1.0)):
        x = img.copy()
        _tear(x, pool, ev, fl, key)
        outs.append(x)
    assert np.array_equal(outs[0], outs[1]) and not np.array_equal(outs[0], outs[2])
    hits = [K.landed(point_key(3, float(t)), 1, 9) for t in range(4000)]
    assert 0.45 < np.mean(hits) < 0.55


def test_in_flight_is_issued_and_not_yet_acknowledged():
    _, ev, _, _ = _events()
    assert ev.in_flight(0.1).size == 0
    assert set(ev.kind[ev.in_flight(1.7)]) == {im.DATA, im.LOG}  # the flag acked at 1.5
    assert ev.applied_before(1.5) == 1 and ev.in_flight(1.5).size == len(ev) - 1  # acked at t: durable


def test_restore_check_matches_materialised_restore():
    rng = np.random.default_rng(1)
    rows, row_B = 50, 32
    pool = rng.integers(0, 256, rows * row_B + 4096, dtype=np.uint8)
    ref_off = 4096
    img = np.zeros(8192, np.uint8)
    ids = np.array([3, 7, 3, 11], np.int64)  # row 3 twice: the later write wins
    img[0:32] = ids.view(np.uint8)
    vals = rng.integers(0, 256, (4, row_B), dtype=np.uint8)
    vals[2] = pool[ref_off + 3 * row_B:ref_off + 4 * row_B]  # correct final value of row 3
    vals[3] = pool[ref_off + 11 * row_B:ref_off + 12 * row_B]
    img[1024:1024 + 4 * row_B] = vals.ravel()
    seen = np.zeros(rows, np.bool_)
    out = np.empty(8, np.int64)
    k, n_bad, first, err = K.restore_check(img, np.array([0]), np.array([1024]), np.array([4]), pool, ref_off,
                                           row_B, rows, seen, out)
    assert (k, n_bad, first, err) == (3, 1, 7, 0) and sorted(out[:k]) == [3, 7, 11] and not seen.any()
    img[8:16] = np.array([rows], np.int64).view(np.uint8)  # out of range
    assert K.restore_check(img, np.array([0]), np.array([1024]), np.array([4]), pool, ref_off, row_B, rows,
                           seen, out)[3] == 1


def test_mlp_chunks_match_the_latest_equal_state():
    n, chunk = 2500, 1024
    states = [np.full(n, float(x), np.float32) for x in range(4)]  # after batches -1, 0, 1, 2
    pool = np.concatenate([s.view(np.uint8) for s in states] + [np.zeros(8, np.uint8)])
    offs = np.arange(4, dtype=np.int64) * n * 4
    img = np.concatenate([states[1][:1024], states[3][1024:2048], states[2][2048:]]).view(np.uint8)
    img = np.concatenate([img, np.zeros(-img.size % 8, np.uint8)])
    got = K.mlp_chunk_states(img, 0, n, chunk, pool, offs, 2, np.array([0, 0, 0], np.int64))
    assert list(got) == [0, 2, 1]
    assert list(K.mlp_chunk_states(img, 0, n, chunk, pool, offs, 1, np.array([0, 0, 0], np.int64))) == [0, -2, 1]


@pytest.mark.parametrize("k", [1, 2, 50])
def test_spread_writes_fences_the_flag_after_the_data(k):
    issue, ack, flag = spread_writes(100.0, 1000.0, k, 30.0, True)
    assert issue[0] == 100.0 and np.all(np.diff(issue) >= 0)
    assert ack.max() <= flag and flag + 30.0 == pytest.approx(1000.0)
    issue, ack, flag = spread_writes(100.0, 110.0, k, 30.0, True)  # too short: stretched, still fenced
    assert ack.max() <= flag
    issue, ack, flag = spread_writes(0.0, 500.0, k, 30.0, False)
    assert np.isnan(flag) and ack.max() <= 500.0 and (k == 1 or ack.max() == pytest.approx(500.0))
