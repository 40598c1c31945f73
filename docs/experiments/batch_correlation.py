"""Experiment behind docs/validation.md, "Consecutive batches are correlated": do the 95 % intervals
of a batch-time mean cover the long-run mean?

Runs each cell for ``N`` batches (default 400, no warm-up), takes batches 2 … N−1 as the long run,
and for every window of ``m`` consecutive batches (m = 5, 10, 20) asks whether the window's 95 %
interval covers the long run's mean: the textbook interval (independent batches) and the one
:mod:`cxlsim.systems.sampling` states (AR(1) variance inflation with the workload's
``reuse_prev_fraction``). Also prints the batch times' autocorrelation at lags 1–5. Windows
overlap, so the coverages are estimates from correlated windows (a few per cent of noise).

    PYTHONPATH=. python docs/experiments/batch_correlation.py [N] [workers]

About 4 minutes for the default cells on 2 cores.
"""

from __future__ import annotations

import multiprocessing as mp
import sys

import numpy as np

from cxlsim.api import simulate
from cxlsim.systems.sampling import ci95_half_width

CELLS = [("pcie", "rm1", "prototype"), ("dram", "rm1", "prototype"), ("tpu-ps", "rm3", "prototype"),
         ("cxl", "rm1", "physical"), ("pmem", "rm1", "prototype"), ("cxl-d", "rm3", "physical"),
         ("tpu-ps", "rm1", "prototype"), ("pmem", "rm4", "physical")]
WINDOWS = (5, 10, 20)


def run_cell(job: tuple[str, str, str, int]) -> tuple[tuple[str, str, str], np.ndarray, float]:
    system, workload, platform, n = job
    r = simulate(system, workload=workload, batches=n, warmup=0, sets=[("platform", platform)], trace=False)
    return (system, workload, platform), r.batch_times_ns / 1e6, r.sampling_rule.batch_correlation


def coverage(x: np.ndarray, m: int, phi: float) -> tuple[float, float]:
    """Share of the ``m``-batch windows of ``x`` whose interval covers ``x``'s mean: textbook, corrected."""
    mu = float(x.mean())
    hits = np.zeros(2)
    windows = 0
    for s in range(x.size - m + 1):
        w = x[s:s + m]
        if np.std(w) == 0:
            continue
        windows += 1
        for i, c in enumerate((0.0, phi)):
            hits[i] += abs(float(w.mean()) - mu) <= ci95_half_width(w, c)
    return tuple(hits / max(windows, 1))


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 400
    workers = int(argv[1]) if len(argv) > 1 else 2
    with mp.get_context("fork").Pool(workers) as pool:
        done = pool.map(run_cell, [(*c, n) for c in CELLS], chunksize=1)
    print("| platform | system | RM | batch-time sd | autocorrelation, lags 1–5 | "
          + " | ".join(f"{m}-batch coverage: textbook / corrected" for m in WINDOWS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(WINDOWS))
    for (system, workload, platform), times, phi in done:
        x = times[2:]
        y = x - x.mean()
        acf = [float((y[k:] * y[:-k]).sum() / (y * y).sum()) for k in range(1, 6)]
        cov = [coverage(x, m, phi) for m in WINDOWS]
        print(f"| {platform} | {system} | {workload} | {1e2 * x.std() / x.mean():.2f} % | "
              + " ".join(f"{a:+.2f}" for a in acf) + " | "
              + " | ".join(f"{a:.2f} / {b:.2f}" for a, b in cov) + " |")
    print(f"\n(reuse_prev_fraction {phi}: AR(1) lags {', '.join(f'{phi ** k:.2f}' for k in range(1, 6))}; "
          f"{n} batches a cell; {len(CELLS)} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
