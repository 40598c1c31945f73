"""Which of the paper's conclusions survive the prototype platform's named assumptions (×0.5, ×2).

    python -m cxlsim.sweep.platform_study                        # RM1-RM4, 2 measured batches
    python -m cxlsim.sweep.platform_study --workloads rm1 --batches 2 --json study.json --markdown

The ``prototype`` platform (``configs/platforms/prototype.yaml``) fills what the paper leaves
unknown about its apparatus with named assumptions (:data:`ASSUMPTIONS`: the RISC-V host's clock,
IPC and MMIO cost, the i5-9600K's last-level cache in front of tables, the U200 links' efficiency and latency, the FPGA logic's outstanding requests,
the split of the 512 GB Optane into modules, the emulated PMEM's requests in flight). Each is set to
half and to twice its preset value (the emulated PMEM's requests in flight also to a quarter: 4,
the count Table 2's write bandwidth implies; the host's last-level cache also to 0: off; a
measured parameter, the U200's DMA efficiency per direction, instead to each of its sources'
readings, :attr:`Assumption.readings`), on every role of the prototype whose preset it belongs to (an
efficiency is capped at 1), and every system it reaches is simulated again; systems it does not
reach keep their base runs. For each variant the study reports the paper's conclusions
(:data:`CONCLUSIONS`) per workload and whether they still hold, plus each CXL system's speed-up
over ``pmem`` (geometric mean over the workloads).

The systems, workloads and the platform are those of ``configs/sweeps/platform-study.yaml``
(:func:`study_lists`). Runs are short (``--batches`` measured after one warm-up batch, full-size
workloads) and deterministic for a seed; ``--markdown`` prints the table ``docs/validation.md`` holds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cxlsim.errors import ConfigError, InputError
from cxlsim.reports.output import format_table
from cxlsim.sweep.lists import SweepLists, sweep_lists
from cxlsim.systems.config import load_system
from cxlsim.systems.run import simulate

#: The catalog sweep naming the study's systems, workloads and its one platform.
STUDY = "platform-study"
FACTORS = (0.5, 2.0)
BASELINE = "pmem"
#: The CXL systems whose speed-ups over :data:`BASELINE` the study reports.
CXL_SYSTEMS = ("cxl-d", "cxl-b", "cxl")
#: The systems :data:`CONCLUSIONS` and the speed-ups compare: the study's sweep must list them.
COMPARED = (BASELINE, "pcie", *CXL_SYSTEMS)


def study_lists() -> SweepLists:
    """The study's sweep (:data:`STUDY`): its systems (at least :data:`COMPARED`), workloads and one
    platform; :class:`~cxlsim.errors.ConfigError` naming the file and key otherwise."""
    lists = sweep_lists(STUDY, needs=("systems", "workloads", "platforms"))
    missing = [s for s in COMPARED if s not in lists.systems]
    if missing:
        raise ConfigError(lists.source, "base.systems", f"the study compares {', '.join(COMPARED)}: "
                          f"{', '.join(missing)} missing")
    if len(lists.platforms) != 1:
        raise ConfigError(lists.source, "base.set.platform", f"the study runs on one platform, got "
                          f"{', '.join(lists.platforms)}")
    return lists


@dataclass(frozen=True)
class Assumption:
    """A named assumption of the prototype: parameter ``key`` of preset ``preset`` (or, with
    ``count``, the module count of the roles holding that preset)."""

    name: str
    preset: str
    key: str
    what: str
    count: bool = False
    maximum: float | None = None
    #: the factors it is scaled by (an assumption with a second reading from a source adds the
    #: factor that gives it)
    factors: tuple[float, ...] = FACTORS
    #: the roles it is set on (empty: every role holding ``preset``)
    roles: tuple[str, ...] = ()
    #: a measured parameter is run at the readings of its sources instead of scaled: ``(label,
    #: ((key, value), ...))`` each, its variants then the labels (:meth:`variants`)
    readings: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    def variants(self) -> tuple[float | str, ...]:
        """Its variants: the readings' labels where it has readings, else the factors."""
        return tuple(label for label, _ in self.readings) or self.factors

    def sets(self, system: str, factor: float | str) -> list[tuple[str, Any]]:
        """The overrides that scale it by ``factor``, or set it to the reading labelled ``factor``,
        on ``system`` (none where it does not reach)."""
        cfg = load_system(system, [("platform", study_lists().platforms[0])])
        out: list[tuple[str, Any]] = []
        for role, dev in cfg.devices.items():
            if dev.preset.name != self.preset or (self.roles and role not in self.roles):
                continue
            if isinstance(factor, str):
                values = dict(self.readings)[factor]
                out += [(f"devices.{role}.params.{key}", value) for key, value in values]
                continue
            if self.count:
                out.append((f"devices.{role}.count", max(1, round(dev.count * factor))))
                continue
            v = dev.params[self.key] * factor
            if self.maximum is not None:
                v = min(v, self.maximum)
            out.append((f"devices.{role}.params.{self.key}", round(v) if isinstance(dev.params[self.key], int) else v))
        return out


#: The U200's PCIe 3.0 x16 raw rate per direction (16 lanes × 8 GT/s × 128/130 / 8), GB/s: the
#: measured DMA rates over it are the preset's efficiencies.
U200_RAW_GBPS = 16 * 8 * 128 / 130 / 8

ASSUMPTIONS = (
    Assumption("riscv_clock", "cpu/riscv-u200", "clock_GHz", "the RISC-V soft core's clock (100 MHz)"),
    Assumption("riscv_ipc", "cpu/riscv-u200", "software_ipc", "its IPC on host software (0.7)"),
    Assumption("riscv_mmio", "cpu/riscv-u200", "mmio_write_instructions", "its cost per MMIO register write (30)"),
    Assumption("u200_cxl_port_latency", "cxl_link/alveo-u200-gen3x16", "port_latency_ns",
               "the U200 CXL controller's port latency (62 ns)"),
    Assumption("u200_pcie_efficiency", "pcie/u200-gen3-x16", "h2d_efficiency_fraction",
               "the U200 PCIe DMA engine's efficiency per direction, measured (reference/cxl-measurements.md "
               "§6; the preset the midpoints, 9.44 GB/s host → card, 11.94 card → host): at each tool's reading",
               readings=(("xbutil validate 9.30/11.91 GB/s", (("h2d_efficiency_fraction", 9.30 / U200_RAW_GBPS),
                                                              ("d2h_efficiency_fraction", 11.91 / U200_RAW_GBPS))),
                         ("xbutil dmatest 9.58/11.96 GB/s", (("h2d_efficiency_fraction", 9.58 / U200_RAW_GBPS),
                                                             ("d2h_efficiency_fraction", 11.96 / U200_RAW_GBPS))))),
    Assumption("u200_pcie_dma_latency", "pcie/u200-gen3-x16", "dma_latency_ns", "its DMA latency (2 us)"),
    Assumption("ndp_outstanding", "ndp/alveo-u200", "outstanding_per_mc_count",
               "near-data logic: outstanding reads per memory controller (32)"),
    Assumption("ndp_adder_lanes", "ndp/alveo-u200", "adder_lanes",
               "near-data logic: fp32 adder lanes (64; pooling, gradient accumulation, the relaxed correction)"),
    Assumption("ckpt_read_outstanding", "ckpt_logic/alveo-u200", "read_outstanding_count",
               "checkpointing logic: outstanding DMA reads (32)"),
    Assumption("ckpt_write_outstanding", "ckpt_logic/alveo-u200", "write_outstanding_count",
               "checkpointing logic: outstanding DMA write bursts (32)"),
    Assumption("dcoh_occupancy", "cxl_protocol/fpga", "dcoh_occupancy_ns", "the FPGA DCOH's time per line (4 ns)"),
    Assumption("host_llc", "cpu/i5-9600k", "llc_capacity_B",
               "the i5-9600K's L3 given to table lines (9 MiB; ×0: no LLC, every host lookup reaches the media)",
               factors=(0.0, *FACTORS), roles=("host_cpu",)),
    Assumption("optane_modules", "pmem/optane-100", "count", "the 512 GB Optane split into modules (4)", count=True),
    Assumption("emulated_outstanding", "pmem/u200-emulated", "controller_outstanding_count",
               "the emulating DDR4 controller's requests in flight (16; ×0.25 = 4 is the reading of Table 2: "
               "its 0.1× DRAM write bandwidth is 4 × 256 B / 630 ns by Little's law)", factors=(0.25, *FACTORS)),
)


def _speedup(bt: dict[str, float], s: str) -> float:
    return bt[BASELINE] / bt[s]


#: The paper's comparisons, as predicates over one workload's batch times (ms) by system.
CONCLUSIONS: dict[str, tuple[str, Callable[[dict[str, float]], bool]]] = {
    "order": ("cxl <= cxl-b <= cxl-d <= pcie", lambda bt: bt["cxl"] <= bt["cxl-b"] <= bt["cxl-d"] <= bt["pcie"]),
    "cxl_beats_pmem": ("cxl faster than pmem", lambda bt: _speedup(bt, "cxl") > 1),
    "cxl_d_beats_pmem": ("cxl-d faster than pmem", lambda bt: _speedup(bt, "cxl-d") > 1),
    "cxl_d_beats_pcie": ("cxl-d faster than pcie (CXL.cache vs the software path)", lambda bt: bt["cxl-d"] < bt["pcie"]),
}


def batch_times(system: str, workload: str, sets: Sequence[tuple[str, Any]], batches: int, seed: int) -> float:
    r = simulate(system, workload=workload, batches=batches, warmup=1, seed=seed,
                 sets=[("platform", study_lists().platforms[0]), *sets], trace=False)
    return float(r.batch_time_ms["mean"])


def run(workloads: Sequence[str] | None = None, batches: int = 2, seed: int = 1,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The study (module docstring): ``{"base": {workload: {system: ms}}, "variants": [...]}``, on
    ``workloads`` (default: the study's)."""
    lists = study_lists()
    workloads = lists.workloads if workloads is None else workloads
    systems = lists.systems
    base = {w: {s: batch_times(s, w, [], batches, seed) for s in systems} for w in workloads}
    variants = []
    for a in ASSUMPTIONS:
        for f in a.variants():
            if progress:
                progress(f"{a.name} {_label(f)}")
            reached = {s: a.sets(s, f) for s in systems}
            bt = {w: {s: (batch_times(s, w, reached[s], batches, seed) if reached[s] else base[w][s])
                      for s in systems} for w in workloads}
            variants.append({"assumption": a.name, "what": a.what, "factor": f,
                             "systems": sorted(s for s in systems if reached[s]), "batch_time_ms": bt})
    return {"platform": lists.platforms[0], "workloads": list(workloads), "batches": batches, "seed": seed,
            "base": base, "variants": variants}


def verdicts(bt_by_workload: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Per conclusion, the workloads where it holds; per CXL system, its geomean speed-up over pmem."""
    out: dict[str, Any] = {k: [w for w, bt in bt_by_workload.items() if pred(bt)] for k, (_, pred) in CONCLUSIONS.items()}
    n = len(bt_by_workload)
    for s in CXL_SYSTEMS:
        out[f"speedup_{s}"] = math.exp(sum(math.log(_speedup(bt, s)) for bt in bt_by_workload.values()) / n)
    return out


def table(study: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Rows: the base, then every variant; columns: the conclusions (workloads where each holds,
    out of all) and the CXL systems' geomean speed-ups over pmem."""
    n = len(study["workloads"])
    head = ["variant", "reaches", *[CONCLUSIONS[k][0] for k in CONCLUSIONS],
            " / ".join(CXL_SYSTEMS) + f" vs {BASELINE}"]

    def row(label: str, reaches: str, bt: dict) -> list[Any]:
        v = verdicts(bt)
        holds = [f"{len(v[k])}/{n}" + ("" if len(v[k]) in (0, n) else f" ({' '.join(v[k])})") for k in CONCLUSIONS]
        return [label, reaches, *holds, " / ".join(f"{v[f'speedup_{s}']:.2f}" for s in CXL_SYSTEMS)]

    rows = [row("base", "", study["base"])]
    for var in study["variants"]:
        rows.append(row(f"{var['assumption']} {_label(var['factor'])}", ", ".join(var["systems"]), var["batch_time_ms"]))
    return head, rows


def _label(variant: float | str) -> str:
    """A variant as the table names it: ``×2`` for a factor, the reading's label for a reading."""
    return variant if isinstance(variant, str) else f"×{variant:g}"


def markdown(study: dict[str, Any]) -> str:
    head, rows = table(study)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.platform_study", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    try:
        workloads = study_lists().workloads
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ap.add_argument("--workloads", nargs="+", default=list(workloads), choices=workloads)
    ap.add_argument("--batches", type=int, default=2, help="measured batches per run, after one warm-up (default 2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="write the study as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/validation.md)")
    args = ap.parse_args(argv)
    if args.batches < 1:
        print("error: --batches must be >= 1", file=sys.stderr)
        return 2
    try:
        study = run(args.workloads, args.batches, args.seed,
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
