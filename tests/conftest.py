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

import faulthandler
import os
import sys

import pytest

#: Module fixtures that simulate every system × RM (the golden sets), reproduce the paper, or run
#: the whole validation catalog (test_validate's ``report``).
SLOW_FIXTURES = ("results", "reproduced", "report")


#: Seconds past a test's timeout (pytest-timeout's, ``[tool.pytest.ini_options] timeout``) after which
#: the watchdog below ends the run.
WATCHDOG_GRACE_S = 30
_watchdog = {}


def _timeout_s(item) -> float:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    try:
        return float(item.config.getini("timeout") or 0)
    except ValueError:  # pytest-timeout not installed: no timeout
        return 0.0


def pytest_configure(config):
    # the terminal's stderr, kept before output capture replaces file descriptor 2
    _watchdog["stderr"] = os.fdopen(os.dup(sys.stderr.fileno()), "w", closefd=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A watchdog that a hang in compiled code cannot block: pytest-timeout's timer is a Python
    thread, which never runs while a numba kernel holds the GIL in an endless loop (a corrupted
    queue, say); faulthandler's is a C thread. Past the test's timeout and a grace, it prints
    every thread's stack (the test's own among them) and ends the run with an error."""
    timeout = _timeout_s(item)
    if timeout > 0:
        faulthandler.dump_traceback_later(timeout + WATCHDOG_GRACE_S, exit=True, file=_watchdog["stderr"])
    try:
        yield
    finally:
        if timeout > 0:
            faulthandler.cancel_dump_traceback_later()


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
