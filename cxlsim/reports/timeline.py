"""Timelines of a run's batches (paper Figure 12 style): ASCII, Chrome trace-event JSON, png/svg.

A :class:`Timeline` is what every format draws, built from a run (:func:`from_result`) or from a
sweep record's saved intervals (:func:`from_record`); nothing is re-simulated. It holds:

* the window: the measured batches, from the first one's start to the last one's end; **t = 0 is
  the first measured batch's start** in every format (the ASCII axis, the JSON's ``ts`` and its
  ``otherData.time_origin``, the figure's axis label); intervals are clipped to the window;
* the ``batch`` lane: each batch's span (its begin to the next batch's begin);
* the lanes that hold an interval somewhere in the run (a lane declared by an op that never takes
  time, such as the marker of a fused correction, is left out);
* the critical path of each measured batch: the intervals the model's Figure-11 breakdown charged
  (:func:`cxlsim.systems.critical_path.breakdown`), clipped to the batch;
* for the JSON's counter tracks: the ops that waited for a lane (ready to start, lane busy); the
  run records no queue inside a device (memory controller, link buffer), so none is drawn.

Formats: ``ascii`` (a Gantt chart; the batch lane shows each batch's number), ``chrome``
(trace-event JSON for https://ui.perfetto.dev: ``ts``/``dur`` in µs; ``X`` slices whose ``args``
carry batch, category and, where the model charged the op with any, ``bytes_B``, ``rows`` and
``device``; a ``critical path`` track and flow arrows linking the critical path's slices; ``C``
counters of each link path's bandwidth (GB/s, each op's bytes spread evenly over its interval) and
of each lane's queue (ops waiting for it)), ``png``/``svg`` (matplotlib; the critical path's bars
outlined in black). Colours: the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008),
distinguishable under the common colour-vision deficiencies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cxlsim.engine.trace import Interval, TraceRecorder

#: One character and one colour per category, shared by all formats (an Okabe-Ito hue each; greys
#: for markers and batch spans; black is kept for the critical path's outline).
STYLE = {
    "b_mlp": ("B", "#0072B2"),  # blue
    "t_mlp": ("T", "#009E73"),  # bluish green
    "transfer": ("x", "#D55E00"),  # vermillion
    "embedding": ("E", "#CC79A7"),  # reddish purple
    "checkpoint": ("C", "#F0E442"),  # yellow
    "kernel": ("k", "#E69F00"),  # orange: the kernels and copies of a GPU phase on the GPU's stream
    "dispatch": ("d", "#56B4E9"),  # sky blue: the host dispatching a GPU phase's framework operators
    "sync": (".", "#CCCCCC"),
    "batch": ("=", "#E8E8E8"),  # a batch's span (the batch lane)
    "": ("#", "#666666"),
}
#: Name of the batch lane (each measured batch's span) and of the critical path's JSON track.
BATCH_LANE = "batch"
CRITICAL_TRACK = "critical path"
#: A bar at least this wide (inches on the figure) carries a label: the whole label or the op's
#: name where it fits across the bar, else the name turned upright (cut to the row's height).
LABEL_MIN_IN = 0.12
_CHAR_IN = 0.052  # width of one label character at the figure's label size (6.5 pt), inches
_ROW_IN = 0.42  # height of one lane's row, inches
#: An op counts as queued when it started this much after it was ready (ns; below: rounding).
WAIT_MIN_NS = 1e-3
#: What the JSON's counter tracks show, stated in its ``otherData``.
COUNTERS_NOTE = ("link <path> (GB/s): the bytes each op moved over the link path, spread evenly over its interval; "
                 "queue <lane> (ops waiting): ops whose inputs were ready, waiting for their lane or a link they "
                 "hold (a track for each lane any op waited for); queues inside the devices (memory controllers, "
                 "link buffers) are not recorded by the run")


@dataclass(frozen=True)
class Timeline:
    """One run's drawable timeline (times in ns on the run's clock; see the module docstring)."""

    title: str
    lanes: list[str]  # drawn lanes, the batch lane first
    intervals: list[Interval]  # every lane's intervals, the batch spans included
    origin_ns: float  # t = 0: the first measured batch's start
    end_ns: float  # the last measured batch's end
    first_batch: int
    critical: list[Interval] = field(default_factory=list)  # critical-path segments, in time order
    waits: list[tuple[str, float, float]] = field(default_factory=list)  # (lane, ready_ns, start_ns)

    @property
    def origin_text(self) -> str:
        return f"t = 0 at the start of batch {self.first_batch} (the first measured batch)"

    def visible(self) -> list[tuple[Interval, float, float]]:
        """Every interval overlapping the window with its clipped start and end in ms from the origin."""
        lo, hi = self.origin_ns, self.end_ns
        return [(iv, (max(iv.start_ns, lo) - lo) / 1e6, (min(iv.end_ns, hi) - lo) / 1e6)
                for iv in self.intervals if iv.end_ns > lo and iv.start_ns < hi]


def _timeline(title: str, trace: TraceRecorder, spans: Sequence[tuple[int, float, float]],
              critical: Sequence[Interval] = (), waits: Sequence[tuple[str, float, float]] = ()) -> Timeline:
    if not spans:
        raise ValueError("a timeline needs at least one measured batch")
    filled = {iv.lane for iv in trace.intervals}
    lanes = [BATCH_LANE] + [ln for ln in trace.lanes if ln in filled and ln != BATCH_LANE]
    batches = [Interval(BATCH_LANE, s, e, f"batch {n}", n, "batch") for n, s, e in spans]
    return Timeline(title, lanes, batches + [iv for iv in trace.intervals if iv.lane != BATCH_LANE],
                    spans[0][1], spans[-1][2], spans[0][0], list(critical), list(waits))


def from_result(result: Any, title: str | None = None) -> Timeline:
    """The timeline of a :class:`~cxlsim.systems.result.RunResult`'s measured batches."""
    measured = result.measured
    spans = [(n, *result.batch_span(n)) for n in measured]
    critical: list[Interval] = []
    waits: list[tuple[str, float, float]] = []
    ex = result.executor
    if ex is not None:
        for (_, t0, t1), path in zip(spans, result.critical_paths, strict=False):
            for key in path:
                rec = ex.records[key]
                s, e = max(rec.start_ns, t0), min(rec.end_ns, t1)
                if e > s:
                    critical.append(Interval(rec.op.lane, s, e, rec.label, key[1], rec.op.category))
        waits = [(rec.op.lane, rec.ready_ns, rec.start_ns) for rec in ex.records.values()
                 if rec.op.lane != BATCH_LANE and rec.start_ns - rec.ready_ns > WAIT_MIN_NS]
    title = title or (f"{result.config.name} on {result.workload.name}, platform {result.config.platform}: "
                      f"batches {measured.start}..{measured.stop - 1}")
    return _timeline(title, result.trace, spans, critical, waits)


def record_timeline(result: Any) -> dict[str, Any]:
    """A run's timeline as JSON-ready data (a sweep record's ``timeline``), enough for
    :func:`from_record` to redraw it: the intervals overlapping the measured batches, their spans
    and their critical path."""
    tl = from_result(result)
    lo, hi = tl.origin_ns, tl.end_ns
    ivs = [[iv.lane, iv.start_ns, iv.end_ns, iv.label, iv.batch, iv.category]
           for iv in tl.intervals if iv.lane != BATCH_LANE and iv.end_ns > lo and iv.start_ns < hi]
    spans = [[iv.batch, iv.start_ns, iv.end_ns] for iv in tl.intervals if iv.lane == BATCH_LANE]
    crit = [[iv.lane, iv.start_ns, iv.end_ns, iv.label, iv.batch, iv.category] for iv in tl.critical]
    return {"start_ns": lo, "end_ns": hi, "lanes": result.trace.lanes, "intervals": ivs, "batch_spans": spans,
            "critical": crit}


def from_record(timeline: dict[str, Any], title: str) -> Timeline:
    """A timeline from :func:`record_timeline`'s data (one batch span from the window where an older
    record has no ``batch_spans``)."""
    tr = TraceRecorder()
    for lane in timeline["lanes"]:
        tr.declare_lane(lane)
    for lane, s, e, label, batch, category in timeline["intervals"]:
        tr.record(lane, s, e, label, batch, category)
    spans = [tuple(x) for x in timeline.get("batch_spans") or [[-1, timeline["start_ns"], timeline["end_ns"]]]]
    crit = [Interval(*c) for c in timeline.get("critical", [])]
    return _timeline(title, tr, spans, crit)


def _char(iv: Interval) -> str:
    return str(iv.batch % 10) if iv.category == "batch" else STYLE.get(iv.category, STYLE[""])[0]


def ascii_gantt(tl: Timeline, width: int = 100) -> str:
    """A Gantt chart: one row per lane, one character per time bucket (category letter; the batch
    lane shows each batch's last digit), then the critical path's row."""
    span_ms = (tl.end_ns - tl.origin_ns) / 1e6
    scale = span_ms / width
    vis = tl.visible()
    rows_iv = [(ln, [(iv, s, e) for iv, s, e in vis if iv.lane == ln]) for ln in tl.lanes]
    rows_iv = [(ln, ivs) for ln, ivs in rows_iv if ivs]
    crit = [(iv, (iv.start_ns - tl.origin_ns) / 1e6, (iv.end_ns - tl.origin_ns) / 1e6) for iv in tl.critical]
    if crit:
        rows_iv.append((CRITICAL_TRACK, crit))
    name_w = max(len(ln) for ln, _ in rows_iv)
    rows = []
    for lane, ivs in rows_iv:
        cells = [" "] * width
        for iv, s, e in ivs:
            a = min(int(s / scale), width - 1)
            b = max(a + 1, int(e / scale + 0.5))
            for i in range(a, min(b, width)):
                cells[i] = _char(iv)
        rows.append(f"{lane:>{name_w}} |{''.join(cells)}|")
    axis = f"{'':>{name_w}}  0 ms{'':{width - 12}}{span_ms:6.2f} ms"
    used = sorted({iv.category for iv, _, _ in vis if iv.category != "batch"})
    legend = "  ".join(f"{STYLE.get(c, STYLE[''])[0]}={c or 'other'}" for c in used)
    head = [tl.title] if tl.title else []
    return "\n".join(head + rows + [axis, f"{'':>{name_w}}  {tl.origin_text}; {legend}"])


def _args(iv: Interval) -> dict[str, Any]:
    out: dict[str, Any] = {"batch": iv.batch, "category": iv.category or "other"}
    if iv.bytes_B is not None:
        out["bytes_B"] = iv.bytes_B
    if iv.rows is not None:
        out["rows"] = iv.rows
    if iv.device is not None:
        out["device"] = iv.device
    if len(iv.link_B) > 1:
        out["link_B"] = dict(iv.link_B)
    return out


def _steps(changes: list[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float]]:
    """A step function from ``(time, delta)`` changes: its value at ``lo`` and at each change inside
    ``[lo, hi)``, then 0 at ``hi`` (times ns)."""
    changes.sort()
    value, out, i = 0.0, [], 0
    while i < len(changes) and changes[i][0] <= lo:
        value += changes[i][1]
        i += 1
    out.append((lo, value))
    while i < len(changes) and changes[i][0] < hi:
        t = changes[i][0]
        while i < len(changes) and changes[i][0] == t:
            value += changes[i][1]
            i += 1
        out.append((t, value))
    out.append((hi, 0.0))
    return [(t, 0.0 if abs(v) < 1e-9 else round(v, 9)) for t, v in out]


def chrome_trace(tl: Timeline, metadata: dict | None = None) -> dict:
    """Chrome trace-event JSON of the window (module docstring): ``M`` metadata naming the process and
    one thread per lane, ``X`` slices, the critical path's track and ``s``/``f`` flows, ``C`` counters."""
    lo, hi = tl.origin_ns, tl.end_ns

    def us(t_ns: float) -> float:
        return (t_ns - lo) / 1e3

    pid = 1
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": "cxlsim"}}]
    tracks = list(tl.lanes) + ([CRITICAL_TRACK] if tl.critical else [])
    tid = {lane: i + 1 for i, lane in enumerate(tracks)}
    for lane, t in tid.items():
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": t, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": t, "args": {"sort_index": t}})
    for iv, s_ms, e_ms in tl.visible():
        if iv.lane not in tid:
            continue
        args = _args(iv)
        if iv.start_ns < lo or iv.end_ns > hi:  # clipped to the window: say where the op ran
            args["op_ms"] = [(iv.start_ns - lo) / 1e6, (iv.end_ns - lo) / 1e6]
        events.append({"name": iv.label, "cat": iv.category or "other", "ph": "X", "pid": pid, "tid": tid[iv.lane],
                       "ts": s_ms * 1e3, "dur": (e_ms - s_ms) * 1e3, "args": args})
    for i, iv in enumerate(tl.critical):
        events.append({"name": iv.label, "cat": "critical_path", "ph": "X", "pid": pid, "tid": tid[CRITICAL_TRACK],
                       "ts": us(iv.start_ns), "dur": iv.duration_ns / 1e3,
                       "args": {"batch": iv.batch, "category": iv.category or "other", "lane": iv.lane}})
        nxt = tl.critical[i + 1] if i + 1 < len(tl.critical) else None
        if nxt is not None and nxt.lane in tid and iv.lane in tid:  # an arrow from this slice to the next
            mid_a, mid_b = (iv.start_ns + iv.end_ns) / 2, (nxt.start_ns + nxt.end_ns) / 2
            events.append({"name": CRITICAL_TRACK, "cat": "critical_path", "ph": "s", "id": i + 1, "pid": pid,
                           "tid": tid[iv.lane], "ts": us(mid_a)})
            events.append({"name": CRITICAL_TRACK, "cat": "critical_path", "ph": "f", "bp": "e", "id": i + 1,
                           "pid": pid, "tid": tid[nxt.lane], "ts": us(mid_b)})
    links: dict[str, list[tuple[float, float]]] = {}
    for iv in tl.intervals:
        for path, nbytes in iv.link_B:
            rate = nbytes / iv.duration_ns  # B/ns = GB/s
            links.setdefault(path, []).extend([(iv.start_ns, rate), (iv.end_ns, -rate)])
    for path in sorted(links):
        for t, v in _steps(links[path], lo, hi):
            events.append({"name": f"link {path} (GB/s)", "ph": "C", "pid": pid, "ts": us(t), "args": {"GBps": v}})
    queues: dict[str, list[tuple[float, float]]] = {}
    for lane, ready, start in tl.waits:
        if start > lo and ready < hi:
            queues.setdefault(lane, []).extend([(ready, 1.0), (start, -1.0)])
    for lane in sorted(queues):
        for t, v in _steps(queues[lane], lo, hi):
            events.append({"name": f"queue {lane} (ops waiting)", "ph": "C", "pid": pid, "ts": us(t),
                           "args": {"ops": v}})
    other = {**(metadata or {}), "time_origin": tl.origin_text, "origin_ns": lo, "window_ms": [0.0, (hi - lo) / 1e6],
             "time_unit": "ts and dur in microseconds", "counters": COUNTERS_NOTE}
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def _text_colour(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45 else "black"


def _fit(label: str, width_in: float) -> tuple[str, float]:
    """The text of a bar ``width_in`` inches wide and its rotation (module :data:`LABEL_MIN_IN`);
    ``""`` under the threshold."""
    if width_in < LABEL_MIN_IN:
        return "", 0.0
    name = label.split(" ")[0]  # the op without its batch number
    for text in (label, name):
        if len(text) * _CHAR_IN <= width_in:
            return text, 0.0
    return name[:int(0.75 * _ROW_IN / (0.85 * _CHAR_IN))], 90.0


def plot(timelines: Sequence[Timeline], path: str | Path, lanes: Sequence[str] | None = None) -> Path:
    """Stacked panels (one per timeline) of lane bars coloured by category, like Figure 12; the
    critical path's bars outlined in black, batch boundaries dashed; the axis in ms from each panel's
    first measured batch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    path = Path(path)
    shown_of = [[ln for ln in tl.lanes if lanes is None or ln in lanes or ln == BATCH_LANE] for tl in timelines]
    heights = [len(s) or 1 for s in shown_of]
    fig_w = 11.0
    fig, axes = plt.subplots(len(timelines), 1, figsize=(fig_w, _ROW_IN * sum(heights) + 1.3 * len(timelines)),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    used: set[str] = set()
    axis_in = fig_w * 0.82  # the axes' width, inches (after the lane names)
    for ax_row, tl, shown in zip(axes, timelines, shown_of, strict=True):
        ax = ax_row[0]
        span_ms = (tl.end_ns - tl.origin_ns) / 1e6
        row_of = {ln: r for r, ln in enumerate(shown)}
        for iv, s, e in tl.visible():
            row = row_of.get(iv.lane)
            if row is None:
                continue
            colour = STYLE.get(iv.category, STYLE[""])[1]
            width_in = (e - s) / span_ms * axis_in
            edge = "#555555" if iv.category == "batch" else "white" if width_in > 0.05 else colour
            if iv.category != "batch":
                used.add(iv.category)
            ax.broken_barh([(s, e - s)], (row - 0.4, 0.8), facecolors=colour, edgecolor=edge, linewidth=0.4)
            text, rotation = _fit(iv.label, width_in)
            if text:
                ax.text((s + e) / 2, row, text, ha="center", va="center", fontsize=6.5 if not rotation else 5.5,
                        rotation=rotation, color=_text_colour(colour), clip_on=True)
        for iv in tl.critical:
            row = row_of.get(iv.lane)
            if row is None:
                continue
            s, e = (iv.start_ns - tl.origin_ns) / 1e6, (iv.end_ns - tl.origin_ns) / 1e6
            ax.broken_barh([(s, e - s)], (row - 0.42, 0.84), facecolors="none", edgecolor="black", linewidth=1.6)
        for iv, s, _ in tl.visible():
            if iv.lane == BATCH_LANE and s > 0:
                ax.axvline(s, color="#555555", linestyle="--", linewidth=0.7)
        ax.set_yticks(range(len(shown)), shown, fontsize=8)
        ax.set_ylim(len(shown) - 0.5, -0.5)
        ax.set_xlim(0, span_ms)
        ax.set_title(tl.title, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
        ax.set_xlabel(f"time (ms), {tl.origin_text}", fontsize=8)
    handles = [Patch(facecolor=STYLE.get(c, STYLE[""])[1], edgecolor="#555555", linewidth=0.4, label=c or "other")
               for c in sorted(used)]
    if any(tl.critical for tl in timelines):
        handles.append(Patch(facecolor="none", edgecolor="black", linewidth=1.6, label="critical path"))
    fig.tight_layout()
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8,
               ncol=min(len(handles), 6), frameon=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return path
