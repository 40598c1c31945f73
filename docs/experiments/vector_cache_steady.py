"""Check of ``pipeline.vector_cache_start: steady`` (docs/validation.md, "`ssd`: the vector cache's steady state").

The vector cache alone (:func:`cxlsim.kernels.vector_cache.cache_access`, no timing model) fed with
the generator's real index streams, batch by batch as the ``ssd`` system feeds it: the lookup reads
every index (table-major), then the update writes the batch's distinct rows ascending (the i5-9600K's
``update_table_order: forward``). Two runs on the same workload and seed:

- **long**: from an empty cache, for ``--long`` batches (default 50,000: 3.2 × RM1's T_C of 15.6 k
  batches; an LRU set's state is exact once its ``ways`` most recent rows all came after the start,
  so the state has then forgotten the empty start);
- **steady**: the prefilled state (:func:`cxlsim.kernels.vector_cache_steady.steady_state`, timed),
  then the same stream from batch 0 for ``--next`` batches.

Sets are independent (LRU acts within a set), so the long run keeps only the lookups that fall in
every ``--stride``-th set (a ``--stride`` of 64 keeps 1.6 % of the cache's work; the generator's
remains: ≈ 13 ms a RM1 batch), and the steady run is measured on the same sets. Those sets' hit
fraction is not the whole cache's (RM1 from the steady start: 0.9894 against 0.9918 over every set,
flat over 200 batches in both: the multiplicative hash of contiguous row ranges does not load every
residue class of sets alike), so the comparison is of the same sets from both starts; the steady run
is also measured over every set. Batch 0 of the stream copies nothing (no previous batch), so its
hit fraction is below the stationary one: the steady run's means are over batches 1 on.

    PYTHONPATH=. python docs/experiments/vector_cache_steady.py rm1 [--long 50000] [--next 200] [--stride 64]

Prints the long run's hit fraction in windows of ``--window`` batches, the steady state's build
time, empty slots and Che's analytic hit fraction, and the two measured hit fractions.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cxlsim.kernels.vector_cache import HASH_MULTIPLIER, cache_access, new_cache
from cxlsim.kernels.vector_cache_steady import che_hit_fraction, steady_state
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.generator import batches, table_keys
from cxlsim.workloads.layout import TableLayout

SEED = 1
CACHE_GB = 16.0  # configs/ssd.yaml

def global_rows(b, row_base) -> np.ndarray:
    """Batch ``b``'s lookups as global row ids, table after table (the generator's flat layout)."""
    return np.concatenate([b.table(t) + row_base[t] for t in range(b.tables)])



def set_of(rows: np.ndarray, n_sets: int) -> np.ndarray:
    """The vector cache's set of each row (its ``_set_of``, vectorised)."""
    return ((rows.astype(np.uint64) * HASH_MULTIPLIER) >> np.uint64(20)) % np.uint64(n_sets)


def feed(cache, stream, n: int, stride: int, n_sets: int, report=None) -> np.ndarray:
    """Feed ``n`` batches of ``stream`` (lookup reads, then the update's ascending distinct rows):
    ``[n, 2]`` lookups and hits per batch in the sets ``≡ 0 mod stride``."""
    out = np.zeros((n, 2), np.int64)
    for i in range(n):
        b = next(stream)
        rows = global_rows(b, ROW_BASE)
        if stride > 1:
            rows = rows[set_of(rows, n_sets) % np.uint64(stride) == 0]
        hit, _ = cache_access(rows, False, *cache)
        cache_access(np.unique(rows), True, *cache)
        out[i] = rows.size, int(np.count_nonzero(hit))
        if report is not None:
            report(i, out)
    return out


def main() -> None:
    global ROW_BASE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--long", type=int, default=50_000)
    ap.add_argument("--next", type=int, default=200)
    ap.add_argument("--stride", type=int, default=64)
    ap.add_argument("--window", type=int, default=2_500)
    ap.add_argument("--cache-GB", type=float, default=CACHE_GB)
    ap.add_argument("--part", choices=("all", "steady", "long"), default="all", help="run one part only")
    a = ap.parse_args()
    wl = load_workload(a.workload)
    p = wl.params
    layout = TableLayout.from_workload(wl)
    ROW_BASE = layout.row_base
    cap = int(a.cache_GB * 1e9 // layout.row_B)
    positions = p.batch_size * p.lookups_per_table
    t_c, che = che_hit_fraction(layout.rows, p.popularity_exponent, positions, p.reuse_prev_fraction, cap)
    print(f"{a.workload}: {layout.total_rows} rows, capacity {cap} rows; Che: T_C {t_c:.0f} batches, "
          f"lookup hit fraction {che:.5f}", flush=True)

    n_sets = new_cache(cap)[0].n_sets
    steady_hit = None
    if a.part != "long":
        steady_hit = steady_part(a, wl, layout, cap, positions)
    if a.part != "steady":
        long_part(a, wl, cap, n_sets, steady_hit)


def steady_part(a, wl, layout, cap: int, positions: int) -> float:
    p = wl.params
    start = time.perf_counter()
    state, empty = steady_state(layout.rows, layout.row_base, table_keys(SEED, layout.tables),
                                p.popularity_exponent, positions, p.reuse_prev_fraction, cap, seed=SEED)
    built = time.perf_counter() - start
    n_sets = state[0].n_sets
    print(f"steady state built in {built:.1f} s; {empty} empty slots of {n_sets * state[0].ways}", flush=True)
    copy = (state[0].copy(),)
    full = feed(state, batches(wl, seed=SEED, dense=False), min(a.next, 20), 1, n_sets)
    print(f"steady, every set, batches 1-{full.shape[0] - 1}: hit {full[1:, 1].sum() / full[1:, 0].sum():.5f} "
          f"(batch 0: {full[0, 1] / full[0, 0]:.5f})", flush=True)
    sub = feed(copy, batches(wl, seed=SEED, dense=False), a.next, a.stride, n_sets)
    steady_hit = sub[1:, 1].sum() / sub[1:, 0].sum()
    print(f"steady, sets 0 mod {a.stride}, batches 1-{a.next - 1}: hit {steady_hit:.5f}", flush=True)
    return steady_hit


def long_part(a, wl, cap: int, n_sets: int, steady_hit: float | None) -> None:
    t0 = time.perf_counter()

    def report(i: int, out: np.ndarray) -> None:
        if (i + 1) % a.window == 0:
            w = out[i + 1 - a.window:i + 1]
            print(f"long, batches {i + 1 - a.window}-{i}: hit {w[:, 1].sum() / w[:, 0].sum():.5f} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)

    long = feed(new_cache(cap), batches(wl, seed=SEED, dense=False), a.long, a.stride, n_sets, report)
    tail = long[-a.window:]
    long_hit = tail[:, 1].sum() / tail[:, 0].sum()
    print(f"long run's last {a.window} batches: hit {long_hit:.5f}", flush=True)
    if steady_hit is not None:
        print(f"steady {steady_hit:.5f} against long {long_hit:.5f}: difference {steady_hit - long_hit:+.5f}")


if __name__ == "__main__":
    main()
