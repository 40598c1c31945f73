"""The Figure 12 calibration points (SPEC §7) of a run, for ``docs/validation.md``.

    python -m cxlsim.sweep.fig12_points                       # both platforms, RM1, batch 2
    python -m cxlsim.sweep.fig12_points --platform prototype --json
    python -m cxlsim.sweep.fig12_points --implied              # the batch each paper duration implies

For the systems of ``configs/sweeps/fig12.yaml`` (``cxl-d``, ``cxl-b`` and ``cxl``) on its first
workload (RM1; seed 1, two warm-up batches) and on its platforms, the first measured batch's steps
as intervals from its ``begin`` (ms): the GPU phases, the lookup, the update, the logs or redo
record, and the batch time; the paper's values beside them (SPEC §7, its Figure 12).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import Any

from cxlsim.errors import InputError
from cxlsim.reports.output import format_table
from cxlsim.search import smallest_reaching
from cxlsim.sweep.lists import SweepLists, sweep_lists
from cxlsim.systems.run import simulate

#: The catalog sweep naming the runs' systems, workload and platforms.
STUDY = "fig12"
#: Steps reported, in the order of a batch (those a system does not run are left out).
STEPS = ("b_fwd", "lookup", "correction", "pooled", "t_mlp", "grads", "b_bwd", "mlp_opt", "update", "emb_log", "mlp_log",
         "redo_mlp", "redo")
#: The paper's Figure 12 points (SPEC §7), ms from the batch's start.
PAPER = {
    "cxl-d": {"b_fwd": (0.0, 0.6), "t_mlp": (0.6, 2.2), "update": (None, 4.9), "batch": 6.7},
    "cxl-b": {"b_fwd": (0.0, 0.6), "exposed_logging_ms": 0.3},
    "cxl": {"lookup": (1.0, 1.4), "mlp_log": (1.4, 2.2)},
}


def study_lists() -> SweepLists:
    """The systems, workloads and platforms of :data:`STUDY` (each list needed)."""
    return sweep_lists(STUDY, needs=("systems", "workloads", "platforms"))


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


#: Figure 12 durations (ms) and the model quantity each is compared with: (system, what, paper ms,
#: how to read the model's value from a run's intervals). ``update`` is from the end of the GPU's
#: interaction/top-MLP window (2.2) to the update's end (4.9); ``redo`` from the update's end to the
#: next batch (4.9–6.7).
IMPLIED = (
    ("cxl-d", "lookup (0–0.6)", 0.6, lambda p: p["lookup"][1] - p["lookup"][0]),
    ("cxl-d", "interaction + top MLP (0.6–2.2)", 1.6, lambda p: p["t_mlp"][1] - p["t_mlp"][0]),
    ("cxl-d", "update (2.2–4.9)", 2.7, lambda p: p["update"][1] - p["t_mlp"][1]),
    ("cxl-d", "redo record (4.9–6.7)", 1.8, lambda p: p["batch_ms"] - p["update"][1]),
    ("cxl-d", "batch (6.7)", 6.7, lambda p: p["batch_ms"]),
    ("cxl-b", "batch (6.7 − 1.6)", 5.1, lambda p: p["batch_ms"]),
    ("cxl", "relaxed lookup (1.0–1.4)", 0.4, lambda p: p["lookup"][1] - p["lookup"][0]),
)


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


def table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    head = ["system", "platform", "batch ms", *STEPS]

    def cell(v: Any) -> str:
        return "-" if v is None else f"{v[0]:.2f}–{v[1]:.2f}"

    return head, [[r["system"], r["platform"], f"{r['batch_ms']:.2f}", *[cell(r.get(s)) for s in STEPS]] for r in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.fig12_points", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        lists = study_lists()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ap.add_argument("--platform", nargs="+", default=list(lists.platforms))
    ap.add_argument("--workload", default=lists.workloads[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--implied", action="store_true", help="the batch size each Figure 12 duration implies")
    args = ap.parse_args(argv)
    if args.implied:
        head = ["platform", "system", "paper duration", "paper ms", "implied batch", "model ms there", "model ms at batch 1"]
        out = []
        for p in args.platform:
            for system, what, ms, read in IMPLIED:
                b, v, v1 = implied_batch(system, p, read, ms, args.workload)
                shown = "none (above at batch 1)" if b is None else "> 1468" if b == math.inf else str(b)
                out.append([p, system, what, f"{ms:g}", shown, f"{v:.2f}", f"{v1:.2f}"])
        if args.json:
            json.dump([dict(zip(head, r, strict=True)) for r in out], sys.stdout, indent=1)
            print()
        else:
            print(format_table(head, out))
        return 0
    rows = [points(s, p, args.workload) for p in args.platform for s in lists.systems]
    if args.json:
        json.dump({"paper": PAPER, "rows": rows}, sys.stdout, indent=1)
        print()
    else:
        print(format_table(*table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
