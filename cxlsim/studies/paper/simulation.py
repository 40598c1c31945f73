"""The paper's comparison: RM1–RM4 on every system of docs/design.md#systems-compared that has a
configuration, on each platform (the paper's ``prototype``, then ``physical``), the Figure-12
timelines, a summary against ``pmem`` per platform, and Figures 11–13 (drawn from the results
files).

Everything runs as sweep points (:mod:`cxlsim.sweep.spec`) on an executor, so ``--executor
process`` or ``dask`` parallelise it like any sweep. ``OUT/results.json`` holds the comparison's
points (as a sweep's ``results.json``) plus ``timelines`` (the Figure-12 points, each with the
intervals of its measured batches) and ``summary``; ``OUT/results.csv`` is the comparison in the
sweep CSV format. :mod:`cxlsim.studies.paper.report` draws the figures and prints the summary from that file alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.errors import ConfigError, InputError
from cxlsim.studies.paper.settings import (
    BASELINE,
    TIMELINE_BATCHES,
    default_systems,
    paper_workloads,
    suffix,
    timeline_runs,
)
from cxlsim.studies.paper.settings import (
    platforms as paper_platforms,
)
from cxlsim.sweep.executors import make_executor
from cxlsim.sweep.progress import Progress
from cxlsim.sweep.results import results_document, write_results
from cxlsim.sweep.runner import execute
from cxlsim.sweep.spec import Point, SweepSpec, build_spec
from cxlsim.systems.sampling import AUTO

#: What each summary row says of its sampling (:meth:`~cxlsim.systems.result.RunResult.to_dict`).
SAMPLING_KEYS = ("batches", "warmup_batches", "batches_mode", "batch_time_ci95_ms", "batch_time_ci95_fraction")


@dataclass
class Plan:
    spec: SweepSpec              # the comparison grid (platform × system × workload)
    timelines: list[Point]       # the Figure-12 runs, per platform
    platforms: tuple[str, ...] = ()  # empty: the paper sweep's (:func:`~cxlsim.studies.paper.settings.platforms`)


def plan(systems: Sequence[str] | None = None, workloads: Sequence[str] | None = None,
         batches: int | str | None = None, sets: Sequence[tuple[str, Any]] = (),
         timeline_workload: str | None = None, timelines: bool = True,
         platforms: Sequence[str] | None = None, ci: float | None = None) -> Plan:
    """The points of a reproduction (``batches`` None or ``"auto"``: sampling with stated
    confidence, ``ci`` its target, :mod:`cxlsim.systems.sampling`; a count: that many), on every
    platform of ``platforms`` (default: :func:`~cxlsim.studies.paper.settings.platforms`). The Figure-12 runs
    measure :data:`~cxlsim.studies.paper.settings.TIMELINE_BATCHES` batches whatever ``batches``, on the systems
    and workload of :func:`~cxlsim.studies.paper.settings.timeline_runs` (``timeline_workload`` replaces the
    workload)."""
    systems = list(systems or default_systems())
    workloads = list(workloads or paper_workloads())
    platforms = tuple(platforms or paper_platforms())
    if any(k == "platform" for k, _ in sets):
        raise InputError("reproduce: choose platforms with --platform NAME [NAME ...], not --set platform=...")
    base: dict[str, Any] = {"systems": systems, "workloads": workloads}
    if batches is not None:
        if batches != AUTO and batches < 1:
            raise InputError(f"--batches must be >= 1 or auto, got {batches}")
        base["batches"] = batches
    if ci is not None:
        if batches not in (None, AUTO):
            raise InputError("--ci is the target of --batches auto; a fixed --batches N measures N batches")
        base["batches_ci_fraction"] = ci
    doc = {"version": 1, "name": "reproduce",
           "description": "RM1-RM4 on the systems of docs/design.md#systems-compared (cxlsim reproduce)", "base": base,
           "axes": {"grid": {"platform": list(platforms)}}}
    try:
        spec = build_spec(doc, "reproduce", sets, default_name="reproduce")
    except ConfigError as exc:  # name the flag the user typed, not the spec key built from it
        flag = {"base.systems": "--systems", "base.workloads": "--workloads",
                "axes.grid.platform": "--platform"}.get(exc.key.split("[")[0])
        if flag is None:
            raise
        raise ConfigError(flag, "", exc.message) from None
    tl: list[Point] = []
    if timelines:
        timeline_systems, fig12_workload = timeline_runs()
        timeline_workload = timeline_workload or fig12_workload
        fixed = tuple((k, v) for k, v in sets if k not in ("batches", "batches_ci_fraction")) + (("batches", TIMELINE_BATCHES),)
        tl = [Point(s, timeline_workload, fixed + (("platform", pl),),
                    (("system", s), ("workload", timeline_workload), ("platform", pl)), timeline=True)
              for pl in platforms for s in timeline_systems if s in systems]
    return Plan(spec, tl, platforms)


def run(p: Plan, executor: str = "process", workers: int | None = None, scheduler: str | None = None,
        progress: bool = True) -> dict[str, dict[str, Any]]:
    """Simulate every point of ``p`` (all platforms in one pass, so they share the executor);
    return one results document per platform (not yet written), in ``p.platforms`` order."""

    points = list(p.spec.points) + p.timelines
    records: list[dict[str, Any] | None] = [None] * len(points)
    ex = make_executor(executor, workers, scheduler)
    bar = Progress(len(points), "simulations", enabled=progress, workers=ex.workers)
    aborted = True
    try:
        for i, rec in execute(points, ex, bar):
            records[i] = dict(rec, index=i)
        aborted = False
    finally:
        ex.close(abort=aborted)
        bar.close()
    n = len(p.spec.points)
    docs = {}
    for pl in p.platforms:
        mine = [r for r in records[:n] if r is not None and r["swept"].get("platform") == pl]
        doc = results_document(mine, name=p.spec.name, description=p.spec.description + f" on {pl}",
                               spec="cxlsim reproduce", document=p.spec.document,
                               axes=[a for a in p.spec.axes if a != "platform"], executor=executor)
        doc["platform"] = pl
        doc["timelines"] = [r for r in records[n:] if r is not None and r["swept"].get("platform") == pl]
        doc["summary"] = summary(mine)
        docs[pl] = doc
    return docs


def write(doc: dict[str, Any], out: str | Path) -> tuple[Path, Path]:
    """Write one platform's results (``results<suffix>.json``/``.csv``, :func:`~cxlsim.studies.paper.settings.suffix`)."""
    return write_results(Path(out), doc["points"], doc, doc["axes"], stem="results" + suffix(doc["platform"]))


def summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Batch time, speedup and energy against ``pmem`` per (system, workload), throughput per
    accelerator and samples per joule, and their averages over workloads (arithmetic mean of times
    and throughputs; geometric mean of ratios). A row whose accelerator count differs from
    ``pmem``'s has no ratios and says why in ``not_compared``."""
    cell: dict[tuple[str, str], dict[str, Any]] = {}
    systems: list[str] = []
    workloads: list[str] = []
    for rec in records:
        sw = rec.get("swept") or {}
        s, w = sw.get("system"), sw.get("workload")
        systems += [s] if s not in systems else []
        workloads += [w] if w not in workloads else []
        res = rec.get("result") or {}
        energy = res.get("energy_J_per_batch") or {}
        cell[(s, w)] = {"status": rec.get("status"), "error": rec.get("error"),
                        "batch_time_ms": (res.get("batch_time_ms") or {}).get("mean"),
                        **{k: res.get(k) for k in SAMPLING_KEYS},
                        "energy_J_per_batch": energy.get("total"),
                        "accelerators": res.get("accelerators", 1) if res else None,
                        "throughput_samples_per_s_per_accelerator": res.get("throughput_samples_per_s_per_accelerator"),
                        "samples_per_J": res.get("samples_per_J")}
    rows = []
    for s in systems:
        for w in workloads:
            c = cell.get((s, w), {"status": "missing"})
            base = cell.get((BASELINE, w), {})
            row = {"system": s, "workload": w, "status": c.get("status"), "accelerators": c.get("accelerators"),
                   "batch_time_ms": c.get("batch_time_ms"),
                   "speedup_vs_pmem": _ratio(base.get("batch_time_ms"), c.get("batch_time_ms")),
                   "energy_J_per_batch": c.get("energy_J_per_batch"),
                   "energy_vs_pmem": _ratio(c.get("energy_J_per_batch"), base.get("energy_J_per_batch")),
                   "throughput_samples_per_s_per_accelerator": c.get("throughput_samples_per_s_per_accelerator"),
                   "samples_per_J": c.get("samples_per_J"), "not_compared": None,
                   **{k: c.get(k) for k in SAMPLING_KEYS}}
            n, nb = c.get("accelerators"), base.get("accelerators")
            if n is not None and nb is not None and n != nb:  # a batch of n accelerators is not one of nb
                row["speedup_vs_pmem"] = row["energy_vs_pmem"] = None
                row["not_compared"] = (f"{n} accelerators against {BASELINE}'s {nb}: compare throughput per "
                                       "accelerator and samples per joule")
            rows.append(row)
    average = []
    for s in systems:
        mine = [r for r in rows if r["system"] == s]
        times = [r["batch_time_ms"] for r in mine]
        average.append({"system": s,
                        "batch_time_ms": _mean(times),
                        "speedup_vs_pmem": _geomean([r["speedup_vs_pmem"] for r in mine]),
                        "energy_vs_pmem": _geomean([r["energy_vs_pmem"] for r in mine]),
                        "throughput_samples_per_s_per_accelerator":
                            _mean([r["throughput_samples_per_s_per_accelerator"] for r in mine]),
                        "samples_per_J": _mean([r["samples_per_J"] for r in mine])})
    energy = any(r["energy_J_per_batch"] is not None for r in rows)
    return {"baseline": BASELINE, "systems": systems, "workloads": workloads, "energy_available": energy,
            "rows": rows, "average": average}


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den == 0:
        return None
    return num / den


def _mean(values: Sequence[float | None]) -> float | None:
    return sum(values) / len(values) if values and all(v is not None for v in values) else None


def _geomean(values: Sequence[float | None]) -> float | None:
    if not values or any(v is None or v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
