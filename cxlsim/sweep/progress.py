"""A small progress bar on stderr (no dependency): redrawn in place on a terminal, one line per
tenth of the work (and the last) when stderr is a file or pipe.

The time-left estimate leaves out the time spent compiling kernels (a cold numba cache: paid once,
by the first points of a run, not by the points still to come). Each finished point reports the
seconds it spent compiling; those of ``workers`` points compiling side by side overlap, so the
wall-clock time they took is their sum divided by the points that run at once (and at least the
longest one)."""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, label: str = "points", stream: TextIO | None = None,
                 enabled: bool = True, width: int = 28, workers: int = 1) -> None:
        self.total = total
        self.parallel = max(1, min(workers, total))  # points that run at once
        self.compile_s = 0.0  # seconds the finished points spent compiling, summed
        self.compile_max_s = 0.0  # and the most one point spent
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.width = width
        self.done = 0
        self.failed = 0
        self.t0 = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1

    def advance(self, ok: bool = True, note: str = "", compile_s: float = 0.0) -> None:
        """One more point done; ``compile_s``: the seconds it spent compiling kernels."""
        self.done += 1
        self.compile_s += max(compile_s, 0.0)
        self.compile_max_s = max(self.compile_max_s, compile_s)
        self.failed += 0 if ok else 1
        if not self.enabled:
            return
        decile = self.done * 10 // self.total
        if self._tty:
            cols = shutil.get_terminal_size((100, 20)).columns
            self.stream.write("\r" + self.line(note)[: cols - 1] + "\033[K")
            self.stream.flush()
        elif decile != self._last_decile or self.done == self.total:
            self._last_decile = decile
            self.stream.write(self.line(note) + "\n")
            self.stream.flush()

    def line(self, note: str = "") -> str:
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        elapsed = time.monotonic() - self.t0
        parts = [f"[{'#' * fill}{'.' * (self.width - fill)}] {self.done}/{self.total} {self.label}"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        parts.append(f"{_clock(elapsed)} elapsed")
        compiling = self.compiling_s()
        if compiling >= 0.5:
            parts.append(f"{_clock(compiling)} of it compiling (not in the estimate)")
        left = self.left_s(elapsed)
        if self.done < self.total and self.done:
            parts.append(f"~{_clock(left)} left")
        if note:
            parts.append(note)
        return "  ".join(parts)

    def compiling_s(self) -> float:
        """Wall-clock seconds spent compiling kernels so far (module docstring)."""
        return max(self.compile_s / self.parallel, self.compile_max_s)

    def left_s(self, elapsed: float) -> float:
        """Estimated seconds left: the points to come at the rate of those done, compile time left
        out (0 before the first point)."""
        if not self.done:
            return 0.0
        work = max(elapsed - self.compiling_s(), 0.0)
        return work / self.done * (self.total - self.done)

    def close(self) -> None:
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
