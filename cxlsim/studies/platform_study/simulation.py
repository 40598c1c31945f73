"""The platform study's runs: the base, then every assumption's variants on the systems it reaches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cxlsim.studies.platform_study.settings import ASSUMPTIONS, label, study_lists
from cxlsim.systems.run import simulate


def batch_times(system: str, workload: str, sets: Sequence[tuple[str, Any]], batches: int, seed: int) -> float:
    r = simulate(system, workload=workload, batches=batches, warmup=1, seed=seed,
                 sets=[("platform", study_lists().platforms[0]), *sets], trace=False)
    return float(r.batch_time_ms["mean"])


def run(workloads: Sequence[str] | None = None, batches: int = 2, seed: int = 1,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The study (the package docstring): ``{"base": {workload: {system: ms}}, "variants": [...]}``, on
    ``workloads`` (default: the study's)."""
    lists = study_lists()
    workloads = lists.workloads if workloads is None else workloads
    systems = lists.systems
    base = {w: {s: batch_times(s, w, [], batches, seed) for s in systems} for w in workloads}
    variants = []
    for a in ASSUMPTIONS:
        for f in a.variants():
            if progress:
                progress(f"{a.name} {label(f)}")
            reached = {s: a.sets(s, f) for s in systems}
            bt = {w: {s: (batch_times(s, w, reached[s], batches, seed) if reached[s] else base[w][s])
                      for s in systems} for w in workloads}
            variants.append({"assumption": a.name, "what": a.what, "factor": f,
                             "systems": sorted(s for s in systems if reached[s]), "batch_time_ms": bt})
    return {"platform": lists.platforms[0], "workloads": list(workloads), "batches": batches, "seed": seed,
            "base": base, "variants": variants}
