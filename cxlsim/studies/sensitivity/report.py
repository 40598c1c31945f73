"""The sensitivity study's tables: energy per batch and its normalised value under every variant."""

from __future__ import annotations

from typing import Any

from cxlsim.reports.output import format_table
from cxlsim.studies.sensitivity.settings import BASELINE, VARIANTS


def render(res: dict[str, Any]) -> str:
    """Per workload: its energy-per-batch table and the variants' normalised energies, both titled
    with the workload and the platform."""
    lines = []
    for w, d in res.items():
        on = f"{w} on platform {d['platform']}" if d.get("platform") else w
        systems = list(d["default"])
        rows = [[s, d["batch_time_ms"][s], d["default"][s]["energy_J_per_batch"]["total"], d["default"][s]["normalized_to_baseline"]]
                + [d["default"][s]["energy_J_per_batch"]["by_component"][c] for c in d["default"][s]["energy_J_per_batch"]["by_component"]]
                for s in systems]
        comps = list(d["default"][systems[0]]["energy_J_per_batch"]["by_component"])
        lines.append(format_table(["system", "ms", "J/batch", f"x {BASELINE}"] + comps, rows, title=f"{on}: energy per batch"))
        lines.append("")
        rows = []
        for name, by_value in d["variants"].items():
            for v, norm in by_value.items():
                rows.append([f"{VARIANTS[name][0]} = {v}"] + [norm[s] for s in systems])
        lines.append(format_table(["variant"] + systems, rows, title=f"{on}: energy normalised to {BASELINE}"))
        lines.append("")
    return "\n".join(lines)
