"""Compare two statistics dumps (written by run --stats-file): what moved, largest change first.

  cxlsim run --system cxl --workload rm1 --stats-file a.yaml
  cxlsim run --system cxl --workload rm1 --set devices.table_memory.params.write_bw_GBps=2 --stats-file b.yaml
  cxlsim stats diff a.yaml b.yaml                   keys of the totals that moved by 1 % or more
  cxlsim stats diff a.yaml b.yaml --threshold 0.1   by 10 % or more
  cxlsim stats diff a.yaml b.yaml --scope all --json

Each row: the dotted key (docs/stats.md), its value in A and in B, and the relative change
(B − A) / |A| ("new" from 0; "absent" where a key is in one dump only). A --json document of
cxlsim run --stats (its key stats) reads as a dump too.
"""

from __future__ import annotations

import argparse

from cxlsim.cli._args import number
from cxlsim.reports.output import emit

HELP = "statistics dumps: diff two (what moved between two runs, largest change first)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("diff",), help="diff: compare two dumps")
    p.add_argument("a", metavar="A.yaml", help="the first dump (cxlsim run --stats-file)")
    p.add_argument("b", metavar="B.yaml", help="the second dump")
    p.add_argument("--threshold", type=number(0.0), default=None, metavar="FRACTION",
                   help="show keys whose relative change is at least this (default 0.01: 1%%)")
    p.add_argument("--scope", choices=("total", "all"), default="total",
                   help="total: the measured batches together (default); all: every batch's keys too")


def run(args: argparse.Namespace) -> int:
    from cxlsim.reports.stats import DIFF_THRESHOLD, diff, read_stats, render_diff

    a, b = read_stats(args.a), read_stats(args.b)
    threshold = DIFF_THRESHOLD if args.threshold is None else args.threshold
    rows = diff(a, b, threshold, args.scope)
    doc = {"a": args.a, "b": args.b, "threshold": threshold, "scope": args.scope, "moved": rows}
    emit(args, doc, lambda d: render_diff(d["moved"], d["a"], d["b"]))
    return 0
