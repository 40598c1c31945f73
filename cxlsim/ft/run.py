"""Run every scheme of a scenario over the scenario's one interruption trace."""

from __future__ import annotations

from typing import Any

from cxlsim.config.bounds import MAX_FT_EVENTS
from cxlsim.errors import ConfigError
from cxlsim.ft.failures import build_trace
from cxlsim.ft.scenario import Scenario
from cxlsim.ft.schemes import build_context, build_scheme
from cxlsim.ft.simulator import WorkBoundError, simulate_scheme
from cxlsim.version import __version__


def run_scenario(sc: Scenario) -> dict[str, Any]:
    """Results of all schemes (JSON-ready; keys documented in docs/ft.md)."""
    trace = build_trace(sc)
    ctx = build_context(sc)
    results = []
    budget = MAX_FT_EVENTS  # interruptions plus checkpoints, all schemes together (cxlsim.config.bounds)
    for i, (label, kind, params) in enumerate(sc.schemes):
        scheme = build_scheme(label, kind, params, ctx)
        try:
            res = simulate_scheme(scheme, trace, ctx.t_total_s, max_events=budget)
        except WorkBoundError as exc:
            raise ConfigError(sc.path, f"schemes[{i}]", f"{label}: {exc}, past the bound of {MAX_FT_EVENTS:.3g} "
                              "events one scenario simulates (cxlsim/config/bounds.py); lengthen its interval "
                              "or the failures' mtbf_h") from None
        budget -= res["interruptions_handled"] + res["checkpoints"]
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
