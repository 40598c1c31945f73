"""Kernel throughput on the RM2 batch shape, access-analysis time per RM2 batch, and memory while
streaming RM2's full-size inputs.

Throughput: RM2's index stream (80 tables × batch × 80 lookups) is generated at ``row_scale`` so
each table has :data:`BENCH_TABLE_ROWS` rows, and every table's lookups run against one materialised
fp32 table of that size (32 MiB, 64 B-aligned as PyTorch's CPU allocator would place it: RM2's full
40 GB cannot be materialised here; the reduced table keeps the access skew and the batch shape, but
fits the CPU's caches better than 40 GB would). Each kernel's rate is reported as lookups per second
and as ratios against the numpy reference and, with PyTorch importable, ``embedding_bag(mode="sum")``
and an ``index_add_`` update, all measured in the same run at the same thread count
(:data:`BENCH_THREADS`: our kernels are serial). Candidates run round-robin, best of
:data:`REPEATS`; each call's outputs are dropped before the next (as a training loop would), for
every implementation alike.

Access analysis: :func:`cxlsim.workloads.analyze_batch` on full-size RM2 batches, ms per batch for
the row view alone (what the timing model reads) and with every output materialised.

Memory: a subprocess streams RM2 at full size (generation + access analysis, every output
materialised) for :data:`STREAM_BATCHES` batches and reports its peak resident set (``VmHWM``:
``ru_maxrss`` would report the benchmark process's own peak, inherited across exec) and the peak
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

HELP = "numba kernels vs numpy reference (and torch) on RM2's batch shape; access analysis; RM2 streaming memory"

BENCH_WORKLOAD = "rm2"
BENCH_TABLE_ROWS = 262_144
BENCH_THREADS = 1
STREAM_BATCHES = 20
QUICK_TABLES = 8
REPEATS = 5
LEARNING_RATE = 0.1
#: Consecutive full-size RM2 batches timed by the access-analysis benchmark.
ANALYSIS_BATCHES = 5
#: Table alignment (bytes): PyTorch's CPU allocator aligns to 64 B; numpy's large arrays start
#: 16 B past a page, which makes every 128 B row span three cache lines instead of two.
TABLE_ALIGN_B = 64

STREAM_SCRIPT = """
import sys
def hwm_KiB():  # this process's peak RSS; ru_maxrss would include the parent's, from before exec
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
from cxlsim.workloads import TableLayout, analyze_batch, batches, load_workload
w = load_workload(sys.argv[1])
layout = TableLayout.from_workload(w)
prev = None
for b in batches(w, seed=0, n=2, row_scale=0.001):  # load compiled kernels before measuring
    prev = analyze_batch(b.indices, TableLayout.from_workload(w, 0.001), prev, table_starts=b.table_starts)
    prev.controller_reads, prev.raw_lines
import tracemalloc
tracemalloc.start()
prev = None
for b in batches(w, seed=0, n=int(sys.argv[2])):
    prev = analyze_batch(b.indices, layout, prev, controllers=4, interleave_B=4096, table_starts=b.table_starts)
    prev.controller_reads, prev.raw_lines  # every output materialised (the line view is lazy)
print(tracemalloc.get_traced_memory()[1], hwm_KiB())
"""


def _best_s(candidates: dict[Any, Callable[[], Any]], repeats: int) -> dict[Any, float]:
    """Best wall time of each candidate, run round-robin (load drifting during the run hits all)."""
    best = dict.fromkeys(candidates, float("inf"))
    for _ in range(repeats):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def aligned_table(values: np.ndarray, align_B: int = TABLE_ALIGN_B) -> np.ndarray:
    """A copy of ``values`` whose first byte sits on an ``align_B`` boundary."""
    buf = np.empty(values.nbytes + align_B, np.uint8)
    skip = -buf.ctypes.data % align_B
    out = buf[skip : skip + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


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
    idx = [batch.table(t) for t in range(tables)]
    off = batch.offsets[0]  # every table's bags alike: the bench's catalog workload has fixed bags
    rng = np.random.default_rng(0)
    weights = aligned_table(rng.standard_normal((BENCH_TABLE_ROWS, w.dim)).astype(np.float32))
    grads = rng.standard_normal((w.batch_size, w.dim)).astype(np.float32)
    lookups = sum(int(i.size) for i in idx)

    def lookup(fn):
        def go():
            for t in range(tables):
                fn(weights, idx[t], off)
        return go

    def update(fn):
        def go():
            for t in range(tables):
                fn(weights, idx[t], off, grads, LEARNING_RATE)
        return go

    numba.set_num_threads(min(BENCH_THREADS, numba.config.NUMBA_NUM_THREADS))
    embedding_bag_sum(weights, idx[0], off)  # compile / load from cache outside timing
    embedding_sgd_update(weights.copy(), idx[0], off, grads, LEARNING_RATE)
    candidates = {
        ("lookup", "numba"): lookup(embedding_bag_sum),
        ("lookup", "numpy"): lookup(embedding_bag_sum_ref),
        ("update", "numba"): update(embedding_sgd_update),
        ("update", "numpy"): update(embedding_sgd_update_ref),
    }
    torch_version = _torch_candidates(candidates, weights, idx, off, grads)
    best = _best_s(candidates, repeats)
    rows = [{"op": op, "impl": impl, "seconds": s} for (op, impl), s in best.items()]
    base = {r["op"]: r["seconds"] for r in rows if r["impl"] == "numpy"}
    torch_s = {r["op"]: r["seconds"] for r in rows if r["impl"] == "torch"}
    for r in rows:
        r["lookups_per_s"] = lookups / r["seconds"]
        r["speedup_vs_numpy"] = base[r["op"]] / r["seconds"]
        r["speedup_vs_torch"] = torch_s[r["op"]] / r["seconds"] if r["op"] in torch_s else None
    analysis = _analysis_ms(w, 2 if quick else ANALYSIS_BATCHES, repeats)
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
        "analysis": analysis,
        "stream": stream,
    }


def _torch_candidates(candidates, weights, idx, off, grads) -> str | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(BENCH_THREADS)
    tw = torch.from_numpy(aligned_table(weights))  # its own copy, aligned as ours
    tidx = [torch.from_numpy(i.copy()) for i in idx]
    toff = torch.from_numpy(off[:-1].copy())
    tg = torch.from_numpy(grads)
    bags = torch.repeat_interleave(torch.arange(grads.shape[0]), torch.from_numpy(np.diff(off)))
    fn = torch.nn.functional.embedding_bag

    def lookup():
        with torch.no_grad():
            for i in tidx:
                fn(i, tw, toff, mode="sum")

    def update():
        with torch.no_grad():
            for i in tidx:  # accumulate duplicates, then SGD (same semantics as our kernel)
                rows_u, inv = torch.unique(i, return_inverse=True)
                acc = torch.zeros(rows_u.numel(), tw.shape[1]).index_add_(0, inv, tg[bags])
                tw.index_add_(0, rows_u, acc, alpha=-LEARNING_RATE)

    candidates["lookup", "torch"] = lookup
    candidates["update", "torch"] = update
    return str(torch.__version__)


def _analysis_ms(w, n_batches: int, repeats: int) -> dict[str, Any]:
    """ms per full-size batch of :func:`analyze_batch`: the row view, and every output."""
    from cxlsim.workloads import TableLayout, analyze_batch, batches

    layout = TableLayout.from_workload(w)
    stream = [b.indices.reshape(w.tables, -1) for b in batches(w, seed=0, n=n_batches, dense=False)]
    warm = analyze_batch(stream[0], layout)  # compile / load from cache outside timing
    analyze_batch(stream[0], layout, warm, controllers=4, interleave_B=4096).raw_lines  # noqa: B018

    def rows_only():
        prev = None
        for idx in stream:
            prev = analyze_batch(idx, layout, prev)

    def everything():
        prev = None
        for idx in stream:
            prev = analyze_batch(idx, layout, prev, controllers=4, interleave_B=4096)
            prev.controller_reads, prev.raw_lines  # noqa: B018 (materialise the line view)

    best = _best_s({"rows": rows_only, "all": everything}, repeats)
    per_batch = {k: v / len(stream) for k, v in best.items()}
    return {"batches": len(stream), "rows_ms": per_batch["rows"] * 1e3, "all_outputs_ms": per_batch["all"] * 1e3}


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
    table = format_table(["op", "impl", "ms per batch", "Mlookups/s", "x numpy", "x torch"], [
        [r["op"], r["impl"], round(r["seconds"] * 1e3, 2), round(r["lookups_per_s"] / 1e6, 2),
         round(r["speedup_vs_numpy"], 2), "-" if r["speedup_vs_torch"] is None else round(r["speedup_vs_torch"], 2)]
        for r in d["kernels"]], title=title)
    a = d["analysis"]
    m = d["stream"]
    return (table + f"\n\naccess analysis of full-size {d['workload']} batches ({a['batches']}): "
            f"{a['rows_ms']:.1f} ms per batch for the row view (the timing model's), "
            f"{a['all_outputs_ms']:.1f} ms with lines, controller histograms and RAW lines"
            f"\nstreaming {d['workload']} at full size, {m['batches']} batches: peak RSS "
            f"{m['peak_rss_B'] / 2**20:,.0f} MiB (of it, arrays allocated while streaming: "
            f"{m['peak_traced_B'] / 2**20:,.0f} MiB peak), {m['wall_s']:.1f} s")
