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
cxlsim) its own lines on stderr say so, where the result is kept and the seconds spent compiling so
far, when stderr is a terminal (logs and tests stay quiet; ``CXLSIM_COMPILE_NOTICE=1`` forces it,
``0`` silences it). :func:`compile_seconds` counts that time in this process, so that a progress
estimate can leave it out (compiling happens once; the runs after it do not pay it again).

**Keyed on the sources a kernel inlines.** numba keys a cached compilation on the function's own
bytecode and invalidates it when the function's own file changes, but a kernel compiles in the
jitted functions it calls (``inline="always"`` or not) and the global constants it reads, from
other modules: ``media_kernel.serve_kernel`` inlines ``media_queue._post``, and after an edit of
``media_queue.py`` alone numba would keep loading the old ``serve_kernel``. So every cached
kernel's key also holds a digest of :func:`kernel_sources`: its own module and every module of its
package it takes a jitted function or a global from, followed through the jitted functions it
reaches (found from the code itself, not listed by hand). Editing any of them compiles it anew.
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import time
import types
from functools import cache
from importlib import resources
from pathlib import Path

import numba
from numba.core import caching, dispatcher, event

_PACKAGE = Path(str(resources.files("cxlsim")))  # the package's folder (where numba caches beside the code)
_state = {"announced": False, "depth": 0, "t0": 0.0, "total_s": 0.0}
#: the first line of the notice (module docstring)
NOTICE = "cxlsim: compiling kernels (first run, cached after) ..."


def compile_seconds() -> float:
    """Wall-clock seconds this process has spent compiling cxlsim kernels (outermost compilations
    only, so a kernel compiled inside another is not counted twice)."""
    return _state["total_s"] + (time.perf_counter() - _state["t0"] if _state["depth"] else 0.0)


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


def _say(line: str) -> None:
    """One line on stderr; on a terminal it first clears the line (a progress bar drawn in place)."""
    clear = "\r\033[K" if sys.stderr.isatty() else ""
    print(clear + line, file=sys.stderr, flush=True)


class _CompileNotice(event.Listener):
    """The stderr lines and the compile-time count (module docstring): the first line once per
    process, at the first compile of a cxlsim kernel; after each outermost compile of a second or
    more, the seconds spent compiling so far."""

    def on_start(self, ev: event.Event) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if func is None or not func.__module__.startswith("cxlsim."):
            return
        _state["depth"] += 1
        if _state["depth"] == 1:
            _state["t0"] = time.perf_counter()
            if not _state["announced"] and _notice_wanted():
                _state["announced"] = True
                _say(f"{NOTICE} (about 30 s of CPU; kept in {cache_location()})")

    def on_end(self, ev: event.Event) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if func is None or not func.__module__.startswith("cxlsim."):
            return
        _state["depth"] -= 1
        if _state["depth"] == 0:
            took = time.perf_counter() - _state["t0"]
            _state["total_s"] += took
            if took >= 1.0 and _state["announced"] and _notice_wanted():
                _say(f"cxlsim: compiling kernels ... {_state['total_s']:.0f} s so far ({func.__qualname__} took "
                     f"{took:.0f} s)")


def _code_names(code: types.CodeType) -> set[str]:
    """Global and attribute names a code object and the code nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


@cache
def _imported_names(path: str, package: str | None) -> dict[str, str]:
    """``local name -> module`` of a module file's imports (``from m import a as b`` gives
    ``b -> m``; ``import m.n as k`` gives ``k -> m.n``), relative imports resolved."""
    try:
        tree = ast.parse(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = (package or "").split(".")
                parts = parts[: len(parts) - node.level + 1] if node.level > 1 else parts
                base = ".".join(p for p in (*parts, base) if p)
            for alias in node.names:
                out[alias.asname or alias.name] = base
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    return out


def _cell(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _module_file(name: str) -> str | None:
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    return path if path and path.endswith(".py") else None


def kernel_sources(py_func) -> tuple[str, ...]:
    """Module names whose source a compiled ``py_func`` depends on: its own module, and, within
    its top-level package, every module it takes a jitted function (called or inlined) or a global
    value (numba freezes globals into the code) from, followed through each jitted function it
    reaches. Sorted."""
    top = py_func.__module__.split(".")[0]
    modules: set[str] = set()
    seen: set[int] = set()
    todo = [py_func]

    def ours(name: str | None) -> bool:
        return bool(name) and name.split(".")[0] == top and _module_file(name) is not None

    while todo:
        func = todo.pop()
        if id(func) in seen:
            continue
        seen.add(id(func))
        if not ours(func.__module__):
            continue
        modules.add(func.__module__)
        module = sys.modules[func.__module__]
        imported = _imported_names(module.__file__, module.__package__)
        names = _code_names(func.__code__)
        values = [_cell(c) for c in func.__closure__ or ()]  # what the code reads
        for name in names:
            value = func.__globals__.get(name)
            values.append(value)
            if isinstance(value, types.ModuleType):  # module.attribute
                if ours(value.__name__):
                    modules.add(value.__name__)
                values += [getattr(value, attr, None) for attr in names]
            elif ours(imported.get(name)):
                modules.add(imported[name])  # a global taken from another module of the package
        for value in values:
            if isinstance(value, dispatcher.Dispatcher):
                todo.append(value.py_func)
            elif isinstance(value, types.FunctionType) and ours(value.__module__):
                todo.append(value)  # a plain function numba compiles where it is called (e.g. an overload)
    return tuple(sorted(modules))


@cache
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sources_digest(py_func) -> str:
    """One digest of the contents of :func:`kernel_sources`' files."""
    h = hashlib.sha256()
    for name in kernel_sources(py_func):
        path = _module_file(name)
        st = os.stat(path)
        h.update(f"{name}\0{_file_digest(path, st.st_mtime_ns, st.st_size)}\0".encode())
    return h.hexdigest()


class SourceKeyedCache(caching.FunctionCache):
    """numba's cache of a jitted function, its index key extended by :func:`sources_digest`
    (module docstring)."""

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), sources_digest(self._py_func))


def install() -> None:
    """Choose the cache folder, key cached kernels on their sources (every ``cache=True``
    function decorated from now on) and register the notice (idempotent)."""
    choose_cache_dir()
    if not _state.get("installed"):
        dispatcher.FunctionCache = SourceKeyedCache  # what Dispatcher.enable_caching instantiates
        event.register("numba:compile", _CompileNotice())
        _state["installed"] = True
