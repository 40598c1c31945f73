"""Read the scale-out sweep (``configs/sweeps/scale-out.yaml``): the figure and the tables of
``docs/scale-out.md``.

    cxlsim sweep configs/sweeps/scale-out.yaml --out out/scale-out
    cxlsim sweep configs/sweeps/scale-out-1024.yaml --out out/scale-out-1024
    python -m cxlsim.sweep.scaleout out/scale-out out/scale-out-1024   # plots/scale_out.png + tables
    python -m cxlsim.sweep.scaleout out/scale-out --plot FILE --markdown
    python -m cxlsim.sweep.scaleout plots/scale_out_results.csv plots/scale_out_1024_results.csv

Each finished point gives a system, a workload, its GPUs ``G`` (``topology.gpus_count``; tpu-ps:
chips), CXL-MEMs or PCIe cards ``M``, switch levels ``L``, the whole system's throughput, energy
per batch and its most utilised resource. *Balanced* points have ``M = min(G, 7)`` memory devices
(one switch level holds 15 devices) on one switch level; host PMEM has one host whatever ``G``.
*At scale* (``configs/sweeps/scale-out-1024.yaml``): 16 to 1,024 GPUs with a CXL-MEM or card per 4
GPUs (``M = G / 4``, row-sharded, two or three switch levels; ``tpu-ps`` as many chips as GPUs).
The figure plots throughput and energy per sample against ``G`` (log, 1 to 1,024) for the balanced
points of every system (solid; ``cxl`` with one CXL-MEM, dashed) and the points at scale (dotted,
square markers), one column per workload. Each argument is a sweep folder (its ``points.jsonl``)
or a sweep's ``results.csv`` (no bottleneck there). The tables and the figure cover the systems (in
name order) and workloads (in file order) of both sweeps (:func:`study_lists`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.errors import InputError
from cxlsim.reports.output import format_table
from cxlsim.sweep.lists import sweep_lists

#: The catalog sweeps this module reads the points of: the balanced study and the study at scale.
SWEEPS = ("scale-out", "scale-out-1024")
MAX_MEMS_ONE_LEVEL = 7
#: the study at scale: GPUs per CXL-MEM (or card) and its GPU counts
GPUS_PER_MEM_AT_SCALE = 4
SCALE_GPUS = (16, 64, 256, 1024)
COLORS = {"cxl": "#55A868", "cxl-b": "#4C72B0", "cxl-d": "#8172B2", "pcie": "#C44E52", "pmem": "#CCB974",
          "tpu-ps": "#64B5CD"}


def study_lists() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The systems (in name order) and the workloads (in file order) of :data:`SWEEPS` together."""
    both = [sweep_lists(name, needs=("systems", "workloads")) for name in SWEEPS]
    systems = sorted({s for lists in both for s in lists.systems})
    return tuple(systems), tuple(dict.fromkeys(w for lists in both for w in lists.workloads))


@dataclass(frozen=True)
class ScalePoint:
    """One finished point of the sweep (units: samples/s, J, ns)."""

    system: str
    workload: str
    gpus: int
    mems: int | None  # None: the system has no memory devices to count (pmem, tpu-ps)
    levels: int | None
    throughput_samples_per_s: float
    energy_J_per_batch: float | None
    samples_per_batch: float
    bottleneck: str | None
    bottleneck_utilisation: float | None

    @property
    def energy_per_sample_mJ(self) -> float | None:
        if self.energy_J_per_batch is None:
            return None
        return 1e3 * self.energy_J_per_batch / self.samples_per_batch

    @property
    def balanced(self) -> bool:
        return (self.mems is None or self.mems == min(self.gpus, MAX_MEMS_ONE_LEVEL)) and self.levels in (None, 1)

    @property
    def at_scale(self) -> bool:
        """A point of the study at scale (module docstring)."""
        return self.gpus in SCALE_GPUS and (self.mems is None or self.mems * GPUS_PER_MEM_AT_SCALE == self.gpus)


def read_points(out: str | Path) -> list[ScalePoint]:
    """The finished points of a sweep folder (its ``points.jsonl``; the last record of a point wins)
    or of a sweep's ``results.csv``."""
    if str(out).endswith(".csv"):
        return _csv_points(Path(out))
    path = Path(out) / "points.jsonl"
    if not path.is_file():
        raise InputError(f"{out}: no points.jsonl (run `cxlsim sweep configs/sweeps/scale-out.yaml --out {out}`)")
    records: dict[str, Mapping[str, Any]] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"{path}: line {n} is not JSON") from None
        records[rec["id"]] = rec
    return [p for p in map(_point, records.values()) if p is not None]


def _csv_points(path: Path) -> list[ScalePoint]:
    import csv

    if not path.is_file():
        raise InputError(f"{path}: no such file")

    def num(v: str) -> int | None:
        return int(float(v)) if v not in ("", None) else None

    out = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if r.get("status") != "ok":
                continue
            thr, bt_s = float(r["throughput_samples_per_s"]), float(r["batch_time_ms"]) / 1e3
            energy = r.get("energy_J_per_batch")
            out.append(ScalePoint(r["system"], r["workload"], num(r.get("topology.gpus_count", "")) or 1,
                                  num(r.get("topology.cxl_mems_count", "")), num(r.get("devices.switch.levels", "")),
                                  thr, float(energy) if energy else None, thr * bt_s, None, None))
    return out


def _point(rec: Mapping[str, Any]) -> ScalePoint | None:
    if rec.get("status") != "ok" or not rec.get("result"):
        return None
    r, sw = rec["result"], rec["swept"]
    bt_s = r["batch_time_ms"]["mean"] / 1e3
    energy = r.get("energy_J_per_batch")
    bn = r.get("bottleneck") or {}
    return ScalePoint(
        system=sw["system"], workload=sw["workload"], gpus=int(sw.get("topology.gpus_count") or 1),
        mems=sw.get("topology.cxl_mems_count"), levels=sw.get("devices.switch.levels"),
        throughput_samples_per_s=float(r["throughput_samples_per_s"]),
        energy_J_per_batch=None if energy is None else float(energy["total"]),
        samples_per_batch=float(r["throughput_samples_per_s"]) * bt_s,
        bottleneck=bn.get("resource"), bottleneck_utilisation=bn.get("utilisation"))


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
    head = ["system", "workload", *[f"G={g}" for g in SCALE_GPUS], f"efficiency {SCALE_GPUS[0]}→{SCALE_GPUS[-1]}",
            f"mJ/sample at {SCALE_GPUS[-1]}", f"busiest at {SCALE_GPUS[-1]} (utilisation)"]
    rows = []
    systems, workloads = study_lists()
    for s in systems:
        for w in workloads:
            ps = {g: _find(points, system=s, workload=w, gpus=g, at_scale=True) for g in SCALE_GPUS}
            if not any(ps.values()):
                continue
            thr = {g: (p.throughput_samples_per_s / 1e3 if p else None) for g, p in ps.items()}
            lo, hi = SCALE_GPUS[0], SCALE_GPUS[-1]
            eff = thr[hi] / (hi // lo * thr[lo]) if thr[lo] and thr[hi] else None
            top = ps[hi]
            e = top.energy_per_sample_mJ if top else None
            busiest = f"{top.bottleneck} ({top.bottleneck_utilisation:.0%})" if top and top.bottleneck else "-"
            rows.append([s, w, *[f"{thr[g]:.1f}" if thr[g] else "-" for g in SCALE_GPUS],
                         f"{eff:.2f}" if eff else "-", f"{e:.2f}" if e else "-", busiest])
    return head, rows


def plot(points: list[ScalePoint], path: str | Path) -> Path:
    """Throughput and energy per sample vs GPUs (module docstring), one column per workload."""
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
            lines = [("", dict(balanced=True), "-", gpus), (" at scale", dict(at_scale=True), ":", SCALE_GPUS)]
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
        ticks = (*gpus, *SCALE_GPUS)
        bottom.set_xticks(ticks, [f"{g:,}" for g in ticks])
        bottom.set_xlabel("GPUs (tpu-ps: chips)")
        if col == 0:
            top.set_ylabel("throughput (k samples/s)")
            bottom.set_ylabel("energy per sample (mJ)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 7), frameon=False)
    fig.suptitle("Scale-out (solid: CXL-MEMs or cards = min(GPUs, 7), one switch level; dotted: one per 4 GPUs, "
                 "row-sharded, 16-1,024 GPUs)", y=0.90)
    fig.tight_layout(rect=(0, 0, 1, 0.87))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _markdown(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.scaleout", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="+", help="sweep --out folders or results.csv files (their points together)")
    ap.add_argument("--plot", default="plots/scale_out.png", help="figure path (default plots/scale_out.png)")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = ap.parse_args(argv)
    try:
        study_lists()
        points = [p for out in args.out for p in read_points(out)]
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not points:
        print(f"error: {args.out}: no finished point", file=sys.stderr)
        return 2
    fmt = _markdown if args.markdown else format_table
    print(fmt(*balanced_table(points)))
    print()
    print(fmt(*memory_table(points)))
    if any(p.at_scale for p in points):
        print()
        print(fmt(*scale_table(points)))
    print(f"\nwrote {plot(points, args.plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
