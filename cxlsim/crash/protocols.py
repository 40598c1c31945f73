"""The machinery the persistence schemes' byte-level crash protocols share
(docs/design.md#persistence).

Each persistence scheme owns its protocol and recovery, in its own module
(:mod:`cxlsim.axes.persistence`: :meth:`~cxlsim.axes.persistence.Persistence.build_protocol` and
:meth:`~cxlsim.axes.persistence.Persistence.plan`; redo records in
:mod:`~cxlsim.axes.persistence.redo`, batch-aware undo logs in :mod:`~cxlsim.axes.persistence.undo`,
incremental checkpoints in :mod:`~cxlsim.axes.persistence.cnr`). This module holds what they share:

- :class:`Protocol`: a persistent layout, its initial durable image and timed write events, and the
  attributes that state the invariant the checker holds the scheme to;
- :class:`MemLog`: one CXL-MEM's undo-log regions (read by the checker and the recovery cost too);
- flag lines (:func:`flag_words`, :func:`read_flag`): ``MAGIC`` and four int64 fields; a deleted
  flag is zeros; :func:`line_align`; :func:`snapshot_image` (a baseline snapshot's initial image);
- writing events: :func:`timed` (data spread over a step's span, a fence, then its flag),
  :func:`delete_line` (a flag zeroed), :func:`update_events` (a batch's in-place update);
- :func:`check_campaign` and :func:`build_protocol`: refuse what the scheme does not cover, then
  ask the system's scheme for its protocol.

Injected bugs (``--inject-bug``, :data:`~cxlsim.crash.options.BUGS`) break one rule each, so the
checker must find violations; each scheme states in its module how it breaks the rule (and refuses
in ``crash_check`` the bugs that do not apply to it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.options import BUGS
from cxlsim.crash.reference import Reference
from cxlsim.crash.timeline import Timeline, spread_writes
from cxlsim.errors import InputError
from cxlsim.systems import axes
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph

MAGIC = 0x21474F4C4C584321  # b"!CXLLOG!" little-endian
#: Parameters per MLP chunk: one log burst.
MLP_CHUNK = im.BURST_B // 4
#: The checker's fast paths (``Protocol.fast_path``): restores of per-device logs onto the data
#: region (tracked against the reference), or a prefix of records replayed onto a snapshot.
FAST_LOGS, FAST_RECORDS = "logs", "records"


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
    """One CXL-MEM's undo logs (docs/design.md#batch-aware-undo-log, #scale-out): two embedding-log
    slots for the rows it holds, two MLP-log slots for its shard of the parameters (``mlp_lo …
    mlp_hi``, whole chunks) with their chunk tables, and its flag lines (embedding slot 0, 1; MLP
    slot 0, 1)."""

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

    kind: str  # the persistence scheme's registered name (:mod:`cxlsim.systems.axes`): "undo", "redo", ...
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
    #: element the scheme declares (0: bit for bit) and its fast path (:data:`FAST_LOGS`,
    #: :data:`FAST_RECORDS`; None: materialise and compare)
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
    scheme = axes.of(cfg.pipeline, "persistence")
    proto = scheme.build_protocol(cfg, ref, tl, devices, bug)
    proto.kind = scheme.name  # recovery asks the scheme registered under this name for its plan
    return proto


def timed(log: im.WriteLog, wb: im.WriteBatch, span: tuple[float, float], lat: float, kind: int,
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


def delete_line(log: im.WriteLog, addr: int, zero_off: int, at: float, lat: float, label: str, batch: int) -> None:
    """Zero the (flag) line at ``addr`` at ``at`` (``zero_off``: a zero line in the payload pool)."""
    log.add(im.line(addr, zero_off), at, at + lat, im.DELETE, label, batch)


def update_events(log, cfg, ref: Reference, tl: Timeline, n: int, lat: float, rows: np.ndarray | None = None,
                  d: int = 0) -> None:
    """Batch ``n``'s in-place update of ``rows`` (default: all it updates) on device ``d``."""
    rows = ref.unique_rows[n] if rows is None else rows
    row_B = ref.layout.row_B
    wb = im.in_place(rows * row_B, ref.table_offset(n) + rows * row_B, row_B)
    timed(log, wb, tl.span("update", n, d), lat, im.DATA, f"update{sfx(d)} {n}", n)
