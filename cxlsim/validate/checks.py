"""Device models held against published measurements: the catalog and its runner
(docs/design.md#validation).

Contract. A validation catalog (YAML, ``configs/validation/*.yaml``, shipped as package data) lists
checks; each names a device preset, the options of its family's microbenchmark, the metric read
from the microbenchmark's output (a dotted path, ``{x}`` standing for the point's x; a number
indexes a list, e.g. ``loaded_latency.0.latency_ns`` of a ``cxl_mem`` preset's MLC probes) and the
published points ``[x, measured]`` with their source and figure/table, and states its tolerance
``tolerance_rel`` on ``|model − measured| / measured``. Optional: ``relative_to`` (a preset: the
model value is the metric's ratio to that preset's, same options), ``baseline_x`` (the model value
is the metric at x less the metric at ``baseline_x``) and option values ``"{x}"`` (the option takes
the point's x, e.g. a thread count). :func:`load_catalog` validates a catalog (bad input:
:class:`~cxlsim.errors.ConfigError` naming the file and key); :func:`run` runs checks and returns a
JSON-ready report (keys in ``docs/validation.md``); it never fails on a large error: it reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cxlsim.config.catalog import catalog_roots
from cxlsim.config.yamlio import check_version, read_yaml
from cxlsim.devices.registry import build_device, get_family, load_preset
from cxlsim.errors import ConfigError
from cxlsim.validate.microbench import microbench_of

CATALOG_DIR = "validation"
VERSION = 1
#: Microbenchmark options whose value is a preset name (built into a model before the run).
PRESET_OPTIONS = ("link", "switch", "medium", "host")
REQUIRED = ("id", "device", "title", "metric", "x_label", "unit", "tolerance_rel", "source", "figure", "points")
OPTIONAL = ("options", "relative_to", "baseline_x", "note")


@dataclass(frozen=True)
class Check:
    """One check of a catalog (module docstring)."""

    id: str
    device: str
    title: str
    metric: str
    x_label: str
    unit: str
    tolerance_rel: float
    source: str
    figure: str
    points: tuple[tuple[Any, float], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    relative_to: str | None = None
    baseline_x: Any = None
    note: str = ""


def catalog_paths() -> list[Path]:
    """The catalog files: ``validation/*.yaml`` of every configs root (later roots shadow by name)."""
    found: dict[str, Path] = {}
    for root in catalog_roots("configs"):
        folder = root / CATALOG_DIR
        if folder.is_dir():
            for p in sorted(folder.glob("*.yaml")):
                found[p.name] = p
    return [found[k] for k in sorted(found)]


def load_catalog(path: str | Path | None = None) -> list[Check]:
    """Checks of catalog ``path`` (default: every shipped catalog), validated."""
    paths = [Path(path)] if path is not None else catalog_paths()
    checks: list[Check] = []
    seen: set[str] = set()
    for p in paths:
        where = str(p)
        doc = read_yaml(p)
        check_version(doc, where)
        items = doc.get("checks")
        if not isinstance(items, list) or not items:
            raise ConfigError(where, "checks", "a non-empty list of checks is needed")
        for i, item in enumerate(items):
            check = _check(item, where, f"checks[{i}]")
            if check.id in seen:
                raise ConfigError(where, f"checks[{i}].id", f"duplicate check id {check.id!r}")
            seen.add(check.id)
            checks.append(check)
    return checks


def _check(item: Any, where: str, key: str) -> Check:
    if not isinstance(item, dict):
        raise ConfigError(where, key, "a check is a mapping")
    for k in REQUIRED:
        if k not in item:
            raise ConfigError(where, f"{key}.{k}", "missing")
    for k in item:
        if k not in REQUIRED + OPTIONAL:
            raise ConfigError(where, f"{key}.{k}", f"unknown key (known: {', '.join(REQUIRED + OPTIONAL)})")
    tol = item["tolerance_rel"]
    if not isinstance(tol, (int, float)) or isinstance(tol, bool) or tol <= 0:
        raise ConfigError(where, f"{key}.tolerance_rel", "a number > 0 is needed")
    pts = item["points"]
    if not isinstance(pts, list) or not pts:
        raise ConfigError(where, f"{key}.points", "a non-empty list of [x, measured] is needed")
    points = []
    for j, pt in enumerate(pts):
        ok = isinstance(pt, list) and len(pt) == 2 and isinstance(pt[1], (int, float)) and pt[1] != 0
        if not ok:
            raise ConfigError(where, f"{key}.points[{j}]", "[x, measured] with a non-zero measured value is needed")
        points.append((pt[0], float(pt[1])))
    options = item.get("options") or {}
    if not isinstance(options, dict):
        raise ConfigError(where, f"{key}.options", "a mapping of microbenchmark options is needed")
    for name in (item["device"], item.get("relative_to")):
        if name is not None:
            try:
                load_preset(str(name))
            except ConfigError as exc:
                raise ConfigError(where, f"{key}.device", exc.message) from None
    return Check(str(item["id"]), str(item["device"]), str(item["title"]), str(item["metric"]),
                 str(item["x_label"]), str(item["unit"]), float(tol), str(item["source"]), str(item["figure"]),
                 tuple(points), dict(options), item.get("relative_to"), item.get("baseline_x"),
                 str(item.get("note") or ""))


class _Bench:
    """Microbenchmark results by (device, options), each computed once per run."""

    def __init__(self, overrides: Mapping[str, Mapping[str, Any]]) -> None:
        self.overrides = overrides
        self.cache: dict[tuple, dict[str, Any]] = {}
        self.models: dict[str, Any] = {}

    def _model(self, name: str) -> Any:
        if name not in self.models:
            self.models[name] = build_device(name, self.overrides.get(name))
        return self.models[name]

    def result(self, device: str, options: Mapping[str, Any]) -> dict[str, Any]:
        key = (device, tuple(sorted((k, str(v)) for k, v in options.items())))
        if key not in self.cache:
            family = get_family(load_preset(device).family)
            opts = {k: (build_device(v) if k in PRESET_OPTIONS else v) for k, v in options.items()}
            self.cache[key] = microbench_of(family)(self._model(device), opts)
        return self.cache[key]


def _substitute(value: Any, x: Any) -> Any:
    if value == "{x}":
        return x
    if isinstance(value, str):
        return value.replace("{x}", str(x))
    return value


def _metric(result: Mapping[str, Any], path: str, check: Check) -> float:
    node: Any = result
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):  # a row of a list (loaded_latency.3)
            node = node[int(part)]
            continue
        if not isinstance(node, Mapping) or part not in node:
            raise ConfigError(check.id, "metric", f"{path!r}: no such key in {check.device}'s microbenchmark output")
        node = node[part]
    if not isinstance(node, (int, float)) or isinstance(node, bool):
        raise ConfigError(check.id, "metric", f"{path!r} is not a number")
    return float(node)


def _model_value(bench: _Bench, check: Check, x: Any) -> float:
    def at(device: str, xv: Any) -> float:
        opts = {k: _substitute(v, xv) for k, v in check.options.items()}
        return _metric(bench.result(device, opts), _substitute(check.metric, xv), check)

    def value(xv: Any) -> float:
        v = at(check.device, xv)
        return v / at(check.relative_to, xv) if check.relative_to else v

    if check.baseline_x is not None:
        return value(x) - value(check.baseline_x)
    return value(x)


def run_check(bench: _Bench, check: Check) -> dict[str, Any]:
    """Model vs measured per point of ``check``, with the relative error and the verdict."""
    rows = []
    for x, measured in check.points:
        model = _model_value(bench, check, x)
        err = (model - measured) / measured
        rows.append({"x": x, "measured": measured, "model": model, "rel_error": err,
                     "within": abs(err) <= check.tolerance_rel})
    errs = [abs(r["rel_error"]) for r in rows]
    return {
        "id": check.id, "device": check.device, "title": check.title, "metric": check.metric,
        "relative_to": check.relative_to, "x_label": check.x_label, "unit": check.unit,
        "source": check.source, "figure": check.figure, "note": check.note,
        "tolerance_rel": check.tolerance_rel, "points": rows,
        "mean_abs_rel_error": sum(errs) / len(errs), "max_abs_rel_error": max(errs),
        "within_count": sum(r["within"] for r in rows), "within": all(r["within"] for r in rows),
    }


def run(checks: list[Check], device: str | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Run ``checks`` (those of ``device`` only, when given) with parameter ``overrides`` per preset;
    returns ``{"version", "checks": [...], "devices": {preset: summary}}`` (docs/validation.md)."""
    chosen = [c for c in checks if device is None or c.device == device]
    if device is not None and not chosen:
        known = sorted({c.device for c in checks})
        raise ConfigError("--device", device, f"no check of this preset (checked: {', '.join(known)})")
    bench = _Bench(overrides or {})
    results = [run_check(bench, c) for c in chosen]
    devices = _tally(results, lambda r: r["device"])
    for d in devices.values():
        errs = d.pop("_errs")
        d["mean_abs_rel_error"] = sum(errs) / len(errs)
        d["max_abs_rel_error"] = max(errs) if errs else math.nan
    return {"version": VERSION, "checks": results, "devices": devices, "groups": group_summary(results)}


def _tally(results: list[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, dict[str, Any]]:
    """Checks and points counted per ``key(check result)``, with each one's |relative errors| under
    ``_errs`` (for the caller's statistics)."""
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        t = out.setdefault(key(r), {"checks_count": 0, "points_count": 0, "within_count": 0,
                                    "checks_within_count": 0, "_errs": []})
        t["checks_count"] += 1
        t["checks_within_count"] += int(r["within"])
        t["points_count"] += len(r["points"])
        t["within_count"] += r["within_count"]
        t["_errs"].extend(abs(p["rel_error"]) for p in r["points"])
    return out


#: The catalog's halves by device family: the memory media, and the fabric that reaches them.
GROUPS: dict[str, tuple[str, ...]] = {
    "media": ("pmem", "dram", "ssd", "hbm"),
    "fabric": ("cxl_link", "cxl_protocol", "cxl_switch", "cxl_mem", "pcie"),
}


def group_summary(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per group of :data:`GROUPS` (families not listed: ``other``): checks and points counted,
    within tolerance, and the median and mean |relative error| over the group's points."""
    def group(r: dict[str, Any]) -> str:
        family = r["device"].split("/", 1)[0]
        return next((g for g, fams in GROUPS.items() if family in fams), "other")

    out = _tally(results, group)
    for g in out.values():
        errs = sorted(g.pop("_errs"))
        n = len(errs)
        g["median_abs_rel_error"] = (errs[n // 2] if n % 2 else (errs[n // 2 - 1] + errs[n // 2]) / 2) if n else math.nan
        g["mean_abs_rel_error"] = sum(errs) / n if n else math.nan
    return out
