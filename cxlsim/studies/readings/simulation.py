"""The readings study's runs: every column (audited, each reading changed alone, defaults) on every
system and workload."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from cxlsim.api import simulate
from cxlsim.studies.readings.settings import (
    READINGS,
    column_sets,
    columns,
    study_config,
    study_lists,
)


def _run(job: tuple[str, str, tuple, int, int, str]) -> dict[str, Any]:
    system, workload, sets, batches, seed, platform = job
    r = simulate(system, workload=workload, batches=batches, warmup=2, seed=seed,
                 sets=[("platform", platform), *sets], trace=False)
    d = r.to_dict()
    return {"batch_ms": d["batch_time_ms"]["mean"], "checkpoint_ms": d["breakdown_ms"].get("checkpoint", 0.0),
            "energy_J": d["energy_J_per_batch"]["total"]}


def run(workloads: Sequence[str] | None = None, batches: int = 3, seed: int = 1, workers: int = 2,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The study: ``{"columns": [...], "results": {column: {workload: {system: {...}}}}}``."""
    lists = study_lists()
    workloads = list(lists.workloads if workloads is None else workloads)
    platform = lists.platforms[0]
    cfgs = {s: study_config(s) for s in lists.systems}
    jobs: dict[tuple, tuple] = {}
    for col in columns():
        for s in lists.systems:
            sets = tuple(column_sets(col, cfgs[s]))
            for w in workloads:
                jobs.setdefault((s, w, sets), (s, w, sets, batches, seed, platform))
    keys = list(jobs)
    out: dict[tuple, dict] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for i, (k, res) in enumerate(zip(keys, pool.map(_run, [jobs[k] for k in keys]), strict=True)):
            out[k] = res
            if progress:
                progress(f"[{i + 1}/{len(keys)}] {k[0]} {k[1]} {dict(k[2]) or 'defaults'}")
    results = {col: {w: {s: out[(s, w, tuple(column_sets(col, cfgs[s])))] for s in lists.systems}
                     for w in workloads} for col in columns()}
    return {"platform": platform, "workloads": workloads, "batches": batches, "seed": seed,
            "columns": columns(), "readings": {r.name: r.what for r in READINGS}, "results": results}
