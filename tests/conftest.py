"""Shared fixtures and the test tiers.

Tiers: ``pytest -m "not slow"`` is the fast tier (about a minute on 2 cores, every module); the
full suite (what CI runs) adds the ``slow`` tests. A test is slow if it carries
``@pytest.mark.slow`` where it is defined (or ``pytest.param(..., marks=pytest.mark.slow)`` for one
parameter): the tests that took a second or more in a full run on 2 cores (``pytest
--durations=80``); or if it uses an expensive module fixture (:data:`SLOW_FIXTURES`), marked here
by the fixture, which a renamed test keeps. Every file keeps fast tests, so the fast tier still
covers every module.
"""

from __future__ import annotations

import pytest

#: Module fixtures that simulate every system × RM (the golden sets), reproduce the paper, or run
#: the whole validation catalog (test_validate's ``report``).
SLOW_FIXTURES = ("results", "reproduced", "report")


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        if any(f in SLOW_FIXTURES for f in getattr(item, "fixturenames", ())):
            item.add_marker(slow)


@pytest.fixture
def user_catalog(tmp_path, monkeypatch):
    """An empty user catalog folder on $CXLSIM_PATH; returns its devices/ folder."""
    root = tmp_path / "catalog"
    (root / "devices").mkdir(parents=True)
    monkeypatch.setenv("CXLSIM_PATH", str(root))
    return root / "devices"
