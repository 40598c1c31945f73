"""``python -m cxlsim.studies.platform_study``: run the study, print its table (Markdown with
``--markdown``)."""

from __future__ import annotations

import argparse
import json
import sys

import cxlsim.studies.platform_study as package
from cxlsim.errors import InputError
from cxlsim.reports.output import format_table
from cxlsim.studies.platform_study.report import markdown, table
from cxlsim.studies.platform_study.settings import study_lists
from cxlsim.studies.platform_study.simulation import run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.studies.platform_study", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        workloads = study_lists().workloads
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ap.add_argument("--workloads", nargs="+", default=list(workloads), choices=workloads)
    ap.add_argument("--batches", type=int, default=2, help="measured batches per run, after one warm-up (default 2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="write the study as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/validation.md)")
    args = ap.parse_args(argv)
    if args.batches < 1:
        print("error: --batches must be >= 1", file=sys.stderr)
        return 2
    try:
        study = run(args.workloads, args.batches, args.seed,
                    progress=lambda msg: print(f"  {msg}", file=sys.stderr, flush=True))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(study, fh, indent=1)
    print(markdown(study) if args.markdown else format_table(*table(study)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
