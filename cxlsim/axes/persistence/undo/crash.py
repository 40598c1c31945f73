"""The byte-level crash protocol and recovery of ``persistence: undo`` (TrainingCXL's batch-aware undo
log): its persistent layout, initial image and timed write events, and its recovery plan (the
scheme's module docstring, :mod:`cxlsim.axes.persistence.undo.scheme`, states the protocol; its
class exposes these as ``build_protocol`` and ``plan``). Imported only when a crash campaign asks
for them.
"""

from __future__ import annotations

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.protocols import (
    FAST_LOGS,
    MLP_CHUNK,
    MemLog,
    Protocol,
    delete_line,
    flag_words,
    line_align,
    read_flag,
    timed,
    update_events,
    write_latency,
)
from cxlsim.crash.recovery import RecoveryPlan
from cxlsim.crash.reference import ALIGN_B, MISC_POOL_B, Reference
from cxlsim.crash.timeline import Timeline
from cxlsim.errors import InputError
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.topology import Placement


def _mem_logs(lay: im.Layout, ref: Reference, mems: int, placement: Placement | None) -> tuple[MemLog, ...]:
    """Each CXL-MEM's log regions, in address order after the data region (CXL-MEM 0 keeps the
    one-device names); MLP shards are whole chunks, split as evenly as chunks allow."""
    n_chunks = -(-ref.mlp_n // MLP_CHUNK)
    if n_chunks < mems:
        raise InputError(f"the functional MLP has {n_chunks} log chunks, fewer than {mems} CXL-MEMs")
    out = []
    for d in range(mems):
        pre = "" if d == 0 else f"mem{d}."
        if placement is None:
            rows = list(ref.unique_rows)
        else:
            rows = [r[placement.mem_of(r) == d] for r in ref.unique_rows]
        cap = max(int(r.size) for r in rows)
        c_lo, c_hi = n_chunks * d // mems, n_chunks * (d + 1) // mems
        lo, hi = c_lo * MLP_CHUNK, min(c_hi * MLP_CHUNK, ref.mlp_n)
        emb = tuple(lay.add(f"{pre}emb_log.{s}", line_align(cap * 8) + cap * ref.layout.row_B) for s in (0, 1))
        mlp = tuple(lay.add(f"{pre}mlp_log.{s}", (hi - lo) * 4) for s in (0, 1))
        chunks = tuple(lay.add(f"{pre}mlp_chunks.{s}", (c_hi - c_lo) * 8) for s in (0, 1))
        flags = lay.add(f"{pre}flags", 4 * im.LINE_B)
        out.append(MemLog(d, emb, mlp, chunks, flags, cap, lo, hi, rows))
    return tuple(out)

def build_undo(cfg: SystemConfig, ref: Reference, tl: Timeline, devices: DeviceGraph, bug: str | None) -> Protocol:
    """Undo logs per CXL-MEM. Global persistence rule (docs/design.md#scale-out): batch ``n`` is
    persistent once every device's logs of ``n`` are flagged; only then does any device delete its
    logs of ``n − 1`` (relaxed: its embedding log of ``n − 1``), and an MLP log completed at batch
    ``n`` is flagged only once every device's embedding log of ``n`` is. One device: the
    single-device protocol."""
    p = cfg.pipeline
    N, row_B, pool = ref.n_batches, ref.layout.row_B, ref.pool
    M = tl.mems
    placement = Placement.of(ref.layout, M, cfg.topology.tables_policy) if M > 1 else None
    lay = im.Layout()
    lay.add("data", ref.table_B)
    mems = _mem_logs(lay, ref, M, placement)
    if M > 1:  # each device's row ids per batch, written into its embedding logs
        pool.reserve(sum(int(r.size) * 8 + ALIGN_B for d in mems for r in d.rows) + MISC_POOL_B)
    lat_log = write_latency(devices, p.checkpoint_on)
    lat_data = write_latency(devices, p.tables_on)
    proto = Protocol("undo", p.relaxed_lookup, p.relaxed_mlp_log, bug, lay, np.zeros(0, np.uint8), None,
                     N, ref.rows, row_B, ref.mlp_n, max(d.cap for d in mems), tl.mlp_gap_bound, lat_log, lat_data,
                     True, mems[0].flags, mems, fast_path=FAST_LOGS)
    img = np.zeros(lay.total_B, np.uint8)
    img[:ref.table_B] = ref.table(-1).view(np.uint8).ravel()
    for d in mems:  # MLP log 0 of every device: its shard of the initial parameters
        img[d.mlp_slot[0].base:d.mlp_slot[0].end] = ref.mlp(-1)[d.mlp_lo:d.mlp_hi].view(np.uint8)
        ct = d.chunk_table[0]
        img[ct.base:ct.end] = np.full(d.n_chunks, -1, np.int64).view(np.uint8)
        img[d.mlp_flag_addr(0):d.mlp_flag_addr(0) + im.LINE_B] = flag_words(0, -1, -1).view(np.uint8)
    proto.image0 = img

    log = im.WriteLog(lay)
    zero = pool.put(np.zeros(im.LINE_B, np.uint8))
    early_flag = bug == "flag-before-data"
    early_delete = bug == "delete-old-log-early"
    emb_flag_delete = bug == "delete-on-embedding-flag"  # the old checkpoint goes on the new embedding flag
    seq = [1] * M  # next MLP log, per device
    chunk_state = [np.full(d.n_chunks, -1, np.int64) for d in mems]  # relaxed: state of each chunk of the log in progress

    def persistent(acks: list[float], d: int) -> float:
        """When device ``d`` may treat a batch as persistent, given every device's flag acks."""
        return max(acks) if proto.global_rule else acks[d]

    for n in range(N):
        emb_ack, mlp_ack = [0.0] * M, [0.0] * M
        for d in mems:
            i, c = d.index, sfx(d.index)
            rows = d.rows[n]
            nrows = int(rows.size)
            slot = n % 2
            el = tl.span("emb_log", n, i)
            wb = im.WriteBatch.concat([
                im.contiguous(d.emb_ids_addr(slot), pool.put(rows) if M > 1 else int(ref.ids_off[n]), nrows * 8),
                im.gathered(d.emb_vals_addr(slot), ref.table_offset(n - 1) + rows * row_B, row_B),
            ])
            flag = im.line(d.emb_flag_addr(slot), pool.put(flag_words(n, nrows)))
            emb_ack[i] = timed(log, wb, el, lat_log, im.LOG, f"emb_log{c} {n}", n, flag, f"emb_log{c} {n} flag",
                               early_flag)
            if early_delete and n >= 1:
                delete_line(log, d.emb_flag_addr(1 - slot), zero, el[0], lat_log, f"delete emb_log{c} {n - 1}", n)
            update_events(log, cfg, ref, tl, n, lat_data, rows if M > 1 else None, i)
            if p.relaxed_mlp_log:
                continue
            ml = tl.span("mlp_log", n, i)
            s = seq[i] % 2
            wb = im.WriteBatch.concat([
                im.contiguous(d.mlp_slot[s].base, ref.mlp_offset(n - 1) + 4 * d.mlp_lo, (d.mlp_hi - d.mlp_lo) * 4),
                im.contiguous(d.chunk_table[s].base, pool.put(np.full(d.n_chunks, n - 1, np.int64)), d.n_chunks * 8),
            ])
            flag = im.line(d.mlp_flag_addr(s), pool.put(flag_words(seq[i], n - 1, n - 1)))
            if early_delete:
                delete_line(log, d.mlp_flag_addr(1 - s), zero, el[0], lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
            mlp_ack[i] = timed(log, wb, ml, lat_log, im.LOG, f"mlp_log{c} {n}", n, flag, f"mlp_log{c} {n} flag",
                               early_flag)
        for d in mems:
            i, c = d.index, sfx(d.index)
            slot = n % 2
            if not p.relaxed_mlp_log:
                s = seq[i] % 2
                if not early_delete:
                    both = emb_ack if emb_flag_delete else [max(a, b) for a, b in zip(emb_ack, mlp_ack, strict=True)]
                    at = persistent(both, i)
                    if n >= 1:
                        delete_line(log, d.emb_flag_addr(1 - slot), zero, at, lat_log, f"delete emb_log{c} {n - 1}", n)
                    delete_line(log, d.mlp_flag_addr(1 - s), zero, at, lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
                seq[i] += 1
                continue
            # relaxed: the embedding log of n-1 goes once log n is flagged; MLP logs advance in chunks
            if not early_delete and n >= 1:
                delete_line(log, d.emb_flag_addr(1 - slot), zero, persistent(emb_ack, i), lat_log,
                            f"delete emb_log{c} {n - 1}", n)
            ml = tl.span("mlp_log", n, i)
            f0, f1 = tl.mlp_fractions(i)[n]
            k = d.n_chunks
            c0 = int(np.floor(f0 * k + 1e-9))
            c1 = k if f1 >= 1.0 else int(np.floor(f1 * k + 1e-9))
            if c1 <= c0 and f1 < 1.0:
                continue
            s = seq[i] % 2
            state = chunk_state[i]
            lo = c0 * MLP_CHUNK * 4
            hi = min(c1 * MLP_CHUNK, d.mlp_hi - d.mlp_lo) * 4
            state[c0:c1] = n - 1
            parts = [im.contiguous(d.mlp_slot[s].base + lo, ref.mlp_offset(n - 1) + 4 * d.mlp_lo + lo, hi - lo)]
            flag = None
            if early_delete and c0 == 0:
                delete_line(log, d.mlp_flag_addr(1 - s), zero, ml[0], lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
            if emb_flag_delete and c0 == 0:
                delete_line(log, d.mlp_flag_addr(1 - s), zero, persistent(emb_ack, i), lat_log,
                            f"delete mlp_log{c} {seq[i] - 1}", n)
            if c1 == k:
                parts.append(im.contiguous(d.chunk_table[s].base, pool.put(state.copy()), k * 8))
                flag = im.line(d.mlp_flag_addr(s), pool.put(flag_words(seq[i], int(state.min()), int(state.max()))))
            # a log completed at batch n is flagged only once batch n's embedding log is (on every
            # device): an MLP log newer than every flagged embedding log would pair with older tables
            ack = timed(log, im.WriteBatch.concat(parts), ml, lat_log, im.LOG, f"mlp_log{c} {n} (log {seq[i]})", n,
                        flag, f"mlp_log{c} {n} flag (log {seq[i]})", early_flag, flag_after=persistent(emb_ack, i))
            if flag is not None:
                if not (early_delete or emb_flag_delete):
                    delete_line(log, d.mlp_flag_addr(1 - s), zero, ack, lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
                seq[i] += 1
                state[:] = -1
    proto.events = log.finish()
    return proto

def _read_mem(img: np.ndarray, proto: Protocol, d: MemLog) -> tuple[dict, dict, str | None]:
    """Device ``d``'s flagged logs: embedding {batch: (slot, rows)}, MLP {seq: (slot, lo, hi)}."""
    N = proto.n_batches
    on = "" if len(proto.mems) == 1 else f" of CXL-MEM {d.index}"
    emb: dict[int, tuple[int, int]] = {}
    for s in (0, 1):
        f = read_flag(img, d.emb_flag_addr(s))
        if f is None:
            continue
        b, nrows = f[0], f[1]
        if not (0 <= b < N and 0 <= nrows <= d.cap) or b in emb:
            return emb, {}, f"corrupt embedding-log flag in slot {s}{on}: batch {b}, {nrows} rows"
        emb[b] = (s, nrows)
    mlps: dict[int, tuple[int, int, int]] = {}
    for s in (0, 1):
        f = read_flag(img, d.mlp_flag_addr(s))
        if f is None:
            continue
        seq, lo, hi = f[0], f[1], f[2]
        if seq < 0 or seq % 2 != s or not (-1 <= lo <= hi < N) or seq in mlps:
            return emb, mlps, f"corrupt MLP-log flag in slot {s}{on}: log {seq}, batches {lo}..{hi}"
        mlps[seq] = (s, lo, hi)
    if not mlps:
        return emb, mlps, f"no flagged MLP log{on}: the MLP parameters are lost"
    return emb, mlps, None

def plan_undo(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    """The global rule (docs/design.md#scale-out; the module docstring): ``P`` is the newest batch
    whose embedding log is flagged on every CXL-MEM and, without relaxation, for which every device
    still has a flagged MLP log of the parameters after ``P − 1`` — a device's newest MLP log may be
    a batch ahead (it flagged both logs of ``P + 1`` while another device has not) or a batch behind
    (its MLP log of ``P`` is not flagged yet: then ``P − 1``, whose embedding logs are still flagged
    everywhere because deletion waits for both flags of ``P`` on every device). Every device
    restores its flagged embedding logs of ``P`` and newer, newest first (undoing a possibly partial
    update ``P``): ``m = P − 1``, and reads the MLP log holding the parameters after ``m`` (relaxed:
    its newest). No such batch: the data region is the initial model (``m = −1``). One device: the
    single-device rule of the module docstring. With the ``local-persistence`` bug only CXL-MEM 0's
    flags decide ``P``."""
    read = [_read_mem(img, proto, d) for d in proto.mems]
    for _, _, err in read:
        if err:
            return RecoveryPlan(-2, error=err)
    embs, mlps = [r[0] for r in read], [r[1] for r in read]
    trusted = range(len(embs)) if proto.global_rule else range(1)
    common = sorted(set.intersection(*(set(embs[i]) for i in trusted)), reverse=True)
    P = common[0] if common else None
    want = None  # without relaxation: the batch every MLP log read must hold (None: each device's newest)
    if not proto.relaxed_mlp:
        # the newest batch P flagged on every device whose MLP logs of the parameters after P − 1
        # exist on every device (P's MLP logs may not all be flagged yet: then P − 1, whose logs are
        # still there because deletion waits for both flags of P on every device)
        for cand in common or [None]:
            h = -1 if cand is None else cand - 1
            if all(any(v[2] == h for v in mlps[i].values()) for i in trusted):
                P, want = cand, h
                break
        else:
            return RecoveryPlan(-2, error=f"no MLP log holds the parameters after batch {-1 if P is None else P - 1} "
                                          f"(or the batch before it) on every CXL-MEM")
    m = -1 if P is None else P - 1
    one = len(proto.mems) == 1
    restores, used, parts = [], [], []
    for d, emb, mlp in zip(proto.mems, embs, mlps, strict=True):
        on = "" if one else f"CXL-MEM {d.index}: "
        for b in sorted((b for b in emb if P is None or b >= P), reverse=True):
            s, nrows = emb[b]
            restores.append((d.emb_ids_addr(s), d.emb_vals_addr(s), nrows, d.emb_slot[s].rid))
            used.append(f"{on}emb_log {b} (slot {s}, {nrows} rows)")
        seq = max(mlp)
        if want is not None and mlp[seq][2] != want:  # the log of the parameters after m, if any
            seq = max((q for q, v in mlp.items() if v[2] == want), default=seq)
        s = mlp[seq][0]
        ct = d.chunk_table[s]
        claimed = img[ct.base:ct.base + d.n_chunks * 8].view(np.int64).copy()
        parts.append((d.mlp_slot[s].base, d.mlp_lo, d.mlp_hi, claimed))
        used.append(f"{on}MLP log {seq} (slot {s})")
    return RecoveryPlan(m, restores, parts, used)
