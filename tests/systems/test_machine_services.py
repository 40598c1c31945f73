"""The axes see the machine through narrow interfaces (cxlsim.systems.machine.services).

Every attribute an axis implementation reads of the machine (``self.m.x``, ``machine.x`` in its
constructor, or ``x`` of a local bound to ``self.m``) is a member a service protocol declares, and
none is private; the machine implements every protocol."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cxlsim
from cxlsim.systems.machine import TrainingMachine
from cxlsim.systems.machine.services import SERVICES, declared_members

AXES = Path(cxlsim.__file__).parent / "axes"


def _is_machine(node: ast.AST, aliases: set[str]) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "m" and isinstance(node.value, ast.Name) and node.value.id == "self":
        return True
    return isinstance(node, ast.Name) and node.id in aliases


def machine_reads(source: str) -> list[tuple[int, str]]:
    """``(line, attribute)`` of every read of the machine in an axis module's ``source``."""
    out = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        aliases = {a.arg for a in fn.args.args if a.arg == "machine"}
        for node in ast.walk(fn):  # locals bound to the machine: `mc = self.m`, `mc, x = self.m, ...`
            if isinstance(node, ast.Assign):
                for tgt, val in _pairs(node):
                    if isinstance(tgt, ast.Name) and _is_machine(val, set()):
                        aliases.add(tgt.id)
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and _is_machine(node.value, aliases):
                out.append((node.lineno, node.attr))
    return out


def _pairs(node: ast.Assign):
    for tgt in node.targets:
        if isinstance(tgt, ast.Tuple) and isinstance(node.value, ast.Tuple):
            yield from zip(tgt.elts, node.value.elts, strict=False)
        else:
            yield tgt, node.value


def test_the_scan_sees_reads_through_every_form():
    src = ("class A:\n    def __init__(self, machine):\n        self.m = machine\n        machine.cpu\n"
           "    def f(self):\n        mc, h = self.m, 1\n        mc._path(1)\n        self.m.dim\n")
    assert sorted(a for _, a in machine_reads(src)) == ["_path", "cpu", "dim"]


def test_axes_read_only_declared_public_members_of_the_machine():
    allowed = declared_members()
    bad = [f"{p.relative_to(AXES)}:{line} {attr}" for p in sorted(AXES.rglob("*.py"))
           for line, attr in machine_reads(p.read_text()) if attr not in allowed or attr.startswith("_")]
    assert bad == []


@pytest.mark.parametrize("proto", SERVICES, ids=lambda p: p.__name__)
def test_the_machine_provides_every_service(proto):
    members = {k for k in vars(proto) if not k.startswith("_")} | set(getattr(proto, "__annotations__", {}))
    methods = {k for k in members if callable(getattr(proto, k, None)) or isinstance(getattr(proto, k, None), property)}
    missing = [k for k in methods if not hasattr(TrainingMachine, k)]
    assert missing == []
