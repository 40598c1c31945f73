"""Sweep specs: a YAML file naming a base (systems, workloads, batches, seed, fixed overrides) and
axes (``grid`` and/or ``zip``) over any configuration key, the workload and the system.

File format (``version: 1``; every key below is optional except ``version`` and ``base.systems``)::

    version: 1
    name: pmem-write-bw
    description: PMEM write bandwidth vs batch time
    base:
      systems: [pmem, cxl-b, cxl]     # names in configs/ or YAML paths
      workloads: [rm1, rm2]           # default: each system's own workload
      batches: 5                      # measured batches, or auto (the default)
      warmup_batches: 1               # default: auto with batches auto, else each system's
      batches_ci_fraction: 1%         # auto's target (default 1 %)
      seed: 1
      set:                            # dotted config keys applied to every point (like --set)
        workload_overrides.batch_size: 128
    axes:
      grid:                           # every combination of these lists
        devices.table_memory.params.write_bw_GBps: [0.5, 1, 2, 4]
      zip:                            # lists of equal length walked together
        devices.switch.levels: [1, 2]
        seed: [1, 2]

An axis may apply to some systems only: ``topology.cxl_mems_count: {values: [1, 2, 4], systems:
[cxl, pcie]}`` sweeps the key on those systems and leaves it at its configured value on the others
(their points do not repeat; the axis column is null for them). Scaling studies need it: a host-PMEM
system has no CXL-MEMs to count.

Batches: a spec that fixes no ``batches`` samples with stated confidence (``batches: auto``,
:mod:`cxlsim.systems.sampling`): each point measures until the 95 % interval of its mean batch
time is within ``batches_ci_fraction`` of it (5 to 20 batches), after a warm-up decided from the
batch times (unless ``warmup_batches`` is given). ``batches: N`` runs exactly N, as before.

An axis key is ``system``, ``workload`` or a dotted key of the system configuration (see
:mod:`cxlsim.systems.config`: ``pipeline.relaxed_lookup``, ``devices.switch.levels``,
``workload_overrides.batch_size``, ``seed``, ``batches``...). Points are the product, in this
order, of systems, workloads, each grid axis (in file order) and the zip walk.

Contract: :func:`load_spec` rejects unknown keys, wrong types, unknown systems or workloads,
unequal zip lengths, a key swept twice (or both fixed and swept) and duplicate points with a
:class:`~cxlsim.errors.ConfigError` naming the file and key path. Before any point runs it loads
each system with the fixed sets and with each axis value (each zip step) where the axis applies: an
unknown axis key, or a value no point could run (``devices.table_memory.count: [0]``,
``pipeline.relaxed_lookup: [true]`` on ``pmem``), is refused naming the spec file, the axis and the
value's index, and the system, before any point runs (not per point, at run time, blamed on
``--set``). A point that only a combination of axes makes invalid, or that fails at run time, is
recorded as a failed point and the sweep goes on.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cxlsim.config.bounds import MAX_SEED
from cxlsim.config.params import Param, unknown_key_message
from cxlsim.config.yamlio import check_version, read_yaml
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.config import load_system, system_path
from cxlsim.systems.sampling import AUTO, parse_ci
from cxlsim.workloads.catalog import load_workload, workload_path

TOP_KEYS = ("version", "name", "description", "base", "axes")
BASE_KEYS = ("systems", "workloads", "batches", "warmup_batches", "batches_ci_fraction", "seed", "set")
AXES_KEYS = ("grid", "zip")
#: Axis keys that are not dotted configuration keys.
POINT_KEYS = ("system", "workload")
#: base keys that are configuration keys of every point.
BASE_CONFIG_KEYS = ("batches", "warmup_batches", "batches_ci_fraction", "seed")


@dataclass(frozen=True)
class Point:
    """One simulation of a sweep: a system, a workload and configuration overrides.

    ``sets`` are dotted configuration keys in application order; ``swept`` holds the values of the
    spec's axes (``system`` and ``workload`` always) and becomes the leading CSV columns.
    ``timeline`` keeps the trace of the measured batches in the result (for Figure-12 plots).
    """

    system: str
    workload: str | None
    sets: tuple[tuple[str, Any], ...] = ()
    swept: tuple[tuple[str, Any], ...] = ()
    timeline: bool = False
    #: collect the statistics dump (:mod:`cxlsim.reports.stats`) into the point's record (``stats``)
    stats: bool = False
    #: where each set came from in the spec (key, file or option, key path there): a run's error names
    #: it, not ``--set`` (not part of what the point simulates: outside :attr:`id`)
    origins: tuple[tuple[str, str, str], ...] = field(default=(), compare=False)

    @property
    def set_origins(self) -> dict[str, tuple[str, str]]:
        return {k: (where, there) for k, where, there in self.origins}

    @property
    def id(self) -> str:
        """A stable hash of what the point simulates (not of how it is labelled)."""
        ident = {"system": self.system, "workload": self.workload, "sets": sorted(dict(self.sets).items()),
                 "timeline": self.timeline, **({"stats": True} if self.stats else {})}
        text = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        extra = " ".join(f"{k}={_fmt(v)}" for k, v in self.swept if k not in POINT_KEYS)
        return " ".join(filter(None, [self.system, self.workload or "", extra, "timeline" if self.timeline else ""]))

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "workload": self.workload, "sets": dict(self.sets),
                "timeline": self.timeline, **({"stats": True} if self.stats else {})}


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep spec and its points (in spec order)."""

    name: str
    description: str
    source: str
    document: dict[str, Any]
    axes: tuple[str, ...]          # swept keys in column order (system, workload first)
    points: tuple[Point, ...] = field(default_factory=tuple)


def _fmt(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (bool, type(None))) else str(v)


def load_spec(path: str | Path, extra_sets: Sequence[tuple[str, Any]] = ()) -> SweepSpec:
    """Read and validate a sweep spec; ``extra_sets`` (from ``--set``) apply to every point."""
    path = Path(path)
    where = str(path)
    doc = read_yaml(path)
    check_version(doc, where)
    return build_spec(doc, where, extra_sets, default_name=path.stem)


def build_spec(doc: Mapping[str, Any], where: str, extra_sets: Sequence[tuple[str, Any]] = (),
               default_name: str = "sweep", check: bool = True) -> SweepSpec:
    """Validate a spec document (already read) and expand its points; ``check``: load every
    system with each axis value before any point runs (:func:`_check_grid`)."""
    _keys(doc, TOP_KEYS, where, "")
    base = doc.get("base")
    if not isinstance(base, Mapping):
        raise ConfigError(where, "base", "missing or not a mapping (give at least base.systems)")
    _keys(base, BASE_KEYS, where, "base.")
    axes_doc = doc.get("axes") or {}
    if not isinstance(axes_doc, Mapping):
        raise ConfigError(where, "axes", "expected a mapping with grid: and/or zip:")
    _keys(axes_doc, AXES_KEYS, where, "axes.")
    only: dict[str, list[str]] = {}  # axis key -> the systems it applies to (absent: all)
    grid = _axis_block(axes_doc.get("grid"), where, "axes.grid", only)
    zipped = _axis_block(axes_doc.get("zip"), where, "axes.zip", only)
    lengths = {k: len(v) for k, v in zipped.items()}
    if len(set(lengths.values())) > 1:
        raise ConfigError(where, "axes.zip", "lists must have equal lengths, got "
                          + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
    for key in grid:
        if key in zipped:
            raise ConfigError(where, f"axes.zip.{key}", "also swept in axes.grid; sweep a key once")

    fixed: dict[str, tuple[str, Any]] = {}  # config key -> (where it came from, value)
    for key in BASE_CONFIG_KEYS:
        if key in base:
            value = base[key]
            if key == "batches_ci_fraction":
                try:
                    parse_ci(value, f"base.{key}")
                except InputError as exc:
                    raise ConfigError(where, f"base.{key}", str(exc)) from None
            elif not (value == AUTO and key != "seed") and (not isinstance(value, int) or isinstance(value, bool)):
                raise ConfigError(where, f"base.{key}", f"expected a whole number{'' if key == 'seed' else ' or auto'}, "
                                  f"got {value!r}")
            fixed[key] = (f"base.{key}", value)
    base_set = base.get("set") or {}
    if not isinstance(base_set, Mapping):
        raise ConfigError(where, "base.set", "expected a mapping of dotted.key: value")
    for key, value in base_set.items():
        _check_key(str(key), where, f"base.set.{key}")
        if key in POINT_KEYS:
            raise ConfigError(where, f"base.set.{key}", f"give {key}s in base.{key}s")
        if key in fixed:
            raise ConfigError(where, f"base.set.{key}", f"also given as {fixed[key][0]}")
        fixed[str(key)] = (f"base.set.{key}", value)
    for key, value in extra_sets:
        if key == "system":
            raise ConfigError("--set", "system", "a sweep's systems are in base.systems or an axis; "
                              "the --set would change nothing")
        if key == "workload" and (base.get("workloads") or "workload" in grid or "workload" in zipped):
            where_wl = "base.workloads" if base.get("workloads") else "axes"
            raise ConfigError("--set", "workload", f"every point names its workload ({where_wl} of {where}), "
                              "so the --set would change nothing; edit the spec instead")
        if key == "workload":
            _check_names([value], "workload", "--set", "workload")
        fixed[key] = ("--set", value)  # --set wins over the file, like everywhere else

    swept = {**grid, **zipped}
    seed = Param("seed", int, "seed of the input streams", minimum=0, maximum=MAX_SEED)  # as a system reads it
    for origin, value in [fixed["seed"]] if "seed" in fixed else []:
        seed.coerce(value, "--set" if origin == "--set" else where, "seed" if origin == "--set" else origin)
    for value in swept.get("seed", []):
        seed.coerce(value, where, f"{'axes.grid' if 'seed' in grid else 'axes.zip'}.seed")
    for key in swept:
        block = "axes.grid" if key in grid else "axes.zip"
        if key in fixed:
            raise ConfigError(where, f"{block}.{key}", f"also fixed by {fixed[key][0]}; fix or sweep a key, not both")
    # sampling with stated confidence unless the spec fixes the counts (module docstring)
    if "batches" not in fixed and "batches" not in swept:
        fixed["batches"] = ("the default", AUTO)
    if fixed.get("batches", ("", None))[1] == AUTO and "warmup_batches" not in fixed and "warmup_batches" not in swept:
        fixed["warmup_batches"] = ("the default", AUTO)
    systems = _names(base, "systems", where, required="system" not in swept)
    workloads = _names(base, "workloads", where, required=False)
    for key, names in (("system", systems), ("workload", workloads)):
        if key in swept and names:
            block = "axes.grid" if key in grid else "axes.zip"
            raise ConfigError(where, f"{block}.{key}", f"also given as base.{key}s; use one")
    _check_names(systems, "system", where, "base.systems")
    _check_names(workloads, "workload", where, "base.workloads")
    for key in POINT_KEYS:
        if key in swept:
            block = "axes.grid" if key in grid else "axes.zip"
            _check_names(swept[key], key, where, f"{block}.{key}")
            if key in only:
                raise ConfigError(where, f"{block}.{key}.systems", f"the {key} axis cannot be limited to systems")
    all_systems = set(systems) | set(swept.get("system", []))
    for key, names in only.items():
        block = "axes.grid" if key in grid else "axes.zip"
        unknown = [n for n in names if n not in all_systems]
        if unknown:
            raise ConfigError(where, f"{block}.{key}.systems", f"{', '.join(map(str, unknown))} not among the sweep's "
                              f"systems ({', '.join(sorted(all_systems))})")

    dims: list[list[dict[str, Any]]] = [
        [{"system": s} for s in systems] or [{}],
        [{"workload": w} for w in workloads] or [{}],
    ]
    dims += [[{k: v} for v in values] for k, values in grid.items()]
    if zipped:
        n = next(iter(lengths.values()))
        dims.append([{k: zipped[k][i] for k in zipped} for i in range(n)])
    axis_names = ["system", "workload"] + [k for k in swept if k not in POINT_KEYS]

    fixed_sets = tuple((k, v) for k, (_, v) in fixed.items())
    origin = _fixed_origins(fixed, where)
    if check:
        _check_grid(systems or list(swept.get("system", [])), workloads or list(swept.get("workload", [])),
                    fixed, grid, zipped, only, where)
    index = {k: {_ident(v): i for i, v in reversed(list(enumerate(vs)))} for k, vs in swept.items()}
    points: list[Point] = []
    seen: dict[str, int] = {}
    for combo in itertools.product(*dims):
        values: dict[str, Any] = {}
        for part in combo:
            values.update(part)
        system = str(values["system"])
        applies = {k: k not in only or system in only[k] for k in swept}
        sets = fixed_sets + tuple((k, values[k]) for k in swept if k not in POINT_KEYS and applies[k])
        p = Point(
            system=system,
            workload=None if values.get("workload") is None else str(values["workload"]),
            sets=sets,
            swept=tuple((k, values.get(k) if applies.get(k, True) else None) for k in axis_names),
            origins=tuple((k, *origin[k]) for k in fixed)
            + tuple((k, where, f"{'axes.grid' if k in grid else 'axes.zip'}.{k}[{index[k][_ident(values[k])]}]")
                    for k in swept if k not in POINT_KEYS and applies[k]),
        )
        if p.id in seen and not all(applies.values()):
            continue  # the same point again: an axis that does not apply to this system
        if p.id in seen:
            raise ConfigError(where, "axes", f"points {seen[p.id] + 1} and {len(points) + 1} are identical "
                              f"({p.describe()}); remove the repeated value")
        seen[p.id] = len(points)
        points.append(p)
    return SweepSpec(
        name=str(doc.get("name", default_name)),
        description=str(doc.get("description", "")),
        source=where,
        document=dict(doc),
        axes=tuple(axis_names),
        points=tuple(points),
    )


def _fixed_origins(fixed: Mapping[str, tuple[str, Any]], where: str) -> dict[str, tuple[str, str]]:
    """Where each fixed set came from: ``--set``, or the spec's base key (a default: ``base.KEY``)."""
    return {k: ("--set", k) if src == "--set" else (where, src if src.startswith("base.") else f"base.{k}")
            for k, (src, _) in fixed.items()}


def _ident(value: Any) -> str:
    """A value's identity among an axis's values (they may be unhashable: lists, mappings)."""
    return json.dumps(value, sort_keys=True, default=str)


def _check_grid(systems: Sequence[str], workloads: Sequence[str], fixed: Mapping[str, tuple[str, Any]],
                grid: Mapping[str, list[Any]], zipped: Mapping[str, list[Any]], only: Mapping[str, list[str]],
                where: str) -> None:
    """Load each system of the sweep (and each workload with its overrides: the sweep's, or the
    system's own) with the fixed sets, then with each grid value and each zip step (the zip's keys
    together), each where its axis applies: an unknown axis key or a value that no point could run
    is refused now, naming the spec file and the axis (or the base key, or ``--set``) and the
    value's index, before any point runs. What only a combination of axes makes invalid stays a
    failed point (a run finds it). Errors of a system's own files name them."""
    origin = _fixed_origins(fixed, where)
    base = [(k, v) for k, (_, v) in fixed.items()]
    steps: list[list[tuple[str, Any, str]]] = [[]]  # each: the (key, value, where in the spec) it adds
    for key, values in grid.items():
        if key not in POINT_KEYS:
            steps += [[(key, v, f"axes.grid.{key}[{i}]")] for i, v in enumerate(values)]
    zip_keys = [k for k in zipped if k not in POINT_KEYS]
    if zip_keys:
        steps += [[(k, zipped[k][i], f"axes.zip.{k}[{i}]") for k in zip_keys] for i in range(len(zipped[zip_keys[0]]))]
    for system in systems:
        for step in steps:
            adds = [(k, v, kp) for k, v, kp in step if k not in only or system in only[k]]
            if step and not adds:
                continue
            try:
                cfg = load_system(system, base + [(k, v) for k, v, _ in adds],
                                  {**origin, **{k: (where, kp) for k, _, kp in adds}})
                for workload in workloads or [cfg.workload]:
                    try:
                        load_workload(workload, cfg.workload_overrides, cfg.workload_overrides_where,
                                      "workload_overrides.")
                    except ConfigError as exc:
                        raise cfg.blame(exc) from None
            except ConfigError as exc:
                if exc.where not in (where, "--set"):
                    raise  # the system's own file, its platform's or a preset's: it names them
                key = exc.key
                if exc.message.startswith("unknown key") and any(key == kp for _, _, kp in adds):
                    key = key.rsplit("[", 1)[0]  # the axis's key, not one of its values
                raise ConfigError(exc.where, key, f"{exc.message} (system {system})") from None


def _keys(doc: Mapping[str, Any], known: Sequence[str], where: str, prefix: str) -> None:
    for key in doc:
        if key not in known:
            raise ConfigError(where, f"{prefix}{key}", unknown_key_message(str(key), known)
                              + f" (known: {', '.join(known)})")


def _check_key(key: str, where: str, kp: str) -> None:
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(where, kp, "empty key part; expected a dotted configuration key")


def _axis_block(block: Any, where: str, kp: str, only: dict[str, list[str]]) -> dict[str, list[Any]]:
    """An axis block's ``key: [values]``; an entry ``key: {values: [...], systems: [...]}`` also
    records in ``only`` the systems it applies to."""
    if block is None:
        return {}
    if not isinstance(block, Mapping) or not block:
        raise ConfigError(where, kp, "expected a mapping of key: [values]")
    out: dict[str, list[Any]] = {}
    for key, values in block.items():
        key = str(key)
        _check_key(key, where, f"{kp}.{key}")
        if isinstance(values, Mapping):
            _keys(values, ("values", "systems"), where, f"{kp}.{key}.")
            names = values.get("systems")
            if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
                raise ConfigError(where, f"{kp}.{key}.systems", f"expected a non-empty list of system names, got {names!r}")
            only[key] = list(names)
            values = values.get("values")
        if not isinstance(values, list) or not values:
            raise ConfigError(where, f"{kp}.{key}", f"expected a non-empty list of values, got {values!r}")
        out[key] = values
    return out


def _names(base: Mapping[str, Any], key: str, where: str, required: bool) -> list[str]:
    value = base.get(key)
    if value is None:
        if required:
            raise ConfigError(where, f"base.{key}", "missing: name at least one (e.g. [pmem, cxl])")
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(where, f"base.{key}", f"expected a list of names, got {value!r}")
    if len(set(value)) != len(value):
        raise ConfigError(where, f"base.{key}", "a name is repeated")
    return list(value)


def _check_names(names: Sequence[Any], kind: str, where: str, kp: str) -> None:
    """Systems and workloads must exist: a catalog name or an existing YAML file."""

    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise ConfigError(where, f"{kp}[{i}]", f"expected a {kind} name, got {name!r}")
        if Path(name).suffix in (".yaml", ".yml"):
            if not Path(name).is_file():
                raise ConfigError(where, f"{kp}[{i}]", f"{name}: file not found")
            continue
        try:
            (system_path if kind == "system" else workload_path)(name)
        except ConfigError as exc:
            raise ConfigError(where, f"{kp}[{i}]", f"{name}: {exc.message}") from None
