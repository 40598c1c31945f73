"""The scale-out study's tables and figure (``docs/scale-out.md``), from its points alone."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cxlsim.studies.scaleout.settings import COLORS, MAX_MEMS_ONE_LEVEL, scale_gpus, study_lists
from cxlsim.studies.scaleout.simulation import ScalePoint, platforms_label


def _find(points: Iterable[ScalePoint], **match: Any) -> ScalePoint | None:
    for p in points:
        if all(getattr(p, k) == v for k, v in match.items()):
            return p
    return None


def balanced_table(points: list[ScalePoint]) -> tuple[list[str], list[list[Any]]]:
    """Per system and workload: throughput (k samples/s) on the balanced points at 1, 2, 4, 8 GPUs,
    the scaling efficiency at 8 (throughput / (8 × one GPU's)) and the most utilised resource there."""
    head = ["system", "workload", "G=1", "G=2", "G=4", "G=8", "efficiency at 8", "busiest at 8 (utilisation)"]
    rows = []
    systems, workloads = study_lists()
    for s in systems:
        for w in workloads:
            ps = {g: _find(points, system=s, workload=w, gpus=g, balanced=True) for g in (1, 2, 4, 8)}
            if not any(ps.values()):
                continue
            thr = {g: (p.throughput_samples_per_s / 1e3 if p else None) for g, p in ps.items()}
            eff = thr[8] / (8 * thr[1]) if thr[1] and thr[8] else None
            top = ps[8]
            busiest = f"{top.bottleneck} ({top.bottleneck_utilisation:.0%})" if top and top.bottleneck else "-"
            rows.append([s, w, *[f"{thr[g]:.1f}" if thr[g] else "-" for g in (1, 2, 4, 8)],
                         f"{eff:.2f}" if eff else "-", busiest])
    return head, rows


def memory_table(points: list[ScalePoint], system: str = "cxl", gpus: int = 8) -> tuple[list[str], list[list[Any]]]:
    """``system`` at ``gpus`` GPUs against its CXL-MEMs: throughput (k samples/s) and the busiest
    resource, per workload (one switch level), and two switch levels at the most CXL-MEMs."""
    mems = (1, 2, 4, MAX_MEMS_ONE_LEVEL)
    head = ["workload", *[f"M={m}" for m in mems], f"M={mems[-1]}, 2 levels", "busiest at M=1", f"busiest at M={mems[-1]}"]
    rows = []
    for w in study_lists()[1]:
        ps = {m: _find(points, system=system, workload=w, gpus=gpus, mems=m, levels=1) for m in mems}
        two = _find(points, system=system, workload=w, gpus=gpus, mems=mems[-1], levels=2)
        if not any(ps.values()):
            continue

        def k(p: ScalePoint | None) -> str:
            return f"{p.throughput_samples_per_s / 1e3:.1f}" if p else "-"

        def busy(p: ScalePoint | None) -> str:
            return f"{p.bottleneck} ({p.bottleneck_utilisation:.0%})" if p and p.bottleneck else "-"

        rows.append([w, *[k(ps[m]) for m in mems], k(two), busy(ps[1]), busy(ps[mems[-1]])])
    return head, rows


def scale_table(points: list[ScalePoint]) -> tuple[list[str], list[list[Any]]]:
    """Per system and workload at scale: throughput (k samples/s) at 16 to 1,024 GPUs, the
    efficiency from 16 to 1,024 (throughput / (64 × 16 GPUs')), energy per sample at 1,024 and the
    most utilised resource there."""
    scale = scale_gpus()
    head = ["system", "workload", *[f"G={g}" for g in scale], f"efficiency {scale[0]}→{scale[-1]}",
            f"mJ/sample at {scale[-1]}", f"busiest at {scale[-1]} (utilisation)"]
    rows = []
    systems, workloads = study_lists()
    for s in systems:
        for w in workloads:
            ps = {g: _find(points, system=s, workload=w, gpus=g, at_scale=True) for g in scale}
            if not any(ps.values()):
                continue
            thr = {g: (p.throughput_samples_per_s / 1e3 if p else None) for g, p in ps.items()}
            lo, hi = scale[0], scale[-1]
            eff = thr[hi] / (hi // lo * thr[lo]) if thr[lo] and thr[hi] else None
            top = ps[hi]
            e = top.energy_per_sample_mJ if top else None
            busiest = f"{top.bottleneck} ({top.bottleneck_utilisation:.0%})" if top and top.bottleneck else "-"
            rows.append([s, w, *[f"{thr[g]:.1f}" if thr[g] else "-" for g in scale],
                         f"{eff:.2f}" if eff else "-", f"{e:.2f}" if e else "-", busiest])
    return head, rows


def plot(points: list[ScalePoint], path: str | Path) -> Path:
    """Throughput and energy per sample vs GPUs (the package docstring), one column per workload."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems, workloads = study_lists()
    colors = {s: COLORS.get(s, f"C{i}") for i, s in enumerate(systems)}
    fig, axes = plt.subplots(2, len(workloads), figsize=(4 * len(workloads), 7), sharex=True, squeeze=False)
    gpus = (1, 2, 4, 8)
    for col, w in enumerate(workloads):
        top, bottom = axes[0][col], axes[1][col]
        for s in systems:
            lines = [("", dict(balanced=True), "-", gpus), (" at scale", dict(at_scale=True), ":", scale_gpus())]
            if s == "cxl":
                lines.append((" (1 CXL-MEM)", dict(mems=1, levels=1), "--", gpus))
            for suffix, match, style, gs in lines:
                ps = [_find(points, system=s, workload=w, gpus=g, **match) for g in gs]
                xs = [g for g, p in zip(gs, ps, strict=True) if p]
                if not xs:
                    continue
                got = [p for p in ps if p]
                marker = "s" if suffix == " at scale" else "o"
                top.plot(xs, [p.throughput_samples_per_s / 1e3 for p in got], style, marker=marker, color=colors[s],
                         label=s + suffix)
                e = [(x, p.energy_per_sample_mJ) for x, p in zip(xs, got, strict=True) if p.energy_per_sample_mJ]
                if e:
                    bottom.plot([x for x, _ in e], [v for _, v in e], style, marker=marker, color=colors[s])
        top.set_title(w.upper())
        top.set_yscale("log")
        bottom.set_yscale("log")
        bottom.set_xscale("log", base=2)
        ticks = (*gpus, *scale_gpus())
        bottom.set_xticks(ticks, [f"{g:,}" for g in ticks])
        bottom.set_xlabel("GPUs (tpu-ps: chips)")
        if col == 0:
            top.set_ylabel("throughput (k samples/s)")
            bottom.set_ylabel("energy per sample (mJ)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 7), frameon=False)
    fig.suptitle(f"Scale-out on {platforms_label(points)} (solid: CXL-MEMs or cards = min(GPUs, 7), one switch level; dotted: one per 4 GPUs, "
                 "row-sharded, 16-1,024 GPUs)", y=0.90)
    fig.tight_layout(rect=(0, 0, 1, 0.87))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path



