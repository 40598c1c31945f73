"""Reproduce the paper's comparison: RM1–RM4 on every system of SPEC §1.4 that has a
configuration (ssd, pmem, pcie, cxl-d, cxl-b, cxl, dram; tpu-ps when configs/tpu-ps.yaml exists),
the Figure-12 timelines of cxl-d, cxl-b and cxl, and the figures.

  cxlsim reproduce                                   (plots/, each system's batch count)
  cxlsim reproduce --batches 3 --executor serial
  cxlsim reproduce --systems pmem cxl-b cxl --workloads rm1 rm2 --out /tmp/quick
  cxlsim reproduce --set workload_overrides.batch_size=64 --out /tmp/small
  cxlsim reproduce --plots-only                      (redraw from plots/results.json)

Writes OUT/fig11_breakdown.png (critical-path breakdown, normalised to pmem), OUT/fig12_timeline.png
(lanes over two batches of RM1), OUT/fig13_energy.png (energy by component, normalised to pmem;
skipped with a note while no energy model exists), OUT/results.json and OUT/results.csv (the sweep
formats, see `cxlsim sweep --help`), and prints batch time, speedup vs pmem and energy vs pmem per
RM with their means (geometric for ratios). --set applies to every simulation.
"""

from __future__ import annotations

import argparse
import sys

from cxlsim.errors import InputError

HELP = "reproduce the paper's comparison: RM1-RM4 on all systems, Figures 11-13, summary table"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.sweep.executors import EXECUTORS
    from cxlsim.sweep.paper import WORKLOADS, default_systems

    p.add_argument("--out", default="plots", metavar="DIR", help="output folder (default: plots)")
    p.add_argument("--batches", type=int, help="measured batches per run (default: each system's configured count)")
    p.add_argument("--systems", nargs="+", metavar="S", help="systems (default: " + " ".join(default_systems()) + ")")
    p.add_argument("--workloads", nargs="+", metavar="W", help="workloads (default: " + " ".join(WORKLOADS) + ")")
    p.add_argument("--timeline-workload", default="rm1", metavar="W", help="workload of Figure 12 (default rm1)")
    p.add_argument("--executor", choices=list(EXECUTORS), default="process", help="where simulations run (default: process)")
    p.add_argument("--workers", type=int, help="worker processes (default: the CPU count)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address (with --executor dask)")
    p.add_argument("--plots-only", action="store_true", help="redraw the figures from OUT/results.json; simulate nothing")
    p.add_argument("--csv", action="store_true", help="print the summary as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run(args: argparse.Namespace) -> int:
    from cxlsim.config.yamlio import parse_set
    from cxlsim.reports.output import emit
    from cxlsim.sweep import figures
    from cxlsim.sweep import reproduce as rp
    from cxlsim.sweep.results import read_results

    if args.config:
        raise InputError("reproduce: --config is not used; pick systems with --systems NAME|FILE.yaml "
                         "(or run a sweep spec with `cxlsim sweep FILE`)")
    if args.plots_only:
        doc = read_results(args.out)
        jpath = csv_path = None
    else:
        plan = rp.plan(args.systems, args.workloads, args.batches, parse_set(args.set), args.timeline_workload)
        doc = rp.run(plan, args.executor, args.workers, args.scheduler, progress=not args.no_progress)
        jpath, csv_path = rp.write(doc, args.out)
    drawn = figures.draw_all(doc, args.out)
    summary = doc["summary"]
    data = {**summary, "figures": {k: None if v is None else str(v) for k, v in drawn.items()},
            "results": None if jpath is None else {"json": str(jpath), "csv": str(csv_path)}}
    notes = []
    if drawn["fig13"] is None:
        notes.append("note: fig13_energy.png skipped: no energy results (cxlsim.energy unavailable)")
    if drawn["fig12"] is None:
        notes.append("note: fig12_timeline.png skipped: no cxl-d/cxl-b/cxl timeline run succeeded")
    if args.csv:
        _csv(summary)
    else:
        emit(args, data, lambda d: rp.render(d) + "\n\nwrote " + ", ".join(str(v) for v in
             [*[p for p in drawn.values() if p], jpath, csv_path] if v))
    for n in notes:
        print(n, file=sys.stderr)
    failed = [r for r in summary["rows"] if r["status"] != "ok"]
    return 1 if failed else 0


def _csv(summary: dict) -> None:
    import csv

    from cxlsim.sweep.results import cell

    cols = ["system", "workload", "status", "batch_time_ms", "speedup_vs_pmem", "energy_J_per_batch", "energy_vs_pmem"]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(cols)
    for r in summary["rows"]:
        w.writerow([cell(r.get(c)) for c in cols])
    for a in summary["average"]:
        w.writerow([cell(v) for v in (a["system"], "mean", "", a["batch_time_ms"], a["speedup_vs_pmem"], "",
                                      a["energy_vs_pmem"])])
