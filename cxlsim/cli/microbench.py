"""Characterise one device preset as a LENS/OptaneStudy-style probe would.

Memory and storage presets (one module, idle for latencies, saturated for bandwidths):
  read/write latency (sequential, random), random read/write bandwidth per access size
  (64 B ... 4 KiB), and write amplification of 64 B writes rotating over regions of 4-64 KiB.
Links and switches: latency_ns and bw_GBps per direction.
GPUs: forward/backward time of an MLP from the timing table, e.g.
  cxlsim microbench gpu/rtx3090 --mlp 13-8192-2048-32 --batch 2048

Examples:
  cxlsim microbench pmem/optane-100
  cxlsim microbench pmem/paper --json
  cxlsim microbench pmem/paper --set write_bw_GBps=2.0
"""

from __future__ import annotations

import argparse

from cxlsim.config.catalog import load_preset
from cxlsim.config.yamlio import parse_set
from cxlsim.devices.registry import get_family
from cxlsim.errors import InputError
from cxlsim.reports.output import emit, fmt_num

HELP = "microbenchmark a device preset (latency, bandwidth vs access size, write amplification)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("preset", nargs="?", help="preset name family/name (or use --config FILE)")
    p.add_argument("--mlp", help="GPU presets: layer widths, e.g. 13-8192-2048-32")
    p.add_argument("--batch", type=int, help="GPU presets: batch size")


def run(args: argparse.Namespace) -> int:
    target = args.config or args.preset
    if not target:
        raise InputError("microbench: name a preset (e.g. pmem/optane-100) or give --config FILE")
    pre = load_preset(target, dict(parse_set(args.set)))
    family = get_family(pre.family)
    if family.microbench is None:
        raise InputError(f"{pre.name}: family {pre.family} has no microbenchmark")
    model = family.build(pre.params)
    options = {"mlp": args.mlp, "batch": args.batch}
    result = {"device": pre.name, **family.microbench(model, options)}
    emit(args, result, render_result)
    return 0


def render_result(d: dict) -> str:
    lines = [f"microbenchmark of {d['device']}"]
    for key, value in d.items():
        if key == "device":
            continue
        if isinstance(value, dict):
            inner = ", ".join(f"{k}: {fmt_num(v)}" for k, v in value.items())
            lines.append(f"  {key:<22} {inner}")
        else:
            lines.append(f"  {key:<22} {fmt_num(value)}")
    return "\n".join(lines)
