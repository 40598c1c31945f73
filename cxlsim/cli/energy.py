"""Energy per training batch of one system, by component, normalised to a baseline system.

  cxlsim energy --system cxl --workload rm1
  cxlsim energy --system cxl-b --workload rm2 --baseline pmem --batches 5 --json
  cxlsim energy --system cxl --workload rm1 --set devices.table_memory.params.background_W=1

Both systems are simulated on the same workload, seed and batch counts; energy is the mean over
the measured batches (warm-up excluded). Components: gpu, cpu, dram, pmem, ssd, cxl_mem_logic
(near-data and checkpointing logic of the memory device), links (PCIe/CXL links and switches).
Each is static power of what the system provisions (memory modules by capacity) x batch time,
plus active power x busy time (GPU, CPU), plus energy per byte or operation; docs/energy.md.
A --set of devices.<role>.params.<key> also applies to the baseline when its <role> uses the same
preset. JSON (--json):
  {"system", "workload", "platform", "baseline", "energy_J_per_batch": {"total", "by_component": {...}},
   "normalized_to_baseline", "batch_time_ms", "accelerators", "samples_per_J", "not_normalized"}
tpu-ps adds its devices' components (tpu, hbm, param_server, nic, host; its interconnect is in
links). When the system and
the baseline run different accelerator counts (topology.gpus_count), normalized_to_baseline is
null and not_normalized says why: compare samples_per_J.
"""

from __future__ import annotations

import argparse

from cxlsim.cli._args import whole, workload_names
from cxlsim.cli._platform import add_platform_option
from cxlsim.config.bounds import MAX_SEED
from cxlsim.reports.output import emit, format_table

HELP = "energy per batch of a system by component (gpu, cpu, dram, pmem, ssd, logic, links), normalised to a baseline"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.systems.config import list_systems

    p.add_argument("--system", help="system name (" + ", ".join(list_systems()) + ") or YAML path")
    p.add_argument("--workload", help=f"workload name ({workload_names()}) or YAML path; default: the system's")
    p.add_argument("--baseline", default="pmem", help="system the total is normalised to (default: pmem, as the paper)")
    p.add_argument("--batches", type=whole(1), help="measured batches (default: the system's, usually 20)")
    p.add_argument("--warmup", type=whole(0), help="warm-up batches excluded from statistics")
    p.add_argument("--seed", type=whole(0, MAX_SEED), help="seed of the input streams")
    add_platform_option(p)


def run(args: argparse.Namespace) -> int:
    from cxlsim.cli._platform import sets_of
    from cxlsim.energy import energy_report
    from cxlsim.errors import InputError

    system = args.config or args.system
    if not system:
        raise InputError("name a system with --system (e.g. --system cxl) or give --config FILE")
    doc = energy_report(system, workload=args.workload, baseline=args.baseline, batches=args.batches,
                        warmup=args.warmup, seed=args.seed, sets=sets_of(args))
    emit(args, doc, render)
    return 0


def render(d: dict) -> str:
    e = d["energy_J_per_batch"]
    total = e["total"]
    rows = [[k, v, 100 * v / total if total else 0.0] for k, v in e["by_component"].items()]
    rows.append(["total", total, 100.0 if total else 0.0])
    norm = d["normalized_to_baseline"]
    versus = f"{norm:.3f} x {d['baseline']}" if norm is not None else f"not normalised: {d['not_normalized']}"
    per_J = f", {d['samples_per_J']:.4g} samples/J" if d.get("samples_per_J") else ""
    head = (f"{d['system']} on {d['workload']}, platform {d['platform']}, {d['accelerators']} accelerator(s): {total:.4g} J per batch "
            f"({d['batch_time_ms']:.3f} ms{per_J}), {versus}")
    return "\n".join([head, "", format_table(["component", "J/batch", "%"], rows)])
