"""Every key a user can set, generated from the schemas that validate them.

  cxlsim keys                               every key, one a line
  cxlsim keys pipeline.                     the keys under a prefix
  cxlsim keys devices.table_memory          a role: its entry's keys and its families' parameters
  cxlsim keys family:pmem                   a device family's preset parameters
  cxlsim keys --json                        machine-readable
  cxlsim keys --markdown                    the reference page (docs/reference.md)
  python -m cxlsim.cli.keys --write docs/reference.md

Keys are written as ``--set`` takes them for a system file (``batches``, ``pipeline.persistence``,
``devices.ROLE.params.KEY``); the keys of the other files carry the file kind before a colon:
``family:FAMILY.KEY`` (a preset's ``params:``), ``workload:KEY`` (a workload's ``params:``; a system
replaces them under ``workload_overrides.KEY``), ``platform:KEY``, ``ft:SECTION.KEY`` (a
failure-tolerance scenario). Each key shows its type and unit, its default (``required`` if a file
must give it), its bounds (outside: an error) and its plausible range (outside: a warning).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HELP = "every key a user can set (system, device, workload, platform and scenario files), from the schemas"

#: Column headers of the listing and the reference page.
COLUMNS = ("key", "type", "default", "bounds", "plausible", "description")


@dataclass(frozen=True)
class Key:
    """One settable key as the reference lists it (every field text, empty when not applicable)."""

    key: str
    type: str
    default: str
    bounds: str
    plausible: str
    description: str
    section: str


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("prefix", nargs="?", default="", metavar="PREFIX",
                   help="only the keys starting with PREFIX (e.g. pipeline., devices.table_memory, family:pmem)")
    p.add_argument("--markdown", action="store_true", help="the reference page in Markdown (docs/reference.md)")
    p.add_argument("--write", metavar="FILE", help="write the Markdown reference page to FILE")


def run(args: argparse.Namespace) -> int:
    from cxlsim.errors import InputError
    from cxlsim.reports.output import emit, format_table

    if args.write:
        Path(args.write).write_text(markdown(), encoding="utf-8")
        return 0
    if args.markdown:
        if args.prefix:
            raise InputError("keys: --markdown writes the whole reference; give no PREFIX")
        sys.stdout.write(markdown())
        return 0
    rows = select(args.prefix)
    emit(args, {"keys": [asdict(r) for r in rows]}, lambda d: format_table(
        ["key", "type", "default", "bounds", "plausible", "description"],
        [[r["key"], r["type"], r["default"], r["bounds"], r["plausible"], r["description"]] for r in d["keys"]]))
    return 0


# -- what the schemas declare ---------------------------------------------------------------------

def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if value is None:
        return ""
    if isinstance(value, str):
        return value if value else '""'
    return str(value)


def _key(name: str, prm: Any, section: str) -> Key:
    """The row of :class:`~cxlsim.config.params.Param` ``prm`` under the key ``name``."""
    from cxlsim.config.params import range_text

    kind = f"list of {prm.item.__name__}" if prm.kind is tuple else {dict: "mapping"}.get(prm.kind, prm.kind.__name__)
    unit = prm.unit
    bounds = []
    if prm.minimum is not None:
        bounds.append(f"{'>' if prm.exclusive_minimum else '>='} {prm._bound(prm.minimum)}")
    if prm.maximum is not None:
        bounds.append(f"<= {prm._bound(prm.maximum)}")
    choices = prm.choices() if callable(prm.choices) else prm.choices
    if choices:
        bounds.append("one of " + ", ".join(choices))
    plausible = prm.plausible_range
    return Key(name, f"{kind} ({unit})" if unit else kind, "required" if prm.required else _text(prm.default),
               ", ".join(bounds), range_text(*plausible) if plausible else "", " ".join(prm.doc.split()), section)


def _note(name: str, kind: str, doc: str, section: str) -> Key:
    return Key(name, kind, "", "", "", " ".join(doc.split()), section)


def shipped_families() -> list[str]:
    """The device families installed packages declare (entry points: cxlsim's own and a third
    party's) or cxlsim ships presets of, sorted; a family registered at run time, or found only on
    ``$CXLSIM_PATH``, is not documented (the reference is the same wherever it is generated)."""
    from importlib.metadata import entry_points

    from cxlsim.config.catalog import shipped_root
    from cxlsim.devices.registry import ENTRY_POINT_GROUP

    names = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    root = shipped_root("devices")
    names.update(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    return sorted(names)


def _role_families(role: str) -> list[str]:
    """The families role ``role`` takes (its ``kind:`` entries expanded)."""
    from cxlsim.devices.registry import get_family
    from cxlsim.errors import ConfigError
    from cxlsim.systems.config import ROLE_FAMILIES

    out = []
    for name in shipped_families():
        try:
            fam = get_family(name)
        except ConfigError:
            continue
        if name in ROLE_FAMILIES[role] or f"kind:{fam.kind}" in ROLE_FAMILIES[role]:
            out.append(name)
    return out


def all_keys() -> list[Key]:
    """Every documented key, in reference order: the system file, its device roles, the device
    families, workloads, platforms and failure-tolerance scenarios."""
    from cxlsim.devices.registry import get_family
    from cxlsim.errors import ConfigError
    from cxlsim.ft.scenario import FT_SCHEMES, TRACE_EVENT
    from cxlsim.ft.scenario import SECTIONS as FT_SECTIONS
    from cxlsim.systems import config as sc
    from cxlsim.systems.models import SYSTEM_MODELS
    from cxlsim.systems.platform import GROUP_KEYS, PLATFORM_KEYS
    from cxlsim.workloads.schema import WORKLOAD_SCHEMA

    out: list[Key] = []
    system = "system file (configs/*.yaml; --set KEY=VALUE)"
    out += [_key(p.name, p, system) for p in sc.SYSTEM.params]
    out += [_note(name, "mapping", doc, system) for name, doc in sc.SECTIONS.items()]
    models = [(name, SYSTEM_MODELS.get(name)) for name in SYSTEM_MODELS.names()]
    models = [(name, m) for name, m in models if m.params_key and m.params_schema is not None]
    out += [_note(m.params_key, "mapping", f"the parameters of model {name} (systems with model: {name})", system)
            for name, m in models]
    for section, schema in (("pipeline", sc.pipeline_schema()), ("topology", sc.TOPOLOGY), ("energy", sc.ENERGY),
                            ("workload_overrides", WORKLOAD_SCHEMA)):
        out += [_key(f"{section}.{p.name}", p, f"{section}: (system file)") for p in schema.params]
    for name, m in models:
        out += [_key(f"{m.params_key}.{p.name}", p, f"{m.params_key}: (system file, model {name})")
                for p in m.params_schema.params]
    roles = "devices: (system file; platform roles:)"
    entry = sc.DEVICE_ENTRY.by_name()
    for role, doc in sc.ROLES.items():
        families = _role_families(role)
        out.append(_note(f"devices.{role}", "mapping or family/name",
                         f"{doc}; takes {', '.join(families)}", roles))
        memory = f"kind:{sc.MEMORY_KIND}" in sc.ROLE_FAMILIES[role]
        for name, prm in entry.items():
            if name in ("count", "interleave_B") and not memory or name == "levels" and role != "switch":
                continue
            row = _key(f"devices.{role}.{name}", prm, roles)
            if name == "params":
                row = Key(row.key + ".KEY", row.type, "", "", "", f"{row.description}: family:FAMILY.KEY of "
                          f"{', '.join(families)}", roles)
            out.append(row)
    for name in shipped_families():
        try:
            fam = get_family(name)
        except ConfigError:  # a catalog folder without a module
            continue
        section = f"device family {name} (devices/{name}/*.yaml params:; devices.ROLE.params.KEY)"
        out.append(_note(f"family:{name}", f"family ({fam.kind})", fam.doc, section))
        out += [_key(f"family:{name}.{p.name}", p, section) for p in fam.schema.params]
    section = "workload file (workloads/*.yaml params:; workload_overrides.KEY; cxlsim workload --set KEY=VALUE)"
    out += [_key(f"workload:{p.name}", p, section) for p in WORKLOAD_SCHEMA.params]
    section = "platform file (configs/platforms/*.yaml)"
    out += [_note(f"platform:{k}", "", doc, section) for k, doc in PLATFORM_KEYS.items()]
    out += [_note(f"platform:groups[].{k}", "", doc, section) for k, doc in GROUP_KEYS.items()]
    section = "failure-tolerance scenario (configs/ft/*.yaml)"
    for part, schema in FT_SECTIONS.items():
        out += [_key(f"ft:{part}.{p.name}", p, section) for p in schema.params]
    out += [_key(f"ft:trace[].{p.name}", p, section) for p in TRACE_EVENT.params]
    for kind in FT_SCHEMES.names():
        out += [_key(f"ft:schemes[kind={kind}].{p.name}", p, section) for p in FT_SCHEMES.get(kind).SCHEMA.params]
    return out


def _role_expansion(prefix: str) -> list[Key]:
    """For a prefix inside ``devices.ROLE``: the role's parameters by family,
    ``devices.ROLE.params.KEY`` (the family in the description)."""
    from cxlsim.devices.registry import get_family
    from cxlsim.systems.config import ROLES

    parts = prefix.split(".")
    if len(parts) < 2 or parts[0] != "devices" or parts[1] not in ROLES:
        return []
    role = parts[1]
    out = []
    for name in _role_families(role):
        for p in get_family(name).schema.params:
            row = _key(f"devices.{role}.params.{p.name}", p, f"devices.{role}.params")
            out.append(Key(row.key, row.type, row.default, row.bounds, row.plausible,
                           f"[{name}] {row.description}", row.section))
    return out


def select(prefix: str) -> list[Key]:
    """The keys starting with ``prefix`` (all for ""); an unknown prefix is refused naming the
    closest keys."""
    from cxlsim.errors import InputError

    keys = all_keys()
    rows = [k for k in keys if k.key.startswith(prefix)]
    rows += [k for k in _role_expansion(prefix) if k.key.startswith(prefix)]
    if not rows:
        close = difflib.get_close_matches(prefix, _heads(k.key for k in keys), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else " (cxlsim keys lists them all)"
        raise InputError(f"no key starts with {prefix!r}{hint}")
    return rows


def _heads(keys: Iterable[str]) -> list[str]:
    """Every key and each of its dotted heads (``pipeline``, ``pipeline.tables_on``)."""
    out: dict[str, None] = {}
    for key in keys:
        parts = key.split(".")
        for i in range(1, len(parts) + 1):
            out[".".join(parts[:i])] = None
    return list(out)


# -- the reference page ---------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """The reference page (docs/reference.md): every key by section, and the plausibility
    assumption."""
    from cxlsim.config.bounds import PLAUSIBLE_ASSUMPTION, PLAUSIBLE_BY_UNIT, PLAUSIBLE_REACHED
    from cxlsim.config.params import range_text

    lines = [
        "# Configuration reference",
        "",
        "Generated from the schemas by `cxlsim keys --markdown` (refresh with "
        "`python -m cxlsim.cli.keys --write docs/reference.md`); do not edit by hand. "
        "`cxlsim keys PREFIX` shows the same on the command line.",
        "",
        "Keys of a system file are written as `--set` takes them (`pipeline.persistence`, "
        "`devices.table_memory.params.write_bw_GBps`); keys of the other files carry the file kind before a "
        "colon: `family:FAMILY.KEY` (a device preset's `params:`), `workload:KEY` (a workload's `params:`), "
        "`platform:KEY`, `ft:SECTION.KEY` (a failure-tolerance scenario). *default* `required`: the file must "
        "give it. *bounds*: a value outside is an error (exit 2). *plausible*: a value inside the bounds but "
        "outside this range runs, with a one-line warning naming the file or option, the key and the range.",
        "",
        "## Plausible ranges",
        "",
        " ".join(PLAUSIBLE_ASSUMPTION.split()),
        "",
        "By unit, for every parameter in that unit that declares no range of its own: "
        + ", ".join(f"{unit} {range_text(*rng)}" for unit, rng in PLAUSIBLE_BY_UNIT.items())
        + ". The ranges and what reached their ends:",
        "",
        "| quantity | plausible | reached (before widening 10x) |",
        "|---|---|---|",
        *[f"| {what} | {range_text(*rng)} | {_cell(why)} |" for what, (rng, why) in PLAUSIBLE_REACHED.items()],
        "",
    ]
    section = None
    for k in all_keys():
        if k.section != section:
            section = k.section
            lines += ["", f"## {_cell(section)}", "", "| " + " | ".join(COLUMNS) + " |",
                      "|" + "---|" * len(COLUMNS)]
        lines.append("| " + " | ".join(_cell(v) for v in (f"`{k.key}`", k.type, k.default, k.bounds, k.plausible,
                                                          k.description)) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from cxlsim.cli import main

    raise SystemExit(main(["keys", *sys.argv[1:]]))
