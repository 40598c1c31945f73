"""Simulation speed: simulated batches per second per system and workload, and the wall time of
the full RM1–RM4 × seven-system comparison (input streams generated and analysed once per
workload and shared by the systems). Target: the comparison at 20 batches within 60 s on a
2-core machine. Ratios printed, all from this run: the comparison's wall time against the target,
and the serial comparison against the parallel one (worker processes forked after every
workload's streams exist, so they share them; runs handed out longest first).

  cxlsim bench sim --quick        2 measured batches per run (ratios scaled to 20 measured batches
                                  by batch simulations per run: 2 warm-up + measured + 1)
  cxlsim bench sim --workers 1    serial only
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import time

from cxlsim.reports.output import format_table

HELP = "simulated batches per second per system and workload; full comparison wall time"
SYSTEMS = ("ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram")
WORKLOADS = ("rm1", "rm2", "rm3", "rm4")
TARGET_S = 60.0
WARMUP = 2


#: Platforms timed by default: the one the comparison's speed target is held on first.
PLATFORMS = ("physical", "prototype")


def _one(job: tuple[str, str, int, str]) -> dict:
    from cxlsim.api import simulate

    s, w, batches, platform = job
    t = time.perf_counter()
    simulate(s, workload=w, batches=batches, warmup=WARMUP, seed=1, trace=False, sets=[("platform", platform)])
    dt = time.perf_counter() - t
    return {"system": s, "workload": w, "wall_s": dt, "batches_per_s": (batches + WARMUP + 1) / dt}


def _cost(job: tuple[str, str, int, str]) -> int:
    """Relative cost of a run, for longest-first scheduling: lookups per batch."""
    from cxlsim.workloads.catalog import load_workload

    p = load_workload(job[1]).params
    return p.batch_size * p.tables * p.lookups_per_table


def _comparison(batches: int, workers: int, platform: str = PLATFORMS[0]) -> tuple[list[dict], float, float]:
    """Every system on every workload. Every workload's streams are made first, in this process;
    the runs then go serially, or longest first to ``workers`` forked processes that inherit
    the streams."""
    from cxlsim.systems.streams import keep_stream_sets, stream_set
    from cxlsim.workloads.catalog import load_workload

    t_all = time.perf_counter()
    previous = keep_stream_sets(len(WORKLOADS))
    try:
        for w in WORKLOADS:
            stream_set(load_workload(w), 1, WARMUP + batches + 1)
        stream_s = time.perf_counter() - t_all
        jobs = [(s, w, batches, platform) for w in WORKLOADS for s in SYSTEMS]
        if workers <= 1:
            rows = [_one(j) for j in jobs]
        else:
            with mp.get_context("fork").Pool(workers) as pool:
                done = pool.map(_one, sorted(jobs, key=_cost, reverse=True), chunksize=1)
            by_job = {(r["system"], r["workload"]): r for r in done}
            rows = [by_job[(s, w)] for s, w, _, _ in jobs]
    finally:
        keep_stream_sets(previous)
    return rows, stream_s, time.perf_counter() - t_all


def run(args) -> dict:
    from cxlsim.api import simulate

    batches = 2 if args.quick else 20
    workers = args.workers if getattr(args, "workers", None) else (os.cpu_count() or 1)
    if "fork" not in mp.get_all_start_methods():
        workers = 1
    platforms = list(getattr(args, "platforms", None) or PLATFORMS)
    simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets={"batch_size": 8}, trace=False)  # JIT warm-up
    # each run simulates warm-up + measured + 1 closing batch: scale by batch-simulations per run
    scale = (WARMUP + 20 + 1) / (WARMUP + batches + 1)
    out: dict = {"batches": batches, "target_s": TARGET_S, "workers": workers, "platforms": {}}
    for platform in platforms:
        rows, stream_s, serial = _comparison(batches, 1, platform)
        one = {"per_run": rows, "stream_generation_s": stream_s, "comparison_wall_s": serial,
               "ratio_to_target": serial / TARGET_S * scale}
        if workers > 1:
            _, _, parallel = _comparison(batches, workers, platform)
            one.update(parallel_comparison_wall_s=parallel, parallel_speedup=serial / parallel,
                       parallel_ratio_to_target=parallel / TARGET_S * scale)
        out["platforms"][platform] = one
    out["scale"] = scale_line()
    return out


def render(d: dict) -> str:
    parts = []
    for platform, p in d["platforms"].items():
        table = format_table(["system", "workload", "wall s", "batches/s"],
                             [[r["system"], r["workload"], r["wall_s"], r["batches_per_s"]] for r in p["per_run"]],
                             title=f"platform {platform}")
        text = (table + f"\n\nfull comparison on {platform} ({d['batches']} batches each, serial): "
                f"{p['comparison_wall_s']:.1f} s (streams {p['stream_generation_s']:.1f} s); at 20 batches that is "
                f"{p['ratio_to_target']:.2f}× the {d['target_s']:.0f} s target")
        if "parallel_comparison_wall_s" in p:
            text += (f"\nwith {d['workers']} worker processes: {p['parallel_comparison_wall_s']:.1f} s "
                     f"({p['parallel_speedup']:.2f}× serial; {p['parallel_ratio_to_target']:.2f}× the target at 20 batches)")
        parts.append(text)
    if d.get("scale"):
        parts.append(render_scale(d["scale"]))
    return "\n\n".join(parts)


#: The scale line: cxl on RM1, a CXL-MEM per 4 GPUs (row-sharded), ``topology.symmetry: auto``.
SCALE_GPUS = (1, 4, 16, 64, 256, 1024)


def _scale_point(gpus: int, queue) -> None:
    import resource

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
               "peak_GB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6})


def scale_line(start_method: str = "spawn") -> list[dict]:
    """``cxl`` RM1 from 1 to 1,024 GPUs (2 warm-up + 2 measured batches), each point in a fresh
    process (its wall and peak resident memory; the reduction from 32 GPUs on). Spawned, not
    forked: a forked child's peak counts the parent's pages (the comparison's streams)."""
    ctx = mp.get_context(start_method)
    out = []
    for g in SCALE_GPUS:
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
