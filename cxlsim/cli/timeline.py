"""Draw per-lane busy intervals of a system's batches, like the paper's Figure 12.

Lanes: the dataflow's steps on gpu, host_cpu, ndp (computing logic), ckpt_logic (checkpointing
logic), cxl.link / cxl.io (CXL.cache transfers, configuration); inside each GPU phase, the host's
dispatch of PyTorch's operators (host_cpu.dispatch; replay_host.dispatch where the GPU replays a
measured step) and the kernels and copies on the GPU's stream (gpu.stream); with several devices,
one lane each (gpu.1, ndp.2, ...) and every link direction of the switch tree (link.<node>.<up|down>);
tpu-ps: tensorcore, sparsecore or ps.cpu/network, ici.*, checkpoint.*. One time origin in every format: t = 0 at the start of the first measured batch; the window is
the measured batches (warm-up batches are simulated first and not drawn). The ``batch`` lane holds
each batch's span; the critical path (the intervals the Figure-11 breakdown charged) is its own row
in ascii, a ``critical path`` track with flow arrows in chrome, and black outlines in png/svg.
Formats:
  ascii   a Gantt chart in the terminal (default)
  chrome  trace-event JSON: open it at https://ui.perfetto.dev or chrome://tracing; slices carry
          batch, category and, where the model knows them, bytes_B, rows and device in their args;
          counter tracks give each link path's bandwidth (GB/s) and each lane's queue (ops waiting
          for it); otherData states the time origin
  png/svg a matplotlib figure (Okabe-Ito colours, labels on bars wide enough to hold one)
  cxlsim timeline --system cxl-b --workload rm1
  cxlsim timeline --system cxl --batches 2 --format chrome --out cxl.json
  cxlsim timeline --system cxl-d --format png --out cxl-d.png
"""

from __future__ import annotations

import argparse
import json
import sys

from cxlsim.cli._args import whole, workload_names
from cxlsim.cli._platform import add_platform_option
from cxlsim.config.bounds import MAX_SEED
from cxlsim.errors import InputError

HELP = "per-lane timeline of a system's batches (ascii, Chrome trace JSON, png, svg)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.systems.config import list_systems

    p.add_argument("--system", help="system name (" + ", ".join(list_systems()) + ") or YAML path")
    p.add_argument("--workload", help=f"workload name ({workload_names()}) or YAML path")
    p.add_argument("--batches", type=whole(1), default=2, help="batches to draw after warm-up (default 2)")
    p.add_argument("--warmup", type=whole(0), help="warm-up batches simulated first and not drawn")
    p.add_argument("--seed", type=whole(0, MAX_SEED), help="seed of the input streams")
    add_platform_option(p)
    p.add_argument("--format", choices=["ascii", "chrome", "png", "svg"], default="ascii")
    p.add_argument("--out", help="output file (required for png/svg; chrome defaults to stdout)")
    p.add_argument("--width", type=whole(20, 1000), default=100, help="ascii chart width in characters")


def run(args: argparse.Namespace) -> int:
    from cxlsim.api import simulate_from_args
    from cxlsim.reports import timeline as tl

    if args.format in ("png", "svg") and not args.out:
        raise InputError(f"timeline: --format {args.format} needs --out FILE.{args.format}")
    result = simulate_from_args(args)
    timeline = tl.from_result(result)
    meta = {"system": result.config.name, "workload": result.workload.name, "batches": result.config.batches,
            "first_batch": result.config.warmup_batches}
    if args.json or args.format == "chrome":
        data = tl.chrome_trace(timeline, meta)
        text = json.dumps(data)
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(text)
            print(f"wrote {args.out} ({len(data['traceEvents'])} events); open it in https://ui.perfetto.dev")
        else:
            sys.stdout.write(text + "\n")
        return 0
    if args.format == "ascii":
        chart = tl.ascii_gantt(timeline, args.width)
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(chart + "\n")
        print(chart)
        return 0
    path = tl.plot([timeline], args.out)
    print(f"wrote {path}")
    return 0
