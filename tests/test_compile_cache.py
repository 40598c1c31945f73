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

ROOT = Path(__file__).resolve().parent.parent

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
    assert "compiling numba kernels" in cold.stderr and str(tmp_path / "cache") in cold.stderr
    warm = run(tmp_path, "writable", **env)
    assert warm.stderr == ""
    quiet = run(tmp_path / "other", "writable", NUMBA_CACHE_DIR=str(tmp_path / "cache2"))
    assert quiet.stderr == ""  # not a terminal: no notice
