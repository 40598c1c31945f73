""".ci/mutants: which lines of a change are mutated, and which tests a mutated module runs.

The script is not a package module; it is loaded from its file (it imports cosmic-ray only when it
makes mutants, so these tests need only the standard library, bar the last one).
"""

from __future__ import annotations

import difflib
import importlib.util
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "mutants"


def _load():
    loader = SourceFileLoader("ci_mutants", str(SCRIPT))
    spec = importlib.util.spec_from_loader("ci_mutants", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["ci_mutants"] = module  # dataclasses look their module up by name
    loader.exec_module(module)
    return module


M = _load()

DIFF = """\
diff --git a/cxlsim/a.py b/cxlsim/a.py
index 1111111..2222222 100644
--- a/cxlsim/a.py
+++ b/cxlsim/a.py
@@ -3 +3 @@ def f():
-    return 1
+    return 2
@@ -10,0 +11,3 @@ def g():
+    x = 1
+    y = 2
+    z = 3
@@ -20,2 +22,0 @@ def h():
-    gone = 1
-    gone = 2
diff --git a/cxlsim/old.py b/cxlsim/old.py
deleted file mode 100644
--- a/cxlsim/old.py
+++ /dev/null
@@ -1,2 +0,0 @@
-a = 1
-b = 2
diff --git a/cxlsim/data.yaml b/cxlsim/data.yaml
--- a/cxlsim/data.yaml
+++ b/cxlsim/data.yaml
@@ -1 +1 @@
-k: 1
+k: 2
diff --git a/cxlsim/moved.py b/cxlsim/kernels/moved.py
similarity index 90%
rename from cxlsim/moved.py
rename to cxlsim/kernels/moved.py
--- a/cxlsim/moved.py
+++ b/cxlsim/kernels/moved.py
@@ -5,0 +6 @@ import numpy as np
+from numba import njit
diff --git a/cxlsim/only_deleted.py b/cxlsim/only_deleted.py
--- a/cxlsim/only_deleted.py
+++ b/cxlsim/only_deleted.py
@@ -4 +3,0 @@ x = 1
-y = 2
"""


def test_changed_lines_are_the_new_sides_added_lines():
    assert M.changed_lines(DIFF) == {"cxlsim/a.py": {3, 11, 12, 13}, "cxlsim/kernels/moved.py": {6}}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abcdef"), max_size=30), st.lists(st.sampled_from("abcdefg"), max_size=30))
def test_changed_lines_of_any_diff_are_the_lines_not_kept(old, new):
    """Any edit (replaced, inserted, deleted lines; empty files; a last line changed): the lines
    reported are exactly the new file's lines outside the blocks the two versions share, as a
    zero-context unified diff presents them (git's ``-U0`` form)."""
    old_lines = [f"{c}\n" for c in old]
    new_lines = [f"{c}\n" for c in new]
    body = "".join(difflib.unified_diff(old_lines, new_lines, "a/cxlsim/m.py", "b/cxlsim/m.py", n=0))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    expected = {j + 1 for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert")
                for j in range(j1, j2)}
    assert M.changed_lines(body).get("cxlsim/m.py", set()) == expected


def test_changed_lines_of_a_real_git_diff(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    src = tmp_path / "cxlsim" / "m.py"
    src.parent.mkdir()
    src.write_text("".join(f"v{i} = {i}\n" for i in range(1, 11)))
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    lines = src.read_text().splitlines(True)
    lines[1] = "v2 = 20\n"  # line 2 rewritten
    lines[5:7] = []  # lines 6 and 7 deleted
    lines.append("v11 = 11\n")  # a last line added: line 9 of the new file
    src.write_text("".join(lines))
    diff = subprocess.run([*git, "diff", "--no-color", "-U0", "HEAD", "--", "cxlsim/"], check=True,
                          capture_output=True, text=True).stdout
    assert M.changed_lines(diff) == {"cxlsim/m.py": {2, 9}}


@pytest.mark.parametrize("start,end,changed,eligible", [
    ((5, 4), (5, 9), {5}, True),
    ((5, 4), (5, 9), {4, 6}, False),  # a neighbour changed, not this line
    ((4, 0), (7, 2), {6}, True),  # a span over several lines touches one that changed
    ((4, 0), (6, 0), {6}, False),  # a span ending at column 0 ends on the line before
    ((8, 1), (8, 3), {8}, False),  # line 8 carries the pragma
])
def test_eligible_mutations_touch_a_changed_line_without_the_pragma(start, end, changed, eligible):
    source = [f"x{i} = {i}" for i in range(1, 8)] + ["y = 1  # pragma: no mutate", "z = 2"]
    assert M.eligible(start, end, changed, source) is eligible


@pytest.mark.parametrize("module,targets", [
    ("cxlsim/devices/memory/media/media.py", ("tests/devices", "tests/contracts")),
    ("cxlsim/kernels/row_bitmap.py", ("tests/kernels", "tests/contracts")),
    ("cxlsim/systems/machine/core.py", ("tests/systems", "tests/contracts")),
    ("cxlsim/engine/executor.py", ("tests/systems", "tests/contracts")),  # an override by sub-package
    ("cxlsim/rng.py", ("tests/core/test_rng.py", "tests/contracts")),  # an override by module
    ("cxlsim/units.py", ("tests",)),  # no mirrored folder: the fast tier
    ("cxlsim/cli/run.py", ("tests",)),
])
def test_test_targets_mirror_the_tree(module, targets):
    assert M.test_targets(module) == targets


def test_every_module_maps_to_tests_that_exist():
    """The mapping cannot rot: every module's targets are test files or folders of this checkout."""
    for path in sorted((ROOT / "cxlsim").rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        for target in M.test_targets(module):
            assert (ROOT / target).exists(), (module, target)


def test_only_the_changed_lines_are_mutated(tmp_path):
    pytest.importorskip("cosmic_ray")
    module = tmp_path / "cxlsim" / "m.py"
    module.parent.mkdir()
    module.write_text("def f(a, b):\n    c = a + b\n    d = a - b  # pragma: no mutate\n    return c < d\n")
    config = M.Config(["true"], 1.0, (), (M.re.compile("core/ReplaceComparisonOperator_Lt_(?!Gt$)"),))
    mutants, sources = M.find_mutants({"cxlsim/m.py": {2, 3}}, config, tmp_path)
    assert sources == {"cxlsim/m.py": module.read_text()}
    assert {m.line for m in mutants} == {2}  # line 3 carries the pragma, line 4 did not change
    assert {m.mutated_line() for m in mutants} >= {"c = a - b", "c = a * b"}
    mutants, _ = M.find_mutants({"cxlsim/m.py": {4}}, config, tmp_path)
    assert [m.mutated_line() for m in mutants if m.operator.startswith("core/ReplaceComparison")] == ["return c > d"]
    assert all(m.targets == ("tests",) for m in mutants)  # tmp_path has no tests/: the fast tier


@given(st.integers(0, 400), st.integers(1, 400))
def test_wilson_interval_holds_the_sample_rate_within_the_unit_range(killed, n):
    killed = min(killed, n)
    lo, hi = M.wilson_interval(killed, n)
    assert 0.0 <= lo <= killed / n <= hi <= 1.0
    assert hi - lo < 1.0


def test_wilson_interval_of_a_known_sample():
    # 15 of 20: the Wilson 95 % interval is 53.1 %–88.8 % (Wilson 1927; Newcombe 1998, table I's method 3)
    lo, hi = M.wilson_interval(15, 20)
    assert lo == pytest.approx(0.531, abs=5e-4) and hi == pytest.approx(0.888, abs=5e-4)


def _mutants(n):
    return [M.Mutant(f"cxlsim/m{i % 3}.py", i, "core/X", 0, "", ("tests",)) for i in range(n)]


@given(st.integers(1, 60), st.integers(1, 80), st.integers(0, 2**31))
def test_a_sample_is_k_distinct_mutants_in_order_and_repeats_for_a_seed(n, k, seed):
    ms = _mutants(n)
    got = M.sample_mutants(ms, k, seed)
    assert len(got) == min(k, n)
    assert len({id(m) for m in got}) == len(got) and all(any(m is x for x in ms) for m in got)
    assert [ms.index(m) for m in got] == sorted(ms.index(m) for m in got)
    assert [id(m) for m in M.sample_mutants(ms, k, seed)] == [id(m) for m in got]
