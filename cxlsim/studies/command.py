"""What every study's command (``python -m cxlsim.studies.<name>``) shares with the ``cxlsim``
commands: bad input (a usage error, an unknown name, a number out of range, an
:class:`~cxlsim.errors.InputError` from the run) exits 2 with one ``error:`` line naming the option,
or the file and key, never a traceback; names are checked before anything is simulated."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from cxlsim.config.params import unknown_key_message
from cxlsim.errors import InputError
from cxlsim.systems.config import list_systems
from cxlsim.systems.platform import list_platforms
from cxlsim.workloads.catalog import list_workloads

#: What each kind of name is checked against (a ``.yaml`` path is read later, and names itself).
CATALOGS: dict[str, Callable[[], list[str]]] = {
    "system": list_systems, "workload": list_workloads, "platform": list_platforms}


class StudyParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and exit 2 (as ``cxlsim``'s)."""

    def error(self, message: str) -> None:
        print(f"{self.prog}: error: {message} (usage: {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def study_command(main: Callable[[list[str] | None], int]) -> Callable[[list[str] | None], int]:
    """``main(argv) -> int`` whose :class:`~cxlsim.errors.InputError` (from the checks or the run)
    prints one ``error:`` line and returns 2."""

    @functools.wraps(main)
    def command(argv: list[str] | None = None) -> int:
        try:
            return main(argv)
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2

    return command


def check_names(option: str, kind: str, names: Iterable[str] | None) -> None:
    """Refuse a name given to ``option`` that no ``kind`` (system, workload, platform) of the
    catalog has, or an empty one; a ``.yaml``/``.yml`` path passes (its reader names the file)."""
    if names is None:
        return
    for name in names:
        if Path(name).suffix in (".yaml", ".yml") and name.strip():
            continue
        known = CATALOGS[kind]()
        if name not in known:
            hint = unknown_key_message(name, known)[len("unknown key"):]
            raise InputError(f"{option}: no such {kind} {name!r}{hint} (known: {', '.join(known)})")


def grid_point(text: str) -> tuple[int, int]:
    """An argparse type: ``GxM`` (GPUs x memory devices, each a whole number >= 1), e.g. ``16x4``."""
    parts = text.lower().split("x")
    try:
        gpus, mems = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GxM (whole numbers, e.g. 16x4), got {text!r}") from None
    if gpus < 1 or mems < 1:
        raise argparse.ArgumentTypeError(f"GPUs and memory devices must be >= 1, got {text!r}")
    return gpus, mems


grid_point.__name__ = "GxM point"

