"""Reproduce the paper's comparison: the systems and workloads of configs/sweeps/paper.yaml (the
systems compared, docs/design.md#systems-compared, in the paper's order, tpu-ps, and cxl-cnr as an
extra row; those with a configuration),
the Figure-12 timelines of cxl-d, cxl-b and cxl, and the figures.

  cxlsim reproduce                                   (plots/, batches auto at 1 %)
  cxlsim reproduce --ci 0.5%                         (a tighter interval: more batches)
  cxlsim reproduce --batches 20                      (20 measured batches after each system's warm-up)
  cxlsim reproduce --batches 3 --executor serial
  cxlsim reproduce --systems pmem cxl-b cxl --workloads rm1 rm2 --out /tmp/quick
  cxlsim reproduce --set workload_overrides.batch_size=64 --out /tmp/small
  cxlsim reproduce --plots-only                      (redraw from plots/results.json)

Writes OUT/fig11_breakdown.png (critical-path breakdown, normalised to pmem), OUT/fig12_timeline.png
(lanes over two batches of RM1), OUT/fig13_energy.png (energy by component, normalised to pmem;
skipped with a note while no energy model exists), OUT/results.json and OUT/results.csv (the sweep
formats, see `cxlsim sweep --help`), and prints batch time, speedup vs pmem and energy vs pmem per
RM with their means (geometric for ratios). --set applies to every simulation.

Batches: by default each run samples with stated confidence (--batches auto): it measures until
the 95 % confidence interval of its mean batch time (Student's t, widened for the correlation of
consecutive batches) is within --ci of the mean
(default 1 %), 5 to 20 batches after a warm-up decided from the batch times (MSER, 1 to 6
batches). The counts each run chose and its interval are in results.json (batches,
warmup_batches, batches_mode, batch_time_ci95_ms), at the end of each results.csv row and in the
last summary table. --batches N measures exactly N after each system's configured warm-up.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from cxlsim.cli._args import percent, whole, whole_or_auto
from cxlsim.cli._stats import add_stats_options, with_stats, write_point_stats
from cxlsim.errors import InputError

HELP = "reproduce the paper's comparison: RM1-RM4 on all systems, Figures 11-13, summary table"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.studies.paper.settings import default_systems, paper_workloads, platforms
    from cxlsim.sweep.executors import EXECUTORS

    p.add_argument("--out", default="plots", metavar="DIR", help="output folder (default: plots)")
    p.add_argument("--batches", type=whole_or_auto(1), metavar="N|auto",
                   help="measured batches per run (default auto: until the 95%% interval of the mean is within --ci)")
    p.add_argument("--ci", type=percent, metavar="PCT",
                   help="--batches auto's target: half-width of the 95%% interval relative to the mean (default 1%%)")
    p.add_argument("--systems", nargs="+", metavar="S", help="systems (default: " + " ".join(default_systems()) + ")")
    p.add_argument("--workloads", nargs="+", metavar="W", help="workloads (default: " + " ".join(paper_workloads()) + ")")
    p.add_argument("--timeline-workload", default="rm1", metavar="W", help="workload of Figure 12 (default rm1)")
    p.add_argument("--platform", nargs="+", metavar="NAME", dest="platforms",
                   help="platforms (default: " + " ".join(platforms()) + "; the first's figures and results keep "
                        "the plain names, the others' get a _NAME suffix)")
    p.add_argument("--executor", choices=list(EXECUTORS), default="process", help="where simulations run (default: process)")
    p.add_argument("--workers", type=whole(1, 1024), help="worker processes (default: the CPU count)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address (with --executor dask)")
    p.add_argument("--plots-only", action="store_true", help="redraw the figures from OUT/results.json; simulate nothing")
    p.add_argument("--csv", action="store_true", help="print the summary as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_stats_options(p, per_run=False)


def run(args: argparse.Namespace) -> int:
    from cxlsim.config.yamlio import parse_set
    from cxlsim.reports.output import emit
    from cxlsim.studies.paper import report
    from cxlsim.studies.paper import simulation as rp
    from cxlsim.studies.paper.settings import platforms as paper_platforms
    from cxlsim.studies.paper.settings import suffix
    from cxlsim.sweep.results import read_results

    if args.config:
        raise InputError("reproduce: --config is not used; pick systems with --systems NAME|FILE.yaml "
                         "(or run a sweep spec with `cxlsim sweep FILE`)")
    platforms = list(args.platforms or paper_platforms())
    if args.plots_only:
        docs = {}
        for pl in platforms:
            doc = read_results(Path(args.out) / f"results{suffix(pl)}.json")
            docs[doc.get("platform", pl)] = doc
        written = {pl: None for pl in docs}
    else:
        plan = rp.plan(args.systems, args.workloads, args.batches, parse_set(args.set), args.timeline_workload,
                       platforms=platforms, ci=args.ci)
        if args.stats:  # each run's record holds its dump; OUT/stats/<point id>.yaml too
            plan = replace(plan, spec=replace(plan.spec, points=with_stats(plan.spec.points)),
                           timelines=list(with_stats(plan.timelines)))
        docs = rp.run(plan, args.executor, args.workers, args.scheduler, progress=not args.no_progress)
        written = {pl: rp.write(doc, args.out) for pl, doc in docs.items()}
        if args.stats:
            folder = write_point_stats([r for d in docs.values() for r in d["points"] + d["timelines"]], args.out)
            if folder:
                print(f"statistics of each run: {folder}/<point_id>.yaml (cxlsim stats diff A.yaml B.yaml)",
                      file=sys.stderr)
    data: dict = {"platforms": {}}
    notes, failed, paths = [], 0, []
    for pl, doc in docs.items():
        drawn = report.draw_all(doc, args.out, suffix(pl))
        summary = doc["summary"]
        jc = written[pl]
        data["platforms"][pl] = {**summary, "figures": {k: None if v is None else str(v) for k, v in drawn.items()},
                                 "results": None if jc is None else {"json": str(jc[0]), "csv": str(jc[1])}}
        paths += [*[p for p in drawn.values() if p], *(jc or ())]
        if drawn["fig13"] is None:
            notes.append(f"note ({pl}): fig13_energy skipped: no energy results")
        if drawn["fig12"] is None:
            notes.append(f"note ({pl}): fig12_timeline skipped: no cxl-d/cxl-b/cxl timeline run succeeded")
        failed += sum(1 for r in summary["rows"] if r["status"] != "ok")
    if args.csv:
        _csv(data["platforms"])
    else:
        emit(args, data, lambda d: "\n\n".join(f"== platform {pl}\n" + report.render(v) for pl, v in d["platforms"].items())
             + "\n\nwrote " + ", ".join(str(v) for v in paths))
    for n in notes:
        print(n, file=sys.stderr)
    return 1 if failed else 0


def _csv(summaries: dict) -> None:
    import csv

    from cxlsim.sweep.results import cell

    cols = ["system", "workload", "status", "batch_time_ms", "speedup_vs_pmem", "energy_J_per_batch", "energy_vs_pmem",
            "batches", "warmup_batches", "batches_mode", "batch_time_ci95_ms"]
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["platform", *cols])
    for pl, summary in summaries.items():
        for r in summary["rows"]:
            w.writerow([pl, *[cell(r.get(c)) for c in cols]])
        for a in summary["average"]:
            w.writerow([pl, *[cell(v) for v in (a["system"], "mean", "", a["batch_time_ms"], a["speedup_vs_pmem"], "",
                                                a["energy_vs_pmem"], None, None, None, None)]])
