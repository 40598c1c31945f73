"""``persistence: cnr``: Check-N-Run-style incremental checkpointing on the CXL-MEM (Eisenman et
al., NSDI 2022; reference/strategies.md §2), run on TrainingCXL's hardware.

Every ``cnr_interval_batches`` (k) batches, after the update and optimizer step of batch
``n = jk + k − 1``, the checkpoint agent writes checkpoint ``j``: the rows modified since checkpoint
``j − 1`` (every distinct row batches ``jk … n`` updated; Check-N-Run's one bit per row, accesses
counted as modifications), each quantised to ``cnr_quant_bits`` bits (0: fp32, unquantised), plus
all MLP parameters (fp32), then a commit flag. Check-N-Run's *consecutive* policy: recovery is the
baseline snapshot plus every committed increment in order, so training resumes after the last
checkpointed batch, losing up to k batches — the price of checkpointing only every k batches.

Quantisation: asymmetric uniform per row (strategies.md): ``scale = (max − min)/(2^b − 1)``, a row
stored as ``dim`` codes of b bits plus its min and scale (2 × fp32); dequantised ``scale·q + min``,
so an element is off by at most ``scale/2`` (plus fp32 rounding).

Schedule: the checkpoint of batch n runs on the agent's lane after update n (every device) and
the optimizer step of n; the update and optimizer step of n + 1 wait for it (they would overwrite
rows and parameters it has yet to read). Named approximations: the logic quantises at its DMA
rate (no compute charged); reads of the rows and writes of the packed increment are issued as two
streams (its read and write pools). Log region (from the machine's ``log_base``): the increment
ring (two slots of k batches' rows at the quantised size), then the MLP area.

Crash invariant (the scheme's own, :class:`CnrProtocol`): recovery names the batch of the last
committed checkpoint (never an older one, never past the last completed update) and the recovered
tables equal the reference after that batch within the declared quantisation error
(:attr:`~cxlsim.crash.protocols.Protocol.tolerance`; bit for bit unquantised); the MLP equals it
exactly. Several CXL-MEMs are not covered by the crash protocol (one device).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cxlsim.axes.persistence import Persistence
from cxlsim.config.params import Param
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
from cxlsim.engine.executor import OpOutcome
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.axes import register
from cxlsim.systems.dataflow import sfx
from cxlsim.units import FP32_B

QUANT_BITS = (0, 2, 3, 4, 8)
#: per quantised row: its min and scale, fp32 each
ROW_HEADER_B = 2 * FP32_B


def quant_row_B(row_B: int, bits: int) -> int:
    """Bytes one row takes in an increment: fp32 (``bits`` 0) or b-bit codes plus min and scale."""
    if bits == 0:
        return row_B
    return math.ceil(row_B // FP32_B * bits / 8) + ROW_HEADER_B


def quantise(rows: np.ndarray, bits: int) -> tuple[np.ndarray, float]:
    """Rows ``(n, dim)`` fp32 as recovery reads them back (dequantised, fp32) and the largest
    error it may show per element (0 for ``bits`` 0)."""
    if bits == 0 or rows.size == 0:
        return rows.copy(), 0.0
    x = rows.astype(np.float64)
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    scale = (hi - lo) / (2 ** bits - 1)
    q = np.round(np.divide(x - lo, scale, out=np.zeros_like(x), where=scale > 0))
    out = (scale * q + lo).astype(np.float32)
    bound = float(scale.max()) / 2 + float(np.abs(x).max()) * 2.0 ** -22  # half a step, plus fp32 rounding
    return out, bound


def is_checkpoint(p, n: int) -> bool:
    """Batch ``n`` ends an interval: its checkpoint is taken."""
    return (n + 1) % p.cnr_interval_batches == 0


def union_sorted(parts: list[np.ndarray]) -> np.ndarray:
    """The ascending distinct values of arrays each ascending and distinct (what ``np.unique`` of
    their concatenation gives): a stable sort merges the runs, then neighbours that repeat are
    dropped. ``np.unique`` hashes first, which took 0.3–6 s on RM2's five batches of rows."""
    if len(parts) == 1:
        return parts[0].copy()
    a = np.sort(np.concatenate(parts), kind="stable")
    keep = np.empty(a.size, np.bool_)
    keep[:1] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


@register("persistence", "cnr")
class CheckNRun(Persistence):
    STEPS = {"cnr": "checkpoint"}
    PARAMS = (
        Param("cnr_interval_batches", int, "cnr persistence: batches between incremental checkpoints (k)",
              default=4, minimum=1, maximum=1 << 20),
        Param("cnr_quant_bits", int, "cnr persistence: bits per element of the checkpointed rows (0: fp32, else "
              "2, 3, 4 or 8, asymmetric uniform per row)", default=0, minimum=0, maximum=8),
    )

    def __init__(self, machine) -> None:
        super().__init__(machine)
        p = machine.pipe
        self.k, self.bits = p.cnr_interval_batches, p.cnr_quant_bits
        self.q_row_B = quant_row_B(machine.row_B, self.bits)
        slot = machine.round_GiB(self.k * machine.B * machine.workload.lookups_per_sample * self.q_row_B)
        self.inc_base = [machine.log_base, machine.log_base + slot]
        self.mlp_base = machine.log_base + 2 * slot

    # -- configuration ---------------------------------------------------------------------------
    @classmethod
    def check_pipeline(cls, p, where: str) -> None:
        if p.cnr_quant_bits not in QUANT_BITS:
            raise ConfigError(where, "pipeline.cnr_quant_bits",
                              f"must be one of {', '.join(map(str, QUANT_BITS))}; got {p.cnr_quant_bits}")
        for key in ("redo_mlp_pull", "undo_log_start"):
            p.skip(key, "cnr persistence writes incremental checkpoints, no per-batch log")

    @classmethod
    def period_batches(cls, p) -> int:
        """A checkpoint every k batches: k − 1 batches without one, then one with it."""
        return int(p.cnr_interval_batches)

    @classmethod
    def checkpoint_B(cls, workload, p) -> float:
        """Two increment slots (k batches' rows, every lookup a distinct row, bags of at most
        their table's largest, :attr:`~cxlsim.workloads.catalog.Workload.lookups_per_batch`) and the MLP."""
        rows = p.cnr_interval_batches * workload.lookups_per_batch
        return float(2 * rows * quant_row_B(workload.row_B, p.cnr_quant_bits)
                     + workload.mlp_param_count * workload.mlp_param_B)

    # -- dataflow -------------------------------------------------------------------------------
    @classmethod
    def update_deps(cls, g, n: int) -> list[tuple]:
        return g.every("cnr", n - 1, g.mems) if n >= 1 and is_checkpoint(g.pipeline, n - 1) else []

    @classmethod
    def opt_deps(cls, g, n: int) -> list[tuple]:
        return cls.update_deps(g, n)

    @classmethod
    def add_ops(cls, g, n: int) -> None:
        if not is_checkpoint(g.pipeline, n):
            return
        k = g.pipeline.cnr_interval_batches
        for m in g.mems:
            c = sfx(m)
            g.add("cnr" + c, n, g.agent(m), [("update" + c, n), ("mlp_opt" + sfx(g.src(m)), n), ("cnr" + c, n - k)])

    # -- timing ---------------------------------------------------------------------------------
    def steps(self):
        return {"cnr": self._checkpoint}

    def modified_rows(self, n: int, m: int = 0) -> np.ndarray:
        """The distinct rows device ``m`` updated in batches ``n − k + 1 … n`` (ascending)."""
        mc = self.m
        return union_sorted([mc.batch(b, m).unique_rows for b in range(max(0, n - self.k + 1), n + 1)])

    def _checkpoint(self, n, t, ex, m=0):
        """Checkpoint of batch ``n`` on device ``m``: the modified rows (read whole, written packed
        at the quantised size, in segments), the MLP shard pulled and written, then the flag."""
        mc = self.m
        side = mc.sides[m]
        rows = self.modified_rows(n, m)
        out = mc.ckpt_outstanding()
        burst_B = mc.agent.burst_B()
        base = self.inc_base[(n // self.k) % 2]
        mc.agent.count_dma(mc.ledger, rows.size * mc.row_B)
        issue_end = mc.agent.copy_issue_end(t, rows.size * mc.row_B, rows.size)

        def serve(start: float, i: int, j: int) -> float:
            r = mc.serve(side.tables, start, mc.rows_addr(rows[i:j]), mc.row_B, False, out)
            bursts = math.ceil((j - i) * self.q_row_B / burst_B)
            dst = base + i * self.q_row_B + np.arange(bursts, dtype=np.int64) * burst_B
            w = mc.serve(side.ckpt_mem, start, dst, burst_B, True, out)
            return max(r.done_ns, w.done_ns)

        pull = mc.pull_mlp_ns(side.mlp_B, m)
        ledger = mc.ledger

        def mlp(now: float) -> OpOutcome:  # once the rows are written: the MLP, then the flag
            mc.restore_ledger(ledger)
            return mc.pull_in_segments(side, side.mlp_B, self.mlp_base, now, pull, out,
                                       lambda latest: max(latest, now + pull, issue_end) + mc.flag_ns(side.ckpt_mem))

        return mc.in_segments(t, rows.size, mc.row_B, serve, lambda latest: OpOutcome(latest, resume=mlp))

    # -- crash ----------------------------------------------------------------------------------
    @classmethod
    def crash_check(cls, cfg, bug, mems) -> None:
        if mems > 1:
            raise InputError(f"system {cfg.name!r}: the cnr crash protocol covers one CXL-MEM "
                             f"(topology.cxl_mems_count {mems})")
        if bug not in (None, "flag-before-data", "delete-old-log-early"):
            raise InputError(f"--inject-bug {bug} does not apply to cnr persistence (flag-before-data, "
                             "delete-old-log-early do)")

    @classmethod
    def build_protocol(cls, cfg, ref, tl, devices, bug):
        return build_cnr(cfg, ref, tl, devices, bug)

    @classmethod
    def plan(cls, img, proto):
        return plan_cnr(img, proto)


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
