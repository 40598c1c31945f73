"""The timeline of a tpu-ps step, drawn as its steps are timed: lanes, the pipelined period (N's
MLPs beside N−1's update and N+1's lookup), the serial order, each period's lanes against the
batch's activity, and the CLI formats."""

from __future__ import annotations

import json

import pytest

import cxlsim
from cxlsim.cli import main

SMALL = {"batch_size": 32}


def run(**sets):
    return cxlsim.simulate("tpu-ps", workload="rm1", batches=3, warmup=1, workload_sets=SMALL,
                           sets={"topology.gpus_count": 4, **sets})


def test_lanes_by_placement():
    assert run().trace.lanes == ["tensorcore", "ici.allreduce", "sparsecore", "ici.a2a", "checkpoint.epoch"]
    ps = run(**{"tpu_ps.placement_policy": "ps"}).trace.lanes
    assert ps == ["tensorcore", "ici.allreduce", "ps.cpu", "network", "checkpoint.epoch"]
    one = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL).trace.lanes
    assert one == ["tensorcore", "ps.cpu", "network", "checkpoint.epoch"]  # one chip: no interconnect


@pytest.mark.parametrize("pipelining", [True, False])
def test_every_period_holds_its_work_and_the_lanes_add_up(pipelining):
    r = run(**{"tpu_ps.pipelining": pipelining})
    k = r.config.tpu_ps.as_dict()["contention_factor"] if pipelining else 1.0
    tr = r.trace
    assert len(r.activity) == 3
    for n, a in zip(r.measured, r.activity, strict=True):
        t0, t1 = r.batch_span(n)
        assert a.batch == n and t1 - t0 == pytest.approx(a.wall_ns)
        mine = [iv for iv in tr.intervals if t0 - 1e-6 <= iv.start_ns and iv.end_ns <= t1 + 1e-6]
        by_lane = {}
        for iv in mine:
            by_lane[iv.lane] = by_lane.get(iv.lane, 0.0) + iv.duration_ns
        assert set(by_lane) == set(a.lane_busy_ns)
        for lane, ns in a.lane_busy_ns.items():
            assert by_lane[lane] == pytest.approx(ns), lane
        tc = by_lane["tensorcore"] / k  # the MLPs: the TensorCores' busy time in the batch's usage
        assert a.usage["tpu"].busy_ns == pytest.approx(4 * tc * k)
        b = r.breakdowns_ns[n - r.measured.start]
        if not pipelining:  # serial: the critical path is every part
            assert tc == pytest.approx(b["b_mlp"] + b["t_mlp"])
            assert by_lane["sparsecore"] == pytest.approx(b["embedding"])
            assert by_lane["ici.a2a"] + by_lane["ici.allreduce"] == pytest.approx(b["transfer"])
        assert by_lane["checkpoint.epoch"] == pytest.approx(b["checkpoint"])
        tags = {(iv.lane, iv.label.split()[0]): iv.batch for iv in mine}
        assert tags[("tensorcore", "bottom")] == n
        if pipelining:  # N's MLPs beside N−1's update and N+1's lookup
            assert tags[("sparsecore", "update")] == n - 1 and tags[("sparsecore", "lookup")] == n + 1
        else:  # one after another: N's lookup, MLPs, all-reduce, update
            assert tags[("sparsecore", "update")] == tags[("sparsecore", "lookup")] == n
            order = sorted(mine, key=lambda iv: iv.start_ns)
            for before, after in zip(order, order[1:], strict=False):
                assert after.start_ns >= before.end_ns - 1e-6  # nothing overlaps


def test_cli_formats(tmp_path, capsys):
    args = ["timeline", "--system", "tpu-ps", "--workload", "rm1", "--set", "workload_overrides.batch_size=32",
            "--set", "topology.gpus_count=2", "--warmup", "0"]
    assert main(args + ["--width", "60"]) == 0
    out = capsys.readouterr().out
    assert "tensorcore" in out and "sparsecore" in out and "checkpoint.epoch" in out
    chrome = tmp_path / "tpu.json"
    assert main(args + ["--format", "chrome", "--out", str(chrome)]) == 0
    events = json.loads(chrome.read_text())["traceEvents"]
    assert {e["args"]["name"] for e in events if e["name"] == "thread_name"} >= {"tensorcore", "ici.a2a"}
    png = tmp_path / "tpu.png"
    assert main(args + ["--format", "png", "--out", str(png)]) == 0
    assert png.stat().st_size > 1000
