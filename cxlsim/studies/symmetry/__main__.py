"""``python -m cxlsim.studies.symmetry``: run the check, print its table."""

from __future__ import annotations

import argparse
import sys

import cxlsim.studies.symmetry as package
from cxlsim.config.arguments import whole
from cxlsim.studies.command import StudyParser, check_names, grid_point, study_command
from cxlsim.studies.symmetry.report import table
from cxlsim.studies.symmetry.settings import POINTS
from cxlsim.studies.symmetry.simulation import compare


@study_command
def main(argv: list[str] | None = None) -> int:
    ap = StudyParser(prog="python -m cxlsim.studies.symmetry", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", default="cxl")
    ap.add_argument("--workloads", nargs="+", default=["rm1", "rm4"])
    ap.add_argument("--points", nargs="+", type=grid_point, default=list(POINTS), help="GxM, e.g. 16x4")
    ap.add_argument("--batches", type=whole(1), default=2)
    ap.add_argument("--warmup", type=whole(0), default=1)
    args = ap.parse_args(argv)
    check_names("--system", "system", [args.system])
    check_names("--workloads", "workload", args.workloads)
    rows = []
    for w in args.workloads:
        for g, m in args.points:
            rows.append(compare(args.system, w, g, m, args.batches, args.warmup))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
