"""A small progress bar on stderr (no dependency): redrawn in place on a terminal, one line per
tenth of the work (and the last) when stderr is a file or pipe."""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, label: str = "points", stream: TextIO | None = None,
                 enabled: bool = True, width: int = 28) -> None:
        self.total = total
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.width = width
        self.done = 0
        self.failed = 0
        self.t0 = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_decile = -1

    def advance(self, ok: bool = True, note: str = "") -> None:
        self.done += 1
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
        left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        parts = [f"[{'#' * fill}{'.' * (self.width - fill)}] {self.done}/{self.total} {self.label}"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        parts.append(f"{_clock(elapsed)} elapsed")
        if self.done < self.total and self.done:
            parts.append(f"~{_clock(left)} left")
        if note:
            parts.append(note)
        return "  ".join(parts)

    def close(self) -> None:
        if self.enabled and self._tty:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
