"""The paper's figures and summary tables, drawn from a ``cxlsim reproduce`` results document (never re-simulating).

* Figure 11 (``fig11_breakdown.png``): per RM, one stacked bar per system: the critical-path
  breakdown of a batch, normalised to ``pmem``'s batch time.
* Figure 12 (``fig12_timeline.png``): lanes of ``cxl-d``, ``cxl-b`` and ``cxl`` over two batches
  (drawn by :func:`cxlsim.reports.timeline.plot`).
* Figure 13 (``fig13_energy.png``): per RM, energy per batch by component, normalised to
  ``pmem``'s total.

Runs at another accelerator count than ``pmem``'s (e.g. ``tpu-ps`` on 128 chips) are left out of
Figures 11 and 13: their batches are not comparable. Bars far above the others (e.g. ``ssd``) are cut at the top of the axis and labelled with their
value, so the other systems stay readable.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cxlsim.reports import timeline as tl
from cxlsim.reports.output import fmt_num
from cxlsim.reports.timeline import STYLE
from cxlsim.sweep.results import BREAKDOWN, ENERGY_COMPONENTS

#: A bar taller than this many times the median bar of its panel is cut and labelled.
CUT_FACTOR = 4.0
#: Width one legend entry takes (inches): a legend has as many columns as the figure's width holds.
LEGEND_ENTRY_IN = 1.3
#: One colour per energy component, enough for the shared components and tpu-ps's devices together.
ENERGY_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B2", "#937860", "#DA8BC3", "#8C8C8C",
                  "#CCB974", "#64B5CD", "#2F4B7C", "#A05195")


def draw_all(doc: dict[str, Any], out: str | Path, suffix: str = "") -> dict[str, Path | None]:
    """Draw the three figures into ``out`` (file names ``fig11_breakdown<suffix>.png`` ...); a
    figure whose data is missing is ``None``."""
    out = Path(out)
    return {
        "fig11": fig11_breakdown(doc, out / f"fig11_breakdown{suffix}.png"),
        "fig12": fig12_timeline(doc, out / f"fig12_timeline{suffix}.png"),
        "fig13": fig13_energy(doc, out / f"fig13_energy{suffix}.png"),
    }


def _comparable(doc: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], dict[str, Any]]]:
    """:func:`_table` less the runs whose accelerator count differs from the baseline's on their
    workload (a batch of 128 chips is not one of one GPU): Figures 11 and 13 leave them out."""
    systems, workloads, res = _table(doc)
    baseline = doc.get("summary", {}).get("baseline", "pmem")
    base = {w: res[(baseline, w)].get("accelerators", 1) for w in workloads if (baseline, w) in res}
    res = {k: v for k, v in res.items() if v.get("accelerators", 1) == base.get(k[1], v.get("accelerators", 1))}
    return [s for s in systems if any(k[0] == s for k in res)], workloads, res


def _table(doc: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], dict[str, Any]]]:
    systems: list[str] = []
    workloads: list[str] = []
    res: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in doc["points"]:
        sw = rec["swept"]
        s, w = sw["system"], sw["workload"]
        systems += [s] if s not in systems else []
        workloads += [w] if w not in workloads else []
        if rec["status"] == "ok":
            res[(s, w)] = rec["result"]
    return systems, workloads, res


def _on(doc: dict[str, Any]) -> str:
    """`` (platform P)`` for a document whose points ran on one platform, else empty."""
    names = {rec.get("result", {}).get("platform") or rec.get("swept", {}).get("platform")
             for rec in doc.get("points", []) if rec.get("status") == "ok"} - {None}
    return f" (platform {names.pop()})" if len(names) == 1 else ""


def fig11_breakdown(doc: dict[str, Any], path: Path) -> Path | None:
    systems, workloads, res = _comparable(doc)
    if not res:
        return None
    baseline = doc.get("summary", {}).get("baseline", "pmem")

    cats = [c for c in BREAKDOWN if any(r["breakdown_ms"].get(c, 0.0) > 0 for r in res.values())]
    panels = {}
    for w in workloads:
        base = res.get((baseline, w))
        norm = base["batch_time_ms"]["mean"] if base else 1.0
        panels[w] = {s: [res[(s, w)]["breakdown_ms"].get(c, 0.0) / norm for c in cats]
                     for s in systems if (s, w) in res}
    unit = f"batch time (normalised to {baseline})" if any((baseline, w) in res for w in workloads) else "batch time (ms)"
    colours = [STYLE.get(c, STYLE[""])[1] if c != "idle" else "#DDDDDD" for c in cats]
    return _stacked(panels, systems, cats, colours, unit,
                    f"Figure 11: batch-time breakdown on the critical path{_on(doc)}", path)


def fig13_energy(doc: dict[str, Any], path: Path) -> Path | None:
    systems, workloads, res = _comparable(doc)
    res = {k: v for k, v in res.items() if v.get("energy_J_per_batch")}
    if not res:
        return None
    baseline = doc.get("summary", {}).get("baseline", "pmem")
    comps = list(ENERGY_COMPONENTS)
    for r in res.values():
        comps += [c for c in r["energy_J_per_batch"]["by_component"] if c not in comps]
    comps = [c for c in comps if any(r["energy_J_per_batch"]["by_component"].get(c, 0.0) > 0 for r in res.values())]
    panels = {}
    for w in workloads:
        base = res.get((baseline, w))
        norm = base["energy_J_per_batch"]["total"] if base else 1.0
        panels[w] = {s: [res[(s, w)]["energy_J_per_batch"]["by_component"].get(c, 0.0) / norm for c in comps]
                     for s in systems if (s, w) in res}
    unit = f"energy per batch (normalised to {baseline})" if any((baseline, w) in res for w in workloads) \
        else "energy per batch (J)"
    colours = [ENERGY_COLOURS[i % len(ENERGY_COLOURS)] for i in range(len(comps))]
    normalised = any((baseline, w) in res for w in workloads)
    return _stacked(panels, systems, comps, colours, unit, f"Figure 13: energy per batch by component{_on(doc)}", path,
                    keep=1.0 if normalised else None)


def fig12_timeline(doc: dict[str, Any], path: Path) -> Path | None:

    runs = [r for r in doc.get("timelines", []) if r.get("status") == "ok" and r.get("timeline")]
    if not runs:
        return None
    timelines = [tl.from_record(r["timeline"], f"{r['swept']['system']} on {r['swept']['workload']}, platform "
                                f"{r['result'].get('platform') or r['swept'].get('platform')} "
                                f"({r['result']['batches']} batches)") for r in runs]
    return tl.plot(timelines, path)


def _stacked(panels: dict[str, dict[str, list[float]]], systems: Sequence[str], parts: Sequence[str],
             colours: Sequence[str], ylabel: str, title: str, path: Path, keep: float | None = None) -> Path:
    """Stacked bars, a panel per workload; ``keep``: a height every panel shows uncut (the
    normalisation baseline's 1.0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    fig_w = 3.2 * len(panels) + 1.5
    fig, axes = plt.subplots(1, len(panels), figsize=(fig_w, 4.2), squeeze=False, sharey=False)
    for ax, (w, bars) in zip(axes[0], panels.items(), strict=True):
        names = [s for s in systems if s in bars]
        totals = [sum(bars[s]) for s in names]
        top = _axis_top(totals, keep)
        for x, s in enumerate(names):
            bottom = 0.0
            for value, colour in zip(bars[s], colours, strict=True):
                ax.bar(x, value, bottom=bottom, color=colour, width=0.7, edgecolor="white", linewidth=0.4)
                bottom += value
            if sum(bars[s]) > top:
                ax.text(x, top * 0.97, f"{sum(bars[s]):.3g}", ha="center", va="top", fontsize=7, rotation=90,
                        color="white", fontweight="bold")
        ax.set_ylim(0, top)
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
        ax.set_title(w.upper(), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(ylabel)
    handles = [Patch(color=c, label=p) for p, c in zip(parts, colours, strict=True)]
    fig.suptitle(title, fontsize=10, y=0.02, va="bottom")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    # the legend sits above the panels in as many rows as the figure's width needs; the saved
    # figure's box grows to hold it (one workload's narrow figure as well as four)
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, frameon=False,
               ncol=max(1, min(len(handles), int(fig_w / LEGEND_ENTRY_IN))))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path


def _axis_top(totals: Sequence[float], keep: float | None = None) -> float:
    """The y-axis top: above every bar, unless a bar towers over the panel's median (then cut);
    never below ``keep`` (the baseline bar of a normalised figure is always shown whole)."""
    if not totals:
        return 1.0
    med = statistics.median(totals)
    kept = [t for t in totals if t <= CUT_FACTOR * med or (keep is not None and t <= keep * (1 + 1e-9))] or totals
    return 1.1 * max(kept) if max(kept) > 0 else 1.0


def render(s: dict[str, Any]) -> str:
    """Five readable tables: batch time, speedup vs pmem, energy vs pmem, throughput per
    accelerator, samples per joule (systems × RMs, mean); then the rows not compared with pmem."""
    wls = s["workloads"]
    by = {(r["system"], r["workload"]): r for r in s["rows"]}
    avg = {a["system"]: a for a in s["average"]}
    out = []
    specs = [("batch time (ms per batch)", "batch_time_ms", "mean"),
             (f"speedup vs {s['baseline']} (higher is faster)", "speedup_vs_pmem", "geomean"),
             (f"energy vs {s['baseline']} (lower is better)", "energy_vs_pmem", "geomean"),
             ("throughput per accelerator (samples/s)", "throughput_samples_per_s_per_accelerator", "mean"),
             ("samples per joule (whole system)", "samples_per_J", "mean")]
    for title, key, avg_name in specs:
        if key in ("energy_vs_pmem", "samples_per_J") and not s["energy_available"]:
            out.append(f"{title}: unavailable (no energy results)")
            continue
        table = [[sys_, *[by[(sys_, w)][key] for w in wls], avg[sys_][key]] for sys_ in s["systems"]]
        out.append(_summary_table(["system", *wls, avg_name], table, title))
    out.append(_sampling_table(s, by))
    apart = sorted({(r["system"], r["accelerators"]) for r in s["rows"] if r.get("not_compared")})
    if apart:
        out.append("not compared with " + s["baseline"] + " (other accelerator counts): "
                   + ", ".join(f"{name} ({n} accelerators)" for name, n in apart))
    failed = [r for r in s["rows"] if r["status"] != "ok"]
    if failed:
        out.append("failed: " + ", ".join(f"{r['system']}/{r['workload']}" for r in failed)
                   + " (errors in results.json)")
    return "\n\n".join(out)


def _sampling_table(s: dict[str, Any], by: dict[tuple[str, str], dict[str, Any]]) -> str:
    """Batches measured (+ warm-up) and the 95 % interval's half-width per system and RM."""
    wls = s["workloads"]

    def text(r: dict[str, Any]) -> str:
        if r.get("batches") is None:
            return "—"
        ci = r.get("batch_time_ci95_fraction")
        mode = "" if r.get("batches_mode") != "fixed" else " fixed"
        return f"{r['batches']}+{r['warmup_batches']}{mode} ±{'n/a' if ci is None else f'{100 * ci:.2f}%'}"

    cells = [[sys_, *[text(by[(sys_, w)]) for w in wls]] for sys_ in s["systems"]]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(["system", *wls])]

    def line(items: Sequence[str]) -> str:
        return "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(items, widths, strict=True)))

    return "\n".join(["batches measured + warm-up, 95 % interval of the mean (± % of it)", line(["system", *wls]),
                      "  ".join("-" * w for w in widths), *(line(c) for c in cells)])


def _summary_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str) -> str:
    """First column left-aligned, numbers right-aligned, ``—`` where a value is missing."""

    cells = [[str(r[0]), *["—" if v is None else fmt_num(v) for v in r[1:]]] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]

    def line(items: Sequence[str]) -> str:
        return "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(items, widths, strict=True)))

    return "\n".join([title, line(headers), "  ".join("-" * w for w in widths), *(line(c) for c in cells)])
