"""Crash points per second on RM1 at the default functional scale, for one redo system (``cxl-d``)
and one undo system with both relaxations (``cxl``). Target: at least 10,000 points per minute on
this machine. The baseline measured in the same run is the materialised check (copy the recovered
tables, compare them whole) on a sample of the same points: the ratio shows what the incremental
checker buys. Set-up (timing model, reference run, write events) is reported apart. The systems
and the workload (the first listed) are those of the catalog's ``configs/sweeps/crash-bench.yaml``."""

from __future__ import annotations

import time

import numpy as np

from cxlsim.reports.output import format_table

HELP = "crash points per second/minute at the default scale (target 10,000/min), vs the materialised check"
#: The catalog sweep naming the systems and the workload timed.
SWEEP = "crash-bench"
POINTS = 2000
BATCHES = 6
BASELINE_POINTS = 20
TARGET_PER_MIN = 10_000


def run(args) -> dict:
    from cxlsim.crash.run import instants, prepare, run_points
    from cxlsim.crash.scale import DEFAULT_SCALE
    from cxlsim.sweep.lists import sweep_lists

    lists = sweep_lists(SWEEP, needs=("systems", "workloads"))
    workload = lists.workloads[0]
    quick = getattr(args, "quick", False)
    points, batches = (300, 3) if quick else (POINTS, BATCHES)
    rows = []
    for system in lists.systems:
        t0 = time.perf_counter()
        cr = prepare(system, workload, DEFAULT_SCALE, batches)
        setup = time.perf_counter() - t0
        rep = run_points(cr, points)
        ts = np.sort(instants(cr, points))
        sample = ts[np.linspace(0, ts.size - 1, min(BASELINE_POINTS, ts.size)).astype(int)]
        t1 = time.perf_counter()
        for t in sample:
            cr.checker.evaluate_slow(float(t))
        slow_per_point = (time.perf_counter() - t1) / sample.size
        per_s = points / rep.points_s
        rows.append({"system": system, "points": points, "violations": rep.summary["violations"],
                     "setup_s": setup, "points_s": rep.points_s, "points_per_s": per_s,
                     "points_per_min": per_s * 60, "materialised_points_per_s": 1 / slow_per_point,
                     "speedup_vs_materialised": per_s * slow_per_point})
    return {"workload": workload, "scale": DEFAULT_SCALE, "batches": batches, "quick": quick,
            "target_points_per_min": TARGET_PER_MIN, "runs": rows,
            "min_points_per_min": min(r["points_per_min"] for r in rows)}


def render(d: dict) -> str:
    table = format_table(
        ["system", "points", "violations", "set-up s", "points/s", "points/min", "x materialised"],
        [[r["system"], r["points"], r["violations"], round(r["setup_s"], 1), round(r["points_per_s"]),
          round(r["points_per_min"]), round(r["speedup_vs_materialised"], 1)] for r in d["runs"]],
        title=f"crash points on {d['workload']} at scale {d['scale']:g}, {d['batches']} batches")
    ok = "meets" if d["min_points_per_min"] >= d["target_points_per_min"] else "MISSES"
    return (table + f"\n\nslowest: {d['min_points_per_min']:,.0f} points/min, {ok} the "
            f"{d['target_points_per_min']:,}/min target ({d['min_points_per_min'] / d['target_points_per_min']:.1f}x)")
