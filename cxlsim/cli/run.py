"""Simulate training batches on one system and report batch time and its breakdown.

  cxlsim run --system cxl --workload rm1
  cxlsim run --system cxl-b --workload rm2 --batches 10 --json
  cxlsim run --system pmem --workload rm1 --set devices.table_memory.params.write_bw_GBps=2
  cxlsim run --config my-system.yaml --workload rm3
  cxlsim run --system cxl --workload rm2 --batches auto --ci 2%
  cxlsim run --system cxl --workload rm1 --stats --stats-file cxl-rm1.yaml

breakdown_ms attributes each batch's critical path to the paper's Figure 11 categories
(b_mlp: bottom MLP incl. optimizer; t_mlp: interaction + top MLP; transfer; embedding incl.
read-after-write stalls; checkpoint: exposed persistence) and sums to the mean batch time.
Warm-up batches are simulated first and excluded; their count is in config.warmup_batches.

--batches auto samples with stated confidence (SMARTS, Wunderlich et al., ISCA 2003): measured
batches are simulated until the 95 % confidence interval of the mean batch time (Student's t,
widened for the correlation of consecutive batches, which share most of their lookups: the
workload's reuse_prev_fraction) is within --ci of the mean (default 1 %), at least 5 and at
most 20 of them; the warm-up is then decided from the batch times too (MSER truncation, at
least 1 and at most 6 batches) unless --warmup N fixes it. Every result states its interval (batch_time_ci95_ms, its half-width) and
how its counts were picked (batches_mode: auto or fixed). Fixed counts run exactly as before.
"""

from __future__ import annotations

import argparse

from cxlsim.cli._args import percent, whole, whole_or_auto, workload_names
from cxlsim.cli._platform import add_platform_option
from cxlsim.cli._stats import add_stats_options, check_stats_file, wants_stats
from cxlsim.config.bounds import MAX_SEED
from cxlsim.reports.output import emit, format_table

HELP = "simulate a system on a workload: batch time, Figure-11 breakdown, RAW stall, log gap"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.systems.config import list_systems

    p.add_argument("--system", help="system name (" + ", ".join(list_systems()) + ") or YAML path")
    p.add_argument("--workload", help=f"workload name ({workload_names()}) or YAML path; default: the system's")
    p.add_argument("--batches", type=whole_or_auto(1), metavar="N|auto",
                   help="measured batches, or auto: until the 95%% interval of the mean is within --ci "
                        "(default: the system's, usually 20)")
    p.add_argument("--warmup", type=whole_or_auto(0), metavar="N|auto",
                   help="warm-up batches excluded from statistics (with --batches auto: decided from the "
                        "batch times unless given)")
    p.add_argument("--ci", type=percent, metavar="PCT",
                   help="--batches auto's target: half-width of the 95%% interval relative to the mean "
                        "(default 1%%)")
    p.add_argument("--seed", type=whole(0, MAX_SEED), help="seed of the input streams")
    add_platform_option(p)
    p.add_argument("--symmetry", choices=("off", "on", "auto"),
                   help="topology.symmetry: simulate one group of identical GPUs and CXL-MEMs and load the shared "
                   "fabric analytically (on: or refuse, with the reason; auto: from 32 GPUs on, full detail below; "
                   "off: full detail); default: the system's, auto")
    add_stats_options(p)


def run(args: argparse.Namespace) -> int:
    from cxlsim.api import simulate_from_args

    check_stats_file(args)
    result = simulate_from_args(args)
    doc = result.to_dict()
    if wants_stats(args):
        from cxlsim.reports.stats import render as render_stats
        from cxlsim.reports.stats import run_stats, write_stats

        stats = run_stats(result)
        if args.stats_file:
            write_stats(stats, args.stats_file)
        if args.stats:
            doc["stats"] = stats
            emit(args, doc, lambda d: render(d) + "\n\n" + render_stats(d["stats"]))
            return 0
    emit(args, doc, render)
    return 0


def render(d: dict) -> str:
    bt = d["batch_time_ms"]
    lines = [
        f"{d['system']} on {d['workload']}, platform {d['platform']}: {d['batches']} batches (after {d['config']['warmup_batches']} warm-up"
        f"{', chosen by auto' if d.get('batches_mode') == 'auto' else ''}), seed {d['seed']}",
        f"  batch time   mean {bt['mean']:.3f} ms   p50 {bt['p50']:.3f} ms   p99 {bt['p99']:.3f} ms",
        f"  95% CI       {ci_text(d)}",
        f"  throughput   {d['throughput_samples_per_s']:,.0f} samples/s",
        f"  RAW stall    {d['raw_stall_ms']:.3f} ms per batch (in embedding)",
        f"  MLP log gap  {d['mlp_log_gap_batches']} batches",
    ]
    llc = d.get("host_llc")
    if llc and llc.get("hit_fraction") is not None:
        look = llc.get("lookup_hit_fraction")
        lines.append(f"  host LLC     {100 * llc['hit_fraction']:.1f}% of lines hit"
                     + (f" ({100 * look:.1f}% of the lookup's)" if look is not None else "")
                     + f", {llc['writeback_MB_per_batch']:.2f} MB written back per batch")
    dev = d.get("devices") or {}
    if dev and (dev.get("gpus", 1) > 1 or dev.get("cxl_mems", 1) > 1):
        mems = dev["cxl_mems"]
        lines.append(f"  devices      {dev['gpus']} GPU(s), {mems} memory device{'s' if mems > 1 else ''}")
    sym = d.get("symmetry") or {}
    if sym.get("reduced"):
        lines.append(f"  symmetry     one of {sym['groups']} identical groups simulated in detail, the fabric's other "
                     "traffic analytic (docs/scale-out.md)")
    if d.get("bottleneck"):
        top = ", ".join(f"{k} {100 * v:.0f}%" for k, v in list(d["utilisation"].items())[:4])
        lines.append(f"  busiest      {top}")
    lines.append("")
    rows = [[k, v, 100 * v / bt["mean"] if bt["mean"] else 0.0] for k, v in d["breakdown_ms"].items()]
    lines.append(format_table(["critical path", "ms", "%"], rows))
    if d.get("energy_J_per_batch"):
        e = d["energy_J_per_batch"]
        lines.append("")
        lines.append(format_table(["energy", "J/batch"], [[k, v] for k, v in e["by_component"].items()] + [["total", e["total"]]]))
    return "\n".join(lines)


def ci_text(d: dict) -> str:
    """The 95 % interval of a result's mean batch time, and auto's target when it had one."""
    hw, frac = d.get("batch_time_ci95_ms"), d.get("batch_time_ci95_fraction")
    s = d.get("sampling") or {}
    period = int(s.get("period_batches", 1))
    if hw is not None:
        text = f"± {hw:.3f} ms (± {100 * frac:.2f}%)" + (f" over periods of {period} batches" if period > 1 else "")
    elif s.get("batch_correlation", 0) >= 1:
        text = "n/a (every batch repeats the previous one's lookups: one sample)"
    elif period > 1:
        text = f"n/a (fewer than 2 whole periods of {period} batches)"
    else:
        text = "n/a (one batch)"
    if s.get("mode") == "auto":
        text += f"; auto target ± {100 * s['ci_target_fraction']:g}%"
        if frac is not None and frac > s["ci_target_fraction"]:
            text += f", not met within {s['max_batches']} batches"
    return text
