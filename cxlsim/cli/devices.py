"""List device presets, or show one preset's resolved parameters with units and sources.

  cxlsim devices                      one line per preset
  cxlsim devices --family pmem        only one family
  cxlsim devices show pmem/paper      resolved parameters (value, unit, source), then the full
                                      reference of every bibliography key the sources cite
  cxlsim devices show pmem/paper --set write_bw_GBps=1.5
  cxlsim devices show --config my-pmem.yaml
"""

from __future__ import annotations

import argparse

from cxlsim.config.catalog import list_presets, preset_path
from cxlsim.config.sources import references_for
from cxlsim.config.yamlio import parse_set, read_yaml
from cxlsim.devices.registry import family_names, get_family, load_preset
from cxlsim.errors import InputError
from cxlsim.reports.output import emit, format_table
from cxlsim.units import unit_of

HELP = "list device presets; `devices show PRESET` prints resolved parameters, sources and references"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=["list", "show"], default="list", help="list (default) or show")
    p.add_argument("preset", nargs="?", help="preset name family/name (for show)")
    p.add_argument("--family", help="only presets of this family (for list)")


def run(args: argparse.Namespace) -> int:
    if args.action == "show":
        return _show(args)
    if args.family and args.family not in family_names():
        raise InputError(f"--family: unknown device family {args.family!r} (families: {', '.join(family_names())})")
    rows = []
    for name in list_presets(args.family):  # from the preset files alone: no model is imported
        doc = read_yaml(preset_path(name))
        rows.append({"preset": name, "family": name.split("/")[0], "description": str(doc.get("description", ""))})
    emit(args, {"presets": rows}, lambda d: format_table(
        ["preset", "description"], [[r["preset"], r["description"]] for r in d["presets"]]))
    return 0


def _show(args: argparse.Namespace) -> int:
    target = args.config or args.preset
    if not target:
        raise InputError("devices show: name a preset (e.g. pmem/paper) or give --config FILE")
    overrides = dict(parse_set(args.set))
    pre = load_preset(target, overrides)
    schema_doc = _schema_docs(pre.family)
    params = [
        {"key": k, "value": v, "unit": _unit(k), "source": pre.params.sources.get(k, ""), "doc": schema_doc.get(k, "")}
        for k, v in pre.params.items()
    ]
    data = {"preset": pre.name, "family": pre.family, "description": pre.description, "file": pre.path, "params": params}
    if pre.emulates is not None:  # the device it emulates, priced as it under energy.emulated_media: as_emulated
        data["emulates"] = {"preset": pre.emulates, "source": pre.emulates_source}
    notes = [p["source"] for p in params] + ([pre.emulates_source] if pre.emulates is not None else [])
    data["references"] = [r.as_dict() for r in references_for(notes)]

    def render(d: dict) -> str:
        head = f"{d['preset']} ({d['family']}): {d['description']}\n  from {d['file']}\n"
        if "emulates" in d:
            head += (f"  emulates {d['emulates']['preset']} (its energy under energy.emulated_media: as_emulated): "
                     f"{d['emulates']['source']}\n")
        text = head + format_table(["parameter", "value", "unit", "source"],
                                   [[p["key"], p["value"], p["unit"], p["source"]] for p in d["params"]])
        if d["references"]:
            text = text.rstrip("\n") + "\n\nreferences:\n" + "".join(
                f"  [{r['key']}] {r['citation']}\n" for r in d["references"])
        return text

    emit(args, data, render)
    return 0


def _unit(key: str) -> str:
    return unit_of(key) or ""


def _schema_docs(family: str) -> dict[str, str]:
    return {p.name: p.doc for p in get_family(family).schema.params}
