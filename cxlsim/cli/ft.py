"""Cluster-scale failure tolerance side by side: every scheme of a scenario on one seeded trace.

  cxlsim ft --scenario configs/ft/side-by-side.yaml
  cxlsim ft --scenario configs/ft/cpr-emulation.yaml --set failures.shards_fraction=0.25
  cxlsim ft --config configs/ft/ecrec.yaml --json
  cxlsim ft --scenario configs/ft/check-n-run.yaml --plot cnr.png

Per scheme: overhead_pct {save, load, lost, reschedule, total} (percent of the failure-free
training time), pls, checkpoint_bytes_written, peak_checkpoint_capacity_bytes, recovery_time_s,
throughput_during_recovery, and scheme figures under ``details`` (docs/ft.md lists the keys).
"""

from __future__ import annotations

import argparse
from typing import Any

from cxlsim.cli._args import figure_path
from cxlsim.config.yamlio import parse_set
from cxlsim.errors import InputError
from cxlsim.reports.output import emit, format_table

HELP = "failure-tolerance schemes side by side on one seeded failure trace (--scenario FILE)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenario", metavar="FILE", help="scenario YAML (configs/ft/*.yaml); --config also works")
    p.add_argument("--plot", metavar="FILE.png", type=figure_path(), help="also draw a side-by-side overhead bar chart")


def run(args: argparse.Namespace) -> int:
    from cxlsim.ft import load_scenario, run_scenario

    path = args.scenario or args.config
    if not path:
        raise InputError("ft: give a scenario with --scenario FILE (see configs/ft/)")
    sc = load_scenario(path, parse_set(args.set))
    data = run_scenario(sc)
    if args.plot:
        plot(data, args.plot)
    emit(args, data, render)
    return 0


def render(d: dict[str, Any]) -> str:
    rows = []
    for r in d["schemes"]:
        o = r["overhead_pct"]
        rows.append([r["scheme"], o["save"], o["load"], o["lost"], o["reschedule"], o["total"], r["pls"],
                     r["checkpoint_bytes_written"] / 1e9, r["peak_checkpoint_capacity_bytes"] / 1e9,
                     r["recovery_time_s"], r["throughput_during_recovery"], r["summary"]])
    head = (f"{d['scenario']}: {d['description']}\n"
            f"seed {d['seed']}; T_fail {d['t_fail_h']:.3g} h; storage {d['storage']['write_GBps']:.3g}/"
            f"{d['storage']['read_GBps']:.3g} GB/s write/read ({d['storage']['source']}); "
            f"{len(d['trace'])} interruptions in the trace: "
            + ", ".join(f"{e['kind']}@{e['time_h']:.2f}h" for e in d["trace"][:8])
            + (" ..." if len(d["trace"]) > 8 else ""))
    table = format_table(
        ["scheme", "save%", "load%", "lost%", "resched%", "total%", "PLS", "written GB", "peak GB",
         "recovery s", "thr.rec", "configuration"], rows)
    return head + "\n" + table


def plot(d: dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["scheme"] for r in d["schemes"]]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 4))
    bottom = [0.0] * len(names)
    for part in ("save", "load", "lost", "reschedule"):
        vals = [r["overhead_pct"][part] for r in d["schemes"]]
        ax.bar(names, vals, bottom=bottom, label=part)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_ylabel("overhead (% of failure-free training time)")
    ax.set_title(f"{d['scenario']} (seed {d['seed']})")
    ax.legend()
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
