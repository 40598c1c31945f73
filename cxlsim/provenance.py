"""Provenance embedded in every result file: cxlsim version and git revision.

``git_revision`` is the HEAD of the source checkout cxlsim's code runs from (an editable install or
``python -m`` in a clone), with ``-dirty`` when tracked files have changes; it is ``None`` (JSON
``null``) when the code does not run from a git checkout of cxlsim itself: an installed wheel or
``pip install .`` (the package then lives in site-packages), an unpacked sdist, or no ``git``
program. A git repository that merely *contains* site-packages (a venv inside another project's
clone) is not cxlsim's checkout and gives ``None`` too.
"""

from __future__ import annotations

import functools
import subprocess
from importlib import resources
from pathlib import Path

from cxlsim.version import __version__


def _git(args: list[str], cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5,
                          check=True).stdout.strip()


@functools.cache
def git_revision() -> str | None:
    """The checkout's HEAD (``-dirty`` if the tree has changes), or ``None``; see the module doc."""
    package = resources.files("cxlsim")
    if not isinstance(package, Path):
        return None
    root = package.resolve().parent  # a checkout holds the package folder at its top level
    try:
        if Path(_git(["rev-parse", "--show-toplevel"], root)).resolve() != root:
            return None
        rev = _git(["rev-parse", "--short=12", "HEAD"], root)
        dirty = _git(["status", "--porcelain", "--untracked-files=no"], root)
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("-dirty" if dirty else "")


def provenance() -> dict[str, str | None]:
    return {"version": __version__, "git_revision": git_revision()}
