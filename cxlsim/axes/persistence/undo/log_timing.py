"""The undo log's logging rates, measured on a simulated run of an undo-logging system (ft's
undo-log overhead comes from the timing model, not from an analytic copy at PMEM bandwidth).

:func:`undo_log_rates` simulates ``system`` (a config name or path whose persistence scheme writes
a per-batch embedding log, ``emb_log``: ``cxl-b``, ``cxl``) and returns the rates its logging steps
reached over the measured batches, in GB/s of logged bytes per second of the step's span (as the
executor recorded it: queueing behind lookups and updates on the same media included):

- ``emb_log_GBps``: Σ (the batch's distinct rows on device m × ``row_B``) / Σ emb_log span, over
  measured batches and devices;
- ``mlp_log_GBps``: Σ (device m's MLP shard bytes) / Σ mlp_log span, where each batch's MLP log is
  whole; ``None`` where the scheme spreads its MLP log over batches (``relaxed_mlp_log``: a span is
  a copy window, not a rate).

The ft ``undo-log`` scheme divides its own per-node log bytes by these rates (a named assumption:
the timing model's bytes-per-second of logging carry over to the scenario's row size and count).
Runs are deterministic (seeded) and memoised per argument tuple.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from cxlsim.errors import InputError
from cxlsim.systems import axes
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.run import simulate
from cxlsim.units import GB

#: Batches measured, after warm-up ones (the RM1 emb_log span varies < 1 % from batch to batch).
MEASURED_BATCHES = 4
WARMUP_BATCHES = 2
#: The step a per-batch undo log writes its rows in (``persistence: undo``).
EMB_LOG_STEP, MLP_LOG_STEP = "emb_log", "mlp_log"


@dataclass(frozen=True)
class LogRates:
    """Measured logging rates (GB/s) and what measured them."""

    emb_log_GBps: float
    mlp_log_GBps: float | None
    source: str


@lru_cache(maxsize=8)
def undo_log_rates(system: str, workload: str | None = None, seed: int | None = None,
                   batches: int = MEASURED_BATCHES, warmup: int = WARMUP_BATCHES) -> LogRates:
    """Simulate ``system`` (no trace) and measure its undo log's rates (module docstring)."""
    res = simulate(system, workload=workload, batches=batches, warmup=warmup, seed=seed, trace=False)
    cfg = res.config
    scheme = axes.of(cfg.pipeline, "persistence") if cfg.pipeline is not None else None
    if scheme is None or EMB_LOG_STEP not in scheme.STEPS:
        what = "no pipeline" if scheme is None else f"persistence {scheme.name!r}"
        raise InputError(f"system {cfg.name!r} ({what}) writes no per-batch undo log ({EMB_LOG_STEP}); "
                         "the undo-log rates need an undo-logging system (cxl-b, cxl)")
    rec, mc = res.executor.records, res.machine
    emb_B = emb_ns = mlp_B = mlp_ns = 0.0
    for n in res.measured:
        for m in range(mc.mems):
            r = rec[(EMB_LOG_STEP + sfx(m), n)]
            emb_B += mc.batch(n, m).n_unique * mc.row_B
            emb_ns += r.end_ns - r.start_ns
            r = rec[(MLP_LOG_STEP + sfx(m), n)]
            mlp_B += mc.sides[m].mlp_B
            mlp_ns += r.end_ns - r.start_ns
    spread = scheme.spreads_mlp_log(cfg.pipeline)
    source = (f"cxlsim simulate {cfg.name} ({res.workload.name}, platform {cfg.platform}, seed {cfg.seed}, "
              f"batches {batches} after {warmup} warm-up)")
    return LogRates(emb_B / emb_ns * 1e9 / GB, None if spread else mlp_B / mlp_ns * 1e9 / GB, source)
