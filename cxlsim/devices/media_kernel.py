"""The shared media mechanism's core loop: a numba kernel and its plain-Python reference.

Both functions take arrays and scalars only (no simulator objects) and give bit-identical results;
``tests/test_media.py`` holds them together on random streams. Units: time ns (float64),
addresses and sizes bytes (int64). The kernel counts media bytes; it computes no energy (the media
model turns bytes into joules, :meth:`cxlsim.devices.media.MediaModel.traffic_energy_J`). Its
vector layout and sentinels live in the numba-free :mod:`cxlsim.devices.media_index`.

Mechanism per access, in stream order (see ``docs/devices-media.md``):

* closed loop: the requester holds ``outstanding`` slots; access ``i`` starts at ``max(issue[i],
  earliest free slot)``, a slot freeing at the completion of a read or the acknowledgement of a
  write that held it, out of order (as a core's fill buffers free as their misses return; a loser
  tree of free times, :func:`_slot_replace_min`); with split pools (``I_WRITE_OUTSTANDING`` > 0: a
  requester with separate read and write channels, as AXI's) reads and writes each have slots of
  their own (``I_OUTSTANDING`` reads, ``I_WRITE_OUTSTANDING`` writes); with
  ``I_WRITE_AFTER_READS`` a write also starts no earlier than the data of the reads between it and
  the previous write is back (a copy's write carries the data its reads fetched);
* addresses map to modules by ``interleave_B`` chunks, to internal units (``unit_B``) and to
  ``banks`` parallel units per module (local unit index modulo ``banks``);
* a unit served by the media holds its bank for ``occ`` ns (``banks * unit / bandwidth``); a read
  returns ``d_seq`` or ``d_rand`` ns after its occupancy ends (idle latency = command + occ + d);
* writes are acknowledged ``lat_w`` ns after start (persistence / ADR domain), later if the module's
  write queue is full. In arrival order (``I_READ_PRIORITY`` 0) a media write takes its bank at once
  and the queue holds ``qdepth`` accesses with media work in flight, freed out of order as their
  media work completes. With read priority a media write is *posted* to its bank's FIFO and starts
  when the bank would idle before the next read arrives, or when the module's ``qdepth`` posted
  unit writes leave no room (the one that can start first goes, and the ack waits for its start);
  an access to a unit still queued forces its bank's queue out up to it;
* a write-combining buffer of ``wcb`` units per module (LRU) merges writes; a miss evicts the LRU
  unit (a media write of one unit); a partial write that misses and ``rmw`` is set first reads the
  unit (read-modify-write); without a buffer every write goes to the media (write-through);
* every unit keeps a *pending-until* time (its merge, RMW fill or media write in progress); a read
  of that unit waits until then (read-after-write), unless ``forward`` (controller forwarding);
* optional wear-levelling: every ``wear_interval`` media writes a module's banks stall
  ``wear_stall`` ns.

The pending table is an open-addressing hash map in two arrays (key = global unit index, value =
pending-until ns). Entries whose time is <= the current access's issue time are dead (they can no
longer delay anything, because issue times never decrease) and their slots are reused. The kernel
stops and returns the index of the access it could not start when the table is half full; the
caller then rebuilds the table (dropping dead entries, resizing it) and resumes. Aligned runs of
``HOME_RUN`` units share a home slot (:func:`_home`); a large table's slot is prefetched
``PREFETCH_AHEAD`` accesses early. Each module's write queue is a ring kept sorted from
``wq_head`` (:func:`_queue_replace_min`).
"""

from __future__ import annotations

import functools

import numpy as np

from cxlsim.devices.media_index import (  # noqa: F401 (re-exported: the kernel's layout)
    C_ACK_MAX,
    C_END_MAX,
    C_FILL,
    C_HITS,
    C_MEDIA_R,
    C_MEDIA_W,
    C_RAW,
    C_RAW_NS,
    C_RMW,
    EMPTY,
    F_BUS_R,
    F_BUS_W,
    F_CMD_R,
    F_CMD_W,
    F_D_RAND,
    F_D_SEQ,
    F_LAT_W,
    F_MERGE,
    F_OCC_R,
    F_OCC_W,
    F_WCB_READ,
    F_WEAR_STALL,
    I_BANKS,
    I_CHUNK_SH,
    I_FORWARD,
    I_INTERLEAVE,
    I_MOD_SH,
    I_MODULES,
    I_OUTSTANDING,
    I_PER_ACCESS,
    I_POW2,
    I_READ_PRIORITY,
    I_RMW,
    I_UNIT,
    I_UNIT_SH,
    I_WCB,
    I_WEAR_INTERVAL,
    I_WRITE_AFTER_READS,
    I_WRITE_OUTSTANDING,
    MAX_LOAD_FRACTION,
    N_C,
    N_FP,
    N_IP,
    NO_TIME,
    QUEUED,
)
from cxlsim.kernels.jit import refcount_free_jit
from cxlsim.kernels.prefetch import prefetch_write

HASH_MULT = 2654435761  # Knuth's multiplicative hash constant
HOME_RUN_SH = 4  # log2 of the aligned run of units that hash together in the pending table
HOME_RUN = 1 << HOME_RUN_SH
WCB_FILTER_BUCKETS = 1024  # per-module buckets of the write-combining buffer's membership filter
#: Accesses between prefetching the pending-table slot of an access's first unit and serving it
#: (a hashed slot is a cache miss once the table outgrows the caches; the hint changes no result).
PREFETCH_AHEAD = 16
PREFETCH_MIN_SLOTS = 1 << 15  # smaller tables (≤ 512 KiB) stay in cache: no prefetch


@refcount_free_jit(inline="always")
def _home(g, mask):
    """First slot probed for unit ``g``: aligned runs of ``HOME_RUN`` units hash to one place and
    keep their order there, so a sequential write burst touches a few cache lines, not one each."""
    return ((((g >> HOME_RUN_SH) * HASH_MULT) << HOME_RUN_SH) | (g & (HOME_RUN - 1))) & mask


@refcount_free_jit
def pend_lookup(keys, times, g):
    """Pending-until time (ns) of global unit ``g``, or -inf."""
    mask = keys.shape[0] - 1
    s = _home(g, mask)
    while True:
        k = keys[s]
        if k == g:
            return times[s]
        if k == EMPTY:
            return NO_TIME
        s = (s + 1) & mask


@refcount_free_jit
def pend_insert(keys, times, used, g, t, now):
    """Set unit ``g``'s pending-until to ``t``; slots dead at ``now`` are reused."""
    times[pend_slot(keys, times, used, g, now)] = t


@refcount_free_jit
def pend_slot(keys, times, used, g, now):
    """Slot of unit ``g``, claimed (time -inf) if absent, in the first slot on its probe path that
    is dead at ``now`` (else the empty slot ending it): one probe serves a lookup and the insert
    that follows it, provided no other insert comes between."""
    mask = keys.shape[0] - 1
    s = _home(g, mask)
    reuse = -1
    while True:
        k = keys[s]
        if k == g:
            return s
        if k == EMPTY:
            break
        if reuse < 0 and times[s] <= now:
            reuse = s
        s = (s + 1) & mask
    if reuse >= 0:
        s = reuse
    else:
        used[0] += 1
    keys[s] = g
    times[s] = NO_TIME
    return s


def new_table(capacity):
    """An empty pending table of ``capacity`` slots (a power of two): ``(keys, times)``, two
    strided views of one buffer so that a slot's key and time share a cache line."""
    buf = np.empty((capacity, 2), np.int64)
    keys = buf[:, 0]
    times = buf.view(np.float64)[:, 1]
    keys[:] = EMPTY
    times[:] = NO_TIME
    return keys, times


@refcount_free_jit
def pend_gather(keys, times, now, gk, gt):
    """Move the entries alive after ``now`` (pending until later than it) into ``gk``/``gt``, in
    slot order, emptying the table in the same pass; returns their count. ``gk`` and ``gt`` must
    hold the table's used count."""
    live = 0
    for s in range(keys.shape[0]):
        k = keys[s]
        t = times[s]
        if k != EMPTY and t > now:
            gk[live] = k
            gt[live] = t
            live += 1
        keys[s] = EMPTY
        times[s] = NO_TIME
    return live


@refcount_free_jit
def pend_refill(keys, times, used, gk, gt, live, now, clear):
    """Insert the first ``live`` entries of ``gk``/``gt`` into the table, emptied first if
    ``clear`` (a spare table); ``used`` counts the slots taken."""
    if clear:
        for s in range(keys.shape[0]):
            keys[s] = EMPTY
            times[s] = NO_TIME
    used[0] = 0
    for j in range(live):
        pend_insert(keys, times, used, gk[j], gt[j], now)


@refcount_free_jit
def scan_stream(issue, addr, size, unit, horizon):
    """One pass over a stream: ``(bad, max_units, total_B)`` where ``bad`` is the index of the first
    access whose issue time decreases (or precedes ``horizon``), whose size is < 1 B or whose
    address is negative (-1 if none), ``max_units`` the most units one access touches and
    ``total_B`` the bytes the stream asks for (both over the accesses before ``bad``)."""
    most = 0
    total = 0
    prev = horizon
    sh = -1
    if unit & (unit - 1) == 0:
        sh = 0
        while (1 << sh) < unit:
            sh += 1
    for i in range(issue.shape[0]):
        a = addr[i]
        if issue[i] < prev or size[i] < 1 or a < 0:
            return i, most, total
        prev = issue[i]
        total += size[i]
        if sh >= 0:
            k = ((a + size[i] - 1) >> sh) - (a >> sh) + 1
        else:
            k = (a + size[i] - 1) // unit - a // unit + 1
        if k > most:
            most = k
    return -1, most, total


@refcount_free_jit
def _locate(a, unit, interleave, modules, banks):
    """(module, bank) of the unit holding byte address ``a``."""
    chunk = a // interleave
    m = chunk % modules
    local = (chunk // modules) * (interleave // unit) + (a % interleave) // unit
    return m, local, local % banks


@refcount_free_jit(inline="always")
def _where(g, ip):
    """(module, local unit, bank) of global unit ``g``: shifts and masks when the geometry
    parameters are powers of two (the same values as :func:`_locate`, with fewer divisions)."""
    mode = ip[I_POW2]
    if mode > 0:
        sh = ip[I_CHUNK_SH]
        chunk = g >> sh
        if mode == 1:
            m = chunk & (ip[I_MODULES] - 1)
            row = chunk >> ip[I_MOD_SH]
        else:
            m = chunk % ip[I_MODULES]
            row = chunk // ip[I_MODULES]
        local = (row << sh) | (g & ((1 << sh) - 1))
        return m, local, local & (ip[I_BANKS] - 1)
    return _locate(g * ip[I_UNIT], ip[I_UNIT], ip[I_INTERLEAVE], ip[I_MODULES], ip[I_BANKS])


@refcount_free_jit(inline="always")
def _chunk(g, ip):
    """Interleave chunk of global unit ``g`` (its module is the chunk modulo the module count)."""
    if ip[I_POW2] > 0:
        return g >> ip[I_CHUNK_SH]
    return (g * ip[I_UNIT]) // ip[I_INTERLEAVE]


@refcount_free_jit(inline="always")
def _cyc(first, k, modules):
    """The ``k``-th module of a cyclic range starting at module ``first``."""
    m = first + k
    return m - modules if m >= modules else m


def pow2_geometry(unit, interleave, modules, banks):
    """``(I_POW2, I_CHUNK_SH, I_MOD_SH, I_UNIT_SH)`` for the integer parameter vector."""
    def is_pow2(x):
        return x > 0 and x & (x - 1) == 0
    per = interleave // unit
    if all(is_pow2(int(x)) for x in (unit, interleave, banks)) and interleave % unit == 0:
        mode = 1 if is_pow2(int(modules)) else 2
        mod_sh = int(modules).bit_length() - 1 if mode == 1 else 0
        return mode, int(per).bit_length() - 1, mod_sh, int(unit).bit_length() - 1
    return 0, 0, 0, 0


@refcount_free_jit(inline="always")
def _wcb_bucket(g, filt):
    return ((g * HASH_MULT) >> 16) & (filt.shape[1] - 1)


@refcount_free_jit
def _wcb_find(tags, filt, m, g):
    """Entry of module ``m``'s buffer holding unit ``g``, or -1. ``filt`` counts the buffered
    units per hash bucket, so most misses skip the scan."""
    if filt[m, _wcb_bucket(g, filt)] == 0:
        return -1
    for e in range(tags.shape[1]):
        if tags[m, e] == g:
            return e
    return -1


def wcb_filter(tags, buckets=WCB_FILTER_BUCKETS):
    """The bucket counts of :func:`_wcb_find` for buffer tags ``tags`` (modules × entries)."""
    filt = np.zeros((tags.shape[0], buckets), np.int32)
    for m in range(tags.shape[0]):
        for g in tags[m]:
            if g != EMPTY:
                filt[m, ((int(g) * HASH_MULT) >> 16) & (buckets - 1)] += 1
    return filt


@refcount_free_jit(inline="always")
def _lru_victim(lru, m, entries):
    """The entry a write miss replaces: the first empty entry, else the least recently used one,
    in O(1): empty entries are always a suffix (they fill in index order and
    are emptied only all at once), so the first empty one is ``count``; else the list's tail."""
    if lru[m, 2] < entries:
        return lru[m, 2]
    return lru[m, 1]


@refcount_free_jit
def _lru_touch(prev, nxt, lru, m, e, entries):
    """Move entry ``e`` of module ``m`` to the most-recently-used end (appending a new one)."""
    if e == lru[m, 2] and lru[m, 2] < entries:  # a new entry
        lru[m, 2] += 1
    else:
        p = prev[m, e]
        q = nxt[m, e]
        if p >= 0:
            nxt[m, p] = q
        else:
            lru[m, 0] = q
        if q >= 0:
            prev[m, q] = p
        else:
            lru[m, 1] = p
    h = lru[m, 0]
    prev[m, e] = -1
    nxt[m, e] = h
    if h >= 0:
        prev[m, h] = e
    else:
        lru[m, 1] = e
    lru[m, 0] = e


def lru_state(tags, stamps):
    """``(prev, next, lru)`` of the recency list for buffer ``tags`` ordered by ``stamps``
    (``lru[m] = [most recent, least recent, count]``)."""
    modules, entries = tags.shape
    prev = np.full((modules, entries), -1, np.int64)
    nxt = np.full((modules, entries), -1, np.int64)
    lru = np.full((modules, 3), -1, np.int64)
    for m in range(modules):
        used = [e for e in range(entries) if tags[m, e] != EMPTY]
        order = sorted(used, key=lambda e: -int(stamps[m, e]))  # most recent first
        lru[m, 2] = len(used)
        if order:
            lru[m, 0], lru[m, 1] = order[0], order[-1]
        for a, b in zip(order[:-1], order[1:], strict=True):
            nxt[m, a], prev[m, b] = b, a
    return prev, nxt, lru


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


def slot_tree(outstanding):
    """The free times of a requester's ``outstanding`` slots, all free (-inf), as the loser tree of
    :func:`_slot_replace_min`: ``(vals, idx)`` of ``P`` entries each, ``P`` the power of two >=
    ``outstanding``. Leaf ``j < outstanding`` is slot ``j``; leaves beyond hold +inf (never the
    earliest). Node ``n`` in ``1 .. P - 1`` keeps the loser of the match between its two subtrees
    (its value in ``vals[n]``, its leaf in ``idx[n]``); node 0 the overall winner: ``vals[0]`` is
    the earliest free time. Fresh arrays, copied from a template built once per size (building
    one costs a Python loop over its nodes: 80 µs for 128 slots, once or twice per ``serve``)."""
    vals, idx = _slot_tree_template(max(1, int(outstanding)))
    return vals.copy(), idx.copy()


@functools.lru_cache(maxsize=64)
def _slot_tree_template(k):
    """:func:`slot_tree` of ``k`` slots (read-only arrays, shared: copy before use)."""
    size = 1
    while size < k:
        size *= 2
    leaf = np.full(size, np.inf)
    leaf[:k] = NO_TIME
    vals = np.empty(size)
    idx = np.empty(size, np.int64)
    win = np.arange(2 * size, dtype=np.int64) - size  # the winner (a leaf) below each node
    for n in range(size - 1, 0, -1):
        a, b = win[2 * n], win[2 * n + 1]
        w, lo = (a, b) if leaf[a] <= leaf[b] else (b, a)
        win[n], vals[n], idx[n] = w, leaf[lo], lo
    w = win[1] if size > 1 else 0
    vals[0], idx[0] = leaf[w], w
    vals.setflags(write=False)
    idx.setflags(write=False)
    return vals, idx


@refcount_free_jit(inline="always")
def _slot_replace_min(vals, idx, value):
    """The requester's earliest free slot (``vals[0]``) is taken by an access that frees it at
    ``value``: replay the leaf's matches up to the root (:func:`slot_tree`). The path is fixed by
    the leaf, so its log2(P) loads do not wait on the comparisons, and each level is a compare and
    a branch-free swap (selects, not branches: the outcomes are data-dependent and a mispredicted
    branch would discard the next accesses' work, which the CPU overlaps with this one). Only the
    multiset of free times matters to the kernel (which time is earliest), so this gives the same
    times as taking the first minimum of a plain list (the reference) or a heap."""
    v, cur = _slot_replay(vals, idx, idx[0], value)
    vals[0] = v
    idx[0] = cur


@refcount_free_jit(inline="always")
def _slot_replay(vals, idx, leaf, value):
    """:func:`_slot_replace_min` for the winner ``leaf`` (``idx[0]``) without node 0: returns the
    new winner ``(free time, leaf)``, which the kernel keeps in registers from one access to the
    next (its next start reads it there, not through a store and a load of node 0)."""
    size = vals.shape[0]
    cur = leaf
    v = value
    n = (cur + size) >> 1
    while n > 0:
        lv = vals[n]
        li = idx[n]
        sw = lv < v  # the stored loser wins this match: the running winner is stored instead
        vals[n] = v if sw else lv
        idx[n] = cur if sw else li
        v = lv if sw else v
        cur = li if sw else cur
        n >>= 1
    return v, cur


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


# --- posted writes (read priority) ---------------------------------------------------------------
# Module m's write queue is one FIFO ring per bank: ``pq_g[m, b, k]`` (unit), ``pq_s[m, b, k]`` (its
# pending-table slot) and ``pq_r[m, b, k]`` (ready time, ns) from ``pq_head[m, b]`` for
# ``pq_len[m, b]`` entries; ``pq_n[m]`` counts the module's entries, at most ``pq_g.shape[2]``. A
# posted unit's pending-until is QUEUED until its write starts ("is booked"): then it is its
# completion, as for a write booked at once. A QUEUED slot is never reused, so the stored slot holds
# until a table rebuild, which calls :func:`reslot_posted`.


@refcount_free_jit(inline="always")
def _pend_find(keys, g):
    """Slot of unit ``g``, which must be in the table."""
    mask = keys.shape[0] - 1
    s = _home(g, mask)
    while keys[s] != g:
        if keys[s] == EMPTY:
            raise AssertionError("a posted write's unit is missing from the pending table")
        s = (s + 1) & mask
    return s


@refcount_free_jit(inline="always")
def _starts_before(m, b, x, bank_free, pq_r, pq_head, pq_len):
    """Whether bank ``b``'s oldest posted write starts before ``x`` ns (the kernel's cheap test
    before it calls :func:`_drain_idle`, which is kept out of line)."""
    return pq_len[m, b] > 0 and max(pq_r[m, b, pq_head[m, b]], bank_free[m, b]) < x


@refcount_free_jit(inline="always")
def _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n):
    """Start bank ``b``'s oldest posted write on the media; returns its completion, ns."""
    h = pq_head[m, b]
    sl = pq_s[m, b, h]
    r = pq_r[m, b, h]
    pq_head[m, b] = h + 1 if h + 1 < pq_g.shape[2] else 0
    pq_len[m, b] -= 1
    pq_n[m] -= 1
    return _media_write(m, b, r, sl, fp, ip, bank_free, times, wear_count)


@refcount_free_jit
def _drain_idle(m, b, x, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n):
    """Start the posted writes of bank ``b`` that it reaches, idle, before a read arriving at
    ``x`` ns: a read waits for a write that has started, never for one still queued."""
    while pq_len[m, b] > 0:
        if max(pq_r[m, b, pq_head[m, b]], bank_free[m, b]) >= x:
            return
        _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)


@refcount_free_jit(inline="always")
def _first_bank(m, bank_free, pq_r, pq_head, pq_len):
    """The bank of module ``m`` whose oldest posted write can start first (the lowest on a tie);
    the queue must not be empty."""
    best = -1
    first = np.inf
    for b in range(pq_len.shape[1]):
        if pq_len[m, b] > 0:
            s = max(pq_r[m, b, pq_head[m, b]], bank_free[m, b])
            if s < first:
                first = s
                best = b
    return best


@refcount_free_jit(inline="always")
def _drain_first(m, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n):
    """Write drain: start module ``m``'s posted write that can start first (:func:`_first_bank`),
    ahead of any later read; returns ``(start, completion)``, ns: its queue entry is free from
    its start. The queue must not be empty."""
    b = _first_bank(m, bank_free, pq_r, pq_head, pq_len)
    first = max(pq_r[m, b, pq_head[m, b]], bank_free[m, b])
    done = _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
    return first, done


#: :func:`_drain_first` as a call, where it is rare (an access posting more than the queue holds)
_drain_first_call = refcount_free_jit(_drain_first.py_func)


@refcount_free_jit
def _drain_unit(m, b, g, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n):
    """Start bank ``b``'s posted writes up to and including unit ``g``'s (an access to a queued
    unit forces them out); returns ``g``'s completion, ns."""
    while True:
        hg = pq_g[m, b, pq_head[m, b]]
        done = _book_head(m, b, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
        if hg == g:
            return done


@refcount_free_jit(inline="always")
def _post(m, b, g, sl, r, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n):
    """Queue unit ``g``'s (pending-table slot ``sl``) media write on bank ``b``, ready at ``r`` ns.
    A full queue first drains one write (only when one access posts more writes than the queue
    holds: the access's acknowledgement already waited for room)."""
    cap = pq_g.shape[2]
    if pq_n[m] >= cap:
        _drain_first_call(m, fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
    k = pq_head[m, b] + pq_len[m, b]
    if k >= cap:
        k -= cap
    pq_g[m, b, k] = g
    pq_s[m, b, k] = sl
    pq_r[m, b, k] = r
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
def flush_posted(fp, ip, bank_free, times, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n):
    """Start every posted write (write drain, module by module); returns the latest completion
    (-inf if none was queued)."""
    end = NO_TIME
    for m in range(pq_n.shape[0]):
        while pq_n[m] > 0:
            end = max(end, _drain_first(m, fp, ip, bank_free, times, wear_count,
                                        pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)[1])
    return end


@refcount_free_jit
def serve_kernel(issue, addr, size, is_write, first, fp, ip,
                 bank_free, cmd_free, last_line, wq_ring, wq_head, wcb_tag, wcb_filt, wcb_stamp, stamp,
                 wcb_prev, wcb_next, wcb_lru,
                 keys, times, used, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, loop_ring,
                 loop_tree, wloop_ring, wloop_tree, start_out, complete_out, ack_out, counters, need, ready, mod_end):
    """Serve accesses ``first..n-1`` in order; returns the index reached (n when done).

    State arrays are updated in place; ``need``, ``ready``, ``mod_end`` are per-module scratch
    (``need``: units of the access on the module that the write-combining buffer misses). Pass
    either ``wq_ring``/``wq_head`` (arrival order) or the six ``pq_*`` arrays (read priority), the
    other group as None, and ``wear_count`` None when wear levelling is off. ``loop_ring`` holds the
    completions of the accesses in flight (the reads' with split pools); ``wloop_ring`` the writes'
    with split pools (None: one pool), whose next slots are ``loop_pos`` = [read slot, write slot].
    Returns early (index of the access not started) when the pending table needs a rebuild.
    """
    n = issue.shape[0]
    # the counters live in registers inside the loop (written back on return)
    c_mr = counters[C_MEDIA_R]
    c_mw = counters[C_MEDIA_W]
    c_rmw = counters[C_RMW]
    c_raw = counters[C_RAW]
    c_raw_ns = counters[C_RAW_NS]
    c_hits = counters[C_HITS]
    c_ack = counters[C_ACK_MAX]
    c_end = counters[C_END_MAX]
    fill = counters[C_FILL]
    after_reads = ip[I_WRITE_AFTER_READS] == 1
    unit = ip[I_UNIT]
    modules = ip[I_MODULES]
    wcb = ip[I_WCB]
    limit = keys.shape[0] * MAX_LOAD_FRACTION
    pow2 = ip[I_POW2] > 0  # the unit size is a power of two
    ush = ip[I_UNIT_SH]
    per_access = ip[I_PER_ACCESS] == 1
    # One policy per compiled variant: the caller passes the posted-write arrays (read priority) or
    # the write-queue ring (arrival order), the others as None, and numba drops the branches of the
    # absent policy at compile time (they test the arguments against None), keeping the loop small.
    qcap = 0
    if pq_g is not None:
        qcap = pq_g.shape[2]
    # the slot trees' winners (node 0) live in registers in the loop, stored back on return
    root = loop_ring[0]
    root_i = loop_tree[0]
    wroot = NO_TIME
    wroot_i = 0
    if wloop_ring is not None:
        wroot = wloop_ring[0]
        wroot_i = wloop_tree[0]
    mask = keys.shape[0] - 1
    big = keys.shape[0] > PREFETCH_MIN_SLOTS  # a table that outgrows the L1/L2 caches
    reached = n
    for i in range(first, n):
        o = i if per_access else 0
        if big and i + PREFETCH_AHEAD < n:
            ahead = addr[i + PREFETCH_AHEAD]
            prefetch_write(keys, _home(ahead >> ush if pow2 else ahead // unit, mask))
        a0 = addr[i]
        a1 = a0 + size[i]
        if pow2:
            g0 = a0 >> ush
            g1 = (a1 - 1) >> ush
        else:
            g0 = a0 // unit
            g1 = (a1 - 1) // unit
        if used[0] + 2 * (g1 - g0 + 1) + 2 > limit:
            reached = i  # the pending table needs a rebuild first
            break
        now = issue[i]
        # the requester's earliest free slot (its pool's, with split pools; numba compiles the
        # one-pool variant without the test)
        if wloop_ring is not None and is_write[i]:
            t = max(now, wroot)
            if after_reads and fill > t:
                t = fill
        else:
            t = max(now, root)
        start_out[o] = t
        if g0 == g1 and not is_write[i]:  # the common case, one unit read: no per-module loops
            m, loc, b = _where(g0, ip)
            t0 = t
            if ip[I_FORWARD] == 0:
                p = pend_lookup(keys, times, g0)
                if pq_n is not None and p == QUEUED:
                    p = _drain_unit(m, b, g0, fp, ip, bank_free, times, wear_count,
                                    pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                if p > t0:
                    t0 = p
            if t0 > t:
                c_raw += 1
                c_raw_ns += t0 - t
            if wcb > 0 and _wcb_find(wcb_tag, wcb_filt, m, g0) >= 0:
                u = t0 + fp[F_WCB_READ]
                c_hits += 1
            else:
                cs = max(t0, cmd_free[m])
                cmd_free[m] = cs + fp[F_CMD_R] + fp[F_BUS_R]
                if pq_n is not None and _starts_before(m, b, cs + fp[F_CMD_R], bank_free, pq_r, pq_head, pq_len):
                    _drain_idle(m, b, cs + fp[F_CMD_R], fp, ip, bank_free, times, wear_count,
                                pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                u = _media_read(m, loc, b, cs + fp[F_CMD_R], fp, last_line, bank_free)
                c_mr += unit
            done = max(t0, u)
            acked = done
        else:
            # the modules this access touches: its interleave chunks' modules, a cyclic range
            mf = _chunk(g0, ip)
            mc = min(modules, _chunk(g1, ip) - mf + 1)
            mf = mf % modules
            for k in range(mc):
                need[_cyc(mf, k, modules)] = 0
            for g in range(g0, g1 + 1):
                m, loc, b = _where(g, ip)
                if wcb == 0 or _wcb_find(wcb_tag, wcb_filt, m, g) < 0:
                    need[m] += 1
            if not is_write[i]:
                t0 = t
                if ip[I_FORWARD] == 0:
                    for g in range(g0, g1 + 1):
                        p = pend_lookup(keys, times, g)
                        if pq_n is not None and p == QUEUED:
                            m, loc, b = _where(g, ip)
                            p = _drain_unit(m, b, g, fp, ip, bank_free, times, wear_count,
                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                        if p > t0:
                            t0 = p
                if t0 > t:
                    c_raw += 1
                    c_raw_ns += t0 - t
                for k in range(mc):
                    m = _cyc(mf, k, modules)
                    if need[m] > 0:
                        cs = max(t0, cmd_free[m])
                        cmd_free[m] = cs + fp[F_CMD_R] + need[m] * fp[F_BUS_R]
                        ready[m] = cs + fp[F_CMD_R]
                done = t0
                for g in range(g0, g1 + 1):
                    m, loc, b = _where(g, ip)
                    if wcb > 0 and _wcb_find(wcb_tag, wcb_filt, m, g) >= 0:
                        u = t0 + fp[F_WCB_READ]
                        c_hits += 1
                    else:
                        if pq_n is not None and _starts_before(m, b, ready[m], bank_free, pq_r, pq_head, pq_len):
                            _drain_idle(m, b, ready[m], fp, ip, bank_free, times, wear_count,
                                        pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                        u = _media_read(m, loc, b, ready[m], fp, last_line, bank_free)
                        ready[m] += fp[F_BUS_R]  # the module's next unit: the bus's next slot
                        c_mr += unit
                    done = max(done, u)
                acked = done
            else:
                ack = t + fp[F_LAT_W]
                for k in range(mc):
                    m = _cyc(mf, k, modules)
                    if need[m] > 0:
                        if wq_ring is not None:
                            ack = max(ack, wq_ring[m, wq_head[m]])  # the entry that frees first
                        if pq_n is not None:
                            # room for the media writes this access will post: its buffer misses
                            # that find the buffer full (each evicts a unit), or every unit
                            posts = need[m] if wcb == 0 else need[m] - (wcb - wcb_lru[m, 2])
                            while posts > 0 and pq_n[m] > 0 and pq_n[m] + posts > qcap:
                                ack = max(ack, _drain_first(m, fp, ip, bank_free, times, wear_count,
                                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)[0])
                for k in range(mc):
                    m = _cyc(mf, k, modules)
                    ready[m] = ack  # a unit evicted by this same access needs no command
                    mod_end[m] = ack
                    if need[m] > 0:
                        cs = max(ack, cmd_free[m])
                        cmd_free[m] = cs + fp[F_CMD_W] + need[m] * fp[F_BUS_W]
                        ready[m] = cs + fp[F_CMD_W]
                        mod_end[m] = ready[m]
                done = ack
                for g in range(g0, g1 + 1):
                    m, loc, b = _where(g, ip)
                    lo = max(a0, g * unit)
                    hi = min(a1, (g + 1) * unit)
                    partial = hi - lo < unit
                    if wcb > 0:
                        e = _wcb_find(wcb_tag, wcb_filt, m, g)
                        if e >= 0:
                            c_hits += 1
                            sl = pend_slot(keys, times, used, g, now)
                            u = max(ack, times[sl]) + fp[F_MERGE]
                        else:
                            e = _lru_victim(wcb_lru, m, wcb)
                            vg = wcb_tag[m, e]
                            if vg != EMPTY:
                                vm, vloc, vb = _where(vg, ip)
                                vs = pend_slot(keys, times, used, vg, now)
                                if pq_n is not None:
                                    _post(m, vb, vg, vs, max(ready[m], times[vs]), fp, ip, bank_free, times,
                                          wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                                else:
                                    wd = _media_write(m, vb, max(ready[m], times[vs]), vs, fp, ip, bank_free, times,
                                                      wear_count)
                                    mod_end[m] = max(mod_end[m], wd)
                                c_mw += unit
                            sl = pend_slot(keys, times, used, g, now)
                            if pq_n is not None and times[sl] == QUEUED:
                                _drain_unit(m, b, g, fp, ip, bank_free, times, wear_count,
                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                            if partial and ip[I_RMW] == 1:
                                s = max(ready[m], times[sl])
                                if pq_n is not None and _starts_before(m, b, s, bank_free, pq_r, pq_head, pq_len):
                                    _drain_idle(m, b, s, fp, ip, bank_free, times, wear_count,
                                                pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                                fd = _fill_read(m, b, s, fp, bank_free)
                                c_mr += unit
                                c_rmw += 1
                                mod_end[m] = max(mod_end[m], fd)
                                u = fd + fp[F_MERGE]
                            else:
                                u = max(ack, times[sl]) + fp[F_MERGE]
                            if vg != EMPTY:
                                wcb_filt[m, _wcb_bucket(vg, wcb_filt)] -= 1
                            wcb_filt[m, _wcb_bucket(g, wcb_filt)] += 1
                            wcb_tag[m, e] = g
                        times[sl] = u
                        _lru_touch(wcb_prev, wcb_next, wcb_lru, m, e, wcb)
                        wcb_stamp[m, e] = stamp[0]
                        stamp[0] += 1
                    else:
                        r = ready[m]
                        sl = pend_slot(keys, times, used, g, now)
                        if pq_n is not None and times[sl] == QUEUED:
                            _drain_unit(m, b, g, fp, ip, bank_free, times, wear_count,
                                        pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                        if partial and ip[I_RMW] == 1:
                            s = max(r, times[sl])
                            if pq_n is not None and _starts_before(m, b, s, bank_free, pq_r, pq_head, pq_len):
                                _drain_idle(m, b, s, fp, ip, bank_free, times, wear_count,
                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                            r = _fill_read(m, b, s, fp, bank_free)
                            c_mr += unit
                            c_rmw += 1
                        if pq_n is not None:
                            u = max(r, times[sl])  # in the controller's queue (posted)
                            _post(m, b, g, sl, u, fp, ip, bank_free, times, wear_count,
                                  pq_g, pq_s, pq_r, pq_head, pq_len, pq_n)
                        else:
                            u = _media_write(m, b, max(r, times[sl]), sl, fp, ip, bank_free, times, wear_count)
                            mod_end[m] = max(mod_end[m], u)
                        c_mw += unit
                    done = max(done, u)
                if wq_ring is not None:
                    for k in range(mc):
                        m = _cyc(mf, k, modules)
                        if need[m] > 0:
                            _queue_replace_min(wq_ring, wq_head, m, mod_end[m])
                acked = ack
        # reads: data back (done = acked); writes: acknowledged (acked) and in place (done)
        complete_out[o] = done
        ack_out[o] = acked
        # the slot frees at ``acked``, out of order (as a core's fill buffers free)
        if wloop_ring is not None and is_write[i]:
            wroot, wroot_i = _slot_replay(wloop_ring, wloop_tree, wroot_i, acked)
            fill = NO_TIME
        else:
            root, root_i = _slot_replay(loop_ring, loop_tree, root_i, acked)
            if wloop_ring is not None:
                fill = max(fill, acked)
        c_ack = max(c_ack, acked)
        c_end = max(c_end, done)
    counters[C_MEDIA_R] = c_mr
    counters[C_MEDIA_W] = c_mw
    counters[C_RMW] = c_rmw
    counters[C_RAW] = c_raw
    counters[C_RAW_NS] = c_raw_ns
    counters[C_HITS] = c_hits
    counters[C_ACK_MAX] = c_ack
    counters[C_END_MAX] = c_end
    counters[C_FILL] = fill
    loop_ring[0] = root
    loop_tree[0] = root_i
    if wloop_ring is not None:
        wloop_ring[0] = wroot
        wloop_tree[0] = wroot_i
    return reached


def serve_reference(issue, addr, size, is_write, fp, ip, pending, bank_free, cmd_free, last_line,
                    wq_ring, wq_head, wcb_lines, wear_count, posted, qcap):
    """Plain-Python twin of :func:`serve_kernel` (the whole stream in one call).

    ``pending`` is a dict {global unit: pending-until ns}; ``wcb_lines`` is a list per module of
    buffered units ordered least- to most-recently used; ``posted[m][b]`` is bank ``b``'s list of
    posted writes ``[unit, ready ns]``, oldest first, at most ``qcap`` per module (read priority).
    All and the numpy state arrays are updated in place. Returns ``(start, complete, ack, counters)``.
    """
    n = len(issue)
    unit, banks, modules, interleave = int(ip[I_UNIT]), int(ip[I_BANKS]), int(ip[I_MODULES]), int(ip[I_INTERLEAVE])
    wcb, outstanding, w_outstanding = int(ip[I_WCB]), int(ip[I_OUTSTANDING]), int(ip[I_WRITE_OUTSTANDING])
    occ_r, occ_w, d_seq, d_rand = float(fp[F_OCC_R]), float(fp[F_OCC_W]), float(fp[F_D_SEQ]), float(fp[F_D_RAND])
    start = np.zeros(n)
    complete = np.zeros(n)
    ack_out = np.zeros(n)
    c = [0.0] * N_C
    c[C_ACK_MAX] = c[C_END_MAX] = c[C_FILL] = NO_TIME
    done_ring = [NO_TIME] * outstanding  # the reads' with split pools
    w_ring = [NO_TIME] * max(w_outstanding, 1)  # the writes' (split pools)

    def slot(i):
        """``(ring, index)`` of access ``i``'s closed-loop slot: its pool's earliest free slot (the
        first on a tie)."""
        ring = w_ring if w_outstanding and is_write[i] else done_ring
        return ring, ring.index(min(ring))

    def where(g):
        chunk = (g * unit) // interleave
        local = (chunk // modules) * (interleave // unit) + ((g * unit) % interleave) // unit
        return chunk % modules, local, local % banks

    def media_write(m, b, ready, g):
        s = max(max(ready, pending.get(g, NO_TIME)), float(bank_free[m, b]))
        done = s + occ_w
        bank_free[m, b] = done
        pending[g] = done
        if ip[I_WEAR_INTERVAL] > 0:
            wear_count[m] += 1
            if wear_count[m] % ip[I_WEAR_INTERVAL] == 0:
                for bb in range(banks):
                    bank_free[m, bb] = max(float(bank_free[m, bb]), done) + float(fp[F_WEAR_STALL])
        return done

    rp = ip[I_READ_PRIORITY] == 1

    def book_head(m, b):
        g, r = posted[m][b].pop(0)
        pending[g] = r
        return media_write(m, b, r, g)

    def drain_idle(m, b, x):
        while posted[m][b] and max(posted[m][b][0][1], float(bank_free[m, b])) < x:
            book_head(m, b)

    def drain_first(m):  # (start, completion)
        first, b = min((max(q[0][1], float(bank_free[m, b])), b) for b, q in enumerate(posted[m]) if q)
        return first, book_head(m, b)

    def drain_unit(m, b, g):
        while True:
            hg = posted[m][b][0][0]
            done = book_head(m, b)
            if hg == g:
                return done

    def queued(m):
        return sum(map(len, posted[m]))

    def post(m, b, g, r):
        if queued(m) >= qcap:
            drain_first(m)
        posted[m][b].append([g, r])
        pending[g] = QUEUED

    for i in range(n):
        a0, a1 = int(addr[i]), int(addr[i]) + int(size[i])
        units = range(a0 // unit, (a1 - 1) // unit + 1)
        ring, k = slot(i)
        t = max(float(issue[i]), ring[k])
        if w_outstanding and is_write[i] and ip[I_WRITE_AFTER_READS]:
            t = max(t, c[C_FILL])
        start[i] = t
        misses = {}  # module -> units the write-combining buffer misses
        for g in units:
            if wcb == 0 or g not in wcb_lines[where(g)[0]]:
                misses[where(g)[0]] = misses.get(where(g)[0], 0) + 1
        need = sorted(misses)
        ready = {}
        if not is_write[i]:
            t0 = t
            if not ip[I_FORWARD]:
                for g in units:
                    p = pending.get(g, NO_TIME)
                    if p == QUEUED:
                        p = drain_unit(where(g)[0], where(g)[2], g)
                    t0 = max(t0, p)
            if t0 > t:
                c[C_RAW] += 1
                c[C_RAW_NS] += t0 - t
            for m in need:
                cs = max(t0, float(cmd_free[m]))
                cmd_free[m] = cs + fp[F_CMD_R] + misses[m] * fp[F_BUS_R]
                ready[m] = cs + float(fp[F_CMD_R])
            done = t0
            for g in units:
                m, loc, b = where(g)
                if wcb > 0 and g in wcb_lines[m]:
                    u = t0 + float(fp[F_WCB_READ])
                    c[C_HITS] += 1
                else:
                    if rp:
                        drain_idle(m, b, ready[m])
                    seq = loc == last_line[m] or loc == last_line[m] + 1
                    last_line[m] = loc
                    s = max(ready[m], float(bank_free[m, b]))
                    bank_free[m, b] = s + occ_r
                    u = s + occ_r + (d_seq if seq else d_rand)
                    ready[m] += float(fp[F_BUS_R])
                    c[C_MEDIA_R] += unit
                done = max(done, u)
            complete[i] = ack_out[i] = ring[k] = done
            c[C_FILL] = max(c[C_FILL], done)
            c[C_ACK_MAX] = max(c[C_ACK_MAX], done)
            c[C_END_MAX] = max(c[C_END_MAX], done)
        else:
            ack = t + float(fp[F_LAT_W])
            for m in need:
                if not rp:
                    wq_head[m] = int(np.argmin(wq_ring[m]))
                    ack = max(ack, float(wq_ring[m, wq_head[m]]))
                    continue
                posts = misses[m] if wcb == 0 else misses[m] - (wcb - len(wcb_lines[m]))
                while posts > 0 and queued(m) > 0 and queued(m) + posts > qcap:
                    ack = max(ack, drain_first(m)[0])
            ready = dict.fromkeys(range(modules), ack)
            mod_end = dict.fromkeys(range(modules), ack)
            for m in need:
                cs = max(ack, float(cmd_free[m]))
                cmd_free[m] = cs + fp[F_CMD_W] + misses[m] * fp[F_BUS_W]
                ready[m] = mod_end[m] = cs + float(fp[F_CMD_W])
            done = ack
            for g in units:
                m, loc, b = where(g)
                partial = min(a1, (g + 1) * unit) - max(a0, g * unit) < unit
                if wcb > 0:
                    lines = wcb_lines[m]
                    if g in lines:
                        c[C_HITS] += 1
                        u = max(ack, pending.get(g, NO_TIME)) + float(fp[F_MERGE])
                        lines.remove(g)
                    else:
                        if len(lines) == wcb:
                            vg = lines.pop(0)
                            if rp:
                                post(m, where(vg)[2], vg, max(ready[m], pending.get(vg, NO_TIME)))
                            else:
                                mod_end[m] = max(mod_end[m], media_write(m, where(vg)[2], ready[m], vg))
                            c[C_MEDIA_W] += unit
                        if pending.get(g, NO_TIME) == QUEUED:
                            drain_unit(m, b, g)
                        if partial and ip[I_RMW]:
                            s = max(ready[m], pending.get(g, NO_TIME))
                            if rp:
                                drain_idle(m, b, s)
                            s = max(s, float(bank_free[m, b]))
                            bank_free[m, b] = s + occ_r
                            fd = s + occ_r + d_rand
                            c[C_MEDIA_R] += unit
                            c[C_RMW] += 1
                            mod_end[m] = max(mod_end[m], fd)
                            u = fd + float(fp[F_MERGE])
                        else:
                            u = max(ack, pending.get(g, NO_TIME)) + float(fp[F_MERGE])
                    lines.append(g)
                    pending[g] = u
                else:
                    r = ready[m]
                    if pending.get(g, NO_TIME) == QUEUED:
                        drain_unit(m, b, g)
                    if partial and ip[I_RMW]:
                        s = max(r, pending.get(g, NO_TIME))
                        if rp:
                            drain_idle(m, b, s)
                        s = max(s, float(bank_free[m, b]))
                        bank_free[m, b] = s + occ_r
                        r = s + occ_r + d_rand
                        c[C_MEDIA_R] += unit
                        c[C_RMW] += 1
                    if rp:
                        u = max(r, pending.get(g, NO_TIME))
                        post(m, b, g, u)
                    else:
                        u = media_write(m, b, r, g)
                        mod_end[m] = max(mod_end[m], u)
                    c[C_MEDIA_W] += unit
                done = max(done, u)
            for m in need if not rp else ():
                wq_ring[m, wq_head[m]] = mod_end[m]
            complete[i] = done
            ack_out[i] = ring[k] = ack
            c[C_FILL] = NO_TIME
            c[C_ACK_MAX] = max(c[C_ACK_MAX], ack)
            c[C_END_MAX] = max(c[C_END_MAX], done)
    return start, complete, ack_out, np.array(c)
