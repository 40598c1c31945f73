"""`cxlsim bench sim` bookkeeping (not its timings): every run once, rows in job order, longest first."""

from __future__ import annotations

import multiprocessing as mp

import pytest

import cxlsim.bench.sim as bench
import cxlsim.systems.streams as streams


def fake_run(job):
    s, w, batches, platform = job
    return {"system": s, "workload": w, "wall_s": 0.0, "batches_per_s": 0.0, "pid": mp.current_process().pid}


class FakeStreams:
    def __init__(self, made, key):
        self.made, self.key = made, key

    def prepare(self, n):
        self.made.append((*self.key, n))
        return self

    nbytes = 1000


@pytest.mark.parametrize("workers", [1, 2])
def test_comparison_runs_every_system_on_every_workload(monkeypatch, workers):
    if workers > 1 and "fork" not in mp.get_all_start_methods():
        pytest.skip("needs fork")
    made = []
    monkeypatch.setattr(streams, "stream_set", lambda wl, seed, n: FakeStreams(made, (wl.name, seed)))
    monkeypatch.setattr(bench, "_one", fake_run)
    rows, stream_s, wall, stream_B = bench._comparison(2, workers)
    assert [(r["system"], r["workload"]) for r in rows] == [(s, w) for w in bench.comparison()[1] for s in bench.comparison()[0]]
    assert made == [(w, 1, bench.WARMUP + 2 + 1) for w in bench.comparison()[1]]  # streams first, once each
    assert 0 <= stream_s <= wall
    assert stream_B == 1000 * len(bench.comparison()[1])


def test_auto_runs_make_streams_for_most_runs_ahead(monkeypatch):
    made = []
    monkeypatch.setattr(streams, "stream_set", lambda wl, seed, n: FakeStreams(made, (wl.name, seed)))
    monkeypatch.setattr(bench, "_one", fake_run)
    bench._comparison("auto", 1)
    assert made == [(w, 1, bench._streams_ahead("auto")) for w in bench.comparison()[1]]


def test_a_run_reports_its_counts_accesses_and_memory():
    row = bench._one(("cxl", "rm4", "auto", "prototype"))
    assert row["batches"] >= 5 and row["warmup_batches"] >= 1 and row["batch_time_ci95_fraction"] is not None
    assert row["media_accesses"] > 0 and row["ns_per_access"] == pytest.approx(row["wall_s"] * 1e9 / row["media_accesses"])
    assert row["peak_rss_B"] > 50 * 2**20
    tpu = bench._one(("tpu-ps", "rm4", 2, "prototype"))
    assert tpu["media_accesses"] is None and tpu["ns_per_access"] is None and tpu["batches"] == 2


def test_per_worker_peak_is_the_largest_of_each_worker():
    rows = [{"pid": 1, "peak_rss_B": 5}, {"pid": 2, "peak_rss_B": 3}, {"pid": 1, "peak_rss_B": 7}]
    assert bench._per_worker_peak(rows) == {"1": 7, "2": 3}


def test_longest_runs_first():
    jobs = [(s, w, 2, "physical") for w in bench.comparison()[1] for s in bench.comparison()[0]]
    first = sorted(jobs, key=bench._cost, reverse=True)[0]
    assert first[1] == "rm2"  # the most lookups per batch (384 × 80 × 80)


@pytest.mark.slow
def test_the_scale_line_reports_a_point_that_dies_and_runs_the_others(monkeypatch):
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("needs fork")
    import os

    def fake_point(gpus, q):
        if gpus == 16:
            os._exit(3)
        q.put({"gpus": gpus, "cxl_mems": max(1, gpus // 4), "reduced": gpus >= 32, "batch_time_ms": 1.0,
               "wall_s": 0.0, "peak_GB": 0.1})

    monkeypatch.setattr(bench, "_scale_point", fake_point)
    rows = bench.scale_line("fork")  # the fake point reaches a forked child only
    assert [r["gpus"] for r in rows] == list(bench.scale_gpus())
    assert rows[2]["error"] == "the process ended with exit status 3" and "error" not in rows[-1]
    text = bench.render_scale(rows)
    assert "exit status 3" in text and "1024" in text.replace(",", "")


@pytest.mark.slow
@pytest.mark.parametrize("gpus", [1, 4])
def test_the_scale_lines_small_points_run(gpus):
    """One CXL-MEM holds every table there, so the row-sharding override must not be passed."""
    import queue

    q = queue.Queue()
    bench._scale_point(gpus, q)
    row = q.get_nowait()
    assert "error" not in row, row
    assert row["reduced"] is False and row["batch_time_ms"] > 0
