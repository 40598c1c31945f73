"""The statistics dump of one run (``cxlsim run --stats``, ``--stats-file``), and the diff of two.

Contract: :func:`run_stats` turns a :class:`~cxlsim.systems.result.RunResult` simulated with
``stats=True`` into a nested dict of plain values with stable keys (``docs/stats.md`` lists every
key, its unit and what fills it): ``total`` over the measured batches and ``per_batch`` (by batch
number) hold the same sections: ``lanes``, ``memories``, ``links``, ``caches``, ``raw_stall``,
``persistence``, ``logic``. Units are in the key names (``_ns``, ``_B``, ``_GBps``, ``_fraction``,
``latency_ns.p99``); counts have none. Everything comes from the typed records the models filled
as they ran (:class:`~cxlsim.systems.activity.BatchActivity`, its
:class:`~cxlsim.systems.activity.AccessStats` filled by the media kernel); nothing is recomputed
from the trace. :func:`flatten` gives dotted keys; :func:`diff` compares two dumps.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from cxlsim.config.yamlio import read_yaml
from cxlsim.devices.memory.media import media_index as MI
from cxlsim.errors import ConfigError
from cxlsim.reports.output import format_table, to_jsonable
from cxlsim.systems.activity import AccessStats, BatchActivity
from cxlsim.systems.result import RunResult

#: The dump's format; a file without it is not a statistics dump.
SCHEMA = "cxlsim-stats/1"
#: Steps whose writes are the persistence scheme's log (undo: ``emb_log``/``mlp_log``; redo:
#: ``redo``/``redo_mlp``) and its checkpoint (checkpoint-and-recovery: ``cnr``).
LOG_STEPS = frozenset({"emb_log", "mlp_log", "redo", "redo_mlp"})
CHECKPOINT_STEPS = frozenset({"cnr"})
#: Percentiles the latency summaries give (``p50``, ``p95``, ``p99``).
PERCENTILES = (50, 95, 99)
#: The executor's pseudo-lane of the batch boundaries (no device).
BATCH_LANE = "batch"
#: Default ``stats diff`` threshold: relative changes smaller than this are not shown.
DIFF_THRESHOLD = 0.01


def latency_summary(vec: np.ndarray, write: bool) -> dict[str, Any] | None:
    """``{count, mean, p50, p95, p99, max}`` (ns) of the reads' (writes') latencies in a kernel
    statistics vector; None when there were none. Mean and max are exact; percentiles are the
    middle of their histogram bucket (``media_index.LAT_PER_OCTAVE`` equal buckets an octave:
    within 6.25 %, or 0.5 ns below 8 ns), at most the max."""
    n_i, sum_i, max_i, base = ((MI.S_WRITES, MI.S_WRITE_NS, MI.S_WRITE_MAX_NS, MI.S_HIST + MI.LAT_BUCKETS) if write
                               else (MI.S_READS, MI.S_READ_NS, MI.S_READ_MAX_NS, MI.S_HIST))
    n = float(vec[n_i])
    if n <= 0:
        return None
    cum = np.cumsum(vec[base:base + MI.LAT_BUCKETS])
    top = float(vec[max_i])
    out: dict[str, Any] = {"count": int(n), "mean": float(vec[sum_i] / n)}
    for p in PERCENTILES:
        low, high = MI.lat_bucket_edges(int(np.searchsorted(cum, p / 100 * n)))
        out[f"p{p}"] = min(top, (low + high) / 2)
    out["max"] = top
    return out


def _merged(records: Iterable[AccessStats]) -> AccessStats:
    total = AccessStats()
    for r in records:
        total.add(r)
    return total


def _ratio(a: float, b: float) -> float | None:
    return float(a / b) if b else None


def _queue(capacity: int, hold_ns: float, wall_ns: float, top: float | None, full: float, arrivals: float,
           per: int = 1) -> dict[str, Any]:
    """One queue's summary: capacity (None: unbounded), mean occupancy (Little's law: entries'
    hold time over the wall, per ``per`` copies), most in use, share of arrivals that waited."""
    return {"capacity": int(capacity) or None, "occupancy_mean": _ratio(hold_ns, wall_ns * per),
            "occupancy_max": None if top is None else int(top), "full_fraction": _ratio(full, arrivals)}


def _access_section(rec: AccessStats, wall: float) -> dict[str, Any]:
    """Requests, requested bytes and rates, latencies and the requester's slots of some accesses."""
    v = rec.vector
    waits = float(v[MI.S_SLOT_WAITS])
    requests = float(v[MI.S_READS] + v[MI.S_WRITES])
    read_B, write_B, slots = float(v[MI.S_READ_B]), float(v[MI.S_WRITE_B]), int(v[MI.S_SLOTS])
    return {
        "requests": int(requests), "reads": int(v[MI.S_READS]), "writes": int(v[MI.S_WRITES]),
        "read_B": read_B, "write_B": write_B,
        "read_GBps": _ratio(read_B, wall), "write_GBps": _ratio(write_B, wall),
        "latency_ns": {"read": latency_summary(v, False), "write": latency_summary(v, True)},
        # a step's accesses all wait when every slot is taken: then all of them are in use
        "requester_slots": _queue(slots, float(v[MI.S_SLOT_HOLD_NS]), wall, slots if waits else None, waits,
                                  requests),
    }


def _memory(result: RunResult, key: str, acts: list[BatchActivity], wall: float) -> dict[str, Any]:
    mem = result.machine.memories.get(key) if result.machine is not None else None
    media = [a.media[key] for a in acts if key in a.media]
    steps: dict[str, list[AccessStats]] = {}
    for a in acts:
        for (k, step), rec in a.access.items():
            if k == key:
                steps.setdefault(step, []).append(rec)
    rec = _merged(r for rs in steps.values() for r in rs)
    v = rec.vector
    mr, mw = sum(t.media_read_B for t in media), sum(t.media_write_B for t in media)
    modules = mem.modules if mem is not None else 1
    out: dict[str, Any] = {"role": mem.role if mem is not None else key.split(".")[0], "modules": modules}
    out.update(_access_section(rec, wall))
    # the ledger's: every request the memory served, the kernel's and the persistent flags the machine
    # writes analytically (one line each, no latency: requests − reads − writes of them)
    out["requests"] = int(sum(t.accesses for t in media))
    out["requested_B"] = float(sum(t.requested_B for t in media))
    out.update({"media_read_B": mr, "media_write_B": mw,
                "media_read_GBps": _ratio(mr, wall), "media_write_GBps": _ratio(mw, wall)})
    banks = getattr(mem.model, "banks", 0) if mem is not None else 0
    out["media_busy_fraction"] = _ratio(float(v[MI.S_BANK_NS]), banks * modules * wall) if banks else None
    writes = float(v[MI.S_WRITES])
    queues: dict[str, Any] = {"requester_slots": out.pop("requester_slots")}
    depth = int(v[MI.S_WQ_CAP])
    if mem is not None and getattr(mem.model.params, "read_priority", False):  # posted writes: sampled by each write that posts (arrival-sampled mean)
        queues["write_queue"] = {"capacity": depth or None,
                                 "occupancy_mean": _ratio(float(v[MI.S_PQ_SUM]), float(v[MI.S_PQ_SAMPLES])),
                                 "occupancy_max": int(v[MI.S_PQ_MAX]), "full_fraction": None}
    else:
        queues["write_queue"] = _queue(depth, float(v[MI.S_WQ_HOLD_NS]), wall, v[MI.S_WQ_MAX],
                                       float(v[MI.S_WQ_FULL]), writes, modules)
    out["queues"] = queues
    if v[MI.S_CROSSING]:
        reads = float(v[MI.S_READS])
        xr, xw = int(v[MI.S_XR_CAP]), int(v[MI.S_XW_CAP])
        out["cxl"] = {
            "request_link_busy_fraction": _ratio(float(v[MI.S_LINK_UP_NS]), wall),
            "response_link_busy_fraction": _ratio(float(v[MI.S_LINK_DOWN_NS]), wall),
            "read_queue": _queue(xr, float(v[MI.S_XR_HOLD_NS]), wall, v[MI.S_XR_MAX] if xr else None,
                                 float(v[MI.S_XR_FULL]), reads),
            "write_queue": _queue(xw, float(v[MI.S_XW_HOLD_NS]), wall, v[MI.S_XW_MAX] if xw else None,
                                  float(v[MI.S_XW_FULL]), writes),
        }
    out["by_step"] = {step: _access_section(_merged(rs), wall) for step, rs in sorted(steps.items())}
    return out


def section(result: RunResult, acts: list[BatchActivity]) -> dict[str, Any]:
    """The statistics of the batches ``acts`` together (module docstring)."""
    wall = float(sum(a.wall_ns for a in acts))
    busy: dict[str, float] = {}
    for a in acts:
        for lane, ns in a.lane_busy_ns.items():
            if lane != BATCH_LANE:
                busy[lane] = busy.get(lane, 0.0) + ns
    link_B: dict[str, float] = {}
    link_n: dict[str, int] = {}
    for a in acts:
        for path, b in a.link_B.items():
            link_B[path] = link_B.get(path, 0.0) + b
        for path, c in a.link_count.items():
            link_n[path] = link_n.get(path, 0) + c
    keys = sorted({k for a in acts for k in a.media})
    caches: dict[str, Any] = {}
    machine = result.machine
    if machine is not None and getattr(machine, "llc", None) is not None:
        lines, hits = sum(a.llc_lines for a in acts), sum(a.llc_hits for a in acts)
        look, look_hits = sum(a.llc_lookup_lines for a in acts), sum(a.llc_lookup_hits for a in acts)
        caches["host_llc"] = {"lines": lines, "hits": hits, "hit_fraction": _ratio(hits, lines),
                              "lookup_lines": look, "lookup_hits": look_hits,
                              "lookup_hit_fraction": _ratio(look_hits, look),
                              "writeback_B": float(sum(a.llc_writeback_B for a in acts))}
    if machine is not None and getattr(machine, "cache", None) is not None:
        n, h = sum(a.cache_lookups for a in acts), sum(a.cache_hits for a in acts)
        caches["vector_cache"] = {"lookups": n, "hits": h, "hit_fraction": _ratio(h, n),
                                  "writebacks": sum(a.cache_writebacks for a in acts)}
    steps_w: dict[str, float] = {}
    for a in acts:
        for (_, step), rec in a.access.items():
            steps_w[step] = steps_w.get(step, 0.0) + float(rec.vector[MI.S_WRITE_B])
    return {
        "wall_ns": wall,
        "lanes": {lane: {"busy_ns": ns, "busy_fraction": _ratio(ns, wall)} for lane, ns in sorted(busy.items())},
        # the GPUs' streams (every GPU), the host's dispatching threads, the host's cores (weighted by
        # the share of cores busy): lanes of the timeline that hold no executor op
        "compute": {f"{name}_busy_{unit}": (v if unit == "ns" else _ratio(v, wall))
                    for name, v in (("gpu_stream", sum(a.gpu_kernel_ns for a in acts)),
                                    ("host_dispatch", sum(a.host_dispatch_ns for a in acts)),
                                    ("host_cores", sum(a.host_core_busy_ns for a in acts)))
                    for unit in ("ns", "fraction")},
        "memories": {k: _memory(result, k, acts, wall) for k in keys},
        "links": {p: {"transfers": link_n.get(p, 0), "bytes_B": b, "GBps": _ratio(b, wall)}
                  for p, b in sorted(link_B.items())},
        "caches": caches,
        "raw_stall": {"count": int(sum(a.raw_stall_count for a in acts)),
                      "ns": float(sum(a.raw_stall_ns for a in acts))},
        "persistence": {
            "log_write_B": float(sum(b for s, b in steps_w.items() if s in LOG_STEPS)),
            "checkpoint_write_B": float(sum(b for s, b in steps_w.items() if s in CHECKPOINT_STEPS)),
            "mlp_log_B": float(sum(a.mlp_log_B for a in acts)),
            "ckpt_logic_dma_B": float(sum(a.logic.dma_B for a in acts)),
            "mlp_log_gap_batches": max((a.mlp_log_gap_batches for a in acts), default=0),
        },
        "logic": {k: sum(getattr(a.logic, k) for a in acts)
                  for k in ("pooled_vectors", "updated_rows", "gradient_vectors", "corrected_vectors")},
    }


def run_stats(result: RunResult) -> dict[str, Any]:
    """The statistics dump of ``result`` (module docstring); plain JSON/YAML values."""
    acts = list(result.activity)
    doc = {
        "schema": SCHEMA,
        "system": result.config.name,
        "workload": result.workload.name,
        "seed": result.config.seed,
        "measured_batches": [a.batch for a in acts],
        "groups": acts[0].groups if acts else 1,
        "total": section(result, acts),
        "per_batch": {str(a.batch): section(result, [a]) for a in acts},
    }
    return to_jsonable(doc)


def write_stats(doc: dict[str, Any], path: str | Path) -> None:
    """Write a dump as YAML (block style, keys in the dump's order)."""
    Path(path).write_text(yaml.safe_dump(doc, sort_keys=False, width=100000))


def read_stats(path: str | Path) -> dict[str, Any]:
    """A dump written by :func:`write_stats` (or a ``--json`` document's ``stats``); a missing,
    unreadable or foreign file is a :class:`~cxlsim.errors.ConfigError` naming it."""
    doc = read_yaml(path)
    if "stats" in doc and isinstance(doc["stats"], Mapping):  # a cxlsim run --json --stats document
        doc = doc["stats"]
    if doc.get("schema") != SCHEMA:
        raise ConfigError(str(path), "schema", f"not a cxlsim statistics dump (expected schema: {SCHEMA}; "
                          "write one with cxlsim run --stats-file FILE.yaml)")
    return doc


def flatten(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys to leaf values (``total.memories.cxl_mem.latency_ns.read.p99``)."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def diff(a: Mapping[str, Any], b: Mapping[str, Any], threshold: float = DIFF_THRESHOLD,
         scope: str = "total") -> list[dict[str, Any]]:
    """What moved from dump ``a`` to dump ``b``: rows ``{key, a, b, change}`` (``change``: relative,
    ``(b − a) / |a|``; inf from 0; None where a value is absent or not a number), numeric keys
    under ``scope`` (``total``, or ``all``: per batch too) whose relative change is at least
    ``threshold``, and keys present in one only; largest change first."""
    fa, fb = flatten(a), flatten(b)
    pre = "" if scope == "all" else scope + "."
    rows = []
    for key in list(fa) + [k for k in fb if k not in fa]:
        if not key.startswith(pre) or key.startswith(("schema", "seed", "measured_batches")):
            continue
        va, vb = fa.get(key), fb.get(key)
        if _num(va) and _num(vb):
            if va == vb:
                continue
            change = (vb - va) / abs(va) if va else math.inf
            if abs(change) < threshold:
                continue
        elif va == vb:
            continue
        else:
            change = None
        rows.append({"key": key, "a": va, "b": vb, "change": change})
    return sorted(rows, key=lambda r: (r["change"] is None, -abs(r["change"] or 0.0), r["key"]))


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _ns(lat: Mapping[str, Any] | None, key: str) -> Any:
    return "-" if not lat else lat[key]


def render(doc: Mapping[str, Any]) -> str:
    """The dump's ``total`` as text tables (``cxlsim run --stats``)."""
    t = doc["total"]
    wall = t["wall_ns"]
    out = [f"statistics over {len(doc['measured_batches'])} measured batches ({wall / 1e6:.3f} ms; "
           f"per batch and every key: --json or --stats-file, docs/stats.md)"]
    rows = [[lane, s["busy_ns"] / 1e6, _pct(s["busy_fraction"])] for lane, s in t["lanes"].items()]
    out += ["", format_table(["lane", "busy ms", "busy"], rows)]
    if t["memories"]:
        rows = []
        for k, m in t["memories"].items():
            r, w = m["latency_ns"]["read"], m["latency_ns"]["write"]
            rows.append([k, m["requests"], m["read_GBps"] or 0.0, m["write_GBps"] or 0.0,
                         _pct(m["media_busy_fraction"]), _ns(r, "mean"), _ns(r, "p99"), _ns(w, "mean"), _ns(w, "p99")])
        out += ["", format_table(["memory", "requests", "read GB/s", "write GB/s", "media busy", "read ns mean",
                                  "read p99", "write ns mean", "write p99"], rows)]
        rows = []
        for k, m in t["memories"].items():
            qs = dict(m["queues"])
            if "cxl" in m:
                qs["cxl read queue"], qs["cxl write queue"] = m["cxl"]["read_queue"], m["cxl"]["write_queue"]
            for name, q in qs.items():
                rows.append([k, name.replace("_", " "), "-" if q["capacity"] is None else q["capacity"],
                             "-" if q["occupancy_mean"] is None else q["occupancy_mean"],
                             "-" if q["occupancy_max"] is None else q["occupancy_max"], _pct(q["full_fraction"])])
        out += ["", format_table(["memory", "queue", "capacity", "mean", "max", "full"], rows)]
        rows = [[k, _pct(m["cxl"]["request_link_busy_fraction"]), _pct(m["cxl"]["response_link_busy_fraction"])]
                for k, m in t["memories"].items() if "cxl" in m]
        if rows:
            out += ["", format_table(["memory", "cxl request link busy", "cxl response link busy"], rows)]
    if t["links"]:
        rows = [[p, s["transfers"], s["bytes_B"] / 1e6, s["GBps"] or 0.0] for p, s in t["links"].items()]
        out += ["", format_table(["link path", "transfers", "MB", "GB/s"], rows)]
    c, p, raw = t["caches"], t["persistence"], t["raw_stall"]
    out.append("")
    for name, s in c.items():
        out.append(f"{name.replace('_', ' ')}: {_pct(s['hit_fraction'])} hit")
    out.append(f"RAW stalls: {raw['count']:,} ({raw['ns'] / 1e6:.3f} ms)")
    out.append(f"log written: {p['log_write_B'] / 1e6:.3f} MB (MLP log {p['mlp_log_B'] / 1e6:.3f} MB); "
               f"checkpoint written: {p['checkpoint_write_B'] / 1e6:.3f} MB; checkpointing logic DMA "
               f"{p['ckpt_logic_dma_B'] / 1e6:.3f} MB")
    return "\n".join(out)


def render_diff(rows: list[dict[str, Any]], a: str, b: str) -> str:
    """``stats diff`` as a table."""
    if not rows:
        return f"nothing moved between {a} and {b}"
    def change(r: dict[str, Any]) -> str:
        c = r["change"]
        return "absent" if c is None else ("new" if math.isinf(c) else f"{100 * c:+.2f}%")
    return format_table(["key", "A", "B", "change"],
                        [[r["key"], "-" if r["a"] is None else r["a"], "-" if r["b"] is None else r["b"], change(r)]
                         for r in rows], title=f"A = {a}\nB = {b}")
