"""The paper's headline claims under each reading it leaves open (issue 32 item 9).

    python -m cxlsim.sweep.readings                         # RM1-RM4, 3 measured batches
    python -m cxlsim.sweep.readings --markdown --json readings.json

The paper (and the apparatus it measured) leaves open how to read several facts, and each reading
moves a headline more than some mechanisms do. :data:`READINGS` names them: the bag sizes (fixed
80 rows, or the DLRM benchmark's uniform sizes with distinct rows), the MLP parameters' width in
logs and records, the energy of the emulated PMEM (as built, DDR4; or as the Optane it emulates),
when ``cxl-b``'s embedding log starts, whether ``ssd``'s vector cache starts empty or in steady
state, the emulated PMEM's access unit (Optane's 256 B XPLine, or the delaying DDR4 controller's
64 B burst) and the host's last-level cache. Each has the reading the audited revision (0ad86b6)
used and another one.

Columns: ``audited`` (every reading as at 0ad86b6, with the two defects the audit found fixed:
the ``pcie`` bounce and the DRAM channels / PCIe rate of the i5-9600K); then each reading changed
on its own (the others kept audited); then ``defaults`` (cxlsim's defaults: every reading as this
revision argues it, ``docs/workloads.md``, ``docs/energy.md``, ``docs/timing-model.md``). Rows:
the headline claims (:data:`CLAIMS`) with the paper's value. A reading that does not reach a system
reuses the ``audited`` run of that system.

The systems, workloads and platform are those of ``configs/sweeps/readings.yaml``. Runs are short
(``--batches`` measured after two warm-up batches) and deterministic for a seed; ``--markdown``
prints the table ``docs/validation.md`` holds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from cxlsim.api import simulate
from cxlsim.errors import InputError
from cxlsim.reports.output import format_table
from cxlsim.sweep.lists import SweepLists, sweep_lists
from cxlsim.systems.config import SystemConfig, load_system

STUDY = "readings"
EMULATED = "pmem/u200-emulated"
Sets = list[tuple[str, Any]]


def study_lists() -> SweepLists:
    return sweep_lists(STUDY, needs=("systems", "workloads", "platforms"))


def _config(system: str) -> SystemConfig:
    return load_system(system, [("platform", study_lists().platforms[0])])


def _emulated(cfg: SystemConfig) -> bool:
    dev = cfg.devices.get("table_memory")
    return dev is not None and dev.preset.name == EMULATED


def _host_engine(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["embedding_engine"] == "host_cpu"


def _undo(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["persistence"] == "undo"


def _cached(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["vector_cache_GB"] > 0


def _persists(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["persistence"] != "none"


def _when(pred: Callable[[SystemConfig], bool], sets: Sets) -> Callable[[SystemConfig], Sets]:
    return lambda cfg: list(sets) if pred(cfg) else []


def _always(cfg: SystemConfig) -> bool:
    return True


#: The emulated PMEM as the audited revision read it: Optane's 256 B XPLine, its write-combining
#: buffer and read-modify-write, three 256 B units per channel (docs/devices-media.md).
AUDITED_EMULATED_UNIT: Sets = [
    ("devices.table_memory.params.access_unit_B", 256),
    ("devices.table_memory.params.parallel_units_count", 3),
    ("devices.table_memory.params.bank_read_occupancy_ns", 0.0),
    ("devices.table_memory.params.wcb_entries", 64),
    ("devices.table_memory.params.read_modify_write", True),
]


@dataclass(frozen=True)
class Reading:
    """A reading the paper leaves open: the overrides giving the audited revision's reading on a
    system (``audited``) and those giving the other reading (``other``); both empty where it does
    not reach the system, and empty for whichever is cxlsim's default."""

    name: str
    what: str
    audited: Callable[[SystemConfig], Sets]
    other: Callable[[SystemConfig], Sets]


READINGS = (
    Reading("bags: DLRM benchmark", "bags of max(1, round(r x 80)) distinct rows (the DLRM benchmark's generator: "
            "bag_size dlrm_uniform, bag_dedup) instead of 80 rows",
            lambda c: [], _when(_always, [("workload_overrides.bag_size", "dlrm_uniform"),
                                          ("workload_overrides.bag_dedup", True)])),
    Reading("MLP width: fp16", "the MLP parameters logged and checkpointed as fp16 instead of fp32",
            lambda c: [], _when(_persists, [("workload_overrides.mlp_param_width", "fp16")])),
    Reading("emulated energy: as emulated", "the emulated PMEM priced as the Optane it emulates instead of DDR4",
            _when(_emulated, [("energy.emulated_media", "as_built")]), lambda c: []),
    Reading("log start: lookup", "cxl-b's embedding log starts after the lookup instead of with its inputs",
            _when(_undo, [("pipeline.undo_log_start", "inputs")]), lambda c: []),
    Reading("vector cache: steady", "ssd's vector cache in steady state instead of empty",
            _when(_cached, [("pipeline.vector_cache_start", "empty")]), lambda c: []),
    Reading("emulated unit: 64 B", "the emulated PMEM's access unit is the DDR4 controller's 64 B burst "
            "instead of Optane's 256 B XPLine", _when(_emulated, AUDITED_EMULATED_UNIT), lambda c: []),
    Reading("host LLC", "the i5-9600K's 9 MB L3 in front of the host's table memory",
            _when(_host_engine, [("devices.host_cpu.params.llc_capacity_B", 0)]), lambda c: []),
)


def column_sets(column: str, cfg: SystemConfig) -> Sets:
    """The overrides of ``column`` (``audited``, a reading's name, or ``defaults``) on ``cfg``."""
    if column == "defaults":
        return []
    out: Sets = []
    for r in READINGS:
        out += r.other(cfg) if r.name == column else r.audited(cfg)
    return out


def columns() -> list[str]:
    return ["audited", *(r.name for r in READINGS), "defaults"]


def _run(job: tuple[str, str, tuple, int, int, str]) -> dict[str, Any]:
    system, workload, sets, batches, seed, platform = job
    r = simulate(system, workload=workload, batches=batches, warmup=2, seed=seed,
                 sets=[("platform", platform), *sets], trace=False)
    d = r.to_dict()
    return {"batch_ms": d["batch_time_ms"]["mean"], "checkpoint_ms": d["breakdown_ms"].get("checkpoint", 0.0),
            "energy_J": d["energy_J_per_batch"]["total"]}


def run(workloads: Sequence[str] | None = None, batches: int = 3, seed: int = 1, workers: int = 2,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The study: ``{"columns": [...], "results": {column: {workload: {system: {...}}}}}``."""
    lists = study_lists()
    workloads = list(lists.workloads if workloads is None else workloads)
    platform = lists.platforms[0]
    cfgs = {s: _config(s) for s in lists.systems}
    jobs: dict[tuple, tuple] = {}
    for col in columns():
        for s in lists.systems:
            sets = tuple(column_sets(col, cfgs[s]))
            for w in workloads:
                jobs.setdefault((s, w, sets), (s, w, sets, batches, seed, platform))
    keys = list(jobs)
    out: dict[tuple, dict] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for i, (k, res) in enumerate(zip(keys, pool.map(_run, [jobs[k] for k in keys]), strict=True)):
            out[k] = res
            if progress:
                progress(f"[{i + 1}/{len(keys)}] {k[0]} {k[1]} {dict(k[2]) or 'defaults'}")
    results = {col: {w: {s: out[(s, w, tuple(column_sets(col, cfgs[s])))] for s in lists.systems}
                     for w in workloads} for col in columns()}
    return {"platform": platform, "workloads": workloads, "batches": batches, "seed": seed,
            "columns": columns(), "readings": {r.name: r.what for r in READINGS}, "results": results}


def _geo(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _ratio(res: dict, num: str, den: str, key: str, workloads: Sequence[str]) -> float:
    return _geo([res[w][num][key] / res[w][den][key] for w in workloads])


@dataclass(frozen=True)
class Claim:
    """A headline claim: the paper's value (text) and cxlsim's under one column's results."""

    name: str
    paper: str
    value: Callable[[dict, Sequence[str]], float]
    unit: str = "×"


def _ex_ckpt(r: dict) -> float:
    return r["batch_ms"] - r["checkpoint_ms"]


CLAIMS = (
    Claim("cxl vs pmem speed-up (geomean)", "5.2×", lambda res, ws: _ratio(res, "pmem", "cxl", "batch_ms", ws)),
    Claim("cxl energy vs pmem (geomean)", "0.24× (76 % saving)",
          lambda res, ws: _ratio(res, "cxl", "pmem", "energy_J", ws)),
    Claim("cxl-d vs pcie speed-up (geomean)", "1.23× (23 % faster)",
          lambda res, ws: _ratio(res, "pcie", "cxl-d", "batch_ms", ws)),
    Claim("cxl vs cxl-b speed-up (geomean)", "1.14× (14 % faster)",
          lambda res, ws: _ratio(res, "cxl-b", "cxl", "batch_ms", ws)),
    Claim("cxl-b's gain over cxl-d, RM1 (ms)", "1.6 ms (Figure 12)",
          lambda res, ws: res["rm1"]["cxl-d"]["batch_ms"] - res["rm1"]["cxl-b"]["batch_ms"] if "rm1" in res
          else float("nan"), "ms"),
    Claim("pmem vs ssd, checkpoint excluded (RM1, RM2 geomean)", "949×",
          lambda res, ws: _geo([_ex_ckpt(res[w]["ssd"]) / _ex_ckpt(res[w]["pmem"]) for w in ("rm1", "rm2") if w in res])
          if any(w in res for w in ("rm1", "rm2")) else float("nan")),
    Claim("dram energy vs pmem (RM1, RM2 geomean)", "> 1 (DRAM consumes more)",
          lambda res, ws: _geo([res[w]["dram"]["energy_J"] / res[w]["pmem"]["energy_J"] for w in ("rm1", "rm2") if w in res])
          if any(w in res for w in ("rm1", "rm2")) else float("nan")),
)


def table(study: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Rows: the claims; columns: the paper, then every column of the study."""
    ws = study["workloads"]
    head = ["claim", "paper", *study["columns"]]
    rows = []
    for c in CLAIMS:
        vals = [c.value(study["results"][col], ws) for col in study["columns"]]
        fmt = (lambda v: f"{v:.2f} ms") if c.unit == "ms" else (lambda v: f"{v:.3g}×")
        rows.append([c.name, c.paper, *(fmt(v) for v in vals)])
    return head, rows


def markdown(study: dict[str, Any]) -> str:
    head, rows = table(study)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.readings", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        workloads = study_lists().workloads
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ap.add_argument("--workloads", nargs="+", default=list(workloads), choices=workloads)
    ap.add_argument("--batches", type=int, default=3, help="measured batches per run, after two warm-up (default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--json", metavar="FILE", help="write the study as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/validation.md)")
    args = ap.parse_args(argv)
    if args.batches < 1 or args.workers < 1:
        print("error: --batches and --workers must be >= 1", file=sys.stderr)
        return 2
    try:
        study = run(args.workloads, args.batches, args.seed, args.workers,
                    progress=lambda msg: print(f"  {msg}", file=sys.stderr, flush=True))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(study, fh, indent=1)
    print(markdown(study) if args.markdown else format_table(*table(study)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
