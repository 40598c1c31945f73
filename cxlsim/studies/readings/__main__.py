"""``python -m cxlsim.studies.readings``: run the study, print its table (Markdown with
``--markdown``; :mod:`cxlsim.studies.table_command`)."""

from __future__ import annotations

import sys

import cxlsim.studies.readings as package
from cxlsim.studies.readings.report import markdown, table
from cxlsim.studies.readings.settings import study_lists
from cxlsim.studies.readings.simulation import run
from cxlsim.studies.table_command import table_study_main


def main(argv: list[str] | None = None) -> int:
    return table_study_main(argv, package, study_lists, run, markdown, table, batches=3, warmup_words="two warm-up",
                            workers=2)


if __name__ == "__main__":
    sys.exit(main())
