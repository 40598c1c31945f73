"""The Figure 12 points' table."""

from __future__ import annotations

from typing import Any

from cxlsim.studies.fig12.settings import STEPS


def table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    head = ["system", "platform", "batch ms", *STEPS]

    def cell(v: Any) -> str:
        return "-" if v is None else f"{v[0]:.2f}–{v[1]:.2f}"

    return head, [[r["system"], r["platform"], f"{r['batch_ms']:.2f}", *[cell(r.get(s)) for s in STEPS]] for r in rows]
