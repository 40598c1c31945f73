"""The byte-level crash protocol and recovery of ``persistence: cnr`` (Check-N-Run-style incremental
checkpoints): its persistent layout, initial image and timed write events, and its recovery plan
(the scheme's module docstring, :mod:`cxlsim.axes.persistence.cnr.scheme`, states the protocol; its
class exposes these as ``build_protocol`` and ``plan``). Imported only when a crash campaign asks
for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cxlsim.axes.persistence.cnr.increments import is_checkpoint, quantise, union_sorted
from cxlsim.crash import image as im
from cxlsim.crash.protocols import (
    Protocol,
    flag_words,
    line_align,
    snapshot_image,
    timed,
    update_events,
    write_latency,
)
from cxlsim.crash.recovery import RecoveryPlan, committed_records
from cxlsim.crash.reference import MISC_POOL_B
from cxlsim.errors import InputError
from cxlsim.units import FP32_B


@dataclass
class CnrProtocol(Protocol):
    """The cnr scheme's protocol: checkpoints ``j`` of batches ``ckpt_batches[j]``, committed (their
    flags acknowledged) at ``commit_acks[j]``."""

    ckpt_batches: tuple[int, ...] = ()
    commit_acks: list[float] = field(default_factory=list)

    def committed(self, tl, t: float) -> int:
        """The batch of the last checkpoint whose flag was durable by ``t`` (−1: none)."""
        done = [b for b, ack in zip(self.ckpt_batches, self.commit_acks, strict=True) if ack <= t]
        return max(done, default=-1)

    def allowed(self, done: int, c: int) -> tuple[int, int]:
        """Any batch up to the last completed update: the lower bound is the last commit."""
        return -1, c


def build_cnr(cfg, ref, tl, devices, bug) -> CnrProtocol:
    """Layout: data region (updated in place), the initial snapshot (tables + MLP), one record per
    checkpoint (row ids, dequantised rows, MLP) and a flag line per record."""
    p = cfg.pipeline
    k, bits = p.cnr_interval_batches, p.cnr_quant_bits
    N, row_B, pool = ref.n_batches, ref.layout.row_B, ref.pool
    dim = row_B // FP32_B
    batches = tuple(n for n in range(N) if is_checkpoint(p, n))
    if not batches:
        raise InputError(f"--batches {N}: no checkpoint is taken before the end (cnr_interval_batches {k})")
    rows_of = [union_sorted([ref.unique_rows[b] for b in range(n - k + 1, n + 1)]) for n in batches]
    pool.reserve(sum(r.size * (8 + row_B) + 2 * 64 for r in rows_of) + MISC_POOL_B)
    lay = im.Layout()
    lay.add("data", ref.table_B)
    snap = lay.add("snapshot", line_align(ref.table_B) + ref.mlp_n * 4)
    recs = tuple(lay.add(f"cnr.{j}", line_align(r.size * 8) + line_align(r.size * row_B) + ref.mlp_n * 4)
                 for j, r in enumerate(rows_of))
    flags = lay.add("flags", len(batches) * im.LINE_B)
    lat_log = write_latency(devices, p.checkpoint_on)
    lat_data = write_latency(devices, p.tables_on)
    proto = CnrProtocol("cnr", False, False, bug, lay, np.zeros(0, np.uint8), None, N, ref.rows, row_B, ref.mlp_n,
                        max(int(r.size) for r in rows_of), 0, lat_log, lat_data, True, flags, snapshot=snap,
                        records=recs, ckpt_batches=batches)
    proto.image0 = snapshot_image(lay, ref, snap)

    log = im.WriteLog(lay)
    for n in range(N):
        update_events(log, cfg, ref, tl, n, lat_data)
    for j, (n, rows) in enumerate(zip(batches, rows_of, strict=True)):
        vals, err = quantise(ref.table(n)[rows].reshape(rows.size, dim), bits)
        proto.tolerance = max(proto.tolerance, err)
        ids_at, vals_at, mlp_at = proto.record_parts(j, rows.size)
        wb = im.WriteBatch.concat([im.contiguous(ids_at, pool.put(rows.astype(np.int64)), rows.size * 8),
                                   im.contiguous(vals_at, pool.put(vals), rows.size * row_B),
                                   im.contiguous(mlp_at, ref.mlp_offset(n), ref.mlp_n * 4)])
        flag = im.line(proto.record_flag_addr(j), pool.put(flag_words(n, rows.size, recs[j].base)))
        proto.commit_acks.append(timed(log, wb, tl.span("cnr", n), lat_log, im.LOG, f"cnr {n}", n, flag,
                                       f"cnr {n} commit flag", bug == "flag-before-data"))
        if bug == "delete-old-log-early" and j >= 1:  # the previous increment is still needed: a bug
            zero = pool.put(np.zeros(im.LINE_B, np.uint8))
            s = tl.span("cnr", n)[0]
            log.add(im.line(proto.record_flag_addr(j - 1), zero), s, s + lat_log, im.DELETE, f"delete cnr {j - 1}", n)
    proto.events = log.finish()
    return proto


def plan_cnr(img: np.ndarray, proto: CnrProtocol) -> RecoveryPlan:
    """The snapshot plus every committed checkpoint in order, up to the first without a valid flag;
    the MLP from the last of them (or the snapshot)."""
    restores, error = committed_records(img, proto, proto.ckpt_batches, "checkpoint")
    if error:
        return RecoveryPlan(-2, error=error)
    k = len(restores) - 1
    if k >= 0:
        m = proto.ckpt_batches[k]
        mlp_addr = proto.record_parts(k, restores[-1][2])[2]
        used = [f"snapshot + checkpoints 0..{k}"]
    else:
        m, mlp_addr, used = -1, proto.snapshot.base + line_align(proto.data_B), ["snapshot"]
    return RecoveryPlan(m, restores, [(mlp_addr, 0, proto.mlp_n, np.full(proto.n_chunks, m, np.int64))], used)
