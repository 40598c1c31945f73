"""The timeline of a tpu-ps step (issue 18 item 3), drawn from its steps: lanes, the pipelined
period (N's MLPs beside N−1's update and N+1's lookup), the serial order, and the CLI formats."""

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
    for n, step in zip(r.measured, r.steps, strict=True):
        t0, t1 = r.batch_span(n)
        assert t1 - t0 == pytest.approx(step["step_ns"])
        mine = [iv for iv in tr.intervals if t0 - 1e-6 <= iv.start_ns and iv.end_ns <= t1 + 1e-6]
        by_lane = {}
        for iv in mine:
            by_lane[iv.lane] = by_lane.get(iv.lane, 0.0) + iv.duration_ns
        b = step["breakdown"]
        assert by_lane["tensorcore"] == pytest.approx((b["b_mlp"] + b["t_mlp"]) * k)
        assert by_lane["ici.allreduce"] == pytest.approx(step["allreduce_ns"] * k)
        assert by_lane["sparsecore"] == pytest.approx(b["embedding"] * k)
        assert by_lane["ici.a2a"] == pytest.approx(step["sparse_transfer_ns"] * k)
        assert by_lane["checkpoint.epoch"] == pytest.approx(b["checkpoint"])
        tags = {(iv.lane, iv.label.split()[0]): iv.batch for iv in mine}
        assert tags[("tensorcore", "bottom")] == n
        if pipelining:  # N's MLPs beside N−1's update and N+1's lookup
            assert tags[("sparsecore", "update")] == n - 1 and tags[("sparsecore", "lookup")] == n + 1
        else:  # one after another: N's lookup, MLPs, all-reduce, update
            assert tags[("sparsecore", "update")] == tags[("sparsecore", "lookup")] == n
            order = sorted(mine, key=lambda iv: iv.start_ns)
            for a, c in zip(order, order[1:], strict=False):
                assert c.start_ns >= a.end_ns - 1e-6  # nothing overlaps


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
