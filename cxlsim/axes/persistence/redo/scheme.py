"""``persistence: redo`` (``ssd``, ``pmem``, ``pcie``, ``cxl-d``; docs/design.md#redo-checkpoint):
the data region is updated in place; then the ``redo`` step writes record n (the updated rows and
the MLP parameters) into a ring in the log region and, after a fence, its commit flag. With
``redo_mlp_pull: with_optimizer`` the ``redo_mlp`` step pulls the record's MLP part as soon as the
optimizer step has produced it, beside the update; the flag follows both parts.

Log region (from the machine's ``log_base``): two embedding-log slots' worth of space (kept for the
address map the undo scheme shares), an MLP area, then the record ring (64 records). A record is its
rows, written packed in the agent's bursts from the record's base (the last burst padded and written
whole), then the MLP part from the next burst boundary (:meth:`Redo.mlp_offset`).

Crash protocol (``crash.build_redo``): the data region is updated in place (on ``ssd`` the host-DRAM
vector cache absorbs the update: nothing durable); then record ``n`` (row ids, the updated rows,
all MLP parameters) and, after a fence, its commit flag; with ``redo_mlp_pull: with_optimizer``
(``cxl-d``) the MLP part is written over the ``redo_mlp`` span, beside the update, and the flag
follows both parts. A full snapshot of the initial model sits in the log region. Injected bugs:
``flag-before-data`` (the flag at the step's start), ``delete-old-log-early`` (the previous
record's commit flag zeroed when the new record starts). One CXL-MEM only.

Recovery (``crash.plan_redo``): the committed records ``0 … k`` (consecutive valid commit flags) are
replayed onto the snapshot, ``m = k``; the MLP parameters are record ``k``'s.
"""

from __future__ import annotations

from cxlsim.axes.persistence import Persistence
from cxlsim.engine.executor import OpOutcome
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems import axes
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.provision import checkpoint_B


def log_areas(m) -> tuple[list[int], int, int]:
    """``(emb_log_base[2], mlp_log_base, redo_base)`` of machine ``m``'s log region: two slots of a
    batch's logged rows each, then the MLP area, then the redo ring (each from a GiB boundary)."""
    slot = m.round_GiB(m.B * m.workload.lookups_per_sample * m.row_B)
    emb = [m.log_base, m.log_base + slot]
    mlp = m.log_base + 2 * slot
    return emb, mlp, mlp + m.round_GiB(m.mlp_B)


class Redo(Persistence):
    STEPS = {"redo": "checkpoint", "redo_mlp": "checkpoint"}
    COMMIT_STEP = "redo"
    KEYS = ("redo_mlp_pull",)

    def __init__(self, machine) -> None:
        super().__init__(machine)
        self.emb_log_base, self.mlp_log_base, self.redo_base = log_areas(machine)

    @classmethod
    def check_pipeline(cls, p, where: str) -> None:
        if p.redo_mlp_pull == "with_optimizer" and not (axes.of(p, "checkpoint_agent").dma_engine
                                                        and axes.of(p, "mlp_pull").by_device):
            raise ConfigError(where, "pipeline.redo_mlp_pull", "with_optimizer needs the checkpointing logic pulling "
                              "over CXL.cache (checkpoint_agent: ckpt_logic, mlp_pull: cxl_cache), an engine of its "
                              "own beside the update")

    @classmethod
    def checkpoint_B(cls, workload, p) -> float:
        return checkpoint_B(workload)

    # -- dataflow -----------------------------------------------------------------------------
    @classmethod
    def begin_deps(cls, g, n: int) -> list[tuple]:
        return g.every("redo", n - 1, g.mems)

    @classmethod
    def slot_deps(cls, g, n: int, m: int) -> list[tuple]:
        return [("redo" + sfx(m), n - 2)]

    @classmethod
    def add_ops(cls, g, n: int) -> None:
        early = g.pipeline.redo_mlp_pull == "with_optimizer"
        for m in g.mems:
            c = sfx(m)
            redo_deps = [("update" + c, n), ("mlp_opt" + sfx(g.src(m)), n)]
            if early:
                # the MLP part from the optimizer step on, beside the update; the record's rows and
                # commit flag after the update, the flag also after the MLP part (its planned end)
                g.add("redo_mlp" + c, n, g.log_lane(m), [("mlp_opt" + sfx(g.src(m)), n), ("redo" + c, n - 1)])
                redo_deps.append(("redo_mlp" + c, n, "start"))
            g.add("redo" + c, n, g.agent(m), redo_deps)

    # -- timing -------------------------------------------------------------------------------
    def mlp_offset(self, n_unique: int) -> int:
        """Offset of a record's MLP part from the record's base: after the bursts that hold its
        ``n_unique`` rows (the agent writes them whole, the last one padded), so that the MLP part
        starts on a burst boundary. Placed right after the rows' bytes, it shared their last burst's
        bytes (written twice) and, where the rows did not end on a page, each of its 4 KiB pieces
        straddled two SSD pages, both written partially: two read-modify-write page fills and two
        page writes per piece (docs/devices-media.md, Mechanism, item 5)."""
        burst_B = self.m.agent.burst_B()
        return -(-n_unique * self.m.row_B // burst_B) * burst_B

    def steps(self):
        return {"redo": self._redo, "redo_mlp": self._redo_mlp}

    def _redo_mlp(self, n, t, ex, m=0):
        """The record's MLP part, pulled as soon as the optimizer step has produced the parameters,
        beside the update (written after the record's rows' space)."""
        mc = self.m
        b = mc.batch(n, m)
        side = mc.sides[m]
        pull = mc.pull_mlp_ns(side.mlp_B, m)
        mlp_base = self.redo_base + side.redo_cursor + self.mlp_offset(b.n_unique)
        return mc.pull_in_segments(side, side.mlp_B, mlp_base, t, pull, mc.ckpt_outstanding(),
                                   lambda latest: max(latest, t + pull))

    def _redo(self, n, t, ex, m=0):
        mc = self.m
        b = mc.batch(n, m)
        side = mc.sides[m]
        out = mc.ckpt_outstanding()
        base = self.redo_base + side.redo_cursor
        agent = mc.agent
        # the host already holds the rows it just updated; logic reads them from the data region
        rows_end = mc.copy_rows(side, b.unique_rows, base, t, out, read_source=agent.reads_source)
        if agent.dma_engine:
            rows_end = max(rows_end, agent.copy_issue_end(t, b.n_unique * mc.row_B, b.n_unique))
            agent.count_dma(mc.ledger, b.n_unique * mc.row_B)
        mlp_base = base + self.mlp_offset(b.n_unique)
        record_B = self.mlp_offset(b.n_unique) + side.mlp_B
        side.redo_cursor = (side.redo_cursor + mc.round_GiB(record_B)) % (64 * mc.round_GiB(record_B))
        if mc.pipe.redo_mlp_pull == "with_optimizer":  # its MLP part is under way: commit after both
            key, ledger = ("redo_mlp" + sfx(m), n), mc.ledger

            def commit(now: float) -> OpOutcome:
                if ex.finished(key):
                    mc.restore_ledger(ledger)
                    return OpOutcome(max(now, ex.planned_end(key)) + mc.flag_ns(side.ckpt_mem))
                return OpOutcome(max(now, ex.planned_end(key)), resume=commit)  # its current segment's end

            return OpOutcome(rows_end, resume=commit)
        pull = mc.pull_mlp_ns(side.mlp_B, m)
        mlp_end = max(t + pull, mc.write_mlp(side, side.mlp_B, mlp_base, t, pull, out))
        return OpOutcome(max(rows_end, mlp_end) + mc.flag_ns(side.ckpt_mem))

    # -- crash --------------------------------------------------------------------------------
    @classmethod
    def crash_check(cls, cfg, bug, mems) -> None:
        if mems > 1:
            raise InputError(f"system {cfg.name!r}: crashtest covers several CXL-MEMs (topology.cxl_mems_count "
                             f"{mems}) for undo persistence (cxl-b, cxl); redo persists through one device")
        if bug == "delete-on-embedding-flag":
            raise InputError(f"--inject-bug delete-on-embedding-flag needs undo logs (cxl-b, cxl); system "
                             f"{cfg.name!r} persists with redo records")

    @classmethod
    def build_protocol(cls, cfg, ref, tl, devices, bug):
        from cxlsim.axes.persistence.redo.crash import build_redo

        return build_redo(cfg, ref, tl, devices, bug)

    @classmethod
    def plan(cls, img, proto):
        from cxlsim.axes.persistence.redo.crash import plan_redo

        return plan_redo(img, proto)
