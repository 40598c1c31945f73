"""The shared media mechanism's core loop, the numba kernel :func:`serve_kernel`.

The kernel and its plain-Python reference (:mod:`cxlsim.devices.memory.media.media_reference`) take arrays and
scalars only (no simulator objects) and give bit-identical results;
``tests/devices/test_media.py`` holds them together on random streams. Units: time ns (float64),
addresses and sizes bytes (int64). The kernel counts media bytes; it computes no energy (the media
model turns bytes into joules, :meth:`cxlsim.devices.memory.media.media.MediaModel.traffic_energy_J`). Its
vector layout and sentinels live in the numba-free :mod:`cxlsim.devices.memory.media.media_index`.

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
  a posted write takes its module's command and bus slot when the queue holds it, not at its ack;
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

One module per mechanism, which the kernel inlines (numba) and re-exports here (the media model
reaches them through this module, imported only when a media model is built):
:mod:`~cxlsim.devices.memory.media.media_pending` (the pending table), :mod:`~cxlsim.devices.memory.media.media_wcb` (the
write-combining buffer and its LRU), :mod:`~cxlsim.devices.memory.media.media_queue` (media work on banks, the
write queues and posted writes), :mod:`~cxlsim.devices.memory.media.media_slots` (the requester's slots),
:mod:`~cxlsim.devices.memory.media.media_geometry` (address to module, unit and bank) and
:mod:`~cxlsim.devices.memory.media.media_reference` (the reference).
"""

from __future__ import annotations

import math

from numba.cpython.unsafe.numbers import leading_zeros

from cxlsim.devices.memory.media.media_geometry import _chunk, _cyc, _locate, _where, pow2_geometry  # noqa: F401
from cxlsim.devices.memory.media.media_index import (  # noqa: F401 (re-exported: the kernel's layout)
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
    F_DN_DATA,
    F_DN_HDR,
    F_LAT_W,
    F_MERGE,
    F_OCC_R,
    F_OCC_W,
    F_PATH_DEV,
    F_PATH_REQ,
    F_PATH_REQ_W,
    F_PATH_RESP,
    F_PATH_RESP_W,
    F_UP_DATA,
    F_UP_HDR,
    F_WCB_READ,
    F_WEAR_STALL,
    I_BANKS,
    I_CHUNK_SH,
    I_FORWARD,
    I_INTERLEAVE,
    I_MOD_SH,
    I_MODULES,
    I_OUTSTANDING,
    I_PATH,
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
    LAT_BUCKETS,
    LAT_PER_OCTAVE,
    LAT_SUB_BITS,
    LAT_TOP_NS,
    LINK_DIR,
    LINK_GAP0,
    LINK_GAPS,
    MAX_LOAD_FRACTION,
    N_C,
    N_FP,
    N_IP,
    NO_TIME,
    PATH_LINE_B,
    QUEUED,
    S_HIST,
    S_LINK_DOWN_NS,
    S_LINK_UP_NS,
    S_PQ_MAX,
    S_PQ_SAMPLES,
    S_PQ_SUM,
    S_READ_B,
    S_READ_MAX_NS,
    S_READ_NS,
    S_READS,
    S_SLOT_HOLD_NS,
    S_SLOT_WAITS,
    S_WQ_ENTRIES,
    S_WQ_FULL,
    S_WQ_HOLD_NS,
    S_WQ_MAX,
    S_WRITE_B,
    S_WRITE_MAX_NS,
    S_WRITE_NS,
    S_WRITES,
    S_XR_FULL,
    S_XR_HOLD_NS,
    S_XR_MAX,
    S_XW_FULL,
    S_XW_HOLD_NS,
    S_XW_MAX,
)
from cxlsim.devices.memory.media.media_pending import (  # noqa: F401 (re-exported: the media model's kernel API)
    PREFETCH_AHEAD,
    PREFETCH_MIN_SLOTS,
    _home,
    _pend_find,
    new_table,
    pend_gather,
    pend_insert,
    pend_lookup,
    pend_refill,
    pend_slot,
    scan_stream,
)
from cxlsim.devices.memory.media.media_queue import (  # noqa: F401
    _book_head,
    _drain_first,
    _drain_first_call,
    _drain_idle,
    _drain_unit,
    _fill_read,
    _first_bank,
    _media_read,
    _media_write,
    _post,
    _queue_replace_min,
    _starts_before,
    flush_posted,
    reslot_posted,
)
from cxlsim.devices.memory.media.media_reference import serve_reference  # noqa: F401
from cxlsim.devices.memory.media.media_slots import (  # noqa: F401
    _slot_replace_min,
    _slot_replay,
    _slot_tree_template,
    slot_tree,
)
from cxlsim.devices.memory.media.media_wcb import (  # noqa: F401
    _lru_touch,
    _lru_victim,
    _wcb_bucket,
    _wcb_find,
    lru_state,
    wcb_filter,
)
from cxlsim.kernels.jit import refcount_free_jit
from cxlsim.kernels.prefetch import prefetch_write

# --- posted writes (read priority) ---------------------------------------------------------------
# Module m's write queue is one FIFO ring per bank: ``pq_g[m, b, k]`` (unit), ``pq_s[m, b, k]`` (its
# pending-table slot) and ``pq_r[m, b, k]`` (ready time, ns) from ``pq_head[m, b]`` for
# ``pq_len[m, b]`` entries; ``pq_n[m]`` counts the module's entries, at most ``pq_g.shape[2]``;
# ``pq_hr[m, b]`` is the ready time of the ring's oldest entry (inf when it is empty), kept beside
# the rings so that the drain's search for the bank to start first reads two flat arrays. A
# posted unit's pending-until is QUEUED until its write starts ("is booked"): then it is its
# completion, as for a write booked at once. A QUEUED slot is never reused, so the stored slot holds
# until a table rebuild, which calls :func:`reslot_posted`.


# --- a crossing's link directions (media_index.link_state) ---------------------------------------
# Direction d's block of ``link_free`` from ``base = LINK_GAP0 + d * LINK_DIR``: [base] the horizon,
# then gap starts from ``base + 1`` and gap ends from ``base + 1 + LINK_GAPS``; the kept gaps are
# at places ``link_at[2d]`` .. ``link_at[2d + 1] - 1``, in time order. Gaps that end by the floor
# are dead (no later message of the stream arrives before it); they are dropped only when the
# places run out, and never change a result.


@refcount_free_jit
def _gap_room(lf, at, d, floor):
    """Make room after the last gap of direction ``d`` (every place after it used): drop the dead
    gaps (ending by ``floor``), and when the live ones fill every place the older half of them
    (the horizon becomes the last dropped gap's end); move the rest to the front. Returns how many
    places the kept gaps moved (a gap at place p is now at p minus that)."""
    base = LINK_GAP0 + d * LINK_DIR
    lo0 = base + 1
    hi0 = base + 1 + LINK_GAPS
    h = at[2 * d]
    t = at[2 * d + 1]
    while h < t and lf[hi0 + h] <= floor:
        h += 1
    if t - h == LINK_GAPS:
        half = LINK_GAPS // 2
        lf[base] = max(lf[base], lf[hi0 + h + half - 1])
        h += half
    for j in range(t - h):
        lf[lo0 + j] = lf[lo0 + h + j]
        lf[hi0 + j] = lf[hi0 + h + j]
    at[2 * d] = 0
    at[2 * d + 1] = t - h
    return h


@refcount_free_jit(inline="always")
def _link_serve(link_free, link_at, d, arrival, occ, floor):
    """Start of a message of ``occ`` ns on a crossing's link direction ``d`` (0 request, 1 response),
    a work-conserving server fed in issue order. ``floor``: no later message of the stream arrives
    before it.

    A message arriving no earlier than the latest arrival so far waits for the server; the idle
    time it leaves before its start is kept as a gap. One that arrives earlier (its access was
    issued later but got here first) starts in the first idle gap at or after its arrival and
    fills idle time from there (:func:`_link_early`). So the direction's work ends when a
    work-conserving server's would, and the mean wait is close to first-come first-served's."""
    if arrival >= link_free[2 + d]:
        f = link_free[d]
        s = max(arrival, f)
        if s > f:
            t = link_at[2 * d + 1]
            if t == LINK_GAPS:
                t -= _gap_room(link_free, link_at, d, floor)
            base = LINK_GAP0 + d * LINK_DIR
            link_free[base + 1 + t] = f
            link_free[base + 1 + LINK_GAPS + t] = s
            link_at[2 * d + 1] = t + 1
        link_free[d] = s + occ
        link_free[2 + d] = arrival
        return s
    return _link_early(link_free, link_at, d, arrival, occ, floor)


@refcount_free_jit
def _link_early(link_free, link_at, d, arrival, occ, floor):
    """:func:`_link_serve` for a message arriving before the latest arrival so far (apart, so that
    the kernel's loop keeps the common path inline). It starts in the first kept gap that ends
    after its arrival, at the later of the two, and fills idle time from there: the part a gap
    cannot hold takes the next gaps, and what no gap holds pushes the server's later work
    (messages already served keep their times). With no gap after its arrival it starts at once
    and pushes the later work by all of it; arriving before the history kept (the horizon) it
    starts at once and fills the kept gaps from the first."""
    base = LINK_GAP0 + d * LINK_DIR
    lo0 = base + 1
    hi0 = base + 1 + LINK_GAPS
    h = link_at[2 * d]
    t = link_at[2 * d + 1]
    k = t
    while k > h and link_free[hi0 + k - 1] > arrival:  # the first gap that ends after the arrival,
        k -= 1  # searched from the latest (an early message is usually a recent one)
    if k == t:
        link_free[d] = link_free[d] + occ
        return arrival
    s = arrival if arrival < link_free[base] else max(link_free[lo0 + k], arrival)
    rem = occ
    p = s
    while rem > 0.0 and k < t:
        g0 = link_free[lo0 + k]
        g1 = link_free[hi0 + k]
        p = max(g0, p)
        used = min(rem, g1 - p)
        inside = used < g1 - p  # the message ends inside this gap
        rem -= used
        if inside:
            if p > g0:  # split: the gap's part before it stays, its part after is a new gap
                link_free[hi0 + k] = p
                if t == LINK_GAPS:
                    moved = _gap_room(link_free, link_at, d, floor)
                    k -= moved
                    t -= moved
                if k + 1 >= 0:  # (else it fell in the older half dropped, as the gap it split)
                    for j in range(t, k + 1, -1):
                        link_free[lo0 + j] = link_free[lo0 + j - 1]
                        link_free[hi0 + j] = link_free[hi0 + j - 1]
                    link_free[lo0 + k + 1] = p + used
                    link_free[hi0 + k + 1] = g1
                    link_at[2 * d + 1] = t + 1
            else:
                link_free[lo0 + k] = p + used
            break
        if p > g0:  # it fills the gap's end
            link_free[hi0 + k] = p
            k += 1
        elif k == h:  # the whole first gap
            h += 1
            link_at[2 * d] = h
            k += 1
        else:  # a whole gap
            for j in range(k, t - 1):
                link_free[lo0 + j] = link_free[lo0 + j + 1]
                link_free[hi0 + j] = link_free[hi0 + j + 1]
            t -= 1
            link_at[2 * d + 1] = t
        p = p + used
    link_free[d] = link_free[d] + rem
    return s


@refcount_free_jit(inline="always")
def _in_use(ring, at):
    """Entries of a slot tree's free times (:func:`slot_tree`) still held at ``at`` (+inf padding excluded)."""
    k = 0
    for j in range(ring.shape[0]):
        if at < ring[j] < math.inf:
            k += 1
    return k


@refcount_free_jit(inline="always")
def _queue_stats(st, ring, at, s_max, s_full):
    """Statistics of a bounded queue (slot tree ``ring``) an access arrives at ``at``: the entries
    in use once it holds one (``st[s_max]``: their most), and whether it waited (``st[s_full]``)."""
    used = min(_in_use(ring, at) + 1, ring.shape[0])
    if used > st[s_max]:
        st[s_max] = used
    if ring[0] > at:
        st[s_full] += 1


@refcount_free_jit
def serve_kernel(issue, addr, size, is_write, first, fp, ip,
                 bank_free, cmd_free, last_line, wq_ring, wq_head, wcb_tag, wcb_filt, wcb_stamp, stamp,
                 wcb_prev, wcb_next, wcb_lru,
                 keys, times, used, wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr, loop_ring,
                 loop_tree, wloop_ring, wloop_tree, start_out, complete_out, ack_out, counters, need, ready, mod_end,
                 link_free, link_at, xr_ring, xr_tree, xw_ring, xw_tree, st):
    """Serve accesses ``first..n-1`` in order; returns the index reached (n when done).

    State arrays are updated in place; ``need``, ``ready``, ``mod_end`` are per-module scratch
    (``need``: units of the access on the module that the write-combining buffer misses). Pass
    either ``wq_ring``/``wq_head`` (arrival order) or the seven ``pq_*`` arrays (read priority), the
    other group as None, and ``wear_count`` None when wear levelling is off. ``loop_ring`` holds the
    completions of the accesses in flight (the reads' with split pools); ``wloop_ring`` the writes'
    with split pools (None: one pool), whose next slots are ``loop_pos`` = [read slot, write slot].
    Returns early (index of the access not started) when the pending table needs a rebuild.
    A requester across a fabric (``I_PATH``) passes ``link_free`` and ``link_at``, the link's
    request and response servers (:func:`media_index.link_state`: free times, latest arrivals,
    idle gaps), and ``xr_*`` / ``xw_*``, the device controller's read and write queue entries
    (slot trees, their winners at index 0); a requester without one passes the six as None (a
    variant compiled without the crossing's code).
    ``st``: the statistics vector (``media_index.S_*``, added to: the queues' occupancy, which only
    the loop sees), or None: the variant compiled without any statistics code (what a run without
    ``--stats`` runs).
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
    # the statistics only the loop sees (``st``: queue occupancy; the media model counts latency,
    # slot waits and link time from the per-access results): the crossing's device queue hold
    # times live in registers (numba compiles them out of the variant without ``st``)
    s_xr = s_xw = 0.0
    if st is not None:
        s_xr, s_xw = st[S_XR_HOLD_NS], st[S_XW_HOLD_NS]
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
        qs = t
        nl = 0
        # across a fabric: the request's messages, then an entry of the device's queue (numba compiles
        # the variant without a crossing, link_free None, without this code)
        if link_free is not None:
            # no later access starts before this one's slot (issue times and the pools' earliest
            # free slots never decrease): the link's idle gaps that end by then are dead
            floor = t if wloop_ring is None else max(now, min(root, wroot))
            nl = (size[i] + PATH_LINE_B - 1) // PATH_LINE_B
            occ = nl * (fp[F_UP_DATA] if is_write[i] else fp[F_UP_HDR])
            su = _link_serve(link_free, link_at, 0, t, occ, floor)
            t = su + occ + (fp[F_PATH_REQ_W] if is_write[i] else fp[F_PATH_REQ])
            if is_write[i]:
                if ip[I_PATH] & 4:  # a bounded write queue
                    if st is not None:
                        _queue_stats(st, xw_ring, t, S_XW_MAX, S_XW_FULL)
                    t = max(t, xw_ring[0])
            elif ip[I_PATH] & 2:  # a bounded read queue
                if st is not None:
                    _queue_stats(st, xr_ring, t, S_XR_MAX, S_XR_FULL)
                t = max(t, xr_ring[0])
            qs = t
            t = t + fp[F_PATH_DEV]
        if g0 == g1 and not is_write[i]:  # the common case, one unit read: no per-module loops
            m, loc, b = _where(g0, ip)
            t0 = t
            if ip[I_FORWARD] == 0:
                p = pend_lookup(keys, times, g0)
                if pq_n is not None and p == QUEUED:
                    p = _drain_unit(m, b, g0, fp, ip, bank_free, times, wear_count,
                                    pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
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
                if pq_n is not None and _starts_before(m, b, cs + fp[F_CMD_R], bank_free, pq_hr):
                    _drain_idle(m, b, cs + fp[F_CMD_R], fp, ip, bank_free, times, wear_count,
                                pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
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
                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
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
                        if pq_n is not None and _starts_before(m, b, ready[m], bank_free, pq_hr):
                            _drain_idle(m, b, ready[m], fp, ip, bank_free, times, wear_count,
                                        pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
                        u = _media_read(m, loc, b, ready[m], fp, last_line, bank_free)
                        ready[m] += fp[F_BUS_R]  # the module's next unit: the bus's next slot
                        c_mr += unit
                    done = max(done, u)
                acked = done
            else:
                ack = t + fp[F_LAT_W]
                ack0 = ack
                waited = False
                room = t  # when the controller holds the access (a posted write takes its bus slot then)
                for k in range(mc):
                    m = _cyc(mf, k, modules)
                    if need[m] > 0:
                        if wq_ring is not None:
                            if st is not None:
                                busy = 0
                                for q in range(wq_ring.shape[1]):
                                    if wq_ring[m, q] > ack0:
                                        busy += 1
                                st[S_WQ_MAX] = max(st[S_WQ_MAX], min(busy + 1, wq_ring.shape[1]))
                                waited = waited or wq_ring[m, wq_head[m]] > ack0
                            ack = max(ack, wq_ring[m, wq_head[m]])  # the entry that frees first
                        if pq_n is not None:
                            # room for the media writes this access will post: its buffer misses
                            # that find the buffer full (each evicts a unit), or every unit
                            posts = need[m] if wcb == 0 else need[m] - (wcb - wcb_lru[m, 2])
                            while posts > 0 and pq_n[m] > 0 and pq_n[m] + posts > qcap:
                                room = max(room, _drain_first(m, fp, ip, bank_free, times, wear_count,
                                                              pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)[0])
                ack = max(ack, room)
                bus_from = ack  # arrival order: the media write takes the bus when acknowledged
                if pq_n is not None:
                    bus_from = room  # posted: its acknowledgement latency is the requester's, not the bus's
                for k in range(mc):
                    m = _cyc(mf, k, modules)
                    ready[m] = ack  # a unit evicted by this same access needs no command
                    mod_end[m] = ack
                    if need[m] > 0:
                        cs = max(bus_from, cmd_free[m])
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
                                          wear_count, pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
                                else:
                                    wd = _media_write(m, vb, max(ready[m], times[vs]), vs, fp, ip, bank_free, times,
                                                      wear_count)
                                    mod_end[m] = max(mod_end[m], wd)
                                c_mw += unit
                            sl = pend_slot(keys, times, used, g, now)
                            if pq_n is not None and times[sl] == QUEUED:
                                _drain_unit(m, b, g, fp, ip, bank_free, times, wear_count,
                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
                            if partial and ip[I_RMW] == 1:
                                s = max(ready[m], times[sl])
                                if pq_n is not None and _starts_before(m, b, s, bank_free, pq_hr):
                                    _drain_idle(m, b, s, fp, ip, bank_free, times, wear_count,
                                                pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
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
                                        pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
                        if partial and ip[I_RMW] == 1:
                            s = max(r, times[sl])
                            if pq_n is not None and _starts_before(m, b, s, bank_free, pq_hr):
                                _drain_idle(m, b, s, fp, ip, bank_free, times, wear_count,
                                            pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
                            r = _fill_read(m, b, s, fp, bank_free)
                            c_mr += unit
                            c_rmw += 1
                        if pq_n is not None:
                            u = max(r, times[sl])  # in the controller's queue (posted)
                            _post(m, b, g, sl, u, fp, ip, bank_free, times, wear_count,
                                  pq_g, pq_s, pq_r, pq_head, pq_len, pq_n, pq_hr)
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
                            if st is not None:
                                st[S_WQ_ENTRIES] += 1
                                st[S_WQ_HOLD_NS] += mod_end[m] - ack
                if st is not None:
                    if waited:
                        st[S_WQ_FULL] += 1
                    if pq_n is not None:
                        for k in range(mc):
                            m = _cyc(mf, k, modules)
                            if need[m] > 0:
                                st[S_PQ_SAMPLES] += 1
                                st[S_PQ_SUM] += pq_n[m]
                                st[S_PQ_MAX] = max(st[S_PQ_MAX], pq_n[m])
                acked = ack
        if link_free is not None:  # the response crosses back: a read's data, a write's completion
            if is_write[i]:
                occ = nl * fp[F_DN_HDR]
                sd = _link_serve(link_free, link_at, 1, acked, occ, floor)
                if st is not None:
                    s_xw += done - qs
                v, leaf = _slot_replay(xw_ring, xw_tree, xw_tree[0], done)  # held until written
                xw_ring[0] = v
                xw_tree[0] = leaf
                acked = sd + occ + fp[F_PATH_RESP_W]
            else:
                occ = nl * fp[F_DN_DATA]
                sd = _link_serve(link_free, link_at, 1, acked, occ, floor)
                if st is not None:
                    s_xr += sd + occ - qs
                v, leaf = _slot_replay(xr_ring, xr_tree, xr_tree[0], sd + occ)  # held until its data is sent
                xr_ring[0] = v
                xr_tree[0] = leaf
                acked = sd + occ + fp[F_PATH_RESP]
                done = acked
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
    if st is not None:
        st[S_XR_HOLD_NS], st[S_XW_HOLD_NS] = s_xr, s_xw
    loop_ring[0] = root
    loop_tree[0] = root_i
    if wloop_ring is not None:
        wloop_ring[0] = wroot
        wloop_tree[0] = wroot_i
    return reached




@refcount_free_jit(inline="always")
def _lat_bucket(lat):
    """The histogram bucket of a latency (ns): octave ``e`` (``2**e <= lat < 2**(e + 1)``) split in
    :data:`LAT_PER_OCTAVE` equal parts, bucket ``e * LAT_PER_OCTAVE + part`` (integer bits, no
    logarithm); below :data:`LAT_PER_OCTAVE` ns the bucket is the whole ns; the last bucket holds
    everything above."""
    if lat >= LAT_TOP_NS:
        return LAT_BUCKETS - 1
    x = int(lat) if lat > 0 else 0
    if x < LAT_PER_OCTAVE:
        return x
    e = 63 - leading_zeros(x)
    return e * LAT_PER_OCTAVE + ((x >> (e - LAT_SUB_BITS)) & (LAT_PER_OCTAVE - 1))


@refcount_free_jit
def count_stream(st, issue, size, is_write, start, ack, up_hdr, up_data, down_hdr, down_data):
    """Add a served stream's per-access results to the statistics vector ``st``: each access's
    latency (``start`` to ``ack``) to its kind's count, sum, most and histogram bucket, its slot's
    hold time (the same span), whether it started after its issue (it waited), the bytes it asked
    for, and its line messages' time on a crossing's request and response servers (the four
    message times per line; 0 without a crossing). One pass, no allocation."""
    rn = st[S_READS]
    rs = st[S_READ_NS]
    rm = st[S_READ_MAX_NS]
    wn = st[S_WRITES]
    ws = st[S_WRITE_NS]
    wm = st[S_WRITE_MAX_NS]
    rb = st[S_READ_B]
    wb = st[S_WRITE_B]
    waits = st[S_SLOT_WAITS]
    up = st[S_LINK_UP_NS]
    dn = st[S_LINK_DOWN_NS]
    for i in range(issue.shape[0]):
        lat = ack[i] - start[i]
        k = _lat_bucket(lat)
        nl = (size[i] + PATH_LINE_B - 1) // PATH_LINE_B
        if start[i] > issue[i]:
            waits += 1
        if is_write[i]:
            wn += 1
            ws += lat
            wm = max(wm, lat)
            wb += size[i]
            up += nl * up_data
            dn += nl * down_hdr
            st[S_HIST + LAT_BUCKETS + k] += 1
        else:
            rn += 1
            rs += lat
            rm = max(rm, lat)
            rb += size[i]
            up += nl * up_hdr
            dn += nl * down_data
            st[S_HIST + k] += 1
    st[S_READS] = rn
    st[S_READ_NS] = rs
    st[S_READ_MAX_NS] = rm
    st[S_WRITES] = wn
    st[S_WRITE_NS] = ws
    st[S_WRITE_MAX_NS] = wm
    st[S_READ_B] = rb
    st[S_WRITE_B] = wb
    st[S_SLOT_WAITS] = waits
    st[S_SLOT_HOLD_NS] = rs + ws
    st[S_LINK_UP_NS] = up
    st[S_LINK_DOWN_NS] = dn
