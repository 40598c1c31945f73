"""``python -m cxlsim.studies.sampling``: run the check, print its platforms and counts (or the table with
``--markdown``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

import cxlsim.studies.sampling as package
from cxlsim.config.arguments import percent, whole
from cxlsim.studies.command import StudyParser, check_names, study_command
from cxlsim.studies.sampling.report import markdown
from cxlsim.studies.sampling.simulation import run
from cxlsim.systems.sampling import DEFAULT_CI_FRACTION


@study_command
def main(argv: Sequence[str] | None = None) -> int:
    ap = StudyParser(prog="python -m cxlsim.studies.sampling", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", nargs="+", metavar="S", help="systems (default: the paper's)")
    ap.add_argument("--workloads", nargs="+", default=None, metavar="W")
    ap.add_argument("--platforms", nargs="+", default=None, metavar="P",
                    help="platforms (default: configs/sweeps/reproduce.yaml's)")
    ap.add_argument("--ci", type=percent, default=DEFAULT_CI_FRACTION, help="auto's target, a fraction (default 0.01)")
    ap.add_argument("--workers", type=whole(1), default=os.cpu_count() or 1)
    ap.add_argument("--json", metavar="FILE", help="write the cells as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the docs/validation.md table")
    args = ap.parse_args(argv)
    check_names("--systems", "system", args.systems)
    check_names("--workloads", "workload", args.workloads)
    check_names("--platforms", "platform", args.platforms)
    doc = run(args.systems, args.workloads, args.platforms, args.ci, args.workers)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    platforms = list(dict.fromkeys(c["platform"] for c in doc["cells"]))
    print(markdown(doc) if args.markdown else json.dumps({"platforms": platforms, **doc["counts"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
