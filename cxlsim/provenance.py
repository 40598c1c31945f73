"""Provenance embedded in every result file: cxlsim version and git revision."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from cxlsim.version import __version__


@functools.cache
def git_revision() -> str:
    """The repository's HEAD (with ``-dirty`` if the tree has changes), or ``unknown``."""
    root = Path(__file__).resolve().parents[1]
    try:
        rev = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def provenance() -> dict[str, str]:
    return {"version": __version__, "git_revision": git_revision()}
