"""The byte-level persistence protocol of each system, as timed write events (SPEC §3.1–§3.4).

The protocol follows the system's pipeline settings:

- ``persistence: redo`` (``ssd``, ``pmem``, ``pcie``, ``cxl-d``) — the data region is updated in
  place (on ``ssd`` the host-DRAM vector cache absorbs the update: nothing durable); then the redo
  step writes record ``n`` (row ids, the updated rows, all MLP parameters) into the log region and,
  after a fence, its commit flag. A full snapshot of the initial model sits in the log region.
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
  record's commit flag) is deleted when the new one starts, before the new one is durable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.options import BUGS
from cxlsim.crash.reference import Reference
from cxlsim.crash.timeline import Timeline, spread_writes
from cxlsim.devices.registry import get_family
from cxlsim.errors import InputError
from cxlsim.systems.config import SystemConfig

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
class Protocol:
    """A system's persistent layout, initial durable image and timed write events."""

    kind: str  # "undo" | "redo"
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
    cap: int  # rows per embedding-log slot (undo)
    mlp_gap_bound: int
    log_latency_ns: float
    data_latency_ns: float
    data_events: bool  # False when updates stay in a volatile cache (ssd)
    # region handles: undo uses emb_slot/mlp_slot/chunk_table; redo uses snapshot/records
    flags: im.Region
    emb_slot: tuple[im.Region, ...] = ()
    mlp_slot: tuple[im.Region, ...] = ()
    chunk_table: tuple[im.Region, ...] = ()
    snapshot: im.Region | None = None
    records: tuple[im.Region, ...] = ()

    @property
    def n_chunks(self) -> int:
        return -(-self.mlp_n // MLP_CHUNK)

    @property
    def data_B(self) -> int:
        return self.rows * self.row_B

    # undo slot geometry
    def emb_ids_addr(self, slot: int) -> int:
        return self.emb_slot[slot].base

    def emb_vals_addr(self, slot: int) -> int:
        return self.emb_slot[slot].base + line_align(self.cap * 8)

    def emb_flag_addr(self, slot: int) -> int:
        return self.flags.base + slot * im.LINE_B

    def mlp_flag_addr(self, slot: int) -> int:
        return self.flags.base + (2 + slot) * im.LINE_B

    # redo record geometry
    def record_parts(self, j: int, nrows: int) -> tuple[int, int, int]:
        """Addresses of record ``j``'s row ids, rows and MLP parameters."""
        base = self.records[j].base
        vals = base + line_align(nrows * 8)
        return base, vals, vals + line_align(nrows * self.row_B)

    def record_flag_addr(self, j: int) -> int:
        return self.flags.base + j * im.LINE_B


def write_latency(cfg: SystemConfig, role: str) -> float:
    r = cfg.role(role)
    return float(get_family(r.preset.family).build(r.params).write_latency_ns())


def build_protocol(cfg: SystemConfig, ref: Reference, tl: Timeline, bug: str | None = None) -> Protocol:
    """The protocol ``cfg`` persists with, over the reference run's batches and the timeline."""
    p = cfg.pipeline
    if p.persistence == "none":
        raise InputError(f"system {cfg.name!r} does not persist (pipeline.persistence: none); nothing to crash-test")
    if bug is not None and bug not in BUGS:
        raise InputError(f"--inject-bug: unknown bug {bug!r}; choose from {', '.join(BUGS)}")
    build = _build_undo if p.persistence == "undo" else _build_redo
    return build(cfg, ref, tl, bug)


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


def _update_events(log, cfg, ref: Reference, tl: Timeline, n: int, lat: float) -> None:
    rows = ref.unique_rows[n]
    row_B = ref.layout.row_B
    wb = im.in_place(rows * row_B, ref.table_offset(n) + rows * row_B, row_B)
    _timed(log, wb, tl.span("update", n), lat, im.DATA, f"update {n}", n)


def _build_undo(cfg: SystemConfig, ref: Reference, tl: Timeline, bug: str | None) -> Protocol:
    p = cfg.pipeline
    N, row_B, pool = ref.n_batches, ref.layout.row_B, ref.pool
    cap = max(int(r.size) for r in ref.unique_rows)
    n_chunks = -(-ref.mlp_n // MLP_CHUNK)
    lay = im.Layout()
    lay.add("data", ref.table_B)
    emb = tuple(lay.add(f"emb_log.{s}", line_align(cap * 8) + cap * row_B) for s in (0, 1))
    mlp = tuple(lay.add(f"mlp_log.{s}", ref.mlp_n * 4) for s in (0, 1))
    chunks = tuple(lay.add(f"mlp_chunks.{s}", n_chunks * 8) for s in (0, 1))
    flags = lay.add("flags", 4 * im.LINE_B)
    lat_log = write_latency(cfg, p.checkpoint_on)
    lat_data = write_latency(cfg, p.tables_on)
    proto = Protocol("undo", p.relaxed_lookup, p.relaxed_mlp_log, bug, lay, np.zeros(0, np.uint8), None,
                     N, ref.rows, row_B, ref.mlp_n, cap, tl.mlp_gap_bound, lat_log, lat_data, True, flags,
                     emb, mlp, chunks)
    img = np.zeros(lay.total_B, np.uint8)
    img[:ref.table_B] = ref.table(-1).view(np.uint8).ravel()
    img[mlp[0].base:mlp[0].end] = ref.mlp(-1).view(np.uint8)
    img[chunks[0].base:chunks[0].end] = np.full(n_chunks, -1, np.int64).view(np.uint8)
    img[proto.mlp_flag_addr(0):proto.mlp_flag_addr(0) + im.LINE_B] = flag_words(0, -1, -1).view(np.uint8)
    proto.image0 = img

    log = im.WriteLog(lay)
    zero = pool.put(np.zeros(im.LINE_B, np.uint8))
    early_flag = bug == "flag-before-data"
    early_delete = bug == "delete-old-log-early"
    seq = 1  # next MLP log
    chunk_state = np.full(n_chunks, -1, np.int64)  # relaxed: state held by each chunk of the log in progress
    for n in range(N):
        rows = ref.unique_rows[n]
        nrows = int(rows.size)
        slot = n % 2
        el = tl.span("emb_log", n)
        wb = im.WriteBatch.concat([
            im.contiguous(proto.emb_ids_addr(slot), int(ref.ids_off[n]), nrows * 8),
            im.gathered(proto.emb_vals_addr(slot), ref.table_offset(n - 1) + rows * row_B, row_B),
        ])
        flag = im.line(proto.emb_flag_addr(slot), pool.put(flag_words(n, nrows)))
        emb_ack = _timed(log, wb, el, lat_log, im.LOG, f"emb_log {n}", n, flag, f"emb_log {n} flag", early_flag)
        if early_delete and n >= 1:
            _delete(log, proto.emb_flag_addr(1 - slot), zero, el[0], lat_log, f"delete emb_log {n - 1}", n)
        _update_events(log, cfg, ref, tl, n, lat_data)
        ml = tl.span("mlp_log", n)
        if not p.relaxed_mlp_log:
            s = seq % 2
            wb = im.WriteBatch.concat([
                im.contiguous(mlp[s].base, ref.mlp_offset(n - 1), ref.mlp_n * 4),
                im.contiguous(chunks[s].base, pool.put(np.full(n_chunks, n - 1, np.int64)), n_chunks * 8),
            ])
            flag = im.line(proto.mlp_flag_addr(s), pool.put(flag_words(seq, n - 1, n - 1)))
            if early_delete:
                _delete(log, proto.mlp_flag_addr(1 - s), zero, el[0], lat_log, f"delete mlp_log {seq - 1}", n)
            mlp_ack = _timed(log, wb, ml, lat_log, im.LOG, f"mlp_log {n}", n, flag, f"mlp_log {n} flag", early_flag)
            if not early_delete:
                at = max(emb_ack, mlp_ack)
                if n >= 1:
                    _delete(log, proto.emb_flag_addr(1 - slot), zero, at, lat_log, f"delete emb_log {n - 1}", n)
                _delete(log, proto.mlp_flag_addr(1 - s), zero, at, lat_log, f"delete mlp_log {seq - 1}", n)
            seq += 1
            continue
        # relaxed: the embedding log of n-1 goes once log n is flagged; MLP logs advance in chunks
        if not early_delete and n >= 1:
            _delete(log, proto.emb_flag_addr(1 - slot), zero, emb_ack, lat_log, f"delete emb_log {n - 1}", n)
        f0, f1 = tl.mlp_fraction[n]
        c0 = int(np.floor(f0 * n_chunks + 1e-9))
        c1 = n_chunks if f1 >= 1.0 else int(np.floor(f1 * n_chunks + 1e-9))
        if c1 <= c0 and f1 < 1.0:
            continue
        s = seq % 2
        lo, hi = c0 * MLP_CHUNK * 4, min(c1 * MLP_CHUNK, ref.mlp_n) * 4
        chunk_state[c0:c1] = n - 1
        parts = [im.contiguous(mlp[s].base + lo, ref.mlp_offset(n - 1) + lo, hi - lo)]
        flag = None
        if early_delete and c0 == 0:
            _delete(log, proto.mlp_flag_addr(1 - s), zero, ml[0], lat_log, f"delete mlp_log {seq - 1}", n)
        if c1 == n_chunks:
            parts.append(im.contiguous(chunks[s].base, pool.put(chunk_state.copy()), n_chunks * 8))
            flag = im.line(proto.mlp_flag_addr(s), pool.put(flag_words(seq, int(chunk_state.min()), int(chunk_state.max()))))
        # a log completed at batch n is flagged only once batch n's embedding log is: an MLP log newer
        # than every flagged embedding log would pair with older tables at recovery
        ack = _timed(log, im.WriteBatch.concat(parts), ml, lat_log, im.LOG, f"mlp_log {n} (log {seq})", n, flag,
                     f"mlp_log {n} flag (log {seq})", early_flag, flag_after=emb_ack)
        if flag is not None:
            if not early_delete:
                _delete(log, proto.mlp_flag_addr(1 - s), zero, ack, lat_log, f"delete mlp_log {seq - 1}", n)
            seq += 1
            chunk_state[:] = -1
    proto.events = log.finish()
    return proto


def _build_redo(cfg: SystemConfig, ref: Reference, tl: Timeline, bug: str | None) -> Protocol:
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
    lat_log = write_latency(cfg, p.checkpoint_on)
    lat_data = write_latency(cfg, p.tables_on)
    data_events = not p.vector_cache_GB > 0
    proto = Protocol("redo", False, False, bug, lay, np.zeros(0, np.uint8), None, N, ref.rows, row_B, ref.mlp_n,
                     max(int(r.size) for r in ref.unique_rows), 0, lat_log, lat_data, data_events, flags,
                     snapshot=snap, records=recs)
    img = np.zeros(lay.total_B, np.uint8)
    img[:ref.table_B] = ref.table(-1).view(np.uint8).ravel()
    img[snap.base:snap.base + ref.table_B] = ref.table(-1).view(np.uint8).ravel()
    mlp_at = snap.base + line_align(ref.table_B)
    img[mlp_at:mlp_at + ref.mlp_n * 4] = ref.mlp(-1).view(np.uint8)
    proto.image0 = img

    log = im.WriteLog(lay)
    zero = pool.put(np.zeros(im.LINE_B, np.uint8))
    for n in range(N):
        rows = ref.unique_rows[n]
        nrows = int(rows.size)
        if data_events:
            _update_events(log, cfg, ref, tl, n, lat_data)
        ids_at, vals_at, mlp_at = proto.record_parts(n, nrows)
        wb = im.WriteBatch.concat([
            im.contiguous(ids_at, int(ref.ids_off[n]), nrows * 8),
            im.gathered(vals_at, ref.table_offset(n) + rows * row_B, row_B),
            im.contiguous(mlp_at, ref.mlp_offset(n), ref.mlp_n * 4),
        ])
        rd = tl.span("redo", n)
        flag = im.line(proto.record_flag_addr(n), pool.put(flag_words(n, nrows, recs[n].base)))
        if bug == "delete-old-log-early" and n >= 1:
            _delete(log, proto.record_flag_addr(n - 1), zero, rd[0], lat_log, f"delete record {n - 1}", n)
        _timed(log, wb, rd, lat_log, im.LOG, f"redo {n}", n, flag, f"redo {n} commit flag", bug == "flag-before-data")
    proto.events = log.finish()
    return proto
