"""The cluster-level face of ``persistence: undo``: TrainingCXL's batch-aware undo log as an ft
scheme (``kind: undo-log`` in a scenario's ``schemes:``; contract: :mod:`cxlsim.ft.schemes`), its
log rates measured on the timing model (:mod:`~cxlsim.axes.persistence.undo.log_timing`).
"""

from __future__ import annotations

from cxlsim.config.params import Param, Schema
from cxlsim.errors import ConfigError
from cxlsim.ft.schemes import Scheme
from cxlsim.ft.simulator import Recovery
from cxlsim.ft.storage import preset_read_GBps, preset_write_GBps
from cxlsim.units import GB


class UndoLog(Scheme):
    """TrainingCXL's batch-aware undo log on CXL-attached PMEM (per node): logging overlaps the
    GPU's interaction/top-MLP window and only its excess is exposed; a failure loses at most the
    in-flight batch; recovery reads the flagged log and restores the rows. The log time is the
    scenario's log bytes at the rates the timing model measured on an undo-logging system
    (:mod:`~cxlsim.axes.persistence.undo.log_timing`: stated ``log_GBps`` / ``mlp_log_GBps`` or a ``timing_system`` run)."""

    kind = "undo-log"
    SCHEMA = Schema("ft.scheme.undo-log", (
        Param("unique_rows_per_batch_count", int, "rows a batch updates per node (logged)", default=20000, minimum=0),
        Param("idle_window_s", float, "CXL-MEM idle window per batch the logging overlaps (no default: the scenario "
              "states it with its source, e.g. the GPU's interaction + top-MLP time of a simulated run)", minimum=0),
        Param("log_GBps", float, "embedding-log rate, GB/s of logged rows, measured on a simulated undo-logging "
              "system (cxlsim.axes.persistence.undo.log_timing.undo_log_rates); no default: state it with its source, or give "
              "timing_system (-1: not stated)", default=-1.0, minimum=-1),
        Param("mlp_log_GBps", float, "MLP-log rate (GB/s) of an unrelaxed log, measured as log_GBps (an unrelaxed "
              "system, cxl-b); needed with log_GBps when relaxed is false (-1: not stated)", default=-1.0, minimum=-1),
        Param("timing_system", str, "undo-logging system (config name or path) whose simulated run gives "
              "log_GBps and mlp_log_GBps (instead of stating them)", default=""),
        Param("pmem_read_GBps", float, "PMEM read bandwidth of recovery's log read", default=12.0, minimum=0,
              exclusive_minimum=True),
        Param("pmem_write_GBps", float, "PMEM write bandwidth of recovery's row restores", default=2.0, minimum=0,
              exclusive_minimum=True),
        Param("pmem_device_name", str, "optional memory preset (a memory-kind family) giving the two recovery "
              "bandwidths: its read_bw_GBps and write_bw_GBps", default=""),
        Param("mlp_log_B", float, "MLP log size per node (-1 = dense_GB / nodes)", default=-1.0, minimum=-1),
        Param("relaxed", bool, "relaxed checkpoint: MLP logging spread over batches, never exposed", default=True),
    ), checks=(
        lambda v: ("log_GBps", "must be > 0 (or -1 with timing_system)") if v["log_GBps"] == 0 else None,
        lambda v: ("log_GBps", "state the logging rate (log_GBps, with its source) or the system that measures it "
                   "(timing_system), one of the two") if (v["log_GBps"] > 0) == bool(v["timing_system"]) else None,
        lambda v: ("mlp_log_GBps", "an unrelaxed log (relaxed: false) with a stated log_GBps needs mlp_log_GBps")
        if v["log_GBps"] > 0 and not v["relaxed"] and v["mlp_log_GBps"] <= 0 else None,
    ))

    def __init__(self, label, p, ctx):
        super().__init__(label, p, ctx)
        rd, wr = self._pmem_bw()
        self.read_Bps, self.write_Bps = rd * GB, wr * GB
        self.emb_log_GBps, self.mlp_log_GBps, self.rate_source = self._log_rates()
        emb_log_B = p.unique_rows_per_batch_count * ctx.m.row_B
        mlp_B = ctx.m.dense_GB * GB / ctx.m.nodes_count if p.mlp_log_B < 0 else p.mlp_log_B
        self.log_B = emb_log_B + mlp_B
        emb_s = emb_log_B / (self.emb_log_GBps * GB)
        busy = emb_s if p.relaxed else emb_s + mlp_B / (self.mlp_log_GBps * GB)  # relaxed: MLP spread over batches
        self.exposed_s = max(0.0, busy - p.idle_window_s)
        self.step_s = ctx.scenario.job.step_s
        self.slowdown = 1.0 + self.exposed_s / self.step_s
        self.restore_s = self.log_B / self.read_Bps + emb_log_B / self.write_Bps
        self.peak_capacity_bytes = 2 * self.log_B * ctx.m.nodes_count
        self.batches = ctx.t_total_s / self.step_s

    def _log_rates(self) -> tuple[float, float | None, str]:
        """(embedding-log GB/s, MLP-log GB/s or None, source): stated, or measured on ``timing_system``."""
        p = self.p
        if not p.timing_system:
            return p.log_GBps, (p.mlp_log_GBps if p.mlp_log_GBps > 0 else None), "stated (log_GBps)"
        # the timing model, imported only when a run is asked for (it triples ft's import time)
        from cxlsim.axes.persistence.undo.log_timing import undo_log_rates

        rates = undo_log_rates(p.timing_system)
        if not p.relaxed and rates.mlp_log_GBps is None:
            raise ConfigError(self.ctx.scenario.path, f"schemes[{self.label}].timing_system",
                              f"{p.timing_system} spreads its MLP log over batches (relaxed), so its run gives no "
                              "MLP-log rate for an unrelaxed log: name an unrelaxed system (cxl-b)")
        return rates.emb_log_GBps, rates.mlp_log_GBps, rates.source

    def _pmem_bw(self) -> tuple[float, float]:
        p = self.p
        if p.pmem_device_name:
            return (preset_read_GBps(p.pmem_device_name, self.ctx.scenario.path),
                    preset_write_GBps(p.pmem_device_name, self.ctx.scenario.path))
        return p.pmem_read_GBps, p.pmem_write_GBps

    def recover(self, st, ev):
        in_flight = st.work_s % self.step_s
        return Recovery(in_flight, self.ctx.reschedule_s(ev), self.restore_s)

    def details(self):
        return {"log_bytes_per_batch": self.log_B, "exposed_per_batch_ms": self.exposed_s * 1e3,
                "emb_log_GBps": self.emb_log_GBps, "mlp_log_GBps": self.mlp_log_GBps,
                "log_rate_source": self.rate_source,
                "restore_s": self.restore_s, "relaxed": self.p.relaxed,
                "log_bytes_written": self.log_B * self.batches * self.ctx.m.nodes_count}

    def summary(self):
        return f"per-batch log {self.log_B / 1e6:.3g} MB, exposed {self.exposed_s * 1e3:.3g} ms"

    # log writes are not storage checkpoints but are what this scheme persists
    @property
    def written_B(self) -> float:
        return self.log_B * self.batches * self.ctx.m.nodes_count
