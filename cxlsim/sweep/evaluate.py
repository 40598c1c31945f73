"""Simulating one sweep point: the function every executor runs, in any process or machine.

Contract: :func:`evaluate` never raises for a failing point; it returns a record (a plain
JSON-able dict) with ``status`` ``"ok"`` or ``"error"``::

    {"id", "point": {system, workload, sets, timeline}, "swept": {key: value},
     "status", "error": "Type: message" | null, "error_kind": "input" | "internal" | null,
     "result": RunResult.to_dict() | null,
     "timeline": {"start_ns", "end_ns", "lanes", "intervals": [[lane, start_ns, end_ns, label, batch,
                  category], ...]} | null,
     "stats": the statistics dump (a point with ``stats``, :func:`cxlsim.reports.stats.run_stats`; else absent),
     "wall_s", "compile_s", "version", "git_revision"}

``compile_s`` is the part of ``wall_s`` spent compiling kernels (a cold numba cache, first points
only; :func:`cxlsim.kernels.compile_cache.compile_seconds`), which a progress estimate leaves out.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from cxlsim.api import simulate
from cxlsim.errors import InputError
from cxlsim.kernels.compile_cache import compile_seconds
from cxlsim.provenance import provenance
from cxlsim.reports.output import to_jsonable
from cxlsim.reports.stats import run_stats
from cxlsim.reports.timeline import record_timeline
from cxlsim.sweep.spec import Point


def evaluate(point: Point) -> dict[str, Any]:
    """Simulate ``point`` and return its record (see the module docstring)."""
    record: dict[str, Any] = {
        "id": point.id, "point": point.to_dict(), "swept": dict(point.swept),
        "status": "ok", "error": None, "error_kind": None, "result": None, "timeline": None,
    }
    t0, c0 = time.perf_counter(), compile_seconds()
    try:
        result = simulate(point.system, workload=point.workload, sets=list(point.sets), trace=point.timeline,
                          set_origins=point.set_origins, stats=point.stats)
        record["result"] = to_jsonable(result.to_dict())
        if point.stats:
            record["stats"] = run_stats(result)
        if point.timeline:
            record["timeline"] = _timeline(result)
    except InputError as exc:
        record.update(status="error", error=f"{type(exc).__name__}: {exc}", error_kind="input")
    except Exception as exc:  # a failing point must not abort the sweep: record it
        record.update(status="error", error=f"{type(exc).__name__}: {exc}", error_kind="internal",
                      traceback=traceback.format_exc(limit=8))
    record["wall_s"] = time.perf_counter() - t0
    record["compile_s"] = compile_seconds() - c0
    record.update(provenance())
    return record


def _timeline(result: Any) -> dict[str, Any]:
    """The measured batches' intervals, spans and critical path, enough to redraw Figure 12 without
    re-simulating (:func:`cxlsim.reports.timeline.from_record`)."""
    return to_jsonable(record_timeline(result))
