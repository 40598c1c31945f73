"""Typed command-line numbers: ``type=whole(1)`` makes argparse refuse ``--batches 0`` (or a
non-number) as bad input, exit 2 with the option named, before any command runs. The ``cxlsim``
commands and the studies' commands (``python -m cxlsim.studies.<name>``) share them."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path


def whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:,}, got {value:,}")
        return value

    parse.__name__ = "whole number"
    return parse


def number(minimum: float, maximum: float | None = None, exclusive_minimum: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number above ``minimum`` (or at it) and at most ``maximum``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if value < minimum or (exclusive_minimum and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {'>' if exclusive_minimum else '>='} {minimum:g}, got {value:g}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be <= {maximum:g}, got {value:g}")
        return value

    parse.__name__ = "number"
    return parse


def whole_or_auto(minimum: int) -> Callable[[str], int | str]:
    """An argparse type: ``auto`` (sampling with stated confidence) or a whole number >= minimum."""
    count = whole(minimum)

    def parse(text: str) -> int | str:
        return "auto" if text.strip().lower() == "auto" else count(text)

    parse.__name__ = "'auto' or a whole number"
    return parse


def percent(text: str) -> float:
    """An argparse type: a relative half-width such as ``1%`` or ``0.5 %`` (or a fraction ``0.01``),
    above 0 % and below 100 %; returned as a fraction."""
    t = text.strip()
    try:
        value = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage such as 1%, got {text!r}") from None
    if not math.isfinite(value) or not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be above 0 % and below 100 %, got {text!r}")
    return value


percent.__name__ = "percentage"


#: Figure formats the commands that draw (``--plot``) write, by file suffix.
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def figure_path(folder_must_exist: bool = True) -> Callable[[str], str]:
    """An argparse type: a figure's file name ending in a format of :data:`FIGURE_SUFFIXES` (a
    name without one would be written with ``.png`` added: ``--plot /tmp`` wrote ``/tmp.png``), in
    a folder that exists unless ``folder_must_exist`` is false (the command creates it)."""

    def parse(text: str) -> str:
        path = Path(text)
        if path.suffix.lower() not in FIGURE_SUFFIXES or not path.stem:
            raise argparse.ArgumentTypeError(f"expected a file name ending in {', '.join(FIGURE_SUFFIXES)}, "
                                             f"got {text!r}")
        if folder_must_exist and not path.parent.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: folder {str(path.parent)!r} does not exist")
        return text

    parse.__name__ = "figure file name"
    return parse
