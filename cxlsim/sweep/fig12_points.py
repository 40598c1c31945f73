"""The Figure 12 calibration points (SPEC §7) of a run, for ``docs/validation.md``.

    python -m cxlsim.sweep.fig12_points                       # both platforms, RM1, batch 2
    python -m cxlsim.sweep.fig12_points --platform prototype --json

For ``cxl-d``, ``cxl-b`` and ``cxl`` on RM1 (seed 1, two warm-up batches), the first measured
batch's steps as intervals from its ``begin`` (ms): the GPU phases, the lookup, the update, the
logs or redo record, and the batch time; the paper's values beside them (SPEC §7, its Figure 12).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cxlsim.reports.output import format_table
from cxlsim.systems.run import simulate

SYSTEMS = ("cxl-d", "cxl-b", "cxl")
PLATFORMS = ("prototype", "physical")
#: Steps reported, in the order of a batch (those a system does not run are left out).
STEPS = ("b_fwd", "lookup", "correction", "pooled", "t_mlp", "grads", "b_bwd", "mlp_opt", "update", "emb_log", "mlp_log",
         "redo_mlp", "redo")
#: The paper's Figure 12 points (SPEC §7), ms from the batch's start.
PAPER = {
    "cxl-d": {"b_fwd": (0.0, 0.6), "t_mlp": (0.6, 2.2), "update": (None, 4.9), "batch": 6.7},
    "cxl-b": {"b_fwd": (0.0, 0.6), "exposed_logging_ms": 0.3},
    "cxl": {"lookup": (1.0, 1.4), "mlp_log": (1.4, 2.2)},
}


def points(system: str, platform: str, workload: str = "rm1", seed: int = 1) -> dict[str, Any]:
    """The intervals (ms from the batch's begin) of batch 2's steps on device 0 and the batch time."""
    r = simulate(system, workload=workload, batches=1, warmup=2, seed=seed, sets=[("platform", platform)])
    recs = r.executor.records
    n = 2
    t0, t1 = r.batch_span(n)
    out: dict[str, Any] = {"system": system, "platform": platform, "batch_ms": (t1 - t0) / 1e6}
    for step in STEPS:
        rec = recs.get((step, n))
        if rec is not None and rec.end_ns == rec.end_ns:
            out[step] = ((rec.start_ns - t0) / 1e6, (rec.end_ns - t0) / 1e6)
    return out


def table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    head = ["system", "platform", "batch ms", *STEPS]

    def cell(v: Any) -> str:
        return "-" if v is None else f"{v[0]:.2f}–{v[1]:.2f}"

    return head, [[r["system"], r["platform"], f"{r['batch_ms']:.2f}", *[cell(r.get(s)) for s in STEPS]] for r in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.fig12_points", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", nargs="+", default=list(PLATFORMS))
    ap.add_argument("--workload", default="rm1")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = [points(s, p, args.workload) for p in args.platform for s in SYSTEMS]
    if args.json:
        json.dump({"paper": PAPER, "rows": rows}, sys.stdout, indent=1)
        print()
    else:
        print(format_table(*table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
