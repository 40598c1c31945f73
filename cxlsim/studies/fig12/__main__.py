"""``python -m cxlsim.studies.fig12``: run the points (or ``--implied``), print their table."""

from __future__ import annotations

import argparse
import json
import math
import sys

import cxlsim.studies.fig12 as package
from cxlsim.errors import InputError
from cxlsim.reports.output import format_table
from cxlsim.studies.command import StudyParser, check_names, study_command
from cxlsim.studies.fig12.report import table
from cxlsim.studies.fig12.settings import IMPLIED, PAPER, study_lists
from cxlsim.studies.fig12.simulation import implied_batch, points


@study_command
def main(argv: list[str] | None = None) -> int:
    ap = StudyParser(prog="python -m cxlsim.studies.fig12", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        lists = study_lists()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ap.add_argument("--platform", nargs="+", default=list(lists.platforms))
    ap.add_argument("--workload", default=lists.workloads[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--implied", action="store_true", help="the batch size each Figure 12 duration implies")
    args = ap.parse_args(argv)
    check_names("--platform", "platform", args.platform)
    check_names("--workload", "workload", [args.workload])
    if args.implied:
        head = ["platform", "system", "paper duration", "paper ms", "implied batch", "model ms there", "model ms at batch 1"]
        out = []
        for p in args.platform:
            for system, what, ms, read in IMPLIED:
                b, v, v1 = implied_batch(system, p, read, ms, args.workload)
                shown = "none (above at batch 1)" if b is None else "> 1468" if b == math.inf else str(b)
                out.append([p, system, what, f"{ms:g}", shown, f"{v:.2f}", f"{v1:.2f}"])
        if args.json:
            json.dump([dict(zip(head, r, strict=True)) for r in out], sys.stdout, indent=1)
            print()
        else:
            print(format_table(head, out))
        return 0
    rows = [points(s, p, args.workload) for p in args.platform for s in lists.systems]
    if args.json:
        json.dump({"paper": PAPER, "rows": rows}, sys.stdout, indent=1)
        print()
    else:
        print(format_table(*table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
