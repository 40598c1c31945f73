"""Run every scheme of a scenario over the scenario's one interruption trace."""

from __future__ import annotations

from typing import Any

from cxlsim.ft.failures import build_trace
from cxlsim.ft.scenario import Scenario
from cxlsim.ft.schemes import build_context, build_scheme
from cxlsim.ft.simulator import simulate_scheme
from cxlsim.version import __version__


def run_scenario(sc: Scenario) -> dict[str, Any]:
    """Results of all schemes (JSON-ready; keys documented in docs/ft.md)."""
    trace = build_trace(sc)
    ctx = build_context(sc)
    results = []
    for label, kind, params in sc.schemes:
        scheme = build_scheme(label, kind, params, ctx)
        res = simulate_scheme(scheme, trace, ctx.t_total_s)
        results.append({"scheme": label, "kind": kind, "summary": scheme.summary(), **res})
    used = max((r["wall_time_h"] for r in results), default=0.0) * 3600.0
    return {
        "scenario": sc.name,
        "description": sc.description,
        "file": sc.path,
        "seed": sc.seed,
        "cxlsim_version": __version__,
        "storage": {"write_GBps": ctx.storage.write_Bps / 1e9, "read_GBps": ctx.storage.read_Bps / 1e9,
                    "latency_s": ctx.storage.latency_s, "source": ctx.storage.source},
        "t_fail_h": ctx.t_fail_s / 3600.0,
        "expected_resumes": ctx.expected_resumes,
        "trace": [e.to_dict() for e in trace if e.time_s <= used],
        "schemes": results,
        "config": sc.resolved,
    }
