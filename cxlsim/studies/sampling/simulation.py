"""The sampling check's runs: per cell, ``batches: auto`` and the 20-batch reference, and the
checks."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Sequence
from typing import Any

from cxlsim.api import simulate
from cxlsim.studies.paper.settings import default_systems, paper_workloads
from cxlsim.studies.paper.settings import platforms as paper_platforms
from cxlsim.studies.sampling.settings import REFERENCE_BATCHES, REFERENCE_WARMUP, TOLERANCE
from cxlsim.systems.sampling import AUTO, DEFAULT_CI_FRACTION, ci95_half_width


def check_one(job: tuple[str, str, str, float, dict | None]) -> dict[str, Any]:
    """One cell: the auto run and the 20-batch reference (the package docstring)."""
    system, workload, platform, ci, workload_sets = job
    sets = [("platform", platform)]
    t = time.perf_counter()
    auto = simulate(system, workload=workload, batches=AUTO, ci=ci, sets=sets, workload_sets=workload_sets, trace=False)
    auto_s = time.perf_counter() - t
    t = time.perf_counter()
    ref = simulate(system, workload=workload, batches=REFERENCE_BATCHES, warmup=REFERENCE_WARMUP, sets=sets,
                   workload_sets=workload_sets, trace=False)
    ref_s = time.perf_counter() - t
    a, r = auto.batch_times_ns / 1e6, ref.batch_times_ns / 1e6
    a_mean, r_mean = float(a.mean()), float(r.mean())
    # both intervals as the runs state them: for consecutive batches of the workload's correlation,
    # over whole periods of the system's schedule
    a_hw, r_hw = (ci95_half_width(x, res.sampling_rule.batch_correlation, res.sampling_rule.period_batches) or 0.0
                  for x, res in ((a, auto), (r, ref)))
    gap = abs(a_mean - r_mean)
    tol = TOLERANCE * r_mean
    return {"system": system, "workload": workload, "platform": platform, "ci_target_fraction": ci,
            "warmup_batches": auto.config.warmup_batches, "batches": auto.config.batches,
            "batch_correlation": auto.sampling_rule.batch_correlation,
            "period_batches": auto.sampling_rule.period_batches,
            "auto_mean_ms": a_mean, "auto_ci95_ms": a_hw, "reference_mean_ms": r_mean, "reference_ci95_ms": r_hw,
            "difference_fraction": (a_mean - r_mean) / r_mean,
            "in_reference_ci": gap <= r_hw + tol, "reference_in_auto_ci": gap <= a_hw + tol,
            "within_target": gap <= ci * r_mean + tol,
            "auto_batch_simulations": auto.config.warmup_batches + auto.config.batches + 1,
            "reference_batch_simulations": REFERENCE_WARMUP + REFERENCE_BATCHES + 1,
            "auto_wall_s": auto_s, "reference_wall_s": ref_s}


def run(systems: Sequence[str] | None = None, workloads: Sequence[str] | None = None,
        platforms: Sequence[str] | None = None, ci: float = DEFAULT_CI_FRACTION, workers: int = 1,
        workload_sets: dict | None = None) -> dict[str, Any]:
    """Every cell (``workers`` forked processes, longest workloads first)."""
    systems = list(systems or default_systems())
    workloads = list(workloads or paper_workloads())
    platforms = list(platforms or paper_platforms())
    jobs = [(s, w, p, ci, workload_sets) for p in platforms for w in workloads for s in systems]
    if workers > 1 and "fork" in mp.get_all_start_methods():
        order = sorted(range(len(jobs)), key=lambda i: jobs[i][1] != "rm2")  # RM2 is the longest
        with mp.get_context("fork").Pool(workers) as pool:
            done = pool.map(check_one, [jobs[i] for i in order], chunksize=1)
        cells = [c for _, c in sorted(zip(order, done, strict=True))]
    else:
        cells = [check_one(j) for j in jobs]
    return {"ci_target_fraction": ci, "reference": {"batches": REFERENCE_BATCHES, "warmup_batches": REFERENCE_WARMUP},
            "cells": cells,
            "counts": {k: sum(1 for c in cells if c[k]) for k in ("in_reference_ci", "reference_in_auto_ci",
                                                                  "within_target")} | {"cells": len(cells)}}
