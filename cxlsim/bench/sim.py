"""Simulation speed: simulated batches per second per system and workload, and the wall time of
the full RM1–RM4 × seven-system comparison (input streams generated and analysed once per
workload and shared by the systems). Target: the comparison at 20 batches within 60 s on a
2-core machine. The ratio printed is measured wall time / target, from this run."""

from __future__ import annotations

import time

from cxlsim.reports.output import format_table

HELP = "simulated batches per second per system and workload; full comparison wall time"
SYSTEMS = ("ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram")
WORKLOADS = ("rm1", "rm2", "rm3", "rm4")
TARGET_S = 60.0


def run(args) -> dict:
    from cxlsim.api import simulate
    from cxlsim.systems.streams import stream_set
    from cxlsim.workloads.catalog import load_workload

    batches = 2 if args.quick else 20
    rows = []
    t_all = time.perf_counter()
    stream_s = 0.0
    for w in WORKLOADS:
        t = time.perf_counter()
        stream_set(load_workload(w), 1, 2 + batches + 1)  # shared by the seven systems
        stream_s += time.perf_counter() - t
        for s in SYSTEMS:
            t = time.perf_counter()
            simulate(s, workload=w, batches=batches, warmup=2, seed=1, trace=False)
            dt = time.perf_counter() - t
            rows.append({"system": s, "workload": w, "wall_s": dt, "batches_per_s": (batches + 3) / dt})
    total = time.perf_counter() - t_all
    return {"batches": batches, "per_run": rows, "stream_generation_s": stream_s, "comparison_wall_s": total,
            "target_s": TARGET_S, "ratio_to_target": total / TARGET_S * (20 / batches)}


def render(d: dict) -> str:
    table = format_table(["system", "workload", "wall s", "batches/s"],
                         [[r["system"], r["workload"], r["wall_s"], r["batches_per_s"]] for r in d["per_run"]])
    return (table + f"\n\nfull comparison ({d['batches']} batches each): {d['comparison_wall_s']:.1f} s "
            f"(streams {d['stream_generation_s']:.1f} s); at 20 batches that is {d['ratio_to_target']:.2f}× the {d['target_s']:.0f} s target")
