"""Sweep throughput: points per second for each executor (serial, a local process pool, a local
Dask cluster when Dask is installed) on the same small sweep, as ratios against serial measured
in this run. Wall times include starting the workers, which is what a user waits for; the same
points run under every executor and their results are checked to be identical. The sweep is the
catalog's ``configs/sweeps/bench-sweep.yaml``; ``--quick`` runs its first two systems, one batch each."""

from __future__ import annotations

import time
from dataclasses import replace

from cxlsim.reports.output import format_table

HELP = "sweep points per second per executor (serial, process, dask), as ratios against serial"
#: The catalog sweep timed (small workloads, so that executor overhead is visible beside the simulation).
SWEEP = "bench-sweep"
#: ``--quick``: how many of its systems run, and the batches each point measures.
QUICK_SYSTEMS = 2
QUICK_BATCHES = 1


def _spec(quick: bool):
    from cxlsim.sweep.lists import sweep_lists, sweep_path
    from cxlsim.sweep.spec import load_spec

    systems = sweep_lists(SWEEP, needs=("systems",)).systems
    spec = load_spec(sweep_path(SWEEP), [("batches", QUICK_BATCHES)] if quick else ())
    if not quick:
        return spec
    keep = set(systems[:QUICK_SYSTEMS])
    return replace(spec, points=tuple(p for p in spec.points if p.system in keep))


def run(args) -> dict:
    from cxlsim.errors import InputError
    from cxlsim.sweep.executors import EXECUTORS, default_workers, make_executor
    from cxlsim.sweep.results import csv_text
    from cxlsim.sweep.runner import execute

    spec = _spec(args.quick)
    points = list(spec.points)
    workers = default_workers()
    # every registered executor (serial first: the reference), but those whose library is missing
    names = ["serial", *sorted(n for n in EXECUTORS if n != "serial")]
    rows, reference, missing = [], None, []
    for name in names:
        t0 = time.perf_counter()
        try:
            ex = make_executor(name, workers if name != "serial" else None)
        except InputError:  # its library is not installed (Dask): left out, as the note says
            missing.append(name)
            continue
        try:
            records = [None] * len(points)
            for i, rec in execute(points, ex):
                records[i] = rec
        finally:
            ex.close()
        wall = time.perf_counter() - t0
        text = csv_text(records, spec.axes)
        reference = reference or text
        rows.append({"executor": name, "workers": ex.workers, "points": len(points), "wall_s": wall,
                     "points_per_s": len(points) / wall,
                     "failed": sum(r["status"] != "ok" for r in records), "identical_to_serial": text == reference})
    base = rows[0]["points_per_s"]
    for r in rows:
        r["ratio_to_serial"] = r["points_per_s"] / base
    return {"points": len(points), "cpus": workers, "per_executor": rows,
            "note": f"left out, not installed: {', '.join(missing)}" if missing else ""}


def render(d: dict) -> str:
    table = format_table(
        ["executor", "workers", "points", "wall s", "points/s", "× serial", "same results"],
        [[r["executor"], r["workers"], r["points"], r["wall_s"], r["points_per_s"],
          r["ratio_to_serial"], "yes" if r["identical_to_serial"] else "NO"] for r in d["per_executor"]])
    tail = f"\n\n{d['points']} points on {d['cpus']} CPUs; wall time includes starting the workers (a Dask cluster takes seconds)"
    return table + tail + (f" ({d['note']})" if d["note"] else "")
