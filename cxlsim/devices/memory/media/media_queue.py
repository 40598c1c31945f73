"""Media work on banks and the module's write queues: arrival-order ring and read-priority posted writes.

Split out of :mod:`cxlsim.devices.memory.media.media_kernel` (see its docstring for the mechanism).
"""

from __future__ import annotations

import numpy as np

from cxlsim.devices.memory.media.media_index import (
    F_D_RAND,
    F_D_SEQ,
    F_OCC_R,
    F_OCC_W,
    F_WEAR_STALL,
    I_WEAR_INTERVAL,
    NO_TIME,
    QUEUED,
)
from cxlsim.devices.memory.media.media_pending import _pend_find
from cxlsim.kernels.jit import refcount_free_jit


@refcount_free_jit(inline="always")
def _queue_replace_min(ring, head, m, value):
    """Replace the earliest entry of module ``m``'s write queue by ``value``. The queue is a ring
    kept sorted from ``head[m]`` (earliest) round to the entry before it (latest): the head is
    dropped, ``value`` goes in at the tail and moves toward the head past later entries (usually
    none: media work mostly completes in issue order). The kernel only needs the queue as a
    multiset (which entry frees first and its replacement), so this gives the same times as
    scanning for the first minimum."""
    k = ring.shape[1]
    j = head[m]  # the freed slot: the tail of the ring that now starts after it
    nh = j + 1 if j + 1 < k else 0
    head[m] = nh
    while j != nh:
        p = j - 1 if j > 0 else k - 1
        if ring[m, p] <= value:
            break
        ring[m, j] = ring[m, p]
        j = p
    ring[m, j] = value


@refcount_free_jit(inline="always")
def _fill_read(m, b, ready, fp, bank_free):
    """A read-modify-write fill: one unit read on bank ``b`` no earlier than ``ready`` (random
    timing; it does not count as the module's last read for sequential detection); returns when
    its data is back, ns."""
    s = max(ready, bank_free[m, b])
    bank_free[m, b] = s + fp[F_OCC_R]
    return s + fp[F_OCC_R] + fp[F_D_RAND]


@refcount_free_jit(inline="always")
def _media_read(m, loc, b, ready, fp, last_line, bank_free):
    """One unit read from module ``m``'s media (local unit ``loc``, bank ``b``) once its command is
    done at ``ready``; returns when its data is back, ns."""
    seq = loc == last_line[m] or loc == last_line[m] + 1
    last_line[m] = loc
    s = max(ready, bank_free[m, b])
    bank_free[m, b] = s + fp[F_OCC_R]
    if seq:
        return s + fp[F_OCC_R] + fp[F_D_SEQ]
    return s + fp[F_OCC_R] + fp[F_D_RAND]


@refcount_free_jit(inline="always")
def _media_write(m, b, ready, slot, fp, ip, bank_free, times, wear_count):
    """One unit (its pending-table ``slot``) written to the media no earlier than ``ready``, which
    must already include the unit's pending-until; returns its completion, ns. The slot is only
    stored to (a posted write's slot is usually out of the caches when its write starts).
    ``wear_count`` is None when wear levelling is off: numba then compiles the kernel without
    its code (a dead branch on an argument's type), which keeps the hot loop small."""
    s = max(ready, bank_free[m, b])
    done = s + fp[F_OCC_W]
    bank_free[m, b] = done
    times[slot] = done
    if wear_count is not None:
        wear_count[m] += 1
        if wear_count[m] % ip[I_WEAR_INTERVAL] == 0:
            for bb in range(bank_free.shape[1]):
                bank_free[m, bb] = max(bank_free[m, bb], done) + fp[F_WEAR_STALL]
    return done


@refcount_free_jit(inline="always")
def _starts_before(m, b, x, bank_free, pq_hr):
    """Whether bank ``b``'s oldest posted write starts before ``x`` ns (the kernel's cheap test
    before it calls :func:`_drain_idle`, which is kept out of line)."""
    return max(pq_hr[m, b], bank_free[m, b]) < x


@refcount_free_jit(inline="always")
def _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr):
    """Start bank ``b``'s oldest posted write on the media; returns its completion, ns."""
    h = pq_head[m, b]
    sl = pq_s[m, b, h]
    r = pq_r[m, b, h]
    h = h + 1 if h + 1 < pq_g.shape[2] else 0
    pq_head[m, b] = h
    pq_len[m, b] -= 1
    pq_n[m] -= 1
    pq_hr[m, b] = pq_r[m, b, h] if pq_len[m, b] > 0 else np.inf
    return _media_write(m, b, r, sl, fp, ip, bank_free, times, wear_count)


@refcount_free_jit
def _drain_idle(m, b, x, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr):
    """Start the posted writes of bank ``b`` that it reaches, idle, before a read arriving at
    ``x`` ns: a read waits for a write that has started, never for one still queued."""
    while pq_len[m, b] > 0 and max(pq_hr[m, b], bank_free[m, b]) < x:
        _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)


@refcount_free_jit(inline="always")
def _first_bank(m, bank_free, pq_hr):
    """The bank of module ``m`` whose oldest posted write can start first (the lowest on a tie);
    the queue must not be empty. One pass without branches over the banks' head ready times
    (``pq_hr``, inf for an empty queue) and free times: a branch per bank mispredicts often (the
    winner moves from drain to drain), and the scan was half a write-heavy stream's time."""
    best = 0
    first = max(pq_hr[m, 0], bank_free[m, 0])
    for b in range(1, pq_hr.shape[1]):
        s = max(pq_hr[m, b], bank_free[m, b])
        earlier = s < first
        first = s if earlier else first
        best = b if earlier else best
    return best


@refcount_free_jit(inline="always")
def _drain_first(m, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr):
    """Write drain: start module ``m``'s posted write that can start first (:func:`_first_bank`),
    ahead of any later read; returns ``(start, completion)``, ns: its queue entry is free from
    its start. The queue must not be empty."""
    b = _first_bank(m, bank_free, pq_hr)
    if pq_len[m, b] == 0:  # ``pq_hr`` out of step with the rings: stop rather than corrupt them
        raise AssertionError("media write queue: the drain found no queued write (head ready times stale)")
    first = max(pq_hr[m, b], bank_free[m, b])
    done = _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
    return first, done


#: :func:`_drain_first` as a call, where it is rare (an access posting more than the queue holds)
_drain_first_call = refcount_free_jit(_drain_first.py_func)


@refcount_free_jit
def _drain_unit(m, b, g, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr):
    """Start bank ``b``'s posted writes up to and including unit ``g``'s (an access to a queued
    unit forces them out); returns ``g``'s completion, ns."""
    while True:
        hg = pq_g[m, b, pq_head[m, b]]
        done = _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
        if hg == g:
            return done


@refcount_free_jit(inline="always")
def _post(m, b, g, sl, r, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr):
    """Queue unit ``g``'s (pending-table slot ``sl``) media write on bank ``b``, ready at ``r`` ns.
    A full queue first drains one write (only when one access posts more writes than the queue
    holds: the access's acknowledgement already waited for room). The queue then has room, or
    the ring would overwrite its oldest write: that raises, naming the queue, rather than run on
    with a corrupted queue (a drain looking for the lost write would never end)."""
    cap = pq_g.shape[2]
    if pq_n[m] >= cap:
        _drain_first_call(m, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
    if pq_n[m] >= cap:
        raise AssertionError("media write queue: a module's posted writes would exceed write_queue_entries")
    k = pq_head[m, b] + pq_len[m, b]
    if k >= cap:
        k -= cap
    pq_g[m, b, k] = g
    pq_s[m, b, k] = sl
    pq_r[m, b, k] = r
    if pq_len[m, b] == 0:
        pq_hr[m, b] = r
    pq_len[m, b] += 1
    pq_n[m] += 1
    times[sl] = QUEUED


@refcount_free_jit
def reslot_posted(keys, pq_g, pq_s, pq_head, pq_len):
    """Point every posted write at its unit's slot in the (rebuilt) table ``keys``."""
    cap = pq_g.shape[2]
    for m in range(pq_g.shape[0]):
        for b in range(pq_g.shape[1]):
            for j in range(pq_len[m, b]):
                k = pq_head[m, b] + j
                if k >= cap:
                    k -= cap
                pq_s[m, b, k] = _pend_find(keys, pq_g[m, b, k])


@refcount_free_jit
def flush_posted(fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr):
    """Start every posted write (write drain, module by module); returns the latest completion
    (-inf if none was queued)."""
    end = NO_TIME
    for m in range(pq_n.shape[0]):
        while pq_n[m] > 0:
            end = max(end, _drain_first(m, fp, ip, bank_free, times, wear_count,
                                        pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)[1])
    return end
