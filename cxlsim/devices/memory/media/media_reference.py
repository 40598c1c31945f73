"""The plain-Python reference of the media kernel (bit-identical results; tests hold them together).

Split out of :mod:`cxlsim.devices.memory.media.media_kernel` (see its docstring for the mechanism).
"""

from __future__ import annotations

import numpy as np

from cxlsim.devices.memory.media.media_index import (
    C_ACK_MAX,
    C_END_MAX,
    C_FILL,
    C_HITS,
    C_MEDIA_R,
    C_MEDIA_W,
    C_RAW,
    C_RAW_NS,
    C_RMW,
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
    I_FORWARD,
    I_INTERLEAVE,
    I_MODULES,
    I_OUTSTANDING,
    I_PATH,
    I_READ_PRIORITY,
    I_RMW,
    I_UNIT,
    I_WCB,
    I_WEAR_INTERVAL,
    I_WRITE_AFTER_READS,
    I_WRITE_OUTSTANDING,
    LINK_GAPS,
    N_C,
    NO_TIME,
    PATH_LINE_B,
    QUEUED,
    keep_link_gaps,
    link_gaps,
)


def serve_reference(issue, addr, size, is_write, fp, ip, pending, bank_free, cmd_free, last_line,
                    wq_ring, wq_head, wcb_lines, wear_count, posted, qcap, link=None, xr=None, xw=None):
    """Plain-Python twin of :func:`serve_kernel` (the whole stream in one call).

    ``pending`` is a dict {global unit: pending-until ns}; ``wcb_lines`` is a list per module of
    buffered units ordered least- to most-recently used; ``posted[m][b]`` is bank ``b``'s list of
    posted writes ``[unit, ready ns]``, oldest first, at most ``qcap`` per module (read priority).
    ``link``: a crossing's ``(link_free, link_at)`` (:func:`media_index.link_state`), or None. All and
    the numpy state arrays are updated in place. Returns ``(start, complete, ack, counters)``.
    """
    n = len(issue)
    link_free, link_at = link if link is not None else (None, None)
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
        if queued(m) >= qcap:  # the kernel's ring has no room either: it raises the same
            raise AssertionError("media write queue: a module's posted writes would exceed write_queue_entries")
        posted[m][b].append([g, r])
        pending[g] = QUEUED

    def add_gap(gaps, horizon, k, lo, hi, floor):  # the kernel's _gap_room, then the insert
        if len(gaps) == LINK_GAPS:  # full: drop the dead (a split's first part may be), else the older half
            dead = 0
            while dead < len(gaps) and gaps[dead][1] <= floor:
                dead += 1
            del gaps[:dead]
            k -= dead
            if len(gaps) == LINK_GAPS:
                horizon = max(horizon, gaps[LINK_GAPS // 2 - 1][1])
                del gaps[:LINK_GAPS // 2]
                k -= LINK_GAPS // 2
            if k < 0:
                return horizon
        gaps.insert(k, [lo, hi])
        return horizon

    def link_serve(d, arrival, occ, floor):  # the kernel's _link_serve
        horizon, gaps = link_gaps(link_free, link_at, d)
        while gaps and gaps[0][1] <= floor:  # dead gaps (the kernel drops them later: no result moves)
            gaps.pop(0)
        s, rem = link_step(d, gaps, horizon, arrival, occ, floor)
        link_free[d] = link_free[d] + rem
        return s

    def link_step(d, gaps, horizon, arrival, occ, floor):
        """The message's start and the part of it no gap holds (``link_free[d]`` moves by it)."""
        if arrival >= link_free[2 + d]:
            f = float(link_free[d])
            s = max(arrival, f)
            if s > f:
                horizon = add_gap(gaps, horizon, len(gaps), f, s, floor)
            link_free[d] = s
            link_free[2 + d] = arrival
            keep_link_gaps(link_free, link_at, d, horizon, gaps)
            return s, occ
        k = next((j for j, g in enumerate(gaps) if g[1] > arrival), len(gaps))
        if k == len(gaps):
            keep_link_gaps(link_free, link_at, d, horizon, gaps)
            return arrival, occ
        s = arrival if arrival < horizon else max(gaps[k][0], arrival)
        rem, p = occ, s
        while rem > 0.0 and k < len(gaps):
            g0, g1 = gaps[k]
            p = max(g0, p)
            used = min(rem, g1 - p)
            inside = used < g1 - p
            rem -= used
            if inside:  # ends inside the gap: what is left of it either side
                if p > g0:
                    gaps[k][1] = p
                    horizon = add_gap(gaps, horizon, k + 1, p + used, g1, floor)
                else:
                    gaps[k][0] = p + used
                break
            if p > g0:
                gaps[k][1] = p
                k += 1
            else:
                del gaps[k]
            p = p + used
        keep_link_gaps(link_free, link_at, d, horizon, gaps)
        return s, rem

    for i in range(n):
        a0, a1 = int(addr[i]), int(addr[i]) + int(size[i])
        units = range(a0 // unit, (a1 - 1) // unit + 1)
        ring, k = slot(i)
        t = max(float(issue[i]), ring[k])
        if w_outstanding and is_write[i] and ip[I_WRITE_AFTER_READS]:
            t = max(t, c[C_FILL])
        start[i] = t
        path = bool(ip[I_PATH])
        nl = 0
        if path:  # across a fabric: the request's messages, then an entry of the device's queue
            floor = max(float(issue[i]), min(min(done_ring), min(w_ring))) if w_outstanding else t
            nl = -(-int(size[i]) // PATH_LINE_B)
            occ = nl * float(fp[F_UP_DATA] if is_write[i] else fp[F_UP_HDR])
            su = link_serve(0, t, occ, floor)
            t = su + occ + float(fp[F_PATH_REQ_W] if is_write[i] else fp[F_PATH_REQ])
            bounded = int(ip[I_PATH]) & (4 if is_write[i] else 2)
            if bounded:
                t = max(t, min(xw if is_write[i] else xr))
            t += float(fp[F_PATH_DEV])
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
            if path:  # the data crosses back; the queue entry is held until it is sent
                occ = nl * float(fp[F_DN_DATA])
                sd = link_serve(1, done, occ, floor)
                xr[xr.index(min(xr))] = sd + occ
                done = sd + occ + float(fp[F_PATH_RESP])
            complete[i] = ack_out[i] = ring[k] = done
            c[C_FILL] = max(c[C_FILL], done)
            c[C_ACK_MAX] = max(c[C_ACK_MAX], done)
            c[C_END_MAX] = max(c[C_END_MAX], done)
        else:
            ack = t + float(fp[F_LAT_W])
            room = t  # when the controller holds the access (a posted write takes its bus slot then)
            for m in need:
                if not rp:
                    wq_head[m] = int(np.argmin(wq_ring[m]))
                    ack = max(ack, float(wq_ring[m, wq_head[m]]))
                    continue
                posts = misses[m] if wcb == 0 else misses[m] - (wcb - len(wcb_lines[m]))
                while posts > 0 and queued(m) > 0 and queued(m) + posts > qcap:
                    room = max(room, drain_first(m)[0])
            ack = max(ack, room)
            ready = dict.fromkeys(range(modules), ack)
            mod_end = dict.fromkeys(range(modules), ack)
            for m in need:
                cs = max(room if rp else ack, float(cmd_free[m]))
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
            if path:  # the completion crosses back; the queue entry is held until written
                occ = nl * float(fp[F_DN_HDR])
                sd = link_serve(1, ack, occ, floor)
                xw[xw.index(min(xw))] = done
                ack = sd + occ + float(fp[F_PATH_RESP_W])
            complete[i] = done
            ack_out[i] = ring[k] = ack
            c[C_FILL] = NO_TIME
            c[C_ACK_MAX] = max(c[C_ACK_MAX], ack)
            c[C_END_MAX] = max(c[C_END_MAX], done)
    return start, complete, ack_out, np.array(c)
