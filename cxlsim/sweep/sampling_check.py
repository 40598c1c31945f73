"""Validate ``batches: auto`` against 20 measured batches, on every system × RM × platform.

    python -m cxlsim.sweep.sampling_check                          # the paper's grid, both platforms
    python -m cxlsim.sweep.sampling_check --systems cxl pmem --workloads rm1 --json check.json
    python -m cxlsim.sweep.sampling_check --markdown               # the table in docs/validation.md

For each cell it runs the system twice with its configured seed: ``batches: auto`` (1 % target by
default, :mod:`cxlsim.systems.sampling`) and the reference, 20 measured batches after 2 warm-up
(every configuration's fixed counts), and reports the counts auto chose, both means with their
95 % intervals, and three checks:

Both intervals are the ones the runs state (:mod:`cxlsim.systems.sampling`: for the workload's
correlated batches, over whole periods of a periodic schedule).

- ``in_reference_ci``: the auto mean lies inside the 20-batch mean's 95 % interval (with a
  1e-9 relative tolerance: systems whose batches all take the same time have a zero-width one);
- ``reference_in_auto_ci``: the 20-batch mean lies inside the interval auto states;
- ``within_target``: the two means differ by at most auto's target (1 % of the reference).

It also reports the batch simulations each run cost (warm-up + measured + the closing batch) and
the wall time of each, so the saving is measured, not assumed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from cxlsim.api import simulate
from cxlsim.sweep.paper import PLATFORMS, default_systems, paper_workloads
from cxlsim.systems.sampling import AUTO, DEFAULT_CI_FRACTION, ci95_half_width

REFERENCE_BATCHES, REFERENCE_WARMUP = 20, 2
#: relative tolerance of the interval checks (floating-point noise around a zero-width interval)
TOLERANCE = 1e-9


def check_one(job: tuple[str, str, str, float, dict | None]) -> dict[str, Any]:
    """One cell: the auto run and the 20-batch reference (module docstring)."""
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
        platforms: Sequence[str] = PLATFORMS, ci: float = DEFAULT_CI_FRACTION, workers: int = 1,
        workload_sets: dict | None = None) -> dict[str, Any]:
    """Every cell (``workers`` forked processes, longest workloads first)."""
    systems = list(systems or default_systems())
    workloads = list(workloads or paper_workloads())
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


def markdown(doc: dict[str, Any]) -> str:
    """The docs/validation.md table."""
    yes = {True: "yes", False: "**no**"}
    lines = ["| platform | system | RM | auto batches (+warm-up) | auto mean ± 95 % (ms) | 20-batch mean ± 95 % (ms) "
             "| difference | in 20-batch CI | 20-batch mean in auto CI | within target | batch simulations auto / 20 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in doc["cells"]:
        lines.append(f"| {c['platform']} | {c['system']} | {c['workload']} | {c['batches']} (+{c['warmup_batches']}) "
                     f"| {c['auto_mean_ms']:.4g} ± {c['auto_ci95_ms']:.2g} | {c['reference_mean_ms']:.4g} ± "
                     f"{c['reference_ci95_ms']:.2g} | {100 * c['difference_fraction']:+.2f} % | {yes[c['in_reference_ci']]} "
                     f"| {yes[c['reference_in_auto_ci']]} | {yes[c['within_target']]} "
                     f"| {c['auto_batch_simulations']} / {c['reference_batch_simulations']} |")
    n = doc["counts"]
    sims = sum(c["auto_batch_simulations"] for c in doc["cells"]), sum(c["reference_batch_simulations"] for c in doc["cells"])
    walls = sum(c["auto_wall_s"] for c in doc["cells"]), sum(c["reference_wall_s"] for c in doc["cells"])
    lines += ["", f"{n['cells']} cells: auto mean inside the 20-batch interval in {n['in_reference_ci']}, the 20-batch "
              f"mean inside auto's interval in {n['reference_in_auto_ci']}, the two within the "
              f"{100 * doc['ci_target_fraction']:g} % target in {n['within_target']}. Batch simulations: "
              f"{sims[0]} auto against {sims[1]} ({sims[1] / sims[0]:.2f}×); simulation wall: {walls[0]:.0f} s "
              f"against {walls[1]:.0f} s ({walls[1] / walls[0]:.2f}×)."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.sampling_check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", nargs="+", metavar="S", help="systems (default: the paper's)")
    ap.add_argument("--workloads", nargs="+", default=None, metavar="W")
    ap.add_argument("--platforms", nargs="+", default=list(PLATFORMS), metavar="P")
    ap.add_argument("--ci", type=float, default=DEFAULT_CI_FRACTION, help="auto's target, a fraction (default 0.01)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", metavar="FILE", help="write the cells as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the docs/validation.md table")
    args = ap.parse_args(argv)
    doc = run(args.systems, args.workloads, args.platforms, args.ci, args.workers)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    print(markdown(doc) if args.markdown else json.dumps(doc["counts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
