"""Searches over integers: pure functions with no dependencies, in the bottom layer (the device
library uses them without numba).

:func:`smallest_reaching` is the bisection the batch rules use (a GPU phase, the DLRM step's phases,
the figure-12 points): the smallest batch at which a non-decreasing time reaches a target.
"""

from __future__ import annotations

from collections.abc import Callable


def smallest_reaching(value: Callable[[int], float], target: float, lo: int, hi: int) -> int:
    """The smallest integer in ``(lo, hi]`` at which the non-decreasing ``value`` reaches
    ``target``, given ``value(lo) < target <= value(hi)`` (a bisection: ``log2(hi - lo)`` calls)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if value(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi
