"""The symmetry check's table (``docs/scale-out.md``)."""

from __future__ import annotations

from cxlsim.studies.symmetry.simulation import Comparison


def table(rows: list[Comparison]) -> str:
    head = ["system", "platform", "workload", "GPUs × CXL-MEMs", "groups", "batch time full (ms)", "reduced (ms)",
            "batch time error", "throughput error", "bottleneck full", "reduced", "wall full / reduced (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows:
        lines.append(f"| {c.system} | {c.platform or ''} | {c.workload} | {c.gpus} × {c.mems} | {min(c.gpus, c.mems)} | {c.full_ms:.2f} | "
                     f"{c.reduced_ms:.2f} | {100 * c.error:+.1f}% | {100 * c.throughput_error:+.1f}% | "
                     f"{c.full_bottleneck} | {c.reduced_bottleneck} | {c.full_s:.1f} / {c.reduced_s:.1f} |")
    return "\n".join(lines)
