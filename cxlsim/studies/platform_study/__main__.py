"""``python -m cxlsim.studies.platform_study``: run the study, print its table (Markdown with
``--markdown``; :mod:`cxlsim.studies.table_command`)."""

from __future__ import annotations

import sys

import cxlsim.studies.platform_study as package
from cxlsim.studies.platform_study.report import markdown, table
from cxlsim.studies.platform_study.settings import study_lists
from cxlsim.studies.platform_study.simulation import run
from cxlsim.studies.table_command import table_study_main


def main(argv: list[str] | None = None) -> int:
    return table_study_main(argv, package, study_lists, run, markdown, table, batches=2, warmup_words="one warm-up",
                            workers=None)


if __name__ == "__main__":
    sys.exit(main())
