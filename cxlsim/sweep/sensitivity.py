"""How the energy normalised to ``pmem`` moves when the weakest energy parameters vary.

    python -m cxlsim.sweep.sensitivity                       # RM1, 2 measured batches
    python -m cxlsim.sweep.sensitivity --workloads rm1 rm4 --batches 2 --json sens.json

Each system is simulated once per workload; every variant re-prices that run with dotted
overrides (``devices.<role>.params.<key>=v`` on every role whose preset is of the variant's family,
in the system and in the baseline alike). Energy parameters do not enter timing, so re-pricing
equals re-simulating with ``--set`` (``tests/test_energy.py`` checks it). Variants (ranges in
``docs/validation.md``, Energy section):

* ``pmem_background_W`` — PMEM idle power per module, media energy per bit as in the preset;
* ``pmem_budget_held`` — the same, with the media energy per bit re-derived as the preset does,
  (15 W average budget − idle) / bandwidth, so a module busy at full bandwidth still draws 15 W;
* ``link_pJ_per_bit`` — every PCIe and CXL link's energy per bit;
* ``switch_idle_W`` — the CXL switch's idle power;
* ``cpu_busy_W`` — the host CPU's busy package power (``tdp_W``; 10 W = its idle power: worker
  threads that block on their accesses instead of polling);
* ``gpu_idle_W`` — the GPU's idle board power.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from cxlsim.api import load_config, simulate
from cxlsim.energy import energy_per_batch
from cxlsim.reports.output import format_table, to_jsonable
from cxlsim.sweep.paper import dataflow_systems
from cxlsim.systems.config import SystemConfig

#: The paper sweep's op-graph systems (configs/sweeps/paper.yaml), in its order
SYSTEMS = dataflow_systems()
BASELINE = "pmem"
#: Optane DC PMM average power budget the PMEM presets derive their per-bit energies from (W).
PMEM_BUDGET_W = 15.0

Sets = list[tuple[str, Any]]


def _family_sets(cfg: SystemConfig, family: str, key: str, value: Any) -> Sets:
    return [(f"devices.{r}.params.{key}", value) for r, d in cfg.devices.items() if d.preset.family == family]


def _pmem_budget(cfg: SystemConfig, idle_W: float) -> Sets:
    """Idle power ``idle_W`` with the per-bit media energies scaled as the preset derives them,
    (budget − idle) / bandwidth: by (budget − idle_W) / (budget − the preset's idle)."""
    out: Sets = []
    for r, d in cfg.devices.items():
        if d.preset.family == "pmem":
            p = d.params
            scale = (PMEM_BUDGET_W - idle_W) / (PMEM_BUDGET_W - p.background_W)
            out += [(f"devices.{r}.params.background_W", idle_W),
                    (f"devices.{r}.params.read_media_pJ_per_bit", p.read_media_pJ_per_bit * scale),
                    (f"devices.{r}.params.write_media_pJ_per_bit", p.write_media_pJ_per_bit * scale)]
    return out


#: name -> (what it is, default, values, sets for one system's config and a value)
VARIANTS: dict[str, tuple[str, float, tuple[float, ...], Callable[[SystemConfig, float], Sets]]] = {
    "pmem_background_W": ("PMEM idle power per module (W)", 3.0, (1.0, 3.0, 6.0),
                          lambda c, v: _family_sets(c, "pmem", "background_W", v)),
    "pmem_budget_held": ("PMEM idle power, 15 W budget held (W)", 3.0, (1.0, 3.0, 6.0), _pmem_budget),
    "link_pJ_per_bit": ("PCIe/CXL link energy (pJ/bit)", 5.0, (1.0, 5.0, 10.0),
                        lambda c, v: _family_sets(c, "cxl_link", "energy_pJ_per_bit", v)
                        + _family_sets(c, "pcie", "energy_pJ_per_bit", v)),
    "switch_idle_W": ("CXL switch idle power (W)", 10.0, (0.0, 10.0, 20.0),
                      lambda c, v: _family_sets(c, "cxl_switch", "idle_power_W", v)),
    "cpu_busy_W": ("host CPU busy package power (W)", 95.0, (10.0, 50.0, 95.0),
                   lambda c, v: _family_sets(c, "cpu", "tdp_W", v)),
    "gpu_idle_W": ("GPU idle board power (W)", 30.0, (15.0, 30.0, 60.0),
                   lambda c, v: _family_sets(c, "gpu", "idle_power_W", v)),
}


def simulate_all(workload: str, batches: int, systems: tuple[str, ...] = SYSTEMS,
                 sets: dict[str, Sets] | None = None, **kw: Any) -> dict[str, Any]:
    """One run per system (``sets[system]``: its own overrides; ``kw`` to :func:`cxlsim.simulate`)."""
    return {s: simulate(s, workload=workload, batches=batches, trace=False, sets=(sets or {}).get(s), **kw)
            for s in systems}


def normalised(runs: dict[str, Any], variant: str | None = None, value: float | None = None,
               sets: dict[str, Sets] | None = None) -> dict[str, dict[str, Any]]:
    """Energy per batch of each run (re-priced for ``variant = value``; ``sets`` as the runs were
    simulated with) and its ratio to the baseline's."""
    energy = {}
    for s, r in runs.items():
        extra = VARIANTS[variant][3](r.config, value) if variant else []
        energy[s] = energy_per_batch(r, load_config(s, list((sets or {}).get(s) or []) + extra) if extra else None)
    base = energy[BASELINE]["total"]
    return {s: {"energy_J_per_batch": e, "normalized_to_baseline": e["total"] / base} for s, e in energy.items()}


def study(workloads: list[str], batches: int, sets: dict[str, Sets] | None = None, **kw: Any) -> dict[str, Any]:
    """Default energies and every variant's normalised energies, per workload."""
    out: dict[str, Any] = {}
    for w in workloads:
        runs = simulate_all(w, batches, sets=sets, **kw)
        base = normalised(runs, sets=sets)
        out[w] = {"batch_time_ms": {s: r.batch_time_ms["mean"] for s, r in runs.items()}, "default": base, "variants": {}}
        for name, (_, _, values, _) in VARIANTS.items():
            out[w]["variants"][name] = {
                str(v): {s: d["normalized_to_baseline"] for s, d in normalised(runs, name, v, sets).items()}
                for v in values}
    return out


def render(res: dict[str, Any]) -> str:
    lines = []
    for w, d in res.items():
        systems = list(d["default"])
        rows = [[s, d["batch_time_ms"][s], d["default"][s]["energy_J_per_batch"]["total"], d["default"][s]["normalized_to_baseline"]]
                + [d["default"][s]["energy_J_per_batch"]["by_component"][c] for c in d["default"][s]["energy_J_per_batch"]["by_component"]]
                for s in systems]
        comps = list(d["default"][systems[0]]["energy_J_per_batch"]["by_component"])
        lines.append(format_table(["system", "ms", "J/batch", f"x {BASELINE}"] + comps, rows, title=f"{w}: energy per batch"))
        lines.append("")
        rows = []
        for name, by_value in d["variants"].items():
            for v, norm in by_value.items():
                rows.append([f"{VARIANTS[name][0]} = {v}"] + [norm[s] for s in systems])
        lines.append(format_table(["variant"] + systems, rows, title=f"{w}: energy normalised to {BASELINE}"))
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cxlsim.sweep.sensitivity", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", nargs="+", default=["rm1"])
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)
    res = study(args.workloads, args.batches)
    sys.stdout.write(render(res) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(to_jsonable(res), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
