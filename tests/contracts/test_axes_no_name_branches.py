"""Outside the machine and the implementations themselves, code asks an axis implementation (a
property or method) instead of comparing a pipeline choice with its name; the crash machinery keeps
no scheme's protocol."""

from __future__ import annotations

import ast
from pathlib import Path

import cxlsim
from cxlsim.systems import axes

ROOT = Path(cxlsim.__file__).parent
#: The machine binds each axis's implementation (it may read the choices); the implementations own them.
EXEMPT = ("systems/machine/", "axes/")


def _names() -> set[str]:
    return {name for axis in axes.AXES for name in axes.names(axis)}


def _branches(path: Path, names: set[str]) -> list[str]:
    """``<...>.<axis> ==/!=/in <literal name>`` comparisons in ``path`` (``file:line``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        fields = [s.attr for s in sides if isinstance(s, ast.Attribute) and s.attr in axes.AXES]
        literals = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        if fields and literals & names:
            out.append(f"{path}:{node.lineno}")
    return out


def test_no_branch_on_an_axis_choice_outside_the_machine_and_the_implementations():
    names = _names()
    found = [hit for p in sorted(ROOT.rglob("*.py")) if not str(p.relative_to(ROOT)).startswith(EXEMPT)
             for hit in _branches(p, names)]
    assert found == []


def test_the_scan_finds_such_a_branch(tmp_path):
    bad = tmp_path / "probe.py"
    bad.write_text('def f(p):\n    return p.embedding_engine == "host_cpu" or p.persistence in ("undo", "redo")\n')
    assert len(_branches(bad, _names())) == 2


def test_crash_protocols_keep_no_schemes_protocol():
    from cxlsim.crash import protocols, recovery

    for mod in (protocols, recovery):
        assert not {n for n in vars(mod) if n.startswith(("build_", "plan_"))} - {"build_protocol"}
