"""The byte-level crash protocol and recovery of ``persistence: redo`` (per-batch redo records): its
persistent layout, initial image and timed write events, and its recovery plan (the scheme's module
docstring, :mod:`cxlsim.axes.persistence.redo.scheme`, states the protocol; its class exposes these
as ``build_protocol`` and ``plan``). Imported only when a crash campaign asks for them.
"""

from __future__ import annotations

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.protocols import (
    FAST_RECORDS,
    Protocol,
    delete_line,
    flag_words,
    line_align,
    snapshot_image,
    timed,
    update_events,
    write_latency,
)
from cxlsim.crash.recovery import RecoveryPlan, committed_records
from cxlsim.crash.reference import Reference
from cxlsim.crash.timeline import Timeline
from cxlsim.errors import InputError
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.graph import DeviceGraph

#: The redo ring of the timing model holds 64 records; a longer run would need a new snapshot.
MAX_REDO_RECORDS = 64


def build_redo(cfg: SystemConfig, ref: Reference, tl: Timeline, devices: DeviceGraph, bug: str | None) -> Protocol:
    """Layout: data region (updated in place), the initial snapshot (tables + MLP), one record per
    batch (row ids, updated rows, MLP) and a commit-flag line per record (module docstring)."""
    p = cfg.pipeline
    N, row_B, pool = ref.n_batches, ref.layout.row_B, ref.pool
    if N > MAX_REDO_RECORDS:
        raise InputError(f"--batches {N}: the redo ring holds {MAX_REDO_RECORDS} records (a longer run "
                         "would take a new full snapshot, which is not modelled)")
    lay = im.Layout()
    lay.add("data", ref.table_B)
    snap = lay.add("snapshot", line_align(ref.table_B) + ref.mlp_n * 4)
    recs = tuple(lay.add(f"record.{j}", line_align(r.size * 8) + line_align(r.size * row_B) + ref.mlp_n * 4)
                 for j, r in enumerate(ref.unique_rows))
    flags = lay.add("flags", N * im.LINE_B)
    lat_log = write_latency(devices, p.checkpoint_on)
    lat_data = write_latency(devices, p.tables_on)
    data_events = not p.vector_cache_GB > 0
    proto = Protocol("redo", False, False, bug, lay, np.zeros(0, np.uint8), None, N, ref.rows, row_B, ref.mlp_n,
                     max(int(r.size) for r in ref.unique_rows), 0, lat_log, lat_data, data_events, flags,
                     snapshot=snap, records=recs, fast_path=FAST_RECORDS)
    proto.image0 = snapshot_image(lay, ref, snap)

    log = im.WriteLog(lay)
    zero = pool.put(np.zeros(im.LINE_B, np.uint8))
    for n in range(N):
        rows = ref.unique_rows[n]
        nrows = int(rows.size)
        if data_events:
            update_events(log, cfg, ref, tl, n, lat_data)
        ids_at, vals_at, mlp_at = proto.record_parts(n, nrows)
        parts = [im.contiguous(ids_at, int(ref.ids_off[n]), nrows * 8),
                 im.gathered(vals_at, ref.table_offset(n) + rows * row_B, row_B)]
        mlp = im.contiguous(mlp_at, ref.mlp_offset(n), ref.mlp_n * 4)
        mlp_done = float("-inf")
        if tl.has("redo_mlp", n):  # cxl-d: the MLP part beside the update, on its own span
            mlp_done = timed(log, mlp, tl.span("redo_mlp", n), lat_log, im.LOG, f"redo_mlp {n}", n)
        else:
            parts.append(mlp)
        rd = tl.span("redo", n)
        flag = im.line(proto.record_flag_addr(n), pool.put(flag_words(n, nrows, recs[n].base)))
        if bug == "delete-old-log-early" and n >= 1:
            delete_line(log, proto.record_flag_addr(n - 1), zero, rd[0], lat_log, f"delete record {n - 1}", n)
        timed(log, im.WriteBatch.concat(parts), rd, lat_log, im.LOG, f"redo {n}", n, flag, f"redo {n} commit flag",
              bug == "flag-before-data", flag_after=mlp_done)
    proto.events = log.finish()
    return proto

def plan_redo(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    """The snapshot plus the committed records ``0 … k`` replayed in order; the MLP from record
    ``k`` (or the snapshot)."""
    restores, error = committed_records(img, proto, range(proto.n_batches), "record")
    if error:
        return RecoveryPlan(-2, error=error)
    k = len(restores) - 1
    if k >= 0:
        mlp_addr = proto.record_parts(k, restores[-1][2])[2]
        used = [f"snapshot + records 0..{k}"]
    else:
        mlp_addr = proto.snapshot.base + line_align(proto.data_B)
        used = ["snapshot"]
    return RecoveryPlan(k, restores, [(mlp_addr, 0, proto.mlp_n, np.full(proto.n_chunks, k, np.int64))], used)
