"""Timelines drawn from a :class:`~cxlsim.engine.trace.TraceRecorder` (paper Figure 12 style).

Formats: ``ascii`` (a Gantt chart for the terminal), ``chrome`` (trace-event JSON for Perfetto or
chrome://tracing; times in µs as the format requires), ``png`` / ``svg`` (matplotlib).
Contract: every function reads only the recorded intervals; nothing is re-simulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cxlsim.engine.trace import Interval, TraceRecorder

#: One character and one colour per category, shared by all formats.
STYLE = {
    "b_mlp": ("B", "#4C72B0"),
    "t_mlp": ("T", "#55A868"),
    "transfer": ("x", "#C44E52"),
    "embedding": ("E", "#8172B2"),
    "checkpoint": ("C", "#CCB974"),
    "media": ("m", "#64B5CD"),
    "link": ("l", "#E08E45"),
    "sync": (".", "#999999"),
    "dispatch": ("d", "#937860"),  # the host dispatching a GPU phase's framework operators
    "kernel": ("k", "#2E8B57"),  # the kernels and copies of a GPU phase on the GPU's stream
    "": ("#", "#777777"),
}


def _window(trace: TraceRecorder, start_ns: float | None, end_ns: float | None) -> tuple[float, float]:
    ivs = trace.intervals
    lo = min(iv.start_ns for iv in ivs) if start_ns is None else start_ns
    hi = max(iv.end_ns for iv in ivs) if end_ns is None else end_ns
    return lo, max(hi, lo + 1.0)


def _visible(trace: TraceRecorder, lo: float, hi: float) -> list[Interval]:
    return [iv for iv in trace.intervals if iv.end_ns > lo and iv.start_ns < hi]


def ascii_gantt(trace: TraceRecorder, width: int = 100, start_ns: float | None = None,
                end_ns: float | None = None, title: str = "") -> str:
    """A Gantt chart: one row per lane, one character per time bucket (category letter)."""
    if not trace.intervals:
        return "(empty timeline)"
    lo, hi = _window(trace, start_ns, end_ns)
    scale = (hi - lo) / width
    lanes = [ln for ln in trace.lanes if any(iv.lane == ln for iv in _visible(trace, lo, hi))]
    name_w = max(len(ln) for ln in lanes)
    rows = []
    for lane in lanes:
        cells = [" "] * width
        for iv in _visible(trace, lo, hi):
            if iv.lane != lane:
                continue
            a = int((max(iv.start_ns, lo) - lo) / scale)
            b = max(a + 1, int((min(iv.end_ns, hi) - lo) / scale + 0.5))
            ch = STYLE.get(iv.category, STYLE[""])[0]
            for i in range(a, min(b, width)):
                cells[i] = ch
        rows.append(f"{lane:>{name_w}} |{''.join(cells)}|")
    ms = (hi - lo) / 1e6
    axis = f"{'':>{name_w}}  0 ms{'':{width - 12}}{ms:6.2f} ms"
    used = sorted({iv.category for iv in trace.intervals})
    legend = "  ".join(f"{STYLE.get(c, STYLE[''])[0]}={c or 'other'}" for c in used)
    head = [title] if title else []
    return "\n".join(head + rows + [axis, f"{'':>{name_w}}  {legend}"])


def chrome_trace(trace: TraceRecorder, metadata: dict | None = None) -> dict:
    """Chrome trace-event JSON (``ph: X`` complete events; ``ts``/``dur`` in µs; one thread per lane)."""
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "cxlsim"}}]
    tid = {lane: i + 1 for i, lane in enumerate(trace.lanes)}
    for lane, t in tid.items():
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": t, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": 1, "tid": t, "args": {"sort_index": t}})
    for iv in trace.intervals:
        events.append({
            "name": iv.label, "cat": iv.category or "other", "ph": "X", "pid": 1, "tid": tid[iv.lane],
            "ts": iv.start_ns / 1e3, "dur": iv.duration_ns / 1e3, "args": {"batch": iv.batch},
        })
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": metadata or {}}


def plot(traces: Sequence[tuple[str, TraceRecorder]], path: str | Path, start_ns: Sequence[float] | None = None,
         end_ns: Sequence[float] | None = None, lanes: Sequence[str] | None = None) -> Path:
    """Stacked panels (one per system) of lane bars coloured by category, like Figure 12."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    path = Path(path)
    n = len(traces)
    heights = []
    for _, tr in traces:
        heights.append(len([ln for ln in tr.lanes if lanes is None or ln in lanes]) or 1)
    fig, axes = plt.subplots(n, 1, figsize=(11, 0.45 * sum(heights) + 1.2 * n), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    used: set[str] = set()
    for i, (title, tr) in enumerate(traces):
        ax = axes[i][0]
        lo = start_ns[i] if start_ns else None
        hi = end_ns[i] if end_ns else None
        lo, hi = _window(tr, lo, hi)
        shown = [ln for ln in tr.lanes if lanes is None or ln in lanes]
        for row, lane in enumerate(shown):
            for iv in _visible(tr, lo, hi):
                if iv.lane != lane:
                    continue
                s, e = max(iv.start_ns, lo), min(iv.end_ns, hi)
                colour = STYLE.get(iv.category, STYLE[""])[1]
                used.add(iv.category)
                ax.broken_barh([((s - lo) / 1e6, (e - s) / 1e6)], (row - 0.4, 0.8), facecolors=colour,
                               edgecolor="white", linewidth=0.3)
                if (e - s) / (hi - lo) > 0.05:
                    ax.text(((s + e) / 2 - lo) / 1e6, row, iv.label, ha="center", va="center", fontsize=6.5)
        ax.set_yticks(range(len(shown)), shown, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, (hi - lo) / 1e6)
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1][0].set_xlabel("time (ms)")
    handles = [Patch(color=STYLE.get(c, STYLE[""])[1], label=c or "other") for c in sorted(used)]
    fig.legend(handles=handles, loc="upper right", fontsize=8, ncol=len(handles))
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path
