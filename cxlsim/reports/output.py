"""Printing results: a readable table by default, stable JSON with ``--json``.

Contract: :func:`emit` writes JSON (sorted keys only where the caller's dict order is not the
documented order; we keep insertion order, which each command documents) or the text ``render``
returns. :func:`format_table` aligns columns; numbers are right-aligned.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and non-finite floats into plain JSON values."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if np is not None:
        if isinstance(obj, np.ndarray):
            return [to_jsonable(v) for v in obj.tolist()]
        if isinstance(obj, np.generic):
            return to_jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def emit(args: Any, data: dict[str, Any], render: Callable[[dict[str, Any]], str]) -> None:
    if getattr(args, "json", False):
        json.dump(to_jsonable(data), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(data).rstrip("\n") + "\n")


def fmt_num(value: Any, digits: int = 4) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 1e6 or abs(value) < 1e-3:
            return f"{value:.{digits - 1}e}"
        return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:,.0f}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> str:
    cells = [[fmt_num(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    numeric = [all(_is_num(r[i]) for r in rows) if rows else False for i in range(len(headers))]

    def line(items: Sequence[str]) -> str:
        return "  ".join(s.rjust(w) if numeric[i] else s.ljust(w) for i, (s, w) in enumerate(zip(items, widths, strict=True))).rstrip()

    out = []
    if title:
        out.append(title)
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-Markdown table of ``rows`` under ``headers``, cells as ``str`` gives them."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
