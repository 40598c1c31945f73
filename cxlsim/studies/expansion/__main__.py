"""``python -m cxlsim.studies.expansion``: predict the experiment, print its table (``--json``: the
document; ``--plot F.png``: throughput against threads, a line per ratio)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cxlsim.studies.expansion as package
from cxlsim.errors import ConfigError, InputError
from cxlsim.reports.output import format_table
from cxlsim.studies.expansion import settings as S
from cxlsim.studies.expansion.report import document, plot, table
from cxlsim.studies.expansion.simulation import run

PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.studies.expansion", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print the JSON document instead of the table")
    ap.add_argument("--plot", metavar="F.png", help="draw throughput against threads, one line per ratio")
    ap.add_argument("--query-lengths", nargs="+", type=int, default=list(S.QUERY_LENGTHS), metavar="L",
                    help=f"mean query lengths to sweep (default {' '.join(map(str, S.QUERY_LENGTHS))})")
    ap.add_argument("--query-length", type=int, default=None, metavar="L",
                    help="the length reported under throughput_qps (default: "
                         f"{S.DEFAULT_QUERY_LENGTH} if swept, else the first)")
    args = ap.parse_args(argv)
    try:
        lengths = list(dict.fromkeys(args.query_lengths))
        if any(n < 1 for n in lengths):
            raise InputError(f"--query-lengths: each must be >= 1, got {lengths}")
        shown = args.query_length or (S.DEFAULT_QUERY_LENGTH if S.DEFAULT_QUERY_LENGTH in lengths else lengths[0])
        if shown not in lengths:
            raise InputError(f"--query-length {shown}: not among --query-lengths {lengths}")
        if args.plot is not None:
            path = Path(args.plot)
            if path.suffix not in PLOT_SUFFIXES:
                raise InputError(f"--plot {args.plot}: give a file ending in {', '.join(PLOT_SUFFIXES)}")
            if not path.parent.is_dir():
                raise InputError(f"--plot {args.plot}: no folder {path.parent}")
        points = run(lengths, progress=lambda msg: print(f"  {msg}", file=sys.stderr, flush=True))
    except (InputError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    doc = document(points, shown)
    if args.plot:
        plot(doc, args.plot)
    print(json.dumps(doc, indent=1) if args.json else format_table(*table(doc), f"embedding reduction on platform {doc['platform']} (predicted)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
