"""``python -m cxlsim.studies.sensitivity``: run the study, print its tables."""

from __future__ import annotations

import json
import sys

import cxlsim.studies.sensitivity as package
from cxlsim.config.arguments import whole
from cxlsim.reports.output import to_jsonable
from cxlsim.studies.command import StudyParser, check_names, study_command
from cxlsim.studies.sensitivity.report import render
from cxlsim.studies.sensitivity.simulation import study


@study_command
def main(argv: list[str] | None = None) -> int:
    ap = StudyParser(prog="python -m cxlsim.studies.sensitivity", description=package.__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", nargs="+", default=["rm1"])
    ap.add_argument("--batches", type=whole(1), default=2)
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)
    check_names("--workloads", "workload", args.workloads)
    res = study(args.workloads, args.batches)
    sys.stdout.write(render(res) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_jsonable(res), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
