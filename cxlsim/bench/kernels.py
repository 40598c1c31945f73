"""Kernel throughput on the RM2 batch shape, and memory while streaming RM2's full-size inputs.

Throughput: RM2's index stream (80 tables × batch × 80 lookups) is generated at ``row_scale`` so
each table has :data:`BENCH_TABLE_ROWS` rows, and every table's lookups run against one materialised
fp32 table of that size (32 MiB: RM2's full 40 GB cannot be materialised here; the reduced table
keeps the access skew and the batch shape, but fits the CPU's caches better than 40 GB would). Each
kernel's rate is reported as lookups per second and as a ratio against the numpy reference measured
in the same run; with PyTorch importable, ``embedding_bag(mode="sum")`` and an ``index_add_`` update
run at the same thread count as numba (1: our kernels are serial).

Memory: a subprocess streams RM2 at full size (generation + access analysis) for
:data:`STREAM_BATCHES` batches and reports its peak resident set (``ru_maxrss``) and the peak
held by arrays allocated while streaming (``tracemalloc``'s peak, which numpy reports to).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cxlsim.reports.output import format_table

HELP = "numba kernels vs numpy reference (and torch) on RM2's batch shape; RM2 streaming memory"

BENCH_WORKLOAD = "rm2"
BENCH_TABLE_ROWS = 262_144
BENCH_THREADS = 1
STREAM_BATCHES = 20
QUICK_TABLES = 8
REPEATS = 3
LEARNING_RATE = 0.1

STREAM_SCRIPT = """
import resource, sys
from cxlsim.workloads import TableLayout, analyze_batch, batches, load_workload
w = load_workload(sys.argv[1])
layout = TableLayout.from_workload(w)
prev = None
for b in batches(w, seed=0, n=1, row_scale=0.001):  # load compiled kernels before measuring
    prev = analyze_batch(b.indices, TableLayout.from_workload(w, 0.001), prev)
import tracemalloc
tracemalloc.start()
prev = None
for b in batches(w, seed=0, n=int(sys.argv[2])):
    prev = analyze_batch(b.indices, layout, prev, controllers=4, interleave_B=4096)
print(tracemalloc.get_traced_memory()[1], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _best_s(fn: Callable[[], Any], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(args: argparse.Namespace) -> dict[str, Any]:
    import numba

    from cxlsim.kernels.embedding import (
        embedding_bag_sum,
        embedding_bag_sum_ref,
        embedding_sgd_update,
        embedding_sgd_update_ref,
    )
    from cxlsim.workloads import batches, load_workload

    quick = getattr(args, "quick", False)
    repeats = 1 if quick else REPEATS
    w = load_workload(BENCH_WORKLOAD)
    scale = BENCH_TABLE_ROWS / w.rows_per_table[0]
    batch = next(iter(batches(w, seed=0, n=2, row_scale=scale, dense=False)))
    tables = QUICK_TABLES if quick else w.tables
    idx = batch.indices[:tables]
    off = batch.offsets
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((BENCH_TABLE_ROWS, w.dim)).astype(np.float32)
    grads = rng.standard_normal((w.batch_size, w.dim)).astype(np.float32)
    lookups = int(idx.size)

    def lookup(fn):
        return lambda: [fn(weights, idx[t], off) for t in range(tables)]

    def update(fn):
        return lambda: [fn(weights, idx[t], off, grads, LEARNING_RATE) for t in range(tables)]

    numba.set_num_threads(min(BENCH_THREADS, numba.config.NUMBA_NUM_THREADS))
    embedding_bag_sum(weights, idx[0], off)  # compile / load from cache outside timing
    embedding_sgd_update(weights.copy(), idx[0], off, grads, LEARNING_RATE)
    rows = []
    for op, impl, fn in (
        ("lookup", "numba", lookup(embedding_bag_sum)),
        ("lookup", "numpy", lookup(embedding_bag_sum_ref)),
        ("update", "numba", update(embedding_sgd_update)),
        ("update", "numpy", update(embedding_sgd_update_ref)),
    ):
        rows.append({"op": op, "impl": impl, "seconds": _best_s(fn, repeats)})
    torch_version = _torch_rows(rows, weights, idx, off, grads, repeats)
    base = {r["op"]: r["seconds"] for r in rows if r["impl"] == "numpy"}
    for r in rows:
        r["lookups_per_s"] = lookups / r["seconds"]
        r["speedup_vs_numpy"] = base[r["op"]] / r["seconds"]
    stream = _stream_memory(5 if quick else STREAM_BATCHES)
    return {
        "workload": BENCH_WORKLOAD,
        "batch_shape": {"tables": tables, "batch_size": w.batch_size, "lookups_per_table": w.lookups_per_table,
                        "dim": w.dim, "lookups": lookups},
        "table_rows": BENCH_TABLE_ROWS,
        "threads": BENCH_THREADS,
        "torch": torch_version,
        "quick": quick,
        "kernels": rows,
        "stream": stream,
    }


def _torch_rows(rows, weights, idx, off, grads, repeats) -> str | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(BENCH_THREADS)
    tw = torch.from_numpy(weights.copy())
    tidx = [torch.from_numpy(i.copy()) for i in idx]
    toff = torch.from_numpy(off[:-1].copy())
    tg = torch.from_numpy(grads)
    bags = torch.repeat_interleave(torch.arange(grads.shape[0]), torch.from_numpy(np.diff(off)))
    fn = torch.nn.functional.embedding_bag

    def lookup():
        with torch.no_grad():
            return [fn(i, tw, toff, mode="sum") for i in tidx]

    def update():
        with torch.no_grad():
            for i in tidx:  # accumulate duplicates, then SGD (same semantics as our kernel)
                rows_u, inv = torch.unique(i, return_inverse=True)
                acc = torch.zeros(rows_u.numel(), tw.shape[1]).index_add_(0, inv, tg[bags])
                tw.index_add_(0, rows_u, acc, alpha=-LEARNING_RATE)

    rows.append({"op": "lookup", "impl": "torch", "seconds": _best_s(lookup, repeats)})
    rows.append({"op": "update", "impl": "torch", "seconds": _best_s(update, repeats)})
    return str(torch.__version__)


def _stream_memory(n_batches: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", STREAM_SCRIPT, BENCH_WORKLOAD, str(n_batches)],
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    traced_B, peak_KiB = map(int, out.stdout.split())
    return {"batches": n_batches, "peak_rss_B": peak_KiB * 1024, "peak_traced_B": traced_B,
            "wall_s": wall, "full_size": True}


def render(d: dict[str, Any]) -> str:
    s = d["batch_shape"]
    title = (f"kernels on {d['workload']}'s batch shape: {s['tables']} tables x {s['batch_size']} x "
             f"{s['lookups_per_table']} lookups (dim {s['dim']}), one {d['table_rows']:,}-row table, "
             f"{d['threads']} thread(s); torch: {d['torch'] or 'not installed'}")
    table = format_table(["op", "impl", "ms per batch", "Mlookups/s", "x numpy"], [
        [r["op"], r["impl"], round(r["seconds"] * 1e3, 2), round(r["lookups_per_s"] / 1e6, 2),
         round(r["speedup_vs_numpy"], 2)] for r in d["kernels"]], title=title)
    m = d["stream"]
    return (table + f"\n\nstreaming {d['workload']} at full size, {m['batches']} batches: peak RSS "
            f"{m['peak_rss_B'] / 2**20:,.0f} MiB (of it, arrays allocated while streaming: "
            f"{m['peak_traced_B'] / 2**20:,.0f} MiB peak), {m['wall_s']:.1f} s")
