"""Hold the symmetry reduction (:mod:`cxlsim.systems.symmetry`) against full detail.

    python -m cxlsim.sweep.symmetry_check                 # the table of docs/scale-out.md
    python -m cxlsim.sweep.symmetry_check --points 2x2 16x4 --workloads rm1 rm4

Each point runs one system on one workload at ``G`` GPUs × ``M`` CXL-MEMs twice, in full detail
(``topology.symmetry: off``) and reduced (``on``), with the same seed, batches and settings as the
scale-out study at scale (``row_sharded`` tables, a 32 MiB scratchpad, one switch level while the
devices fit its 15 ports, else two), and reports the batch time (throughput is samples over it, so
its relative error is the batch time's, inverted), the most utilised resource of each, their kinds
(the resource less its device number: ``ndp.3`` → ``ndp``) and wall time.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from dataclasses import dataclass
from typing import Any

from cxlsim.api import simulate

#: Validation points (GPUs, CXL-MEMs): two to sixteen groups, 1:1 and 4:1 GPUs per CXL-MEM.
POINTS = ((2, 2), (4, 4), (8, 2), (8, 8), (16, 4), (16, 16))
ONE_LEVEL_PORTS = 15


def settings(gpus: int, mems: int, symmetry: str) -> dict[str, Any]:
    """The overrides of one run (module docstring)."""
    return {"topology.gpus_count": gpus, "topology.cxl_mems_count": mems, "topology.tables_policy": "row_sharded",
            "topology.symmetry": symmetry, "devices.ndp.params.scratchpad_KiB": 32768,
            "devices.switch.levels": 1 if gpus + mems <= ONE_LEVEL_PORTS else 2}


def kind(resource: str | None) -> str | None:
    """A resource's kind: its name less a trailing device number (``ndp.3`` → ``ndp``); a link's,
    less its direction and which link of its level (``link.s2.2.up`` → ``link.s2``, a trunk below
    level 2; ``link.dev4.down`` → ``link.dev``, a device's link)."""
    if resource is None:
        return None
    if resource.startswith("link."):
        resource = re.sub(r"^link\.dev\d+", "link.dev", re.sub(r"\.(up|down)$", "", resource))
    return re.sub(r"(\.\d+)+$", "", resource)


@dataclass(frozen=True)
class Comparison:
    system: str
    workload: str
    gpus: int
    mems: int
    full_ms: float
    reduced_ms: float
    full_bottleneck: str | None
    reduced_bottleneck: str | None
    full_s: float
    reduced_s: float

    @property
    def error(self) -> float:
        """Relative error of the reduced batch time (reduced / full − 1)."""
        return self.reduced_ms / self.full_ms - 1

    @property
    def throughput_error(self) -> float:
        return self.full_ms / self.reduced_ms - 1

    @property
    def same_bottleneck(self) -> bool:
        return kind(self.full_bottleneck) == kind(self.reduced_bottleneck)


def compare(system: str, workload: str, gpus: int, mems: int, batches: int = 2, warmup: int = 1,
            seed: int = 1) -> Comparison:
    """Full detail against the reduction at one point (module docstring)."""
    out = {}
    for sym in ("off", "on"):
        t0 = time.perf_counter()
        d = simulate(system, workload, batches=batches, warmup=warmup, seed=seed, trace=False,
                     sets=settings(gpus, mems, sym)).to_dict()
        out[sym] = (d["batch_time_ms"]["mean"], (d["bottleneck"] or {}).get("resource"), time.perf_counter() - t0)
    (f_ms, f_b, f_s), (r_ms, r_b, r_s) = out["off"], out["on"]
    return Comparison(system, workload, gpus, mems, f_ms, r_ms, f_b, r_b, f_s, r_s)


def table(rows: list[Comparison]) -> str:
    head = ["system", "workload", "GPUs × CXL-MEMs", "groups", "batch time full (ms)", "reduced (ms)",
            "batch time error", "throughput error", "bottleneck full", "reduced", "wall full / reduced (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in rows:
        lines.append(f"| {c.system} | {c.workload} | {c.gpus} × {c.mems} | {min(c.gpus, c.mems)} | {c.full_ms:.2f} | "
                     f"{c.reduced_ms:.2f} | {100 * c.error:+.1f}% | {100 * c.throughput_error:+.1f}% | "
                     f"{c.full_bottleneck} | {c.reduced_bottleneck} | {c.full_s:.1f} / {c.reduced_s:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.symmetry_check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", default="cxl")
    ap.add_argument("--workloads", nargs="+", default=["rm1", "rm4"])
    ap.add_argument("--points", nargs="+", default=[f"{g}x{m}" for g, m in POINTS], help="GxM, e.g. 16x4")
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args(argv)
    rows = []
    for w in args.workloads:
        for pt in args.points:
            g, m = (int(x) for x in pt.lower().split("x"))
            rows.append(compare(args.system, w, g, m, args.batches, args.warmup))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
