"""``persistence: cnr``: Check-N-Run-style incremental checkpointing on the CXL-MEM (Eisenman et
al., NSDI 2022, [eisenman-nsdi22]), run on TrainingCXL's hardware.

Every ``cnr_interval_batches`` (k) batches, after the update and optimizer step of batch
``n = jk + k − 1``, the checkpoint agent writes checkpoint ``j``: the rows modified since checkpoint
``j − 1`` (every distinct row batches ``jk … n`` updated; Check-N-Run's one bit per row, accesses
counted as modifications), each quantised to ``cnr_quant_bits`` bits (0: fp32, unquantised), plus
all MLP parameters (fp32), then a commit flag. Check-N-Run's *consecutive* policy: recovery is the
baseline snapshot plus every committed increment in order, so training resumes after the last
checkpointed batch, losing up to k batches — the price of checkpointing only every k batches.

Quantisation: asymmetric uniform per row ([eisenman-nsdi22]): ``scale = (max − min)/(2^b − 1)``, a row
stored as ``dim`` codes of b bits plus its min and scale (2 × fp32); dequantised ``scale·q + min``,
so an element is off by at most ``scale/2`` (plus fp32 rounding).

Schedule: the checkpoint of batch n runs on the agent's lane after update n (every device) and
the optimizer step of n; the update and optimizer step of n + 1 wait for it (they would overwrite
rows and parameters it has yet to read). Named approximations: the logic quantises at its DMA
rate (no compute charged); reads of the rows and writes of the packed increment are issued as two
streams (its read and write pools). Log region (from the machine's ``log_base``): the increment
ring (two slots of k batches' rows at the quantised size), then the MLP area.

Crash invariant (the scheme's own, ``crash.CnrProtocol``): recovery names the batch of the last
committed checkpoint (never an older one, never past the last completed update) and the recovered
tables equal the reference after that batch within the declared quantisation error
(:attr:`~cxlsim.crash.protocols.Protocol.tolerance`; bit for bit unquantised); the MLP equals it
exactly. Several CXL-MEMs are not covered by the crash protocol (one device).
"""

from __future__ import annotations

import math

import numpy as np

from cxlsim.axes.persistence import Persistence
from cxlsim.axes.persistence.cnr.crash import build_cnr, plan_cnr
from cxlsim.axes.persistence.cnr.increments import (  # noqa: F401 (re-exported: the scheme's API)
    QUANT_BITS,
    ROW_HEADER_B,
    is_checkpoint,
    quant_row_B,
    quantise,
    union_sorted,
)
from cxlsim.config.params import Param
from cxlsim.engine.executor import OpOutcome
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.dataflow import sfx


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
