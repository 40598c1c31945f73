"""Typed command-line numbers: ``type=whole(1)`` makes argparse refuse ``--batches 0`` (or a
non-number) as bad input, exit 2 with the option named, before any command runs."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


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
