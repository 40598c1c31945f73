"""Measure this machine with PyTorch and write a device preset from the measurement.

  cxlsim measure host    the framework's host costs: fit the cpu family's instruction counts

`measure host` runs, with torch on the machine at hand (CPU tensors, or CUDA with --device cuda):
  1. microbenchmarks on tiny tensors, each counted as cxlsim's op list counts it (an operator from
     Python with and without autograd recording, a nested C++ operator, an autograd node, the
     backward() call, an nn.Module call, SGD.step and zero_grad per call and per tensor, a tensor
     attribute such as requires_grad_, an element of torch.tensor(python_list));
  2. the step cxlsim models (cxlsim/workloads/dlrm_ops.py: bottom MLP, pooled vectors handed off, dot
     interaction with the reference's Python-list indices, top MLP, BCELoss, zero_grad, backward,
     SGD, the loss read back) at each of --fit-workloads' and --check-workloads' layers and tables
     but batch 2 and widths <= 16 (host time only), timed per part;
  3. the fit: non-negative least squares of the step's parts on --fit-workloads with the
     microbenchmarks (scaled by the in-step factor: loops run warm, the step cold), counted by the
     op list; --repeat times, for the spread; the check workloads' parts are out of sample;
  4. the reference loop of dlrm_s_pytorch.py (DLRM_Net with sparse EmbeddingBags, one SGD over all
     parameters) at --workload's shape and --batch under torch.profiler: operators and backward
     nodes per part (b_fwd, t_mlp's parts, b_bwd, mlp_opt), and their CPU time (on CPU tensors the
     kernels' compute is in it).
Tables have --rows-per-table rows (default 1000): host costs do not depend on table rows.

It writes a cpu preset (--out, default ./<--name>.yaml) in devices/cpu/*.yaml's schema: the fitted
counts at the host's clock and software_ipc (count = µs × ratio × 1000 × clock_GHz × software_ipc),
every other parameter from --base (default cpu/i5-9600k), each `source:` naming this CPU, torch and
the fit. --scale-to-base --ratio R writes the counts for the --base host instead, R times slower per
thread than this one (the single-thread ratio: name its source in the docs); without it the preset
is this machine's (--clock-ghz, default the OS's MHz; software_ipc 1.0).

Examples:
  cxlsim measure host --repeat 5
  cxlsim measure host --workload rm2 --batch 128 --json > host.json
  cxlsim measure host --scale-to-base --ratio 1.1 --name i5-9600k-measured --out /tmp/i5.yaml
  cxlsim measure host --device cuda --repeat 3
torch is optional: pip install 'cxlsim[measure]'; without it this command exits 2.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import Any

from cxlsim.cli._args import number, whole
from cxlsim.errors import InputError
from cxlsim.reports.output import emit, format_table

HELP = "measure this machine with PyTorch (host: the framework's per-operator costs) and write a preset"
TARGETS = ("host",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", choices=TARGETS, help="what to measure: host (the framework's host costs)")
    p.add_argument("--workload", default="rm1", help="workload whose shape the step takes (default rm1)")
    p.add_argument("--batch", type=whole(1), help="batch of the reference step (default: the workload's)")
    p.add_argument("--fit-workloads", default="rm1,rm4",
                   help="workloads whose modelled step (at batch 2, widths <= 16) the fit uses (default rm1,rm4)")
    p.add_argument("--check-workloads", default="rm2",
                   help="workloads whose modelled step only checks the fit (out of sample; default rm2; '' none)")
    p.add_argument("--rows-per-table", type=whole(1), default=1000,
                   help="rows of each embedding table (default 1000; host costs do not depend on it)")
    p.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    p.add_argument("--repeat", type=whole(1, 100), default=5, help="repeats of the fit and the check (default 5)")
    p.add_argument("--iterations", type=whole(1), default=20, help="steps per check run (default 20)")
    p.add_argument("--seconds", type=number(0, exclusive_minimum=True), default=0.1,
                   help="seconds per microbenchmark sample (default 0.1; the least of 7 samples' means)")
    p.add_argument("--threads", type=whole(1), default=1, help="torch intra-op threads (default 1)")
    p.add_argument("--no-reference", action="store_true", help="skip the profiled reference step (quicker)")
    p.add_argument("--base", default="cpu/i5-9600k", help="cpu preset the other parameters come from (default cpu/i5-9600k)")
    p.add_argument("--scale-to-base", action="store_true",
                   help="write counts for the --base host, --ratio times slower per thread than this one")
    p.add_argument("--ratio", type=number(0, exclusive_minimum=True), default=1.0,
                   help="with --scale-to-base: single-thread time ratio base / this host (default 1)")
    p.add_argument("--clock-ghz", type=number(0, exclusive_minimum=True),
                   help="this host's clock for its own preset (default: /proc/cpuinfo's MHz)")
    p.add_argument("--name", default="measured-host", help="preset name (file stem; default measured-host)")
    p.add_argument("--out", help="preset YAML to write (default ./<name>.yaml); '-' writes none")


def run(args: argparse.Namespace) -> int:
    from cxlsim.calibrate.host_measure import TorchMissing, measure_host
    from cxlsim.devices.registry import get_family, load_preset
    from cxlsim.workloads.catalog import load_workload
    from cxlsim.workloads.dlrm_ops import DlrmStep, StepOptions, StepShapes

    if args.set or args.config:
        raise InputError("measure host: --config and --set do not apply (the measurement has no configuration)")
    base = load_preset(args.base)
    if base.family != "cpu":
        raise InputError(f"measure host: --base {args.base} is a {base.family} preset, not a cpu one")
    if args.ratio != 1.0 and not args.scale_to_base:
        raise InputError("measure host: --ratio applies with --scale-to-base only")
    shapes = StepShapes.from_workload(load_workload(args.workload), args.batch)
    fit = {w: StepShapes.from_workload(load_workload(w)) for w in _names(args.fit_workloads)}
    if not fit:
        raise InputError("measure host: --fit-workloads names no workload")
    check = {w: StepShapes.from_workload(load_workload(w)) for w in _names(args.check_workloads)}
    try:
        result = measure_host(shapes, args.device, args.repeat, args.rows_per_table, args.iterations, args.threads,
                              args.seconds, not args.no_reference,
                              progress=None if args.json else lambda m: print(m, file=sys.stderr, flush=True),
                              base_host=get_family("cpu").build(base.params), fit_shapes=fit, check_shapes=check,
                              op_list=lambda model, options: DlrmStep(model, StepOptions(**options)))
    except TorchMissing as exc:
        raise InputError(f"measure host: {exc}") from None
    result["workload"], result["shapes"] = args.workload, {"batch": shapes.batch, "bottom": list(shapes.bottom),
                                                           "top": list(shapes.top), "tables": shapes.tables}
    doc = _preset(args, base, result)
    result["preset"] = {"name": f"cpu/{args.name}", "params": {k: v["value"] for k, v in doc["params"].items()
                                                               if k.endswith("_instructions")}}
    if args.out != "-":
        import yaml

        out = Path(args.out or f"{args.name}.yaml")
        out.write_text(yaml.safe_dump(doc, sort_keys=False, width=100000, allow_unicode=True))
        result["preset"]["path"] = str(out)
    emit(args, result, render)
    return 0


def _names(text: str) -> list[str]:
    return [w.strip() for w in (text or "").split(",") if w.strip()]


def _preset(args: argparse.Namespace, base: Any, result: dict[str, Any]) -> dict[str, Any]:
    from cxlsim.calibrate.host_measure import (
        FITTED_CALLS,
        MICRO_WEIGHT,
        instructions,
        preset_document,
    )

    cpu, bp = result["cpu"], base.params
    if args.scale_to_base:
        clock, ipc, ratio = bp.clock_GHz, bp.software_ipc, args.ratio
        whose = f"{base.name} ({clock} GHz, software_ipc {ipc}), {ratio} x this host's time (single-thread ratio)"
        values: dict[str, tuple[Any, str]] = {}
    else:
        mhz = round(float(cpu.get("mhz") or 0) / 1e3, 3)
        clock, ipc, ratio = args.clock_ghz or mhz or bp.clock_GHz, 1.0, 1.0
        whose = f"this host ({clock:g} GHz, software_ipc 1.0)"
        values = {
            "clock_GHz": (clock, f"{'--clock-ghz' if args.clock_ghz else '/proc/cpuinfo cpu MHz'} of the measured host"),
            "software_ipc": (1.0, "convention: counts = measured us x clock_GHz x 1000 x 1.0 reproduce this host's us"),
            "cores_count": (int(cpu.get("cpus") or 1), "os.cpu_count() of the measured host"),
            "threads_count": (int(cpu.get("cpus") or 1), "os.cpu_count() of the measured host"),
        }
    today = datetime.date.today().isoformat()
    what = (f"cxlsim measure host ({today}) on {cpu.get('model_name')} (family {cpu.get('family')}, model "
            f"{cpu.get('model')}{', a VM' if cpu.get('hypervisor') else ''}), torch {result['torch']}, "
            f"{result['device']}, {result['threads']} thread(s)")
    k = result["in_step_factor"]
    for call in FITTED_CALLS:
        s, w = result["costs_us"][call], result["warm_costs_us"][call]
        values[f"{call}_instructions"] = (
            round(instructions(s["median"], clock, ipc, ratio)),
            f"{what}: {s['median']:.3g} us per call in the step, median of {s['n']} runs (min {s['min']:.3g}, max "
            f"{s['max']:.3g}): non-negative least squares of the modelled step's parts on "
            f"{', '.join(result['fit_workloads'])} (counted by cxlsim's op list) with "
            f"{len(result['runs'][0]['rows'])} microbenchmarks (warm {w['median']:.3g} us, x the in-step factor "
            f"{k['median']:.2f}, weight {MICRO_WEIGHT}); for {whose}")
    keep = {k: v for k, v in bp.items()}
    description = (f"{base.description}; framework costs measured by cxlsim measure host" if args.scale_to_base else
                   f"{cpu.get('model_name')} measured by cxlsim measure host (other parameters from {base.name})")
    return preset_document(keep, {k: f"from {base.name}: {bp.sources.get(k, '')}" if not args.scale_to_base
                                  else bp.sources.get(k, "") for k in keep}, description, values)


def render(r: dict[str, Any]) -> str:
    cpu = r["cpu"]
    out = [f"host: {cpu.get('model_name')} (family {cpu.get('family')}, model {cpu.get('model')}), torch {r['torch']}, "
           f"{r['device']}, {r['threads']} thread(s), {r['repeat']} runs"]
    rows = [(c, s["median"], s["min"], s["max"], f"{100 * s['spread']:.0f} %") for c, s in r["costs_us"].items()]
    out.append(format_table(["call", "us (median)", "min", "max", "spread"], rows, "fitted costs per call"))
    w, k = r["worst_row_error"], r["in_step_factor"]
    out.append(f"warm costs x in-step factor {k['median']:.2f} (min {k['min']:.2f}, max {k['max']:.2f}); worst "
               f"microbenchmark misfit {100 * w['median']:.0f} % (median over runs)")
    for w, chk in r["check"]["parts"].items():
        sh = r["check"]["shapes"][w]
        rows = [(p, v["phase"], v["measured_us"]["median"], f"{100 * v['measured_us']['spread']:.0f} %",
                 v["model_us"], f"{v['model_us'] / v['measured_us']['median']:.2f}", "fit" if v["fitted"] else "check")
                for p, v in chk.items()]
        out.append(format_table(["part", "phase", "measured us", "spread", "op list us", "ratio", "role"], rows,
                                f"{w}: the modelled step at batch {sh['batch']}, bottom {sh['bottom']}, top "
                                f"{sh['top']}, {sh['tables']} tables (torch's options: {r['options']})"))
    for p, why in r.get("excluded_parts", {}).items():
        out.append(f"{p}: not fitted: {why}")
    for key in ("reference", "reference_host_shape"):
        ref = r.get(key)
        if not ref:
            continue
        prof = ref.get("profile", {})
        rows = [(p, v["top_level_ops"], v["all_ops"], v["nodes"], v["node_ops"], v["us"]) for p, v in prof.items()]
        out.append(format_table(["part", "top-level ops", "all ops", "nodes", "node ops", "us (profiled)"], rows,
                                f"{key.replace('_', ' ')}: dlrm_s_pytorch.py's loop at batch {ref['batch']}, profiled"))
    pre = r["preset"]
    out.append(f"preset {pre['name']}" + (f" written to {pre['path']}" if pre.get("path") else " (not written)"))
    return "\n\n".join(out)
