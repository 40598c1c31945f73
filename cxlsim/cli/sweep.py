"""Run a sweep spec: many simulations over systems, workloads and any configuration key.

  cxlsim sweep configs/sweeps/paper.yaml --out out/paper
  cxlsim sweep configs/sweeps/pmem-write-bw.yaml --out out/bw --executor serial
  cxlsim sweep configs/sweeps/paper.yaml --out out/paper --executor dask                 (local cluster)
  cxlsim sweep configs/sweeps/paper.yaml --out out/paper --executor dask --scheduler tcp://10.0.0.5:8786
  cxlsim sweep configs/sweeps/paper.yaml --out out/quick --set batches=2 --set warmup_batches=0
  cxlsim sweep configs/sweeps/paper.yaml --dry-run                                       (list the points)

Writes OUT/results.csv (one row per point), OUT/results.json (every point with its resolved
configuration, seed, cxlsim version and git revision) and OUT/points.jsonl (one record per
finished point). Re-running with the same --out skips the points already done (interrupt and
resume at will; failed points are retried); --fresh starts over. A point that fails is recorded
with its error and the sweep goes on. The spec format is in docs/sweeps.md.

exit status: 0 every point ok; 2 bad input, or points failed only because their configuration is
invalid; 1 a point failed otherwise (results files are written in every case).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from cxlsim.cli._args import whole
from cxlsim.cli._stats import add_stats_options, with_stats, write_point_stats
from cxlsim.errors import InputError

HELP = "run a sweep spec (grid/zip over config keys, workloads, systems) on serial/process/dask executors"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.sweep.executors import EXECUTORS

    p.add_argument("spec", nargs="?", metavar="SPEC.yaml", help="sweep spec (configs/sweeps/*.yaml); --config also works")
    p.add_argument("--out", metavar="DIR", help="output folder (results.csv, results.json, points.jsonl)")
    p.add_argument("--executor", choices=list(EXECUTORS), default="process",
                   help="where points run (default: process, a local process pool)")
    p.add_argument("--workers", type=whole(1, 1024), help="worker processes (default: the CPU count; dask local cluster too)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://host:8786 (default: a local cluster)")
    p.add_argument("--fresh", action="store_true", help="ignore points done by an earlier run in --out")
    p.add_argument("--dry-run", action="store_true", help="list the points and exit")
    p.add_argument("--csv", action="store_true", help="print results.csv on stdout instead of a table")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_stats_options(p, per_run=False)


def run(args: argparse.Namespace) -> int:
    from cxlsim.config.yamlio import parse_set
    from cxlsim.reports.output import emit, format_table
    from cxlsim.sweep.results import csv_text, render_table, rows
    from cxlsim.sweep.runner import run_sweep
    from cxlsim.sweep.spec import load_spec

    path = args.spec or args.config
    if not path:
        raise InputError("sweep: give a sweep spec, e.g. cxlsim sweep configs/sweeps/paper.yaml --out out/paper")
    if args.spec and args.config and args.spec != args.config:
        raise InputError("sweep: give the spec once (positional SPEC.yaml or --config FILE)")
    spec = load_spec(path, parse_set(args.set))
    if args.stats:  # each point's record holds its dump; OUT/stats/<point id>.yaml too
        spec = replace(spec, points=with_stats(spec.points))
    if args.dry_run:
        table = [[i + 1, p.id, *[_cell(v) for _, v in p.swept]] for i, p in enumerate(spec.points)]
        data = {"sweep": spec.name, "points": [{"id": p.id, **p.to_dict(), "swept": dict(p.swept)} for p in spec.points]}
        emit(args, data, lambda d: format_table(["#", "point_id", *spec.axes], table,
                                                f"{spec.name}: {len(spec.points)} points"))
        return 0
    if not args.out:
        raise InputError("sweep: --out DIR is required (results.csv, results.json and points.jsonl go there)")
    outcome = run_sweep(spec, args.out, executor=args.executor, workers=args.workers, scheduler=args.scheduler,
                        fresh=args.fresh, progress=not args.no_progress)
    notes = [f"{spec.name}: {len(outcome.records)} points ({outcome.ran} run now, {outcome.reused} from an "
             f"earlier run), {len(outcome.failed)} failed; wrote {outcome.csv_path} and {outcome.json_path}"]
    if args.stats:
        folder = write_point_stats(outcome.records, args.out)
        notes.append(f"statistics of each point: {folder}/<point_id>.yaml (cxlsim stats diff A.yaml B.yaml)"
                     if folder else "no point wrote statistics")
    if outcome.stale_revisions:
        notes.append("note: reused points were computed at git revision(s) "
                     + ", ".join(outcome.stale_revisions) + "; use --fresh to recompute them")
    if args.csv:
        sys.stdout.write(csv_text(outcome.records, spec.axes))
    else:
        columns, table = rows(outcome.records, spec.axes)
        data = {"sweep": spec.name, "out": str(args.out), "counts": {"points": len(outcome.records),
                "ran": outcome.ran, "reused": outcome.reused, "failed": len(outcome.failed)},
                "columns": columns, "rows": table}
        emit(args, data, lambda d: render_table(outcome.records, spec.axes, notes[0]))
    for line in notes[1:] if not (args.json or args.csv) else notes:
        print(line, file=sys.stderr)
    if not outcome.failed:
        return 0
    return 2 if all(r.get("error_kind") == "input" for r in outcome.failed) else 1


def _cell(v):
    from cxlsim.sweep.results import cell

    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else cell(v)
