"""Timelines: the batch lane, the critical path, counters, the ops' bytes and rows, one time origin
in every format, the trace-event format Perfetto reads, bar labels and colours, Figure 11's legend."""

from __future__ import annotations

import functools
import json
import math

import matplotlib
import matplotlib.axes
import matplotlib.image
import pytest

import cxlsim
from cxlsim.reports import timeline as tl
from cxlsim.reports.output import to_jsonable
from cxlsim.studies.paper.report import fig11_breakdown
from cxlsim.systems.config import list_systems

matplotlib.use("Agg")

SMALL = {"batch_size": 16}
OKABE_ITO = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"}


@functools.cache
def run(system: str, gpus: int = 0):
    sets = {"topology.gpus_count": gpus} if gpus else None
    return cxlsim.simulate(system, workload="rm1", batches=2, warmup=1, workload_sets=SMALL, sets=sets)


def check_trace_events(doc: dict) -> None:
    """The trace-event format as Perfetto and chrome://tracing read it: required fields per phase,
    balanced B/E, numeric counters, paired flows bound to slices, named process and threads."""
    events = doc["traceEvents"]
    assert isinstance(events, list) and events
    threads, processes, used = set(), set(), set()
    stacks: dict = {}
    slices: dict = {}
    flows: dict = {}
    for e in events:
        ph = e["ph"]
        assert isinstance(e["name"], str) and e["name"], e
        assert isinstance(e["pid"], int) and not isinstance(e["pid"], bool), e
        if ph == "M":
            assert e["name"] in ("process_name", "thread_name", "thread_sort_index", "process_sort_index"), e
            assert isinstance(e["args"], dict) and e["args"], e
            (threads.add((e["pid"], e["tid"])) if e["name"] == "thread_name" else None)
            (processes.add(e["pid"]) if e["name"] == "process_name" else None)
            continue
        assert isinstance(e["ts"], (int, float)) and math.isfinite(e["ts"]), e
        if ph == "C":
            assert e["args"] and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                     for v in e["args"].values()), e
            continue
        assert isinstance(e["tid"], int), e
        used.add((e["pid"], e["tid"]))
        if ph == "X":
            assert isinstance(e["dur"], (int, float)) and math.isfinite(e["dur"]) and e["dur"] >= 0, e
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        elif ph == "B":
            stacks.setdefault((e["pid"], e["tid"]), []).append(e)
        elif ph == "E":
            opened = stacks.get((e["pid"], e["tid"]))
            assert opened and opened.pop()["ts"] <= e["ts"], e
        elif ph in ("s", "f"):
            assert "id" in e, e
            flows.setdefault((e.get("cat"), e["id"]), []).append(e)
        else:
            raise AssertionError(f"unexpected phase {ph!r}")
    assert not any(stacks.values()), "unbalanced B/E"
    for key, pair in flows.items():
        assert sorted(x["ph"] for x in pair) == ["f", "s"], key
        s, f = sorted(pair, key=lambda x: x["ph"], reverse=True)
        assert s["ts"] <= f["ts"], key
        for end in (s, f):  # each end lies on a slice of its thread (what it binds to)
            assert any(a <= end["ts"] <= b for a, b in slices.get((end["pid"], end["tid"]), [])), end
    assert used <= threads and {p for p, _ in used} <= processes
    assert doc["otherData"]["time_origin"]


@pytest.mark.parametrize("system", list_systems())
def test_batch_lane_and_trace_format_for_every_system(system):
    r = run(system)
    view = tl.from_result(r)
    spans = [(iv.start_ns, iv.end_ns) for iv in view.intervals if iv.lane == tl.BATCH_LANE]
    assert spans == [r.batch_span(n) for n in r.measured]
    assert all(any(iv.lane == lane for iv in view.intervals) for lane in view.lanes)  # no lane is always empty
    doc = json.loads(json.dumps(tl.chrome_trace(view)))
    check_trace_events(doc)
    tid = {e["args"]["name"]: e["tid"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    batches = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["tid"] == tid[tl.BATCH_LANE]]
    assert [e["args"]["batch"] for e in batches] == list(r.measured)
    row = next(ln for ln in tl.ascii_gantt(view).splitlines() if ln.strip().startswith(tl.BATCH_LANE + " |"))
    assert all(str(n % 10) in row for n in r.measured)


def test_the_fused_correction_marker_lane_is_not_drawn():
    r = run("cxl")  # relaxed lookup, fused correction: a zero-length marker on ndp.corr
    assert "ndp.corr" in r.trace.lanes and not r.trace.on("ndp.corr")
    assert "ndp.corr" not in tl.from_result(r).lanes


@pytest.mark.parametrize("system", ["cxl", "cxl-d", "ssd"])
def test_the_critical_path_is_the_breakdowns(system):
    r = run(system)
    view = tl.from_result(r)
    charged: dict[str, float] = {}
    for iv in view.critical:
        charged[iv.category] = charged.get(iv.category, 0.0) + iv.duration_ns
    for cat in ("b_mlp", "t_mlp", "transfer", "embedding", "checkpoint"):
        assert charged.get(cat, 0.0) == pytest.approx(sum(b[cat] for b in r.breakdowns_ns), rel=1e-9, abs=1e-6)
    events = tl.chrome_trace(view)["traceEvents"]
    assert sum(e["ph"] == "s" for e in events) == len(view.critical) - 1
    assert sum(e["ph"] == "X" and e["cat"] == "critical_path" for e in events) == len(view.critical)


def test_intervals_carry_what_their_ops_moved():
    r = run("cxl")
    for a in r.activity:
        ivs = [iv for iv in r.trace.intervals if iv.batch == a.batch]
        links: dict[str, float] = {}
        for iv in ivs:
            for path, nbytes in iv.link_B:
                links[path] = links.get(path, 0.0) + nbytes
        assert links == pytest.approx(a.link_B)
        assert sum(iv.rows or 0 for iv in ivs if iv.label.startswith("lookup")) == a.logic.pooled_vectors
        assert sum(iv.rows or 0 for iv in ivs if iv.label.startswith("update")) == a.logic.updated_rows
    args = [e["args"] for e in tl.chrome_trace(tl.from_result(r))["traceEvents"]
            if e["ph"] == "X" and e["name"].startswith("pooled ") and e["cat"] == "transfer"]
    assert args and all(x["bytes_B"] > 0 and x["device"] == "cxl:mem0>gpu0" for x in args)


def test_link_counters_integrate_to_the_bytes_in_the_window():
    r = run("cxl")
    view = tl.from_result(r)
    lo, hi = view.origin_ns, view.end_ns
    doc = tl.chrome_trace(view)
    for path in ("cxl:mem0>gpu0", "cxl:host>mem0"):
        pts = [(e["ts"], e["args"]["GBps"]) for e in doc["traceEvents"]
               if e["ph"] == "C" and e["name"] == f"link {path} (GB/s)"]
        integral_B = sum(v * (t1 - t0) * 1e3 for (t0, v), (t1, _) in zip(pts, pts[1:], strict=False))
        expected = sum(b * max(0.0, min(iv.end_ns, hi) - max(iv.start_ns, lo)) / iv.duration_ns
                       for iv in view.intervals for p, b in iv.link_B if p == path)
        assert expected > 0 and integral_B == pytest.approx(expected, rel=1e-6)
        assert pts[-1] == (pytest.approx((hi - lo) / 1e3), 0.0)


def test_queue_counters_count_the_ops_waiting_for_a_lane():
    r = run("cxl", gpus=4)  # four GPUs' transfers share the switch's links
    view = tl.from_result(r)
    doc = tl.chrome_trace(view)
    queues = [e for e in doc["traceEvents"] if e["ph"] == "C" and e["name"].startswith("queue ")]
    assert queues and all(e["args"]["ops"] >= 0 and e["args"]["ops"] == int(e["args"]["ops"]) for e in queues)
    assert max(e["args"]["ops"] for e in queues) >= 1
    check_trace_events(doc)


@pytest.mark.parametrize("system", ["cxl", "ssd"])
def test_one_time_origin_in_every_format(system, tmp_path, monkeypatch):
    r = run(system)
    view = tl.from_result(r)
    bars, labels = [], []
    real_barh, real_xlabel = matplotlib.axes.Axes.broken_barh, matplotlib.axes.Axes.set_xlabel

    def barh(self, xranges, yrange, **kw):
        bars.extend(xranges)
        return real_barh(self, xranges, yrange, **kw)

    def xlabel(self, text, *a, **kw):
        labels.append(text)
        return real_xlabel(self, text, *a, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "broken_barh", barh)
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xlabel", xlabel)
    tl.plot([view], tmp_path / "t.png")
    doc = tl.chrome_trace(view)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert min(s for s, _ in bars) == pytest.approx(min(e["ts"] for e in xs) / 1e3) == 0.0
    window_ms = (view.end_ns - view.origin_ns) / 1e6
    assert max(s + w for s, w in bars) == pytest.approx(max(e["ts"] + e["dur"] for e in xs) / 1e3)
    assert max(s + w for s, w in bars) == pytest.approx(window_ms) == pytest.approx(doc["otherData"]["window_ms"][1])
    assert view.origin_ns == r.batch_span(r.measured.start)[0]
    origin = f"batch {r.measured.start} (the first measured batch)"
    assert origin in doc["otherData"]["time_origin"] and origin in labels[0] and origin in tl.ascii_gantt(view)


def test_a_sweep_record_redraws_the_same_timeline():
    r = run("cxl")
    view = tl.from_result(r)
    again = tl.from_record(json.loads(json.dumps(to_jsonable(tl.record_timeline(r)))), view.title)
    assert [iv for iv in again.intervals if iv.lane == tl.BATCH_LANE] == \
        [iv for iv in view.intervals if iv.lane == tl.BATCH_LANE]
    assert again.critical == view.critical and (again.origin_ns, again.end_ns) == (view.origin_ns, view.end_ns)
    assert again.lanes == view.lanes


def test_bar_labels_and_palette():
    assert tl._fit("lookup 12", tl.LABEL_MIN_IN * 0.9) == ("", 0.0)
    assert tl._fit("lookup 12", 1.0) == ("lookup 12", 0.0)
    assert tl._fit("lookup 12", 7 * tl._CHAR_IN) == ("lookup", 0.0)
    text, rot = tl._fit("mlp_opt 3", tl.LABEL_MIN_IN)
    assert text and rot == 90.0 and "mlp_opt".startswith(text)
    ops = ["b_mlp", "t_mlp", "transfer", "embedding", "checkpoint", "kernel", "dispatch"]
    colours = [tl.STYLE[c][1] for c in ops]
    assert len(set(colours)) == len(colours) and set(colours) <= OKABE_ITO
    assert tl.STYLE["kernel"][1] != tl.STYLE["t_mlp"][1] and tl.STYLE["kernel"][1] != "#000000"  # black: outlines


def _fig11_doc(workloads):
    points = []
    for w in workloads:
        for i, s in enumerate(["pmem", "ssd", "cxl-d", "cxl-b", "cxl"]):
            bd = {"b_mlp": 1.0, "t_mlp": 2.0, "transfer": 0.5 * i, "embedding": 10.0 - i, "checkpoint": 3.0}
            points.append({"swept": {"system": s, "workload": w}, "status": "ok",
                           "result": {"breakdown_ms": bd, "batch_time_ms": {"mean": sum(bd.values())}}})
    return {"points": points, "summary": {"baseline": "pmem"}}


@pytest.mark.parametrize("workloads", [["rm1"], ["rm1", "rm2", "rm3", "rm4"]])
def test_fig11_legend_fits(workloads, tmp_path):
    path = fig11_breakdown(_fig11_doc(workloads), tmp_path / "fig11.png")
    img = matplotlib.image.imread(path)[..., :3]
    for edge in (img[0], img[-1], img[:, 0], img[:, -1]):  # nothing drawn is cut at the figure's edge
        assert (edge > 0.99).all()
    top = img[: img.shape[0] // 5]  # the legend: every category's colour above the panels
    for colour in ("#0072B2", "#009E73", "#D55E00", "#CC79A7", "#F0E442"):
        rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        assert (abs(top - rgb).max(axis=-1) < 0.02).any(), colour
