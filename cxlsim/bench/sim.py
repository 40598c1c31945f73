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
import time

from cxlsim.reports.output import format_table

HELP = "simulated batches per second per system and workload; full comparison wall time"
SYSTEMS = ("ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram")
WORKLOADS = ("rm1", "rm2", "rm3", "rm4")
TARGET_S = 60.0
WARMUP = 2


def _one(job: tuple[str, str, int]) -> dict:
    from cxlsim.api import simulate

    s, w, batches = job
    t = time.perf_counter()
    simulate(s, workload=w, batches=batches, warmup=WARMUP, seed=1, trace=False)
    dt = time.perf_counter() - t
    return {"system": s, "workload": w, "wall_s": dt, "batches_per_s": (batches + WARMUP + 1) / dt}


def _cost(job: tuple[str, str, int]) -> int:
    """Relative cost of a run, for longest-first scheduling: lookups per batch."""
    from cxlsim.workloads.catalog import load_workload

    p = load_workload(job[1]).params
    return p.batch_size * p.tables * p.lookups_per_table


def _comparison(batches: int, workers: int) -> tuple[list[dict], float, float]:
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
        jobs = [(s, w, batches) for w in WORKLOADS for s in SYSTEMS]
        if workers <= 1:
            rows = [_one(j) for j in jobs]
        else:
            with mp.get_context("fork").Pool(workers) as pool:
                done = pool.map(_one, sorted(jobs, key=_cost, reverse=True), chunksize=1)
            by_job = {(r["system"], r["workload"]): r for r in done}
            rows = [by_job[(s, w)] for s, w, _ in jobs]
    finally:
        keep_stream_sets(previous)
    return rows, stream_s, time.perf_counter() - t_all


def run(args) -> dict:
    from cxlsim.api import simulate

    batches = 2 if args.quick else 20
    workers = args.workers if getattr(args, "workers", None) else (os.cpu_count() or 1)
    if "fork" not in mp.get_all_start_methods():
        workers = 1
    simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets={"batch_size": 8}, trace=False)  # JIT warm-up
    rows, stream_s, serial = _comparison(batches, 1)
    # each run simulates warm-up + measured + 1 closing batch: scale by batch-simulations per run
    scale = (WARMUP + 20 + 1) / (WARMUP + batches + 1)
    out = {"batches": batches, "per_run": rows, "stream_generation_s": stream_s, "comparison_wall_s": serial,
           "target_s": TARGET_S, "ratio_to_target": serial / TARGET_S * scale, "workers": 1}
    if workers > 1:
        _, _, parallel = _comparison(batches, workers)
        out.update(workers=workers, parallel_comparison_wall_s=parallel,
                   parallel_speedup=serial / parallel,
                   parallel_ratio_to_target=parallel / TARGET_S * scale)
    return out


def render(d: dict) -> str:
    table = format_table(["system", "workload", "wall s", "batches/s"],
                         [[r["system"], r["workload"], r["wall_s"], r["batches_per_s"]] for r in d["per_run"]])
    text = (table + f"\n\nfull comparison ({d['batches']} batches each, serial): {d['comparison_wall_s']:.1f} s "
            f"(streams {d['stream_generation_s']:.1f} s); at 20 batches that is {d['ratio_to_target']:.2f}× the "
            f"{d['target_s']:.0f} s target")
    if "parallel_comparison_wall_s" in d:
        text += (f"\nwith {d['workers']} worker processes: {d['parallel_comparison_wall_s']:.1f} s "
                 f"({d['parallel_speedup']:.2f}× serial; {d['parallel_ratio_to_target']:.2f}× the target at 20 batches)")
    return text
