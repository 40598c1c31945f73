"""The cost of the statistics dump: one run with and one without ``--stats``, in this process.

  cxlsim bench stats           cxl on rm1, 5 measured batches after 1 warm-up, each timed 3 times
  cxlsim bench stats --quick   2 measured batches, timed once

Both variants of the media kernel are compiled first (a warm-up run of each, not timed); then each
repetition times the run without statistics and the run with them (same seed: the same
simulation; the process's CPU time, which other processes on a shared machine disturb less than
wall time), and the ratio of the fastest of each is printed against the budget (at most 10 %
slower with statistics, the dump built included). A run without statistics runs the kernel
variant compiled without them.
"""

from __future__ import annotations

import time

from cxlsim.reports.output import format_table

HELP = "wall time of a run with --stats against the same run without"
SYSTEM, WORKLOAD = "cxl", "rm1"
BUDGET_RATIO = 1.10  # with statistics at most 10 % slower


def _timed(stats: bool, batches: int) -> float:
    from cxlsim.api import simulate
    from cxlsim.reports.stats import run_stats

    t = time.process_time()
    r = simulate(SYSTEM, workload=WORKLOAD, batches=batches, warmup=1, seed=1, trace=False, stats=stats)
    if stats:
        run_stats(r)
    return time.process_time() - t


def run(args) -> dict:
    quick = getattr(args, "quick", False)
    batches, reps = (2, 1) if quick else (5, 3)
    _timed(False, 1)  # compile both kernel variants, make the streams
    _timed(True, 1)
    off, on = [], []
    for _ in range(reps):
        off.append(_timed(False, batches))
        on.append(_timed(True, batches))
    ratio = min(on) / min(off)
    return {"system": SYSTEM, "workload": WORKLOAD, "batches": batches, "repetitions": reps,
            "without_stats_s": min(off), "with_stats_s": min(on), "ratio": ratio,
            "budget_ratio": BUDGET_RATIO, "within_budget": ratio <= BUDGET_RATIO}


def render(d: dict) -> str:
    table = format_table(["run", "CPU s"], [["without --stats", d["without_stats_s"]],
                                             ["with --stats", d["with_stats_s"]]],
                         title=f"{d['system']} on {d['workload']}, {d['batches']} measured batches, best of "
                               f"{d['repetitions']}")
    ok = "within" if d["within_budget"] else "OVER"
    return table + f"\nwith/without = {d['ratio']:.3f} ({ok} the budget of {d['budget_ratio']:.2f})"
