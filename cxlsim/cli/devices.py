"""List device presets, or show one preset's resolved parameters with units and sources.

  cxlsim devices                      one line per preset
  cxlsim devices --family pmem        only one family
  cxlsim devices show pmem/paper      resolved parameters (value, unit, source)
  cxlsim devices show pmem/paper --set write_bw_GBps=1.5
  cxlsim devices show --config my-pmem.yaml
"""

from __future__ import annotations

import argparse

from cxlsim.config.catalog import list_presets, load_preset
from cxlsim.config.yamlio import parse_set
from cxlsim.errors import InputError
from cxlsim.reports.output import emit, format_table

HELP = "list device presets; `devices show PRESET` prints resolved parameters and sources"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=["list", "show"], default="list", help="list (default) or show")
    p.add_argument("preset", nargs="?", help="preset name family/name (for show)")
    p.add_argument("--family", help="only presets of this family (for list)")


def run(args: argparse.Namespace) -> int:
    if args.action == "show":
        return _show(args)
    rows = []
    for name in list_presets(args.family):
        pre = load_preset(name)
        rows.append({"preset": name, "family": pre.family, "description": pre.description})
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

    def render(d: dict) -> str:
        head = f"{d['preset']} ({d['family']}): {d['description']}\n  from {d['file']}\n"
        return head + format_table(["parameter", "value", "unit", "source"],
                                   [[p["key"], p["value"], p["unit"], p["source"]] for p in d["params"]])

    emit(args, data, render)
    return 0


def _unit(key: str) -> str:
    from cxlsim.units import unit_of

    return unit_of(key) or ""


def _schema_docs(family: str) -> dict[str, str]:
    from cxlsim.devices.registry import get_family

    return {p.name: p.doc for p in get_family(family).schema.params}
