"""``python -m cxlsim.studies.symmetry``: run the check, print its table."""

from __future__ import annotations

import argparse
import sys

import cxlsim.studies.symmetry as package
from cxlsim.studies.symmetry.report import table
from cxlsim.studies.symmetry.settings import POINTS
from cxlsim.studies.symmetry.simulation import compare


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.studies.symmetry", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", default="cxl")
    ap.add_argument("--workloads", nargs="+", default=["rm1", "rm4"])
    ap.add_argument("--points", nargs="+", default=[f"{g}x{m}" for g, m in POINTS], help="GxM, e.g. 16x4")
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args(argv)
    rows = []
    for w in args.workloads:
        for pt in args.points:
            g, m = (int(x) for x in pt.lower().split("x"))
            rows.append(compare(args.system, w, g, m, args.batches, args.warmup))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
