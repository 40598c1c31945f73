"""Hold the device models against published measurements, curve by curve (docs/validation.md).

Runs the validation catalog (configs/validation/*.yaml, or --config FILE): for every check (a
preset, its microbenchmark's options and metric, published points with source and figure) prints
model vs measured per point with the relative error, whether the check's stated tolerance holds,
and a summary per device. Exits 0 however large the errors: it reports (tests hold the
tolerances). --plot DIR writes one PNG per check (model and measured on one axes). --set applies
parameter overrides to the --device preset. JSON keys: docs/validation.md.

Examples:
  cxlsim validate
  cxlsim validate --device pmem/optane-100 --plot plots/validation
  cxlsim validate --device pmem/optane-100 --set write_contention_ratio=0 --json
  cxlsim validate --markdown        the tables docs/validation.md holds (per check, per preset, per group)
"""

from __future__ import annotations

import argparse

from cxlsim.config.yamlio import parse_set
from cxlsim.errors import InputError

HELP = "hold the device models against published measurements (model vs measured per point)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--device", metavar="PRESET", help="only the checks of this preset, e.g. pmem/optane-100")
    p.add_argument("--plot", metavar="DIR", help="write one PNG per check into DIR")
    p.add_argument("--markdown", action="store_true",
                   help="print the per-check, per-preset and per-group tables as Markdown (docs/validation.md)")


def run(args: argparse.Namespace) -> int:
    from cxlsim.reports.output import emit
    from cxlsim.validate import checks as validate

    sets = dict(parse_set(args.set))
    if sets and not args.device:
        raise InputError("--set: name the preset it applies to with --device")
    checks = validate.load_catalog(args.config)
    report = validate.run(checks, args.device, {args.device: sets} if sets else None)
    if args.plot:
        from cxlsim.reports.validation_plot import plot_checks

        report["plots"] = [str(p) for p in plot_checks(report, args.plot)]
    if getattr(args, "markdown", False) and not getattr(args, "json", False):
        print(markdown(report, args.plot))
        return 0
    emit(args, report, render)
    return 0


def markdown(report: dict, plot_dir: str | None = None) -> str:
    """The three tables of docs/validation.md: per check (with its plot when ``plot_dir`` is given,
    linked as ``../plots/validation/<id>.png``), per preset, per group (median |error|)."""
    lines = ["| check | preset | points in tolerance | tolerance | mean / worst \\|error\\| | plot |",
             "|---|---|---|---|---|---|"]
    for c in report["checks"]:
        plot = f"[png](../plots/validation/{c['id']}.png)" if plot_dir else ""
        lines.append(f"| `{c['id']}` | {c['device']} | {c['within_count']}/{len(c['points'])} | "
                     f"±{c['tolerance_rel']:.0%} | {c['mean_abs_rel_error']:.1%} / {c['max_abs_rel_error']:.1%} | {plot} |")
    lines += ["", "| preset | checks in tolerance | points in tolerance | mean \\|error\\| | worst \\|error\\| |",
              "|---|---|---|---|---|"]
    for name, d in report["devices"].items():
        lines.append(f"| {name} | {d['checks_within_count']}/{d['checks_count']} | {d['within_count']}/{d['points_count']} | "
                     f"{d['mean_abs_rel_error']:.1%} | {d['max_abs_rel_error']:.1%} |")
    lines += ["", "| group | checks in tolerance | points in tolerance | median \\|error\\| | mean \\|error\\| |",
              "|---|---|---|---|---|"]
    for name, g in report.get("groups", {}).items():
        lines.append(f"| {name} | {g['checks_within_count']}/{g['checks_count']} | {g['within_count']}/{g['points_count']} | "
                     f"{g['median_abs_rel_error']:.1%} | {g['mean_abs_rel_error']:.1%} |")
    return "\n".join(lines)


def render(report: dict) -> str:
    from cxlsim.reports.output import fmt_num

    lines = []
    for c in report["checks"]:
        verdict = "ok" if c["within"] else "MISS"
        lines.append(f"{c['id']}  [{c['device']}]  {c['title']}  (tolerance ±{c['tolerance_rel']:.0%}: {verdict})")
        lines.append(f"  source: {c['source']}; {c['figure']}" + (f"; note: {c['note']}" if c["note"] else ""))
        lines.append(f"  {c['x_label'][:26]:<26} {'measured':>10} {'model':>10} {'error':>8}")
        for p in c["points"]:
            mark = "" if p["within"] else "  *"
            lines.append(f"  {str(p['x'])[:26]:<26} {fmt_num(p['measured']):>10} {fmt_num(p['model']):>10} "
                         f"{p['rel_error']:>+8.1%}{mark}")
        lines.append("")
    lines.append("summary by device")
    lines.append(f"  {'preset':<22} {'checks ok':>9} {'points ok':>10} {'mean |err|':>10} {'max |err|':>10}")
    for name, d in report["devices"].items():
        lines.append(f"  {name:<22} {d['checks_within_count']:>4}/{d['checks_count']:<4} "
                     f"{d['within_count']:>5}/{d['points_count']:<4} {d['mean_abs_rel_error']:>10.1%} "
                     f"{d['max_abs_rel_error']:>10.1%}")
    if report.get("groups"):
        lines.append("summary by group (median |err| over the group's points)")
        for name, g in report["groups"].items():
            lines.append(f"  {name:<22} {g['checks_within_count']:>4}/{g['checks_count']:<4} "
                         f"{g['within_count']:>5}/{g['points_count']:<4} median {g['median_abs_rel_error']:.1%}, "
                         f"mean {g['mean_abs_rel_error']:.1%}")
    if report.get("plots"):
        lines.append(f"plots: {len(report['plots'])} PNGs in {report['plots'][0].rsplit('/', 1)[0]}")
    return "\n".join(lines)
