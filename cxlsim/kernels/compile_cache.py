"""Where numba keeps the compiled kernels, and a line on stderr while it compiles them.

Every kernel is ``cache=True``: numba compiles it once per machine and later runs load it from
the cache (a simulation's kernels take about 30 s of CPU to compile, almost all of it the media
model's ``serve_kernel``; loading them takes well under a second). The cache lives, in this order:

1. in ``$NUMBA_CACHE_DIR`` when it is set (numba's own setting);
2. beside the code (``__pycache__`` of the kernel modules) when the package folder is writable:
   a checkout, or a virtual environment the user installed into;
3. otherwise (an installation the user cannot write to) in :func:`user_cache_dir`:
   ``$XDG_CACHE_HOME/cxlsim/numba``, by default ``~/.cache/cxlsim/numba``.

While a cxlsim kernel compiles (a cold cache: the first run after installing or changing
cxlsim) one line on stderr says so and where the result is kept, when stderr is a terminal (logs
and tests stay quiet; ``CXLSIM_COMPILE_NOTICE=1`` forces it, ``0`` silences it).
"""

from __future__ import annotations

import os
import sys
import time
from importlib import resources
from pathlib import Path

import numba
from numba.core import event

_PACKAGE = Path(str(resources.files("cxlsim")))  # the package's folder (where numba caches beside the code)
_state = {"announced": False, "depth": 0, "t0": 0.0}


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/cxlsim/numba`` (default ``~/.cache/cxlsim/numba``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cxlsim" / "numba"


def cache_location() -> str:
    """Where compiled kernels go (module docstring)."""
    if numba.config.CACHE_DIR:
        return str(numba.config.CACHE_DIR)
    return str(_PACKAGE / "<module>" / "__pycache__")


def choose_cache_dir() -> None:
    """Point numba at :func:`user_cache_dir` when the package folder is not writable and the user
    chose no folder (must run before the kernels are decorated)."""
    if numba.config.CACHE_DIR or os.access(_PACKAGE, os.W_OK):
        return
    numba.config.CACHE_DIR = str(user_cache_dir())


def _notice_wanted() -> bool:
    forced = os.environ.get("CXLSIM_COMPILE_NOTICE")
    if forced is not None:
        return forced not in ("", "0")
    return sys.stderr is not None and sys.stderr.isatty()


class _CompileNotice(event.Listener):
    """The stderr line (module docstring): once per process, at the first compile of a cxlsim
    kernel, and how long the outermost compile took."""

    def on_start(self, ev: event.Event) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if func is None or not func.__module__.startswith("cxlsim."):
            return
        _state["depth"] += 1
        if _state["depth"] == 1:
            _state["t0"] = time.perf_counter()
            if not _state["announced"] and _notice_wanted():
                _state["announced"] = True
                print(f"cxlsim: compiling numba kernels (first run after installing or updating; about 30 s of "
                      f"CPU), cached in {cache_location()}", file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if func is None or not func.__module__.startswith("cxlsim."):
            return
        _state["depth"] -= 1
        if _state["depth"] == 0 and _state["announced"] and _notice_wanted():
            took = time.perf_counter() - _state["t0"]
            if took >= 1.0:
                print(f"cxlsim: compiled {func.__qualname__} in {took:.0f} s", file=sys.stderr, flush=True)


def install() -> None:
    """Choose the cache folder and register the notice (idempotent)."""
    choose_cache_dir()
    if not _state.get("installed"):
        event.register("numba:compile", _CompileNotice())
        _state["installed"] = True
