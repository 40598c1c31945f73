"""Crash-test a persisting system: power failures injected into its persistence protocol, recovery
from the durable image alone, and the invariant (docs/crash.md, "The invariant and how it is
checked") checked bit-exactly against a fault-free reference run.

  cxlsim crashtest --system cxl --workload rm1
  cxlsim crashtest --system cxl-d --workload rm2 --points 2000 --json
  cxlsim crashtest --system cxl-b --workload rm1 --inject-bug flag-before-data
  cxlsim crashtest --system cxl --workload rm1 --replay 43556290.648451455
  cxlsim crashtest --system pmem --workload rm3 --scale 1e-4 --batches 4 --seed 7

The functional run materialises the tables at --scale of their rows (default 1e-3; docs/crash.md)
and takes its step spans from the timing model on the same scaled workload. Crash points: every
step boundary of the middle batch, then instants drawn over the run (half inside a write's flight,
so torn writes are exercised). A violation shows the crash instant, the protocol step, the first
differing (table, row) and the --replay argument that redoes that point alone; --replay also
takes a point index.

JSON keys: system, platform, workload, points, recovered_exact (state equal to the reference after batch m,
MLP included), violations, lost_batches {max, mean} (last completed update minus the recovered
batch), mlp_log_gap {max} (batches the MLP lags the tables), recovery_time_us {mean, max} (device
models, at the functional scale), first_violation (null or the details above).
"""

from __future__ import annotations

import argparse

from cxlsim.cli._args import number, whole, workload_names
from cxlsim.cli._platform import add_platform_option
from cxlsim.config.bounds import MAX_SEED
from cxlsim.reports.output import emit, format_table

HELP = "inject power failures into a system's persistence protocol, recover, check bit-exactly (docs/design.md#crash-and-recovery)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    from cxlsim.crash.options import (
        BUGS,
        DEFAULT_BATCHES,
        DEFAULT_POINTS,
        DEFAULT_RESUME,
        DEFAULT_SCALE,
        MAX_DEFAULT_BATCHES,
    )
    from cxlsim.systems.config import list_systems

    p.add_argument("--system", help="persisting system (" + ", ".join(list_systems()) + ") or YAML path")
    p.add_argument("--workload", help=f"workload name ({workload_names()}) or YAML path; default: the system's")
    p.add_argument("--scale", type=number(0, 1, exclusive_minimum=True), default=DEFAULT_SCALE,
                   help=f"fraction of table rows (and MLP parameters) materialised (default {DEFAULT_SCALE:g})")
    p.add_argument("--batches", type=whole(1), default=None,
                   help=f"training batches run (default {DEFAULT_BATCHES}; where the MLP log is spread over batches "
                        "(cxl), enough for one MLP log to complete and a few batches after it, at most "
                        f"{MAX_DEFAULT_BATCHES})")
    p.add_argument("--points", type=whole(1), default=DEFAULT_POINTS, help=f"crash points (default {DEFAULT_POINTS})")
    p.add_argument("--seed", type=whole(0, MAX_SEED), help="seed of inputs, gradients, crash instants and torn writes (default: the system's)")
    add_platform_option(p)
    p.add_argument("--replay", metavar="T_NS|INDEX", help="redo one crash point in detail: an instant in ns or a point index")
    p.add_argument("--inject-bug", choices=sorted(BUGS), help="break the protocol on purpose: " +
                   "; ".join(f"{k}: {v}" for k, v in BUGS.items()))
    p.add_argument("--resume", type=whole(0), default=DEFAULT_RESUME, metavar="K",
                   help=f"passing points actually resumed to the end of the run and compared (default {DEFAULT_RESUME})")


def run(args: argparse.Namespace) -> int:
    from cxlsim.cli._platform import sets_of
    from cxlsim.crash.run import prepare, replay, run_points
    from cxlsim.errors import InputError

    system = args.config or args.system
    if not system:
        raise InputError("name a system with --system (e.g. --system cxl) or give --config FILE")
    cr = prepare(system, args.workload, args.scale, args.batches, args.seed, args.inject_bug, sets_of(args))
    if args.replay is not None:
        emit(args, replay(cr, args.replay, args.points), render_replay)
        return 0
    rep = run_points(cr, args.points, args.resume)
    emit(args, rep.summary, lambda d: render(d, cr, rep))
    return 0


def render(d: dict, cr, rep) -> str:
    from cxlsim.crash.run import topology_note

    ref = cr.reference
    lines = [
        f"{d['system']} on {d['workload']}, platform {cr.cfg.platform}: {cr.protocol.kind} protocol"
        + (f", injected bug {cr.bug}" if cr.bug else "")
        + f"; scale {cr.scale:g} ({ref.rows:,} rows, {ref.table_B / 1e6:.1f} MB of tables, "
        f"{ref.mlp_n:,} MLP parameters), {cr.n_batches} batches, seed {cr.seed}",
        "",
    ]
    if note := topology_note(cr):
        lines[1:1] = [note]
    lost, rec = d["lost_batches"], d["recovery_time_us"]
    rows = [
        ["crash points", d["points"]],
        ["recovered exactly (tables and MLP)", d["recovered_exact"]],
        ["violations", d["violations"]],
        ["lost batches, max", lost["max"]],
        ["lost batches, mean", round(lost["mean"], 3)],
        [f"MLP log gap, max (allowed {cr.protocol.mlp_gap_bound})", d["mlp_log_gap"]["max"]],
        ["recovery time, mean (us)", round(rec["mean"], 1)],
        ["recovery time, max (us)", round(rec["max"], 1)],
    ]
    lines.append(format_table(["invariant (docs/design.md#crash-and-recovery)", "value"], rows))
    lines.append("")
    rate = d["points"] / rep.points_s if rep.points_s > 0 else float("inf")
    setup = sum(cr.setup_s.values())
    lines.append(f"{rate:,.0f} points/s ({rate * 60:,.0f}/min) after {setup:.1f} s of set-up "
                 f"(timing model {cr.setup_s['timing_s']:.1f} s); {rep.resumed} points resumed to the end")
    if ref.relaxed_max_abs_err is not None:
        lines.append(f"relaxed lookup: corrected pooling within {ref.relaxed_max_abs_err:.2e} of the dependent lookup")
    fv = d["first_violation"]
    if fv is None:
        lines.append("no violation")
    else:
        lines += ["", "first violation:"] + _violation_lines(fv)
    return "\n".join(lines)


def _violation_lines(fv: dict) -> list[str]:
    out = [
        f"  crash at      {fv['t_ns']:,.1f} ns" + (f" (point {fv['point']})" if fv["point"] >= 0 else ""),
        f"  step          {fv['step']}",
        f"  in flight     {', '.join(fv['in_flight']) or 'nothing'}",
        f"  reason        {fv['reason'] or 'none: the invariant holds'}",
        f"  recovered     batch {fv['recovered_batch']} (last completed update: batch {fv['completed_batch']})",
        f"  recovery read {', '.join(fv['recovery_read'])}",
    ]
    if fv["row"] is not None:
        out.append(f"  first differing row: table {fv['table']}, row {fv['row']}")
    out.append(f"  replay with   {fv['replay']}")
    return out


def render_replay(d: dict) -> str:
    head = (f"{d['system']} on {d['workload']}, platform {d['platform']}: crash at {d['t_ns']:,.1f} ns — "
            + ("ok" if d["ok"] else "VIOLATION"))
    tp = d["torn_pieces"]
    out = [head] + _violation_lines(d)
    out.insert(4, f"  torn pieces   {tp['landed']} of {tp['in_flight']} 64 B pieces in flight landed")
    out.append(f"  MLP log gap   {d['mlp_log_gap']}   recovery time {d['recovery_time_us']:.1f} us")
    return "\n".join(out)
