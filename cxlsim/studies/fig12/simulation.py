"""The Figure 12 points' runs: a batch's step intervals, and the batch size each paper duration
implies."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from cxlsim.search import smallest_reaching
from cxlsim.studies.fig12.settings import STEPS
from cxlsim.systems.run import simulate


def points(system: str, platform: str, workload: str = "rm1", seed: int = 1, batch: int | None = None) -> dict[str, Any]:
    """The intervals (ms from the batch's begin) of batch 2's steps on device 0 and the batch time
    (at the workload's batch size, or ``batch``)."""
    r = simulate(system, workload=workload, batches=1, warmup=2, seed=seed, sets=[("platform", platform)],
                 workload_sets={"batch_size": batch} if batch is not None else None, trace=False)
    recs = r.executor.records
    n = 2
    t0, t1 = r.batch_span(n)
    out: dict[str, Any] = {"system": system, "platform": platform, "batch_ms": (t1 - t0) / 1e6}
    for step in STEPS:
        rec = recs.get((step, n))
        if rec is not None and rec.end_ns == rec.end_ns:
            out[step] = ((rec.start_ns - t0) / 1e6, (rec.end_ns - t0) / 1e6)
    return out


def implied_batch(system: str, platform: str, read: Callable[[dict[str, Any]], float], paper_ms: float,
                  workload: str = "rm1", seed: int = 1, max_batch: int = 1468) -> tuple[float | None, float, float]:
    """The smallest batch size at which the model's ``read`` of a run reaches ``paper_ms`` (a
    bisection: every quantity read grows with the batch), with the model's value at that batch
    and at batch 1; ``None`` when even batch 1 exceeds the paper's value (a fixed cost, such as
    the MLP parameters' pull, already does), ``inf`` when ``max_batch`` (4 × RM1's) stays below it."""
    def value(b: int) -> float:
        return read(points(system, platform, workload, seed, batch=b))

    lo_v = value(1)
    if lo_v > paper_ms:
        return None, lo_v, lo_v
    top = value(max_batch)
    if top < paper_ms:
        return math.inf, top, lo_v
    hi = smallest_reaching(value, paper_ms, 1, max_batch)
    return hi, value(hi), lo_v
