"""``python -m cxlsim.studies.scaleout OUT [OUT ...]``: print the tables, draw the figure."""

from __future__ import annotations

import argparse
import sys

import cxlsim.studies.scaleout as package
from cxlsim.config.arguments import figure_path
from cxlsim.errors import InputError
from cxlsim.reports.output import format_table, markdown_table
from cxlsim.studies.command import StudyParser
from cxlsim.studies.scaleout.report import (
    balanced_table,
    memory_table,
    plot,
    scale_table,
)
from cxlsim.studies.scaleout.settings import study_lists
from cxlsim.studies.scaleout.simulation import platforms_label, read_points


def main(argv: list[str] | None = None) -> int:
    ap = StudyParser(prog="python -m cxlsim.studies.scaleout", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="+", help="sweep --out folders or results.csv files (their points together)")
    ap.add_argument("--plot", type=figure_path(folder_must_exist=False), default="plots/scale_out.png", help="figure path (default plots/scale_out.png)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = ap.parse_args(argv)
    try:
        study_lists()
        points = [p for out in args.out for p in read_points(out)]
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not points:
        print(f"error: {args.out}: no finished point", file=sys.stderr)
        return 2
    fmt = markdown_table if args.markdown else format_table
    print(f"scale-out on {platforms_label(points)}")
    print(fmt(*balanced_table(points)))
    print()
    print(fmt(*memory_table(points)))
    if any(p.at_scale for p in points):
        print()
        print(fmt(*scale_table(points)))
    print(f"\nwrote {plot(points, args.plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
