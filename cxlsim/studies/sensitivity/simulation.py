"""The sensitivity study's runs: each system once per workload, then every variant re-priced on
those runs."""

from __future__ import annotations

from typing import Any

from cxlsim.api import load_config, simulate
from cxlsim.energy import energy_per_batch
from cxlsim.studies.sensitivity.settings import BASELINE, SYSTEMS, VARIANTS, Sets


def simulate_all(workload: str, batches: int, systems: tuple[str, ...] = SYSTEMS,
                 sets: dict[str, Sets] | None = None, **kw: Any) -> dict[str, Any]:
    """One run per system (``sets[system]``: its own overrides; ``kw`` to :func:`cxlsim.simulate`)."""
    return {s: simulate(s, workload=workload, batches=batches, trace=False, sets=(sets or {}).get(s), **kw)
            for s in systems}


def normalised(runs: dict[str, Any], variant: str | None = None, value: float | None = None,
               sets: dict[str, Sets] | None = None) -> dict[str, dict[str, Any]]:
    """Energy per batch of each run (re-priced for ``variant = value``; ``sets`` as the runs were
    simulated with) and its ratio to the baseline's."""
    energy = {}
    for s, r in runs.items():
        extra = VARIANTS[variant][3](r.config, value) if variant else []
        energy[s] = energy_per_batch(r, load_config(s, list((sets or {}).get(s) or []) + extra) if extra else None)
    base = energy[BASELINE]["total"]
    return {s: {"energy_J_per_batch": e, "normalized_to_baseline": e["total"] / base} for s, e in energy.items()}


def study(workloads: list[str], batches: int, sets: dict[str, Sets] | None = None, **kw: Any) -> dict[str, Any]:
    """Default energies and every variant's normalised energies, per workload."""
    out: dict[str, Any] = {}
    for w in workloads:
        runs = simulate_all(w, batches, sets=sets, **kw)
        base = normalised(runs, sets=sets)
        out[w] = {"platform": runs[BASELINE].config.platform,
                  "batch_time_ms": {s: r.batch_time_ms["mean"] for s, r in runs.items()}, "default": base, "variants": {}}
        for name, (_, _, values, _) in VARIANTS.items():
            out[w]["variants"][name] = {
                str(v): {s: d["normalized_to_baseline"] for s, d in normalised(runs, name, v, sets).items()}
                for v in values}
    return out
