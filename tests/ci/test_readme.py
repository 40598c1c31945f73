"""The README's two set-up commands are the ones a fresh machine runs: ``.ci/run`` runs the test
command's install and test steps, and the README's links point at pages that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")

MAIN_JOB = "python3 -m pip install -e . && cxlsim reproduce"
TESTS = 'python3 -m pip install -e ".[test]" && python3 -m pytest -q'
#: pages other work is writing now (linked ahead of their landing)
PENDING = {"docs/stats.md"}


def commands() -> list[str]:
    """The README's indented command lines."""
    return [line.strip() for line in README.splitlines() if line.startswith("    python3 ")]


def test_the_two_commands_are_there_as_written():
    assert commands() == [MAIN_JOB, TESTS]


def test_ci_runs_the_readmes_test_command():
    install, test = TESTS.split(" && ")
    assert 'python3 -m pip install -q -e ".[test]"' in CI and install.replace("install", "install -q") in CI
    assert re.search(rf'^check "[^"]*" {re.escape(test)}$', CI, re.M)


def test_the_links_resolve():
    links = set(re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README))
    assert "docs/quickstart.md" in links
    missing = {link for link in links if not link.startswith("http") and not (ROOT / link).exists()}
    assert missing <= PENDING
