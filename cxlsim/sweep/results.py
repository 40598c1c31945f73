"""Sweep results: one row per point in ``results.csv``, everything in ``results.json``.

``results.csv`` columns (in this order; empty cell = not applicable or unavailable):

    point_id, system, workload, <swept keys in spec order>, seed, batches, warmup_batches, status,
    batch_time_ms, batch_time_p50_ms, batch_time_p99_ms, <category>_ms for each breakdown category
    (b_mlp, t_mlp, transfer, embedding, checkpoint, idle), raw_stall_ms, mlp_log_gap_batches,
    throughput_samples_per_s, energy_J_per_batch, energy_<component>_J for each component (gpu,
    cpu, dram, pmem, ssd, cxl_mem_logic, links, then any other), error, batches_mode (auto or
    fixed: how ``batches`` and ``warmup_batches`` were picked), batch_time_ci95_ms (half-width of
    the 95 % confidence interval of the mean batch time), batch_time_ci95_fraction (relative to it),
    platform (the platform that filled the system's device roles; where ``platform`` is a swept
    key, its column stays at the axis' place instead)

Rows follow the spec's point order, so the file is the same whichever executor ran the points;
floats are written with Python's shortest round-trip repr and booleans as ``true``/``false``.
``results.json`` is ``{"sweep", "description", "spec", "document", "version", "git_revision",
"counts": {"points", "ok", "failed"}, "points": [record, ...]}`` where each record is the one
:func:`cxlsim.sweep.evaluate.evaluate` returns (with the point's resolved configuration, seed,
version and git revision) plus ``index`` (its position in the spec).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cxlsim.errors import InputError
from cxlsim.provenance import provenance
from cxlsim.reports.output import format_table, to_jsonable

BREAKDOWN = ("b_mlp", "t_mlp", "transfer", "embedding", "checkpoint", "idle")
ENERGY_COMPONENTS = ("gpu", "cpu", "dram", "pmem", "ssd", "cxl_mem_logic", "links")
FIXED = ("seed", "batches", "warmup_batches")
#: columns after ``error`` (added later, so they come last): how the counts were picked, the interval
SAMPLING = ("batches_mode", "batch_time_ci95_ms", "batch_time_ci95_fraction")
#: the last column (added after SAMPLING) unless it is a swept key
PLATFORM = "platform"


def rows(records: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """Flatten records into CSV columns and rows (values still typed)."""
    categories = list(BREAKDOWN)
    components = list(ENERGY_COMPONENTS)
    for rec in records:
        res = rec.get("result") or {}
        for k in res.get("breakdown_ms") or {}:
            if k not in categories:
                categories.append(k)
        for k in ((res.get("energy_J_per_batch") or {}).get("by_component") or {}):
            if k not in components:
                components.append(k)
    axes = list(axes)
    columns = ["point_id", *axes, *[k for k in FIXED if k not in axes], "status",
               "batch_time_ms", "batch_time_p50_ms", "batch_time_p99_ms",
               *[f"{c}_ms" for c in categories], "raw_stall_ms", "mlp_log_gap_batches",
               "throughput_samples_per_s", "energy_J_per_batch", *[f"energy_{c}_J" for c in components], "error",
               *SAMPLING, *([PLATFORM] if PLATFORM not in axes else [])]
    out = []
    for rec in records:
        res = rec.get("result") or {}
        cfg = res.get("config") or {}
        swept = rec.get("swept") or {}
        row: dict[str, Any] = {"point_id": rec["id"]}
        for key in axes:
            row[key] = swept.get(key)
        if row.get("workload") is None and "workload" in axes:
            row["workload"] = res.get("workload")  # the system's own workload
        for key in FIXED:
            if key not in axes:
                row[key] = cfg.get(key)
        row["status"] = rec.get("status")
        bt = res.get("batch_time_ms") or {}
        row["batch_time_ms"] = bt.get("mean")
        row["batch_time_p50_ms"] = bt.get("p50")
        row["batch_time_p99_ms"] = bt.get("p99")
        bd = res.get("breakdown_ms")
        for c in categories:
            row[f"{c}_ms"] = None if bd is None else bd.get(c, 0.0 if c == "idle" else None)
        row["raw_stall_ms"] = res.get("raw_stall_ms")
        row["mlp_log_gap_batches"] = res.get("mlp_log_gap_batches")
        row["throughput_samples_per_s"] = res.get("throughput_samples_per_s")
        energy = res.get("energy_J_per_batch") or {}
        row["energy_J_per_batch"] = energy.get("total")
        by = energy.get("by_component") or {}
        for c in components:
            row[f"energy_{c}_J"] = by.get(c, 0.0 if energy else None)
        row["error"] = rec.get("error")
        for key in SAMPLING:
            row[key] = res.get(key)
        if row.get(PLATFORM) is None:
            row[PLATFORM] = point_platform(rec)
        out.append(row)
    return columns, out


def point_platform(rec: Mapping[str, Any]) -> str | None:
    """The platform a point ran on: its result's, else the value it set (``--set platform=...`` or
    the axis), else None (a failed point on the system's default platform)."""
    res = rec.get("result") or {}
    if res.get("platform"):
        return res["platform"]
    if (rec.get("swept") or {}).get(PLATFORM):
        return rec["swept"][PLATFORM]
    return ((rec.get("point") or {}).get("sets") or {}).get(PLATFORM)


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def csv_text(records: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> str:
    columns, table = rows(records, axes)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for row in table:
        w.writerow([cell(row.get(c)) for c in columns])
    return buf.getvalue()


def write_text(path: Path, text: str) -> None:
    """Write atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def results_document(records: Sequence[Mapping[str, Any]], *, name: str, description: str, spec: str,
                     document: Mapping[str, Any], axes: Sequence[str], executor: str | None = None) -> dict[str, Any]:

    ok = sum(1 for r in records if r.get("status") == "ok")
    return to_jsonable({
        "sweep": name, "description": description, "spec": spec, "document": dict(document),
        "axes": list(axes), "executor": executor, **provenance(),
        "counts": {"points": len(records), "ok": ok, "failed": len(records) - ok},
        "points": list(records),
    })


def write_results(out: Path, records: Sequence[Mapping[str, Any]], doc: Mapping[str, Any], axes: Sequence[str],
                  stem: str = "results") -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    jpath, cpath = out / f"{stem}.json", out / f"{stem}.csv"
    write_text(jpath, json.dumps(doc, indent=1) + "\n")
    write_text(cpath, csv_text(records, axes))
    return jpath, cpath


def read_results(path: str | Path) -> dict[str, Any]:
    """Load ``results.json`` (or the folder holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{p}: no results file (run `cxlsim sweep` or `cxlsim reproduce` first)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: not a results file ({exc})") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror or exc})") from None


def to_dataframe(results: str | Path | Mapping[str, Any] | Iterable[Mapping[str, Any]]):
    """The results as a pandas DataFrame, one row per point with the ``results.csv`` columns.

    ``results`` is a results document (``read_results``), a path to it or its folder, or a list of
    point records. Needs pandas (``pip install 'cxlsim[pandas]'``)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("cxlsim.sweep.to_dataframe needs pandas: pip install 'cxlsim[pandas]' "
                          "(or read results.csv with the csv module)") from None
    if isinstance(results, (str, Path)):
        results = read_results(results)
    if isinstance(results, Mapping):
        records, axes = results["points"], results.get("axes") or ["system", "workload"]
    else:
        records = list(results)
        axes = ["system", "workload"] + sorted({k for r in records for k in (r.get("swept") or {})}
                                               - {"system", "workload"})
    columns, table = rows(records, axes)
    return pd.DataFrame(table, columns=columns)


def render_table(records: Sequence[Mapping[str, Any]], axes: Sequence[str], title: str | None = None) -> str:

    """The sweep as a text table: the axes, the platform (unless swept), status, batch time with its
    interval, the counts, embedding and checkpoint time and energy; then the failed points."""
    columns, table = rows(records, axes)
    has_energy = any(r["energy_J_per_batch"] is not None for r in table)
    keys = [*axes, *([PLATFORM] if PLATFORM not in axes else [])]
    headers = [*keys, "status", "batch ms", "±95% %", "batches", "embedding ms", "checkpoint ms"] + (["energy J"] if has_energy else [])
    body = []
    for r in table:
        line = [cell(r[a]) if not isinstance(r[a], (int, float)) or isinstance(r[a], bool) else r[a] for a in keys]
        ci = r["batch_time_ci95_fraction"]
        counts = "" if r["batches"] is None else f"{r['batches']}+{r['warmup_batches']}" + (" auto" if r["batches_mode"] == "auto" else "")
        line += [r["status"], r["batch_time_ms"], None if ci is None else 100 * ci, counts, r["embedding_ms"], r["checkpoint_ms"]]
        if has_energy:
            line.append(r["energy_J_per_batch"])
        body.append(["" if v is None else v for v in line])
    text = format_table(headers, body, title)
    errors = [(r, rec) for r, rec in zip(table, records, strict=True) if r["status"] != "ok"]
    if errors:
        text += "\n\nfailed points:\n" + "\n".join(
            f"  {' '.join(cell(r[a]) for a in axes)}: {r['error']}" for r, _ in errors)
    return text
