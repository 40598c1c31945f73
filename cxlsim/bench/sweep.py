"""Sweep throughput: points per second for each executor (serial, a local process pool, a local
Dask cluster when Dask is installed) on the same small sweep, as ratios against serial measured
in this run. Wall times include starting the workers, which is what a user waits for; the same
points run under every executor and their results are checked to be identical."""

from __future__ import annotations

import time

from cxlsim.reports.output import format_table

HELP = "sweep points per second per executor (serial, process, dask), as ratios against serial"
SYSTEMS = ("dram", "cxl", "cxl-b", "pmem")
WORKLOADS = ("rm1", "rm2", "rm3", "rm4")
#: Small workloads so that executor overhead is visible beside the simulation itself.
SMALL = {"workload_overrides.batch_size": 32, "workload_overrides.rows_per_table": 100_000}


def _spec(quick: bool):
    from cxlsim.sweep.spec import build_spec

    doc = {"version": 1, "name": "bench-sweep",
           "base": {"systems": list(SYSTEMS[:2] if quick else SYSTEMS), "workloads": list(WORKLOADS),
                    "batches": 1 if quick else 2, "warmup_batches": 0, "set": dict(SMALL)}}
    return build_spec(doc, "bench sweep")


def run(args) -> dict:
    from cxlsim.sweep.executors import default_workers, make_executor
    from cxlsim.sweep.results import csv_text
    from cxlsim.sweep.runner import execute

    spec = _spec(args.quick)
    points = list(spec.points)
    workers = default_workers()
    names = ["serial", "process"]
    try:
        import dask.distributed  # noqa: F401

        names.append("dask")
    except ImportError:
        pass
    rows, reference = [], None
    for name in names:
        t0 = time.perf_counter()
        ex = make_executor(name, workers if name != "serial" else None)
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
            "note": "unavailable executors are left out" if "dask" not in names else ""}


def render(d: dict) -> str:
    table = format_table(
        ["executor", "workers", "points", "wall s", "points/s", "× serial", "same results"],
        [[r["executor"], r["workers"], r["points"], r["wall_s"], r["points_per_s"],
          r["ratio_to_serial"], "yes" if r["identical_to_serial"] else "NO"] for r in d["per_executor"]])
    tail = f"\n\n{d['points']} points on {d['cpus']} CPUs; wall time includes starting the workers (a Dask cluster takes seconds)"
    return table + tail + (f" ({d['note']})" if d["note"] else "")
