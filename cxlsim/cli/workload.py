"""Show a workload (a catalog workload or a YAML file) and statistics of its generated input batches.

  cxlsim workload                      list the catalog
  cxlsim workload rm1                  catalog values + per-batch stats of 5 batches
  cxlsim workload rm2 --batches 20 --seed 3 --json
  cxlsim workload rm1 --set batch_size=256 --set reuse_prev_fraction=0.5
  cxlsim workload --config my-model.yaml
  cxlsim workload rm1 --batches 3 --write-trace rm1.npz   write the stream as a trace (docs/workloads.md)
  cxlsim workload --trace rm1.npz [--json]                 a trace's statistics beside the generator's
  cxlsim workload rm1 --set trace=rm1.npz                  the workload driven by the trace

Per batch: `indices` (lookups, all tables), `unique_rows` (distinct (table, row) pairs),
`reuse_prev_fraction` (share of those pairs the previous batch also touched; 0.0 for the first) and
the lookups per bag (`bag_mean`, `bag_min`, `bag_max`); `bags` gives them over all the batches
generated, beside the reading (`bag_size`, `bag_dedup`) and the mean draws per bag it implies
before de-duplication (`expected_draws_mean`; docs/workloads.md).
The generator knob of the same name (under "generator") is the fraction of lookup positions copied
from the previous batch.

`--trace PATH` reports the trace's statistics (:mod:`cxlsim.workloads.stream_stats`: distinct rows
per batch, the share shared with the previous batch, reuse distance in batches, a Zipf fit) beside
the generator's for the same tables, bags and batch size (the trace's), with the workload's generator
knobs (rm1's when no workload is named; its table count then follows the trace), over `--batches`
batches (default: all the trace holds) and `--seed`.
"""

from __future__ import annotations

import argparse
from typing import Any

from cxlsim.cli._args import number, whole, workload_names
from cxlsim.config.bounds import MAX_RUN_LOOKUPS, MAX_SEED, check_bound
from cxlsim.config.yamlio import parse_set
from cxlsim.errors import InputError
from cxlsim.reports.output import emit, format_table

HELP = "workload RM1-RM4: catalog values and per-batch input statistics (unique rows, reuse)"

DEFAULT_BATCHES = 5


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help=f"catalog workload ({workload_names()}) or a YAML path; omit to list")
    p.add_argument("--batches", type=whole(0), default=None,
                   help=f"batches to generate (default {DEFAULT_BATCHES}; with --trace, all the trace holds)")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=0, help="input-stream seed (default 0)")
    p.add_argument("--row-scale", type=number(0, 1, exclusive_minimum=True), default=1.0, help="scale every table's rows by this factor in (0, 1]")
    p.add_argument("--trace", metavar="PATH", help="a trace (.npz/.pt): its statistics beside the generator's")
    p.add_argument("--write-trace", metavar="FILE.npz", help="write the workload's first --batches batches as a trace")


def run(args: argparse.Namespace) -> int:
    from cxlsim.workloads import list_workloads, load_workload

    target = args.config or args.name
    if args.trace:
        return compare_trace(args, target)
    if args.batches is None:
        args.batches = DEFAULT_BATCHES
    if target is None:
        rows = [{"workload": n, "description": load_workload(n).description} for n in list_workloads()]
        emit(args, {"workloads": rows}, lambda d: format_table(
            ["workload", "description"], [[r["workload"], r["description"]] for r in d["workloads"]]))
        return 0
    if args.batches < 0:
        raise InputError("workload: --batches must be >= 0")
    if not 0 < args.row_scale <= 1:
        raise InputError("workload: --row-scale must be in (0, 1]")
    w = load_workload(target, dict(parse_set(args.set)))
    check_bound("--batches", "", args.batches * w.lookups_per_batch, MAX_RUN_LOOKUPS,
                f"embedding lookups in {args.batches} batches of {w.name}", "lookups one run generates")
    if args.write_trace:
        from cxlsim.workloads.source import input_batches
        from cxlsim.workloads.trace import write_trace

        if args.batches < 1:
            raise InputError("workload: --write-trace needs --batches >= 1")
        path = write_trace(args.write_trace, input_batches(w, args.seed, args.batches, args.row_scale, dense=False),
                           w.rows_per_table_scaled(args.row_scale))
        emit(args, {"trace": str(path), "workload": w.name, "batches": args.batches, "batch_size": w.params.batch_size,
                    "tables": w.params.tables, "seed": args.seed},
             lambda d: f"wrote {d['batches']} batch(es) of {d['workload']} (batch_size {d['batch_size']}, "
                       f"{d['tables']} tables, seed {d['seed']}) to {d['trace']}")
        return 0
    emit(args, describe(w, args.batches, args.seed, args.row_scale), render)
    return 0


def compare_trace(args: argparse.Namespace, target: str | None) -> int:
    """``--trace``: the trace's statistics beside the generator's for the same tables (module docstring)."""
    from cxlsim.workloads import TableLayout, load_workload
    from cxlsim.workloads.generator import batches
    from cxlsim.workloads.stream_stats import stream_stats
    from cxlsim.workloads.trace import read_trace, trace_batches

    if args.row_scale != 1.0:
        raise InputError("workload: --row-scale does not apply to --trace (a trace's rows are recorded ids)")
    trace = read_trace(args.trace)
    sets = dict(parse_set(args.set))
    if target is None:
        target, sets = "rm1", {"tables": trace.tables, **sets}
    w = load_workload(target, {**sets, "trace": args.trace})
    have = trace.batches(w.params.batch_size)
    n = have if args.batches is None else args.batches
    check_bound("--batches", "", n * w.lookups_per_batch, MAX_RUN_LOOKUPS,
                f"embedding lookups in {n} batches of {w.name}", "lookups one run generates")
    layout = TableLayout.from_workload(w)
    got = stream_stats(trace_batches(w, args.seed, n, dense=False), layout)
    syn = stream_stats(batches(w, args.seed, n, dense=False), layout)  # the generator on the trace's tables and bags
    p = w.params
    doc = {"trace": trace.path, "workload": w.name, "batches": n, "trace_batches": have, "batch_size": p.batch_size,
           "tables": p.tables, "rows_per_table": list(w.rows_per_table), "bag_sizes_max": list(w.max_bag_sizes),
           "trace_stats": got, "synthetic": syn,
           "generator": {"seed": args.seed, "popularity_exponent": p.popularity_exponent,
                         "reuse_prev_fraction": p.reuse_prev_fraction}}
    emit(args, doc, render_comparison)
    return 0


def render_comparison(d: dict[str, Any]) -> str:
    def r(v: Any) -> Any:
        return "-" if v is None else round(v, 4) if isinstance(v, float) else v

    a, b = d["trace_stats"], d["synthetic"]
    rows = [["distinct rows per batch (mean)", r(a["distinct_rows_per_batch"]["mean"]),
             r(b["distinct_rows_per_batch"]["mean"])],
            ["shared with the previous batch", r(a["shared_prev_fraction"]), r(b["shared_prev_fraction"])]]
    for k, label in (("median", "reuse distance, median (batches)"), ("p90", "reuse distance, p90 (batches)"),
                     ("first_touch_fraction", "first touches (of batches 1..)")):
        rows.append([label, r(a["reuse_distance_batches"][k]), r(b["reuse_distance_batches"][k])])
    rows.append(["Zipf exponent (median of tables)", r(a["zipf_exponent"]["median"]), r(b["zipf_exponent"]["median"])])
    g = d["generator"]
    return format_table(["statistic", "trace", "generator"], rows, title=(
        f"{d['trace']}: {d['batches']} of {d['trace_batches']} batch(es) of {d['batch_size']}, {d['tables']} tables; "
        f"generator: {d['workload']}'s knobs (popularity_exponent {g['popularity_exponent']}, reuse "
        f"{g['reuse_prev_fraction']}), seed {g['seed']}"))


def describe(w, n_batches: int, seed: int, row_scale: float = 1.0) -> dict[str, Any]:
    """The JSON document of ``cxlsim workload`` (stable keys; extra keys after the documented ones)."""
    from cxlsim.workloads import TableLayout, analyze_batch
    from cxlsim.workloads.source import input_batches

    p = w.params
    layout = TableLayout.from_workload(w, row_scale)
    per_batch = []
    prev = None
    bag_total = bag_count = 0
    bag_min, bag_max = None, None
    for batch in input_batches(w, seed, n_batches, row_scale, dense=False):
        prev = analyze_batch(batch.indices, layout, prev, table_starts=batch.table_starts)
        sizes = batch.bag_sizes
        lo, hi = int(sizes.min()), int(sizes.max())
        bag_total, bag_count = bag_total + int(sizes.sum()), bag_count + sizes.size
        bag_min = lo if bag_min is None else min(bag_min, lo)
        bag_max = hi if bag_max is None else max(bag_max, hi)
        per_batch.append({"indices": prev.n_indices, "unique_rows": prev.n_unique,
                          "reuse_prev_fraction": round(prev.reuse_prev_fraction, 6),
                          "bag_mean": round(float(sizes.mean()), 6), "bag_min": lo, "bag_max": hi})
    return {
        "workload": w.name,
        "batch_size": p.batch_size,
        "tables": p.tables,
        "lookups_per_table": p.lookups_per_table,
        "dim": p.dim,
        "rows_per_table": list(w.rows_per_table_scaled(row_scale)),
        "embedding_bytes": w.embedding_bytes,
        "mlp_params": w.mlp_params,
        "per_batch": per_batch,
        "description": w.description,
        "dense_features": p.dense_features,
        "bottom_mlp": p.bottom_mlp,
        "top_mlp": p.top_mlp,
        "interaction": p.interaction,
        "interaction_width": w.interaction_width,
        "generator": {"seed": seed, "row_scale": row_scale, "popularity_exponent": p.popularity_exponent,
                      "reuse_prev_fraction": p.reuse_prev_fraction},
        "file": w.path,
        "bags": {"bag_size": p.bag_size, "bag_dedup": p.bag_dedup,
                 "expected_draws_mean": round(w.mean_bag_draws(row_scale), 6),
                 "mean": round(bag_total / bag_count, 6) if bag_count else None, "min": bag_min, "max": bag_max},
        "mlp_param_width": p.mlp_param_width,
        "trace": p.trace or None,  # the batches above are the trace's where one is set
    }


def render(d: dict[str, Any]) -> str:
    rows = d["rows_per_table"]
    sizes = f"{rows[0]:,}" if len(set(rows)) == 1 else f"{min(rows):,} .. {max(rows):,} (sum {sum(rows):,})"
    g = d["generator"]
    head = format_table(["parameter", "value"], [
        ["batch_size", d["batch_size"]],
        ["tables", d["tables"]],
        ["lookups_per_table", d["lookups_per_table"]],
        ["dim", d["dim"]],
        ["rows_per_table", sizes],
        ["embedding_GB", round(d["embedding_bytes"] / 1e9, 3)],
        ["bottom_mlp", f"{d['bottom_mlp']} ({d['mlp_params']['bottom']:,} params)"],
        ["top_mlp", f"{d['top_mlp']}, as built after the interaction: {d['interaction_width']}-{d['top_mlp']} "
                    f"({d['mlp_params']['top']:,} params)"],
        ["interaction", f"{d['interaction']} ({d['mlp_params']['interaction']:,} params)"],
        ["interaction_width", d["interaction_width"]],
        ["popularity_exponent", g["popularity_exponent"]],
        ["reuse knob (positions copied)", g["reuse_prev_fraction"]],
        ["bag_size", f"{d['bags']['bag_size']}, dedup {str(d['bags']['bag_dedup']).lower()} "
                     f"(draws per bag, expected: {d['bags']['expected_draws_mean']:g})"],
        ["mlp_param_width", d["mlp_param_width"]],
    ], title=f"{d['workload']}: {d['description']}")
    batches = format_table(["batch", "indices", "unique_rows", "reuse_prev_fraction", "bag mean", "bag min", "bag max"], [
        [i, b["indices"], b["unique_rows"], round(b["reuse_prev_fraction"], 4), round(b["bag_mean"], 3), b["bag_min"],
         b["bag_max"]] for i, b in enumerate(d["per_batch"])
    ], title=(f"\ninput batches of the trace {d['trace']}:" if d["trace"] else
              f"\ninput batches (seed {g['seed']}, row_scale {g['row_scale']}):"))
    return head + "\n" + batches
