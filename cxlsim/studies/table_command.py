"""The command of a study that runs every workload of its catalog lists and prints one table
(``python -m cxlsim.studies.<name>``): ``--workloads``, ``--batches``, ``--seed``, optionally
``--workers``, ``--json FILE`` and ``--markdown``; bad input exits 2 with one ``error:`` line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from types import ModuleType

from cxlsim.errors import InputError
from cxlsim.reports.output import format_table
from cxlsim.studies.command import StudyParser


def table_study_main(argv: list[str] | None, package: ModuleType, study_lists: Callable, run: Callable,
                     markdown: Callable, table: Callable, batches: int, warmup_words: str,
                     workers: int | None = None) -> int:
    """Parse ``argv`` and run ``run(workloads, batches, seed[, workers], progress=...)``; print its
    ``table`` (or ``markdown``), titled with the study's platform. ``package``'s docstring is the
    ``--help`` text; ``workers``: the default of a ``--workers`` option (None: the study has none)."""
    name = package.__name__
    ap = StudyParser(prog=f"python -m {name}", description=package.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        workloads = study_lists().workloads
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ap.add_argument("--workloads", nargs="+", default=list(workloads), choices=workloads)
    ap.add_argument("--batches", type=int, default=batches,
                    help=f"measured batches per run, after {warmup_words} (default {batches})")
    ap.add_argument("--seed", type=int, default=1)
    if workers is not None:
        ap.add_argument("--workers", type=int, default=workers, help=f"worker processes (default {workers})")
    ap.add_argument("--json", metavar="FILE", help="write the study as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/validation.md)")
    args = ap.parse_args(argv)
    counts = {"--batches": args.batches, **({"--workers": args.workers} if workers is not None else {})}
    if any(v < 1 for v in counts.values()):
        print(f"error: {' and '.join(counts)} must be >= 1", file=sys.stderr)
        return 2
    extra = (args.workers,) if workers is not None else ()
    try:
        study = run(args.workloads, args.batches, args.seed, *extra,
                    progress=lambda msg: print(f"  {msg}", file=sys.stderr, flush=True))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(study, fh, indent=1)
    on = f"{name.rsplit('.', 1)[-1]} on platform {study['platform']}" if study.get("platform") else None
    print((f"{on}:\n\n" if on else "") + markdown(study) if args.markdown else format_table(*table(study), on))
    return 0
