"""``persistence: undo`` (``cxl-b``, ``cxl``): the batch-aware undo log
(docs/design.md#batch-aware-undo-log, #relaxed-batch-aware-checkpoint). The checkpointing logic
copies the rows batch n will update into embedding-log slot ``n % 2`` (``emb_log``) and the MLP
parameters into the MLP log (``mlp_log``), each then flagged; the update waits for every device's
embedding log, the optimizer step for the MLP log. With ``relaxed_mlp_log`` the MLP log copies only
while its GPU runs interaction + top MLP and spans batches; the relaxed lookup of batch n+1 reads
the table after emb_log n.

Log region: as the redo scheme's (:func:`~cxlsim.axes.persistence.redo.scheme.log_areas`).

Crash protocol (``crash.build_undo``): the embedding log of batch ``n`` (the rows the batch will
update, copied before the update) goes to slot ``n % 2``, then its flag; the MLP log goes to the
MLP slot ``seq % 2`` (``seq`` counts MLP logs; the initial parameters are log 0), then its flag.
When both flags of batch ``n`` are set the previous batch's logs are deleted (their flags zeroed).
With ``relaxed_mlp_log`` an MLP log is copied in chunks during the GPU's interaction/top MLP
windows of several batches (:func:`~cxlsim.crash.timeline.relaxed_mlp_fractions`), records the
batch of each chunk, and deletes its predecessor once flagged; the embedding log of ``n − 1`` is
deleted once log ``n`` is flagged.

Several CXL-MEMs (docs/design.md#scale-out): each device logs the rows it holds
(:class:`~cxlsim.systems.topology.Placement`) and a shard of the MLP (whole chunks) in its own
:class:`~cxlsim.crash.protocols.MemLog`, on its own steps' spans (``emb_log.<d>``, ``update.<d>``,
``mlp_log.<d>``). The global persistence rule: batch ``n`` is persistent only once every device's
logs of ``n`` are flagged; deletions of older logs, and the flag of a relaxed MLP log completed at
``n``, wait for the last device's flag.

Injected bugs: ``flag-before-data`` (every flag at its step's start, without the fence);
``delete-old-log-early`` (the previous embedding and MLP logs deleted when the new ones start);
``local-persistence`` (several CXL-MEMs: each device trusts its own flags, recovery CXL-MEM 0's);
``delete-on-embedding-flag`` (the old checkpoint deleted once the new embedding log is flagged,
without waiting for the MLP log's flag: ``cxl-b``, the logs of ``n − 1`` on the embedding flag of
``n``; ``cxl``, the previous MLP log on the embedding flag of the batch its successor starts
copying at). The update does not wait for the MLP log (docs/design.md#batch-aware-undo-log), so a
crash between the two flags of that bug finds no MLP log.

Recovery (``crash.plan_undo``): the newest flagged embedding log ``b`` is restored (undoing a
possibly partial update ``b``): ``m = b − 1``; the MLP comes from the newest flagged MLP log.
Without relaxation the MLP log must hold the parameters after ``m``; when it is not durable yet, the
older embedding log ``b − 1`` (still present: logs are deleted only after both flags of the next
batch) is restored too, so ``m = b − 2`` with the matching MLP log. No flagged embedding log: the
data region is the initial model (``m = −1``). Several CXL-MEMs: the same by the global rule.
"""

from __future__ import annotations

from cxlsim.axes.persistence import Persistence
from cxlsim.axes.persistence.redo.scheme import log_areas
from cxlsim.engine.executor import OpOutcome
from cxlsim.errors import ConfigError
from cxlsim.systems import axes
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.provision import checkpoint_B


class Undo(Persistence):
    STEPS = {"emb_log": "checkpoint", "mlp_log": "checkpoint"}
    KEYS = ("undo_log_start",)
    relaxable = True  # the relaxed lookup and MLP log need its batch-aware log

    def __init__(self, machine) -> None:
        super().__init__(machine)
        self.emb_log_base, self.mlp_log_base, self.redo_base = log_areas(machine)

    @classmethod
    def check_pipeline(cls, p, where: str) -> None:
        if not axes.of(p, "checkpoint_agent").dma_engine:
            raise ConfigError(where, "pipeline.checkpoint_agent", "undo logging runs on the checkpointing logic (ckpt_logic)")

    @classmethod
    def checkpoint_B(cls, workload, p) -> float:
        return checkpoint_B(workload)

    @classmethod
    def spreads_mlp_log(cls, p) -> bool:
        return p.relaxed_mlp_log

    # -- dataflow -----------------------------------------------------------------------------
    @classmethod
    def read_after(cls, g, n: int, m: int) -> list[tuple]:
        return [("emb_log" + sfx(m), n)]

    @classmethod
    def update_deps(cls, g, n: int) -> list[tuple]:
        # docs/design.md#batch-aware-undo-log and #scale-out (the paper's embedding logging, step
        # 4): once the batch's embedding log is flagged on every device the update writes in place;
        # it does not wait for the MLP log (recovery then takes the MLP from the previous MLP log,
        # still present)
        return g.every("emb_log", n, g.mems)

    @classmethod
    def opt_deps(cls, g, n: int) -> list[tuple]:
        return [] if g.pipeline.relaxed_mlp_log else g.every("mlp_log", n, g.mems)

    @classmethod
    def add_ops(cls, g, n: int) -> None:
        pl = g.pipeline
        p = n - 1
        log_at_inputs = pl.undo_log_start == "inputs"
        relaxed = pl.relaxed_lookup
        for m in g.mems:
            c, s_ = sfx(m), sfx(g.src(m))
            ckpt, log_lane = g.ckpt(m), g.log_lane(m)
            emb_deps = [("config" + c, n) if log_at_inputs else ("lookup" + c, n), ("update" + c, p)]
            if not pl.relaxed_mlp_log:
                emb_deps.append(("mlp_log" + c, p))  # its slot is batch n−2's: free once batch n−1's log is whole
            g.add("emb_log" + c, n, ckpt, emb_deps)
            if pl.relaxed_mlp_log and log_lane != ckpt:
                # a DMA channel of its own: copy during batch n's GPU window whatever the
                # embedding log is doing (the two share the media, served in time order)
                g.add("mlp_log" + c, n, log_lane, [("t_mlp" + s_, n, "start"), ("mlp_log" + c, p)])
            elif pl.relaxed_mlp_log:
                log_deps = [("t_mlp" + s_, n, "start"), ("emb_log" + c, n), ("mlp_log" + c, p)]
                if relaxed:
                    log_deps.append(("lookup" + c, n + 1))
                g.add("mlp_log" + c, n, ckpt, log_deps)
            elif log_lane != ckpt:
                # its own DMA channel: copies beside the embedding log once batch n−1's optimizer
                # step has produced the parameters (and log n−1 is whole: its slot is n−2's), or
                # from the end of the lookup
                start = [("emb_log" + c, p)] if log_at_inputs else [("lookup" + c, n)]
                g.add("mlp_log" + c, n, log_lane, start + [("mlp_opt" + s_, p)])
            else:
                g.add("mlp_log" + c, n, ckpt, [("emb_log" + c, n), ("mlp_opt" + s_, p)])

    # -- timing -------------------------------------------------------------------------------
    def steps(self):
        return {"emb_log": self._emb_log, "mlp_log": self._mlp_log}

    def _emb_log(self, n, t, ex, m=0):
        """Copy the rows batch ``n`` will update into its log slot (in segments), then set the flag."""
        mc = self.m
        b = mc.batch(n, m)
        side = mc.sides[m]
        out = mc.ckpt_outstanding()
        rows, base = b.unique_rows, self.emb_log_base[n % 2]
        mc.agent.count_dma(mc.ledger, rows.size * mc.row_B)
        issue_end = mc.agent.copy_issue_end(t, rows.size * mc.row_B, rows.size)
        return mc.in_segments(
            t, rows.size, mc.row_B,
            lambda start, i, j: mc.copy_rows(side, rows[i:j], base + i * mc.row_B, start, out),
            lambda latest: max(latest, issue_end) + mc.flag_ns(side.ckpt_mem))

    def _mlp_log(self, n, t, ex, m=0):
        mc = self.m
        side = mc.sides[m]
        shard = side.mlp_B
        out = mc.ckpt_outstanding()
        if not mc.pipe.relaxed_mlp_log:  # the whole shard, in segments, then the flag
            pull_end = t + mc.pull_mlp_ns(shard, m)
            return mc.pull_in_segments(side, shard, self.mlp_log_base, t, pull_end - t, out,
                                       lambda latest: max(latest, pull_end) + mc.flag_ns(side.ckpt_mem))
        # relaxed: copy only while its source GPU runs interaction + top MLP of batch n
        # (docs/design.md#relaxed-batch-aware-checkpoint)
        window_end = ex.planned_end(("t_mlp" + sfx(side.source_gpu), n))
        prog = side.mlp_log
        if prog.first_batch < 0:
            prog.first_batch = n
        left = shard - prog.done_B
        end = t
        if window_end > t and left > 0:
            rate_ns_per_B = mc.pull_mlp_ns(shard, m) / shard
            nbytes = min(left, (window_end - t) / rate_ns_per_B)
            pull = nbytes * rate_ns_per_B
            end = mc.write_mlp(side, nbytes, self.mlp_log_base + int(prog.done_B), t, pull, out)
            prog.done_B += nbytes
        if prog.done_B >= shard - 1e-6:
            end += mc.flag_ns(side.ckpt_mem)
            prog.complete_span = (prog.first_batch, n)
            prog.done_B, prog.first_batch = 0.0, -1
        gap = n - prog.complete_span[0] if prog.complete_span else n + 1
        led = mc.ledger
        led.mlp_log_gap_batches = max(led.mlp_log_gap_batches, gap)  # the worst device's
        return OpOutcome(end, label=f"mlp_log{sfx(m)} {n} ({100 * prog.done_B / shard:.0f}%)")

    # -- crash --------------------------------------------------------------------------------
    @classmethod
    def crash_check(cls, cfg, bug, mems) -> None:
        """Several CXL-MEMs are covered (the global persistence rule)."""

    @classmethod
    def build_protocol(cls, cfg, ref, tl, devices, bug):
        from cxlsim.axes.persistence.undo.crash import build_undo

        return build_undo(cfg, ref, tl, devices, bug)

    @classmethod
    def plan(cls, img, proto):
        from cxlsim.axes.persistence.undo.crash import plan_undo

        return plan_undo(img, proto)
