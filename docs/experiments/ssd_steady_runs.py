"""``ssd`` at 20 batches from each vector-cache start (docs/validation.md, "`ssd`: the vector cache's steady state").

For each workload and ``pipeline.vector_cache_start`` (``empty``: the cold start, the model before
the option; ``steady``: the default), one ``cxlsim run --system ssd --batches 20`` on the platform,
one run at a time: the mean batch time, the 95 % interval's half-width (absolute and relative to the
mean: the 1 % target of ``--batches auto``), the vector cache's lookup hit fraction and write-backs
a batch over the measured batches, and the run's wall and CPU seconds (the steady state's build
included).

    PYTHONPATH=. python docs/experiments/ssd_steady_runs.py [--platform prototype] [--workloads rm1 rm4]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from cxlsim.api import simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platform", default="prototype")
    ap.add_argument("--workloads", nargs="+", default=["rm1", "rm2", "rm3", "rm4"])
    ap.add_argument("--starts", nargs="+", default=["empty", "steady"])
    ap.add_argument("--batches", default="20")
    a = ap.parse_args()
    print("| RM | start | batches | mean (ms) | 95 % half-width (ms) | (% of mean) | hit fraction | write-backs a batch "
          "| wall / CPU (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for wl in a.workloads:
        for start in a.starts:
            w0, c0 = time.perf_counter(), time.process_time()
            r = simulate("ssd", wl, batches=a.batches if a.batches == "auto" else int(a.batches), trace=False,
                         sets=[("platform", a.platform), ("pipeline.vector_cache_start", start)])
            w1, c1 = time.perf_counter() - w0, time.process_time() - c0
            d = r.to_dict()
            hits = [x.cache_hit_fraction for x in r.activity]
            wb = np.mean([x.cache_writebacks for x in r.activity])
            hw = d["batch_time_ci95_ms"]
            frac = d["batch_time_ci95_fraction"]
            print(f"| {wl.upper()} | {start} | {d['batches']} (+{d['warmup_batches']}) | {d['batch_time_ms']['mean']:.1f} "
                  f"| {hw:.2f} | {100 * frac:.2f} % | {np.mean(hits):.4f} | {wb / 1e3:.1f} k | {w1:.0f} / {c1:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
