"""The platform study's table: per variant, where each conclusion holds and the CXL systems'
speed-ups (from :func:`~cxlsim.studies.platform_study.simulation.run`'s results, never
re-simulating)."""

from __future__ import annotations

import math
from typing import Any

from cxlsim.reports.output import markdown_table
from cxlsim.studies.platform_study.settings import (
    BASELINE,
    CONCLUSIONS,
    CXL_SYSTEMS,
    _speedup,
    label,
)


def verdicts(bt_by_workload: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Per conclusion, the workloads where it holds; per CXL system, its geomean speed-up over pmem."""
    out: dict[str, Any] = {k: [w for w, bt in bt_by_workload.items() if pred(bt)] for k, (_, pred) in CONCLUSIONS.items()}
    n = len(bt_by_workload)
    for s in CXL_SYSTEMS:
        out[f"speedup_{s}"] = math.exp(sum(math.log(_speedup(bt, s)) for bt in bt_by_workload.values()) / n)
    return out


def table(study: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Rows: the base, then every variant; columns: the conclusions (workloads where each holds,
    out of all) and the CXL systems' geomean speed-ups over pmem."""
    n = len(study["workloads"])
    head = ["variant", "reaches", *[CONCLUSIONS[k][0] for k in CONCLUSIONS],
            " / ".join(CXL_SYSTEMS) + f" vs {BASELINE}"]

    def row(label: str, reaches: str, bt: dict) -> list[Any]:
        v = verdicts(bt)
        holds = [f"{len(v[k])}/{n}" + ("" if len(v[k]) in (0, n) else f" ({' '.join(v[k])})") for k in CONCLUSIONS]
        return [label, reaches, *holds, " / ".join(f"{v[f'speedup_{s}']:.2f}" for s in CXL_SYSTEMS)]

    rows = [row("base", "", study["base"])]
    for var in study["variants"]:
        rows.append(row(f"{var['assumption']} {label(var['factor'])}", ", ".join(var["systems"]), var["batch_time_ms"]))
    return head, rows


def markdown(study: dict[str, Any]) -> str:
    return markdown_table(*table(study))
