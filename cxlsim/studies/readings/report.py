"""The readings study's table: the headline claims under each column (from
:func:`~cxlsim.studies.readings.simulation.run`'s results)."""

from __future__ import annotations

from typing import Any

from cxlsim.reports.output import markdown_table
from cxlsim.studies.readings.settings import CLAIMS


def table(study: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Rows: the claims; columns: the paper, then every column of the study."""
    ws = study["workloads"]
    head = ["claim", "paper", *study["columns"]]
    rows = []
    for c in CLAIMS:
        vals = [c.value(study["results"][col], ws) for col in study["columns"]]
        fmt = (lambda v: f"{v:.2f} ms") if c.unit == "ms" else (lambda v: f"{v:.3g}×")
        rows.append([c.name, c.paper, *(fmt(v) for v in vals)])
    return head, rows


def markdown(study: dict[str, Any]) -> str:
    return markdown_table(*table(study))
