"""Plots of ``cxlsim validate``: one axes per check, model and measured curves together.

Contract: :func:`plot_checks` ``(report, out_dir)`` writes ``<check id>.png`` for every check of a
report of :func:`cxlsim.validate.checks.run` (numeric x: the model as a line, the measurements
as markers; named x: bars side by side) and returns the paths. It reads the report only; it never
re-simulates.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plot_checks(report: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """One PNG per check of ``report`` in ``out_dir`` (created); returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for check in report["checks"]:
        pts = check["points"]
        xs = [p["x"] for p in pts]
        fig, ax = plt.subplots(figsize=(5.2, 3.4))
        if all(isinstance(x, (int, float)) for x in xs):
            ax.plot(xs, [p["model"] for p in pts], "-", color="tab:blue", label="cxlsim")
            ax.plot(xs, [p["measured"] for p in pts], "o", color="tab:red", label="measured")
            if max(xs) / max(min(xs), 1e-12) >= 16:
                ax.set_xscale("log", base=2)
        else:
            idx = range(len(xs))
            ax.bar([i - 0.2 for i in idx], [p["model"] for p in pts], 0.4, color="tab:blue", label="cxlsim")
            ax.bar([i + 0.2 for i in idx], [p["measured"] for p in pts], 0.4, color="tab:red", label="measured")
            ax.set_xticks(list(idx), [str(x).replace("_", " ") for x in xs], fontsize=7, rotation=12)
            if max(p["measured"] for p in pts) / min(p["measured"] for p in pts) > 50:
                ax.set_yscale("log")
        ax.set_xlabel(check["x_label"])
        ax.set_ylabel(check["unit"])
        ax.set_title(f"{check['title']}\n±{check['tolerance_rel']:.0%}; worst {check['max_abs_rel_error']:.0%}; "
                     f"{check['figure']}", fontsize=8)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out / f"{check['id']}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths
