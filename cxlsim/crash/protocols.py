"""The byte-level persistence protocol of each system, as timed write events (SPEC §3.1–§3.4).

The protocol follows the system's pipeline settings:

- ``persistence: redo`` (``ssd``, ``pmem``, ``pcie``, ``cxl-d``) — the data region is updated in
  place (on ``ssd`` the host-DRAM vector cache absorbs the update: nothing durable); then the redo
  step writes record ``n`` (row ids, the updated rows, all MLP parameters) into the log region and,
  after a fence, its commit flag; on ``cxl-d`` (``redo_mlp_pull: with_optimizer``) the MLP part is
  written over the ``redo_mlp`` span, beside the update, and the flag follows both parts. A full snapshot of the initial model sits in the log region.
- ``persistence: undo`` (``cxl-b``, ``cxl``) — the embedding log of batch ``n`` (the rows the batch
  will update, copied before the update) goes to slot ``n % 2``, then its flag; the MLP log goes to
  the MLP slot ``seq % 2`` (``seq`` counts MLP logs; the initial parameters are log 0), then its
  flag. When both flags of batch ``n`` are set the previous batch's logs are deleted (their flags
  zeroed). With ``relaxed_mlp_log`` an MLP log is copied in chunks during the GPU's interaction/top
  MLP windows of several batches (:func:`~cxlsim.crash.timeline.relaxed_mlp_fractions`), records the
  batch of each chunk, and deletes its predecessor once flagged; the embedding log of ``n − 1`` is
  deleted once log ``n`` is flagged.

A flag line holds ``MAGIC`` and four int64 fields (see :func:`flag_words`); a deleted flag is zeros.

Injected bugs (``--inject-bug``) break one rule each, so the checker must find violations:

- ``flag-before-data``: every flag is written when its step starts, without the fence;
- ``delete-old-log-early``: the previous log (undo: embedding and MLP log; redo: the previous
  record's commit flag) is deleted when the new one starts, before the new one is durable;
- ``local-persistence`` (several CXL-MEMs): each device treats a batch as persistent once its own
  logs are flagged, and recovery trusts CXL-MEM 0's flags;
- ``delete-on-embedding-flag`` (undo): the old checkpoint is deleted once the new embedding log is
  flagged, without waiting for the MLP log's flag (``cxl-b``: the logs of ``n − 1`` go on the
  embedding flag of ``n``; ``cxl``: the previous MLP log goes on the embedding flag of the batch
  its successor starts copying at). The update no longer waits for the MLP log (SPEC §3.2), so a
  crash between the two flags finds no MLP log.

Several CXL-MEMs (SPEC §12, undo only): each device logs the rows it holds
(:class:`~cxlsim.systems.topology.Placement`) and a shard of the MLP (whole chunks) in its own
:class:`MemLog`, on its own steps' spans (``emb_log.<d>``, ``update.<d>``, ``mlp_log.<d>``). The
global persistence rule: batch ``n`` is persistent only once every device's logs of ``n`` are
flagged; deletions of older logs, and the flag of a relaxed MLP log completed at ``n``, wait for
the last device's flag.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.options import BUGS
from cxlsim.crash.reference import ALIGN_B, MISC_POOL_B, Reference
from cxlsim.crash.timeline import Timeline, spread_writes
from cxlsim.errors import InputError
from cxlsim.systems import axes
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.topology import Placement

MAGIC = 0x21474F4C4C584321  # b"!CXLLOG!" little-endian
#: Parameters per MLP chunk: one log burst.
MLP_CHUNK = im.BURST_B // 4
#: The redo ring of the timing model holds 64 records; a longer run would need a new snapshot.
MAX_REDO_RECORDS = 64


def flag_words(a: int, b: int = 0, c: int = 0, d: int = 0) -> np.ndarray:
    """A valid flag line: ``[MAGIC, a, b, c, d, 0, 0, 0]`` as int64."""
    w = np.zeros(im.LINE_B // 8, np.int64)
    w[0] = MAGIC
    w[1:5] = (a, b, c, d)
    return w


def read_flag(img: np.ndarray, addr: int) -> tuple[int, int, int, int] | None:
    """The four fields of the flag line at ``addr``, or None if it is not valid."""
    w = img[addr:addr + im.LINE_B].view(np.int64)
    if int(w[0]) != MAGIC:
        return None
    return int(w[1]), int(w[2]), int(w[3]), int(w[4])


def line_align(n: int) -> int:
    """``n`` rounded up to a whole line (sub-areas of a log or record start on a line)."""
    return -(-int(n) // im.LINE_B) * im.LINE_B


@dataclass
class MemLog:
    """One CXL-MEM's undo logs (SPEC §3.2, §12): two embedding-log slots for the rows it holds, two
    MLP-log slots for its shard of the parameters (``mlp_lo … mlp_hi``, whole chunks) with their
    chunk tables, and its flag lines (embedding slot 0, 1; MLP slot 0, 1)."""

    index: int
    emb_slot: tuple[im.Region, ...]
    mlp_slot: tuple[im.Region, ...]
    chunk_table: tuple[im.Region, ...]
    flags: im.Region
    cap: int  # rows per embedding-log slot
    mlp_lo: int  # first parameter of its MLP shard
    mlp_hi: int  # one past its last parameter
    rows: list[np.ndarray]  # per batch: the ascending global rows it holds that the batch updates

    @property
    def n_chunks(self) -> int:
        return -(-(self.mlp_hi - self.mlp_lo) // MLP_CHUNK)

    @property
    def region_ids(self) -> tuple[int, ...]:
        return tuple(r.rid for r in (*self.emb_slot, *self.mlp_slot, *self.chunk_table, self.flags))

    def emb_ids_addr(self, slot: int) -> int:
        return self.emb_slot[slot].base

    def emb_vals_addr(self, slot: int) -> int:
        return self.emb_slot[slot].base + line_align(self.cap * 8)

    def emb_flag_addr(self, slot: int) -> int:
        return self.flags.base + slot * im.LINE_B

    def mlp_flag_addr(self, slot: int) -> int:
        return self.flags.base + (2 + slot) * im.LINE_B


@dataclass
class Protocol:
    """A system's persistent layout, initial durable image and timed write events."""

    kind: str  # the persistence scheme's name (:mod:`cxlsim.systems.axes`): "undo", "redo", ...
    relaxed_lookup: bool
    relaxed_mlp: bool
    bug: str | None
    layout: im.Layout
    image0: np.ndarray
    events: im.Events | None  # set once the builder has generated them
    n_batches: int
    rows: int
    row_B: int
    mlp_n: int
    cap: int  # rows per embedding-log slot (undo: the largest device's)
    mlp_gap_bound: int
    log_latency_ns: float
    data_latency_ns: float
    data_events: bool  # False when updates stay in a volatile cache (ssd)
    # undo: one MemLog per CXL-MEM; redo: the commit flags, the snapshot and the records
    flags: im.Region
    mems: tuple[MemLog, ...] = ()
    snapshot: im.Region | None = None
    records: tuple[im.Region, ...] = ()
    #: the invariant the checker holds the scheme to: the largest absolute difference per table
    #: element the scheme declares (0: bit for bit) and its fast path ("undo" logs, "redo"
    #: records, None: materialise and compare)
    tolerance: float = 0.0
    fast_path: str | None = None

    @property
    def data_base(self) -> int:
        """Where recovery starts the tables from: the snapshot, else the data region (0)."""
        return self.snapshot.base if self.snapshot is not None else 0

    def committed(self, tl: Timeline, t: float) -> int:
        """The newest batch the scheme had committed by ``t`` (recovery may not go below it; −1
        if none): the timeline's commits (:attr:`~cxlsim.axes.persistence.Persistence.COMMIT_STEP`)."""
        return tl.committed_records(t)

    def allowed(self, done: int, c: int) -> tuple[int, int]:
        """The batches recovery may name, given the last batch complete (``done``) and the last
        update complete (``c``) at the crash: ``done − 1 … c`` (the per-batch schemes)."""
        return done - 1, c

    @property
    def n_chunks(self) -> int:
        return -(-self.mlp_n // MLP_CHUNK)

    @property
    def data_B(self) -> int:
        return self.rows * self.row_B

    @property
    def global_rule(self) -> bool:
        """Undo with several CXL-MEMs: is a batch persistent only once every device's logs are
        flagged (False: the ``local-persistence`` bug trusts each device's, and recovery CXL-MEM 0's)?"""
        return self.bug != "local-persistence"

    def mem_of_region(self, rid: int) -> int:
        """The CXL-MEM whose logs region ``rid`` belongs to (0 for the data region and redo)."""
        return next((d.index for d in self.mems if rid in d.region_ids), 0)

    # redo record geometry
    def record_parts(self, j: int, nrows: int) -> tuple[int, int, int]:
        """Addresses of record ``j``'s row ids, rows and MLP parameters."""
        base = self.records[j].base
        vals = base + line_align(nrows * 8)
        return base, vals, vals + line_align(nrows * self.row_B)

    def record_flag_addr(self, j: int) -> int:
        return self.flags.base + j * im.LINE_B


def snapshot_image(lay, ref, snap) -> np.ndarray:
    """The image before batch 0 of a scheme with a baseline snapshot (redo, cnr): the tables at
    the start, their snapshot copy at ``snap.base`` and the MLP after it (line-aligned)."""
    img = np.zeros(lay.total_B, np.uint8)
    table = ref.table(-1).view(np.uint8).ravel()
    img[:ref.table_B] = table
    img[snap.base:snap.base + ref.table_B] = table
    mlp_at = snap.base + line_align(ref.table_B)
    img[mlp_at:mlp_at + ref.mlp_n * 4] = ref.mlp(-1).view(np.uint8)
    return img


def write_latency(devices: DeviceGraph, role: str) -> float:
    """Idle write latency (ns) of ``role``'s media model, from the system's device graph."""
    return float(devices[role].write_latency_ns())


def check_campaign(cfg: SystemConfig, bug: str | None, mems: int) -> None:
    """Refuse what the protocols do not cover (one line each): an unknown bug, a bug that needs
    several CXL-MEMs, then what the system's persistence scheme refuses (``crash_check``: a
    system that does not persist, several CXL-MEMs with redo, ...)."""
    if bug is not None and bug not in BUGS:
        raise InputError(f"--inject-bug: unknown bug {bug!r}; choose from {', '.join(BUGS)}")
    scheme = axes.of(cfg.pipeline, "persistence")
    if bug == "local-persistence" and mems < 2 and scheme.persists:
        raise InputError("--inject-bug local-persistence needs several CXL-MEMs (topology.cxl_mems_count >= 2)")
    scheme.crash_check(cfg, bug, mems)


def build_protocol(cfg: SystemConfig, ref: Reference, tl: Timeline, devices: DeviceGraph,
                   bug: str | None = None) -> Protocol:
    """The protocol ``cfg`` persists with (its scheme's ``build_protocol``), over the reference
    run's batches and the timeline, with the media models of ``devices`` (the system's device
    graph: the run's, where it was simulated)."""
    check_campaign(cfg, bug, tl.mems)
    return axes.of(cfg.pipeline, "persistence").build_protocol(cfg, ref, tl, devices, bug)


def _timed(log: im.WriteLog, wb: im.WriteBatch, span: tuple[float, float], lat: float, kind: int,
           label: str, batch: int, flag: im.WriteBatch | None = None, flag_label: str = "",
           early_flag: bool = False, flag_after: float = float("-inf")) -> float:
    """Spread ``wb`` over ``span`` then (after a fence) ``flag``, not before ``flag_after``;
    returns the flag's ack (or the last data ack). ``early_flag`` issues the flag at the span's
    start instead (a bug)."""
    s, e = span
    issue, ack, flag_issue = spread_writes(s, e, len(wb), lat, flag is not None)
    log.add(wb, issue, ack, kind, label, batch)
    if flag is None:
        return float(ack.max()) if len(wb) else s
    flag_issue = max(flag_issue, flag_after)
    if early_flag:
        flag_issue = s
    log.add(flag, flag_issue, flag_issue + lat, im.FLAG, flag_label, batch)
    return flag_issue + lat


def _delete(log: im.WriteLog, addr: int, zero_off: int, at: float, lat: float, label: str, batch: int) -> None:
    log.add(im.line(addr, zero_off), at, at + lat, im.DELETE, label, batch)


def _update_events(log, cfg, ref: Reference, tl: Timeline, n: int, lat: float, rows: np.ndarray | None = None,
                   d: int = 0) -> None:
    """Batch ``n``'s in-place update of ``rows`` (default: all it updates) on device ``d``."""
    rows = ref.unique_rows[n] if rows is None else rows
    row_B = ref.layout.row_B
    wb = im.in_place(rows * row_B, ref.table_offset(n) + rows * row_B, row_B)
    _timed(log, wb, tl.span("update", n, d), lat, im.DATA, f"update{sfx(d)} {n}", n)


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
    """Undo logs per CXL-MEM. Global persistence rule (SPEC §12): batch ``n`` is persistent once
    every device's logs of ``n`` are flagged; only then does any device delete its logs of ``n − 1``
    (relaxed: its embedding log of ``n − 1``), and an MLP log completed at batch ``n`` is flagged only
    once every device's embedding log of ``n`` is. One device: the single-device protocol."""
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
                     True, mems[0].flags, mems, fast_path="undo")
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
            emb_ack[i] = _timed(log, wb, el, lat_log, im.LOG, f"emb_log{c} {n}", n, flag, f"emb_log{c} {n} flag",
                                early_flag)
            if early_delete and n >= 1:
                _delete(log, d.emb_flag_addr(1 - slot), zero, el[0], lat_log, f"delete emb_log{c} {n - 1}", n)
            _update_events(log, cfg, ref, tl, n, lat_data, rows if M > 1 else None, i)
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
                _delete(log, d.mlp_flag_addr(1 - s), zero, el[0], lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
            mlp_ack[i] = _timed(log, wb, ml, lat_log, im.LOG, f"mlp_log{c} {n}", n, flag, f"mlp_log{c} {n} flag",
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
                        _delete(log, d.emb_flag_addr(1 - slot), zero, at, lat_log, f"delete emb_log{c} {n - 1}", n)
                    _delete(log, d.mlp_flag_addr(1 - s), zero, at, lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
                seq[i] += 1
                continue
            # relaxed: the embedding log of n-1 goes once log n is flagged; MLP logs advance in chunks
            if not early_delete and n >= 1:
                _delete(log, d.emb_flag_addr(1 - slot), zero, persistent(emb_ack, i), lat_log,
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
                _delete(log, d.mlp_flag_addr(1 - s), zero, ml[0], lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
            if emb_flag_delete and c0 == 0:
                _delete(log, d.mlp_flag_addr(1 - s), zero, persistent(emb_ack, i), lat_log,
                        f"delete mlp_log{c} {seq[i] - 1}", n)
            if c1 == k:
                parts.append(im.contiguous(d.chunk_table[s].base, pool.put(state.copy()), k * 8))
                flag = im.line(d.mlp_flag_addr(s), pool.put(flag_words(seq[i], int(state.min()), int(state.max()))))
            # a log completed at batch n is flagged only once batch n's embedding log is (on every
            # device): an MLP log newer than every flagged embedding log would pair with older tables
            ack = _timed(log, im.WriteBatch.concat(parts), ml, lat_log, im.LOG, f"mlp_log{c} {n} (log {seq[i]})", n,
                         flag, f"mlp_log{c} {n} flag (log {seq[i]})", early_flag, flag_after=persistent(emb_ack, i))
            if flag is not None:
                if not (early_delete or emb_flag_delete):
                    _delete(log, d.mlp_flag_addr(1 - s), zero, ack, lat_log, f"delete mlp_log{c} {seq[i] - 1}", n)
                seq[i] += 1
                state[:] = -1
    proto.events = log.finish()
    return proto


def build_redo(cfg: SystemConfig, ref: Reference, tl: Timeline, devices: DeviceGraph, bug: str | None) -> Protocol:
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
                     snapshot=snap, records=recs, fast_path="redo")
    proto.image0 = snapshot_image(lay, ref, snap)

    log = im.WriteLog(lay)
    zero = pool.put(np.zeros(im.LINE_B, np.uint8))
    for n in range(N):
        rows = ref.unique_rows[n]
        nrows = int(rows.size)
        if data_events:
            _update_events(log, cfg, ref, tl, n, lat_data)
        ids_at, vals_at, mlp_at = proto.record_parts(n, nrows)
        parts = [im.contiguous(ids_at, int(ref.ids_off[n]), nrows * 8),
                 im.gathered(vals_at, ref.table_offset(n) + rows * row_B, row_B)]
        mlp = im.contiguous(mlp_at, ref.mlp_offset(n), ref.mlp_n * 4)
        mlp_done = float("-inf")
        if tl.has("redo_mlp", n):  # cxl-d: the MLP part beside the update, on its own span
            mlp_done = _timed(log, mlp, tl.span("redo_mlp", n), lat_log, im.LOG, f"redo_mlp {n}", n)
        else:
            parts.append(mlp)
        rd = tl.span("redo", n)
        flag = im.line(proto.record_flag_addr(n), pool.put(flag_words(n, nrows, recs[n].base)))
        if bug == "delete-old-log-early" and n >= 1:
            _delete(log, proto.record_flag_addr(n - 1), zero, rd[0], lat_log, f"delete record {n - 1}", n)
        _timed(log, im.WriteBatch.concat(parts), rd, lat_log, im.LOG, f"redo {n}", n, flag, f"redo {n} commit flag",
               bug == "flag-before-data", flag_after=mlp_done)
    proto.events = log.finish()
    return proto
