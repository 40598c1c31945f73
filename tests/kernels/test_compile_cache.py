"""numba's compilation cache (:mod:`cxlsim.kernels.compile_cache`): a read-only installation
caches in the user's folder, and a cold cache says so on stderr. Each case runs in a fresh
interpreter (the cache folder is chosen once, before the kernels are decorated)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # fresh interpreters, numba compiling

ROOT = Path(__file__).resolve().parents[2]

#: a fresh interpreter: optionally pretend the package folder is read-only, then compile one kernel
SCRIPT = """
import os, sys
if sys.argv[1] == "read-only":
    real = os.access
    pkg = os.path.join({root!r}, "cxlsim")
    os.access = lambda path, mode, *a, **k: False if os.path.realpath(path) == pkg else real(path, mode, *a, **k)
import numba
from cxlsim.kernels import sorting
print(numba.config.CACHE_DIR)
assert sorting.key_bits(5) == 3
"""


def run(tmp_path: Path, mode: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "CXLSIM_COMPILE_NOTICE")}
    return subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT)), mode], cwd=ROOT, text=True,
                          capture_output=True, env={**clean, "XDG_CACHE_HOME": str(tmp_path / "xdg"), **env},
                          check=True)


def test_a_read_only_installation_caches_in_the_user_folder(tmp_path):
    out = run(tmp_path, "read-only")
    user = tmp_path / "xdg" / "cxlsim" / "numba"
    assert out.stdout.strip() == str(user)
    assert list(user.rglob("sorting.key_bits-*.nbi"))  # numba wrote the compiled kernel there


def test_a_writable_installation_keeps_numbas_choice(tmp_path):
    out = run(tmp_path, "writable")
    assert out.stdout.strip() in ("", "None")  # numba's default: beside the code
    assert not (tmp_path / "xdg").exists()


def test_a_cold_cache_says_so_on_stderr_and_a_warm_one_is_quiet(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "CXLSIM_COMPILE_NOTICE": "1"}
    cold = run(tmp_path, "writable", **env)
    assert "compiling kernels (first run, cached after)" in cold.stderr and str(tmp_path / "cache") in cold.stderr
    warm = run(tmp_path, "writable", **env)
    assert warm.stderr == ""
    quiet = run(tmp_path / "other", "writable", NUMBA_CACHE_DIR=str(tmp_path / "cache2"))
    assert quiet.stderr == ""  # not a terminal: no notice


# ------------------------------------------------------------------ keyed on the sources a kernel inlines
CALLEE = '''
from numba import njit

SCALE = {scale}


@njit(cache=True, inline="always")
def inlined(x):
    return x + {add}


@njit(cache=True)
def called(x):
    return x * SCALE
'''

KERNEL = '''
import cxlsim.kernels  # noqa: F401  (keys every cached kernel on its sources)
from numba import njit

from kpkg.callee import SCALE, called, inlined


@njit(cache=True)
def kernel(x):
    return called(inlined(x)) + SCALE
'''

RUN = """
import sys
sys.path.insert(0, sys.argv[1])
from kpkg.kernel import kernel
print(kernel(1), kernel.stats.cache_hits.get(kernel.signatures[0], 0) if kernel.signatures else 0)
"""


def test_editing_a_callee_changes_the_next_runs_result(tmp_path):
    """A package of two modules: ``kernel`` (cached) inlines one jitted function of ``callee``, calls
    another and reads its constant. Each edit of ``callee.py`` alone changes the next run's result
    (numba's own key would reload the stale compilation); an unchanged source loads from the cache."""
    pkg = tmp_path / "src" / "kpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernel.py").write_text(KERNEL)
    env = {k: v for k, v in os.environ.items() if k != "CXLSIM_COMPILE_NOTICE"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")

    def run(add: int, scale: int) -> tuple[int, int]:
        (pkg / "callee.py").write_text(CALLEE.format(add=add, scale=scale))
        out = subprocess.run([sys.executable, "-c", RUN, str(tmp_path / "src")], cwd=ROOT, text=True,
                             capture_output=True, env=env, check=True)
        value, hits = out.stdout.split()
        return int(value), int(hits)

    assert run(1, 3) == ((1 + 1) * 3 + 3, 0)  # compiled
    assert run(1, 3) == (9, 1)  # loaded from the cache
    assert run(20, 3) == ((1 + 20) * 3 + 3, 0)  # the inlined callee edited: compiled anew
    assert run(20, 300) == ((1 + 20) * 300 + 300, 0)  # the constant (and the called function's body)
    assert run(20, 300)[1] == 1
