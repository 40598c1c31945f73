"""The progress bar's time-left estimate leaves out kernel compilation (cxlsim.sweep.progress), and
the compile seconds travel from the point that paid them (cxlsim.sweep.evaluate) to the bar
(cxlsim.sweep.runner). The clock is a fake one: the estimate is arithmetic on the times given."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numba
import pytest

import cxlsim.sweep.evaluate as evaluate_module
import cxlsim.sweep.progress as progress_module
from cxlsim.kernels.compile_cache import compile_seconds
from cxlsim.sweep.executors import SerialExecutor
from cxlsim.sweep.progress import Progress
from cxlsim.sweep.runner import execute
from cxlsim.sweep.spec import Point


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", c)
    return c


def test_a_serial_run_does_not_extrapolate_the_first_points_compile_time(clock):
    """10 points of 4.5 s, the first also compiling for 26 s: after it, 9 × 4.5 s are left (not
    9 × 30.5 s, the estimate that counted the compilation)."""
    bar = Progress(10, stream=io.StringIO())
    clock.now += 26 + 4.5
    bar.advance(True, compile_s=26.0)
    assert bar.left_s(30.5) == pytest.approx(9 * 4.5)
    line = bar.line()
    assert "~0:41 left" in line and "0:26 of it compiling" in line
    clock.now += 4.5
    bar.advance(True)  # a cached run: nothing compiled
    assert bar.left_s(35.0) == pytest.approx(8 * 4.5)


def test_workers_compiling_side_by_side_count_once(clock):
    """Two workers compile 26 s at once, then run 5 s points: the wall clock lost is 26 s, not 52."""
    bar = Progress(10, stream=io.StringIO(), workers=2)
    clock.now += 31
    bar.advance(True, compile_s=26.0)
    assert bar.compiling_s() == 26.0  # the longest, before the second worker reports
    bar.advance(True, compile_s=26.0)
    assert bar.compiling_s() == 26.0
    assert bar.left_s(31.0) == pytest.approx(8 * 5 / 2)


def test_without_compilation_the_estimate_is_the_plain_rate(clock):
    bar = Progress(4, stream=io.StringIO(), workers=3)
    clock.now += 6
    bar.advance(True)
    assert bar.left_s(6.0) == pytest.approx(3 * 6.0) and "compiling" not in bar.line()


def _fake_kernel():
    """A function numba compiles on first call, named as a cxlsim kernel (the compile step)."""

    def step(x):
        return x * 2 + 1

    step.__module__ = "cxlsim.fake_compile_step"
    return numba.njit(step)


def test_a_point_that_compiles_reports_it_and_the_bar_gets_it(monkeypatch, clock):
    kernel = _fake_kernel()

    def simulate(system, **kw):
        assert kernel(3) == 7  # compiles here, inside the point
        return SimpleNamespace(to_dict=lambda: {"batch_time_ms": {"mean": 1.0}})

    monkeypatch.setattr(evaluate_module, "simulate", simulate)
    before = compile_seconds()
    points = [Point("cxl", "rm1", ()), Point("cxl", "rm2", ())]
    seen = []
    bar = Progress(2, stream=io.StringIO())
    monkeypatch.setattr(bar, "advance", lambda ok, note="", compile_s=0.0: seen.append(compile_s))
    records = [rec for _, rec in execute(points, SerialExecutor(), bar)]
    assert records[0]["status"] == "ok" and records[0]["compile_s"] > 0
    assert records[1]["compile_s"] == 0  # the kernel is compiled: the second point pays nothing
    assert seen == [records[0]["compile_s"], 0]
    assert compile_seconds() - before == pytest.approx(records[0]["compile_s"])
