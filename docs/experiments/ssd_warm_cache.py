"""Experiment behind docs/validation.md, "`ssd`: the vector cache's warm-up" (not a model option).

Runs the ``ssd`` system from a vector cache filled in its LRU steady state (Che's approximation)
instead of empty. Each row of table t at popularity rank k is resident, independently, with
probability 1 - exp(-F p_t(k) T_C): F fresh draws per table and batch (batch × lookups × (1 -
reuse_prev_fraction)), p_t the bounded power law of the generator (cxlsim/kernels/sampling.py),
T_C the time that makes the expected residents equal the capacity (every row when the tables fit).
Rows are inserted dirty (every row looked up is updated), the least popular first, so that the
hottest are the most recently used. Then the unchanged model runs.

    PYTHONPATH=. python docs/experiments/ssd_warm_cache.py rm1 8 [cache_GB]

Memory: the cache's state (4 B an entry: 0.5 GB for 16 GB of 128 B rows) and one float64 per row of
each distinct table size (RM4: 2.5 GB).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import cxlsim.systems.machine as machine_module
from cxlsim.api import simulate
from cxlsim.kernels.sampling import feistel_permute
from cxlsim.kernels.vector_cache import cache_access, new_cache
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.generator import table_keys
from cxlsim.workloads.layout import TableLayout

SEED = 1
BISECTIONS = 36  # log-space bisection of T_C over 18 decades: a ratio of 1 + 3e-9 at the end
RANK_BIN_GROWTH = 1.5  # ranks inserted in geometric bins, coldest bin first


def probs(n: int, s: float) -> np.ndarray:
    """P(rank k), k < n, of the generator's bounded power law with exponent ``s``."""
    a = 1 - s
    x = np.arange(1, n + 2, dtype=np.float64)
    return np.diff((x**a - 1) / ((n + 1.0) ** a - 1))


def main(name: str, batches: int, cache_GB: float) -> None:
    wl = load_workload(name)
    p = wl.params
    layout = TableLayout.from_workload(wl)
    cap = int(cache_GB * 1e9 // layout.row_B)
    fresh = p.batch_size * p.lookups_per_table * (1 - p.reuse_prev_fraction)
    sizes, counts = np.unique(layout.rows, return_counts=True)
    prob = {int(n): probs(int(n), p.popularity_exponent) for n in sizes}

    def resident(t: float) -> float:
        return sum(c * (-np.expm1(-fresh * prob[int(n)] * t)).sum() for n, c in zip(sizes, counts, strict=True))

    if resident(np.inf) <= cap:
        t_c = np.inf
    else:
        lo, hi = 1e-3, 1e15
        for _ in range(BISECTIONS):
            mid = np.sqrt(lo * hi)
            lo, hi = (mid, hi) if resident(mid) < cap else (lo, mid)
        t_c = hi
    hit = sum(c * (prob[int(n)] * -np.expm1(-fresh * prob[int(n)] * t_c)).sum()
              for n, c in zip(sizes, counts, strict=True)) / counts.sum()
    print(f"{name}: T_C {t_c:.0f} batches, fresh-draw hit {hit:.4f}, expected residents {resident(t_c) / cap:.3f} "
          "of capacity", flush=True)

    start = time.time()
    cache = new_cache(cap)
    keys = table_keys(SEED, layout.tables)
    rng = np.random.default_rng(12345)
    edges = [0]
    while edges[-1] < int(sizes.max()):
        edges.append(max(edges[-1] + 1, int(edges[-1] * RANK_BIN_GROWTH)))
    inserted = 0
    for hi_rank, lo_rank in zip(edges[::-1][:-1], edges[::-1][1:], strict=True):
        for t in range(layout.tables):
            n = int(layout.rows[t])
            a, b = lo_rank, min(hi_rank, n)
            if a >= b:
                continue
            ranks = a + np.nonzero(rng.random(b - a) < -np.expm1(-fresh * prob[n][a:b] * t_c))[0]
            rows = feistel_permute(ranks[::-1].copy(), n, keys[t]) + layout.row_base[t]
            cache_access(rows, True, *cache)
            inserted += rows.size
    print(f"prefilled {inserted} rows ({inserted / cap:.3f} of capacity) in {time.time() - start:.0f} s", flush=True)

    machine_module.new_cache = lambda capacity_rows, ways=16: cache
    r = simulate("ssd", name, batches=batches, warmup=0, seed=SEED, trace=False,
                 sets=[("pipeline.vector_cache_GB", cache_GB)])
    for i in range(batches):
        a, bd = r.activity[i], r.breakdowns_ns[i]
        phases = " ".join(f"{k}={v / 1e6:.1f}" for k, v in bd.items() if v > 1e5)
        print(i, f"{r.batch_times_ns[i] / 1e6:.1f} ms", f"hit {a.cache_hit_fraction:.4f}",
              f"write-backs {a.cache_writebacks}", phases, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 16.0)
