"""Simulation speed: simulated batches per second per system and workload, and the wall time of
the full RM1–RM4 × seven-system comparison (input streams generated and analysed once per
workload and shared by the systems). Target: the comparison, each run sampling with stated
confidence (``batches: auto`` at 1 %, :mod:`cxlsim.systems.sampling`), within 60 s on a 2-core
machine. Ratios printed, all from this run: the comparison's wall time against the target, and
the serial comparison against the parallel one (worker processes forked after every workload's
streams exist, so they share them; runs handed out longest first).

Per platform it also reports (keys in the JSON): the batch counts auto chose per run
(``batches``/``warmup_batches`` of each ``per_run`` row, their totals in ``batch_simulations``
against ``batch_simulations_at_20``, what 20 measured batches after 2 warm-up would simulate),
the peak resident memory of each worker process (``peak_worker_rss_B``: ``ru_maxrss``, pages
shared with the parent that forked it included; ``shared_streams_B``, the streams made ahead, is
that shared part's largest item) and ns of wall per simulated media access
(``ns_per_access``: the serial runs' wall over every access their memory models served, warm-up
batches counted as measured ones).

  cxlsim bench sim                auto batches at 1 %
  cxlsim bench sim --quick        2 measured batches per run (ratios scaled to 20 measured batches
                                  by batch simulations per run: 2 warm-up + measured + 1)
  cxlsim bench sim --batches 20   the fixed comparison auto replaced (20 measured batches, 2 warm-up)
  cxlsim bench sim --workers 1    serial only
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import resource
import time

from cxlsim.reports.output import format_table
from cxlsim.studies.paper.settings import dataflow_systems
from cxlsim.sweep.lists import axis_values, sweep_lists
from cxlsim.systems.sampling import AUTO, AUTO_WARMUP_MAX, MIN_BATCHES

HELP = "simulated batches per second per system and workload; full comparison wall time"
#: The catalog sweep naming the comparison timed: its op-graph systems on its workloads, on its
#: platforms (the first is the one the comparison's speed target is held on).
SWEEP = "bench-sim"
TARGET_S = 60.0
WORKER_GOAL_B = 2**30  # a worker on RM2 holds at most 1 GB
WARMUP = 2  # the fixed runs' (--quick) warm-up, and the reference's
REFERENCE_BATCHES = 20  # what a run measured before auto: the ratios of fixed runs are scaled to it


def comparison() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The systems (op-graph ones), workloads and platforms of :data:`SWEEP`, in its order."""
    lists = sweep_lists(SWEEP, needs=("systems", "workloads", "platforms"))
    return dataflow_systems(SWEEP), lists.workloads, lists.platforms


def _one(job: tuple[str, str, int | str, str]) -> dict:
    from cxlsim.api import simulate

    s, w, batches, platform = job
    t = time.perf_counter()
    kw = {"warmup": WARMUP} if batches != AUTO else {}
    r = simulate(s, workload=w, batches=batches, seed=1, trace=False, sets=[("platform", platform)], **kw)
    dt = time.perf_counter() - t
    simulated = r.config.warmup_batches + r.config.batches + 1
    per_batch = r.media_accesses_per_batch
    accesses = None if per_batch is None else per_batch * (simulated - 1)
    return {"system": s, "workload": w, "wall_s": dt, "batches_per_s": simulated / dt,
            "batches": r.config.batches, "warmup_batches": r.config.warmup_batches,
            "batch_time_ci95_fraction": r.to_dict()["batch_time_ci95_fraction"] if batches == AUTO else None,
            "media_accesses": accesses, "ns_per_access": None if not accesses else dt * 1e9 / accesses,
            "pid": os.getpid(), "peak_rss_B": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def _cost(job: tuple[str, str, int | str, str]) -> int:
    """Relative cost of a run, for longest-first scheduling: lookups per batch."""
    from cxlsim.workloads.catalog import load_workload

    return load_workload(job[1]).lookups_per_batch


def _streams_ahead(batches: int | str) -> int:
    """Batches of each workload's streams made before the runs (shared by forked workers): all a
    fixed run needs, or what most auto runs need (a run that needs more makes the rest itself)."""
    if batches == AUTO:
        return AUTO_WARMUP_MAX + MIN_BATCHES + 1
    return WARMUP + int(batches) + 1


def _comparison(batches: int | str, workers: int,
                platform: str | None = None) -> tuple[list[dict], float, float, int]:
    """Every system on every workload. Every workload's streams are made first, in this process;
    the runs then go serially, or longest first to ``workers`` forked processes that inherit
    the streams; ``platform`` defaults to the first of :func:`comparison`. Returns the rows, the streams' and the whole comparison's wall (s) and the bytes
    of the streams made ahead (shared by forked workers: part of each one's peak)."""
    from cxlsim.systems.streams import keep_stream_sets, stream_set
    from cxlsim.workloads.catalog import load_workload

    systems, workloads, platforms = comparison()
    platform = platforms[0] if platform is None else platform
    t_all = time.perf_counter()
    previous = keep_stream_sets(len(workloads))
    try:
        stream_B = 0
        for w in workloads:
            n = _streams_ahead(batches)
            stream_B += stream_set(load_workload(w), 1, n).prepare(n).nbytes
        stream_s = time.perf_counter() - t_all
        jobs = [(s, w, batches, platform) for w in workloads for s in systems]
        if workers <= 1:
            rows = [_one(j) for j in jobs]
        else:
            with mp.get_context("fork").Pool(workers) as pool:
                done = pool.map(_one, sorted(jobs, key=_cost, reverse=True), chunksize=1)
            by_job = {(r["system"], r["workload"]): r for r in done}
            rows = [by_job[(s, w)] for s, w, _, _ in jobs]
    finally:
        keep_stream_sets(previous)
    return rows, stream_s, time.perf_counter() - t_all, stream_B


def _per_worker_peak(rows: list[dict]) -> dict[str, int]:
    """Each worker process's peak resident memory (the largest ``ru_maxrss`` its runs saw)."""
    peak: dict[str, int] = {}
    for r in rows:
        key = str(r["pid"])
        peak[key] = max(peak.get(key, 0), int(r["peak_rss_B"]))
    return peak


def run(args) -> dict:
    from cxlsim.api import simulate

    batches: int | str = getattr(args, "batches", None) or (2 if args.quick else AUTO)
    workers = args.workers if getattr(args, "workers", None) else (os.cpu_count() or 1)
    if "fork" not in mp.get_all_start_methods():
        workers = 1
    platforms = list(getattr(args, "platforms", None) or comparison()[2])
    simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets={"batch_size": 8}, trace=False)  # JIT warm-up
    # each run simulates warm-up + measured + 1 closing batch: fixed runs scale by batch-simulations per
    # run to what 20 measured batches cost; auto runs are what the comparison runs, unscaled
    at_20 = WARMUP + REFERENCE_BATCHES + 1
    scale = 1.0 if batches == AUTO else at_20 / (WARMUP + int(batches) + 1)
    out: dict = {"batches": batches, "target_s": TARGET_S, "workers": workers, "platforms": {}}
    for platform in platforms:
        rows, stream_s, serial, _ = _comparison(batches, 1, platform)
        sims = sum(r["warmup_batches"] + r["batches"] + 1 for r in rows)
        timed = [r for r in rows if r["media_accesses"]]
        one = {"per_run": rows, "stream_generation_s": stream_s, "comparison_wall_s": serial,
               "ratio_to_target": serial / TARGET_S * scale,
               "batch_simulations": sims, "batch_simulations_at_20": at_20 * len(rows),
               "ns_per_access": (sum(r["wall_s"] for r in timed) * 1e9 / sum(r["media_accesses"] for r in timed)
                                 if timed else None)}
        if workers > 1:
            prows, _, parallel, stream_B = _comparison(batches, workers, platform)
            one.update(parallel_comparison_wall_s=parallel, parallel_speedup=serial / parallel,
                       parallel_ratio_to_target=parallel / TARGET_S * scale,
                       peak_worker_rss_B=_per_worker_peak(prows), shared_streams_B=stream_B)
        out["platforms"][platform] = one
    out["scale"] = scale_line()
    return out


def render(d: dict) -> str:
    parts = []
    auto = d["batches"] == AUTO
    for platform, p in d["platforms"].items():
        table = format_table(["system", "workload", "batches", "warm-up", "wall s", "batches/s", "ns/access"],
                             [[r["system"], r["workload"], r["batches"], r["warmup_batches"], r["wall_s"],
                               r["batches_per_s"], "" if r["ns_per_access"] is None else r["ns_per_access"]]
                              for r in p["per_run"]],
                             title=f"platform {platform}")
        what = "batches auto at 1 %" if auto else f"{d['batches']} batches each"
        goal = "" if auto else " at 20 batches"
        text = (table + f"\n\nfull comparison on {platform} ({what}, serial): "
                f"{p['comparison_wall_s']:.1f} s (streams {p['stream_generation_s']:.1f} s); {p['ratio_to_target']:.2f}× "
                f"the {d['target_s']:.0f} s target{goal}"
                f"\nbatch simulations: {p['batch_simulations']} (20 measured batches would take "
                f"{p['batch_simulations_at_20']}: {p['batch_simulations_at_20'] / p['batch_simulations']:.2f}×)")
        if p.get("ns_per_access") is not None:
            text += f"; {p['ns_per_access']:.0f} ns of wall per simulated media access"
        if "parallel_comparison_wall_s" in p:
            peaks = p["peak_worker_rss_B"].values()
            text += (f"\nwith {d['workers']} worker processes: {p['parallel_comparison_wall_s']:.1f} s "
                     f"({p['parallel_speedup']:.2f}× serial; {p['parallel_ratio_to_target']:.2f}× the target{goal}); "
                     f"peak memory per worker {', '.join(f'{b / 2**30:.2f}' for b in peaks)} GiB "
                     f"(goal ≤ {WORKER_GOAL_B / 2**30:.0f} GiB; streams made ahead and shared, counted in each: "
                     f"{p.get('shared_streams_B', 0) / 2**30:.2f} GiB)")
        parts.append(text)
    if d.get("scale"):
        parts.append(render_scale(d["scale"]))
    return "\n\n".join(parts)


#: The catalog sweep of the scale line: cxl on RM1 at its GPU counts, a CXL-MEM per 4 GPUs
#: (row-sharded), ``topology.symmetry: auto``.
SCALE_SWEEP = "bench-scale"


def scale_gpus() -> tuple[int, ...]:
    """The scale line's GPU counts: the ``topology.gpus_count`` axis of :data:`SCALE_SWEEP`."""
    return axis_values(SCALE_SWEEP, "topology.gpus_count")


def _scale_point(gpus: int, queue) -> None:

    from cxlsim.api import simulate

    mems = max(1, gpus // 4)
    t0 = time.perf_counter()
    try:
        sets = {"topology.gpus_count": gpus, "topology.cxl_mems_count": mems, "topology.symmetry": "auto",
                "devices.ndp.params.scratchpad_KiB": 524288,
                "devices.switch.levels": 1 if gpus + mems <= 15 else (2 if gpus + mems <= 225 else 3)}
        if mems > 1:  # one CXL-MEM holds every table: the policy does not apply (and is refused)
            sets["topology.tables_policy"] = "row_sharded"
        d = simulate("cxl", "rm1", batches=2, warmup=2, trace=False, sets=sets).to_dict()
    except Exception as exc:  # reported on the line, the other points still run
        queue.put({"gpus": gpus, "cxl_mems": mems, "error": f"{type(exc).__name__}: {exc}"})
        return
    queue.put({"gpus": gpus, "cxl_mems": mems, "reduced": bool(d["symmetry"]["reduced"]),
               "batch_time_ms": d["batch_time_ms"]["mean"], "wall_s": time.perf_counter() - t0,
               "peak_GB": _own_peak_B() / 1e9})


def _own_peak_B() -> int:
    """This process's peak resident memory (B): ``VmHWM`` of its own address space where Linux
    gives it (``ru_maxrss`` survives ``execve``: a spawned child would report the parent's peak at
    the fork), else ``ru_maxrss``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def scale_line(start_method: str = "spawn") -> list[dict]:
    """``cxl`` RM1 from 1 to 1,024 GPUs (2 warm-up + 2 measured batches), each point in a fresh
    process (its wall and peak resident memory; the reduction from 32 GPUs on). Spawned, not
    forked: a forked child's peak counts the parent's pages (the comparison's streams)."""
    ctx = mp.get_context(start_method)
    out = []
    for g in scale_gpus():
        q = ctx.Queue()
        proc = ctx.Process(target=_scale_point, args=(g, q))
        proc.start()
        proc.join()  # the point's record is a few numbers: it fits the queue's pipe, so join cannot block
        try:
            out.append(q.get(timeout=5))
        except queue.Empty:
            out.append({"gpus": g, "cxl_mems": max(1, g // 4),
                        "error": f"the process ended with exit status {proc.exitcode}"})
    return out


def render_scale(rows: list[dict]) -> str:
    def cell(r: dict, key: str) -> object:
        return r.get(key, "-") if "error" not in r else "-"

    return format_table(["GPUs", "CXL-MEMs", "reduced", "batch ms", "wall s", "peak GB", "error"],
                        [[r["gpus"], r["cxl_mems"], cell(r, "reduced"), cell(r, "batch_time_ms"), cell(r, "wall_s"),
                          cell(r, "peak_GB"), r.get("error", "")] for r in rows],
                        title="scale: cxl rm1, a CXL-MEM per 4 GPUs, topology.symmetry auto (target: 1,024 GPUs in "
                        "<= 60 s and <= 2 GB)")
