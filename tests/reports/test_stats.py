"""The statistics dump: every device and lane a run built, held to the workload's own counts and
to the timeline; collecting it leaves the run unchanged; stats diff reports what moved."""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest
import yaml

from cxlsim.api import simulate
from cxlsim.cli import main
from cxlsim.reports import stats as S

RUN = ["run", "--system", "cxl", "--workload", "rm1", "--batches", "2", "--warmup", "1", "--seed", "1"]


@pytest.fixture(scope="module")
def cxl_rm1():
    r = simulate("cxl", workload="rm1", batches=2, warmup=1, seed=1, stats=True)
    return r, S.run_stats(r)


def _cli(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def cli_docs(tmp_path_factory):
    """``--json`` without and with ``--stats`` (and its file), and a run with a slower media write."""
    d = tmp_path_factory.mktemp("stats")
    def out(argv):  # capsys is function-scoped: capture by hand
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(argv) == 0
        return buf.getvalue()

    off = out(RUN + ["--json"])
    on = out(RUN + ["--json", "--stats", "--stats-file", str(d / "a.yaml")])
    text = out(RUN + ["--set", "devices.table_memory.params.write_bw_GBps=0.5", "--stats",
                      "--stats-file", str(d / "b.yaml")])
    return off, on, text, d / "a.yaml", d / "b.yaml"


def test_json_holds_the_stats_of_every_device_and_lane_built(cxl_rm1, cli_docs):
    r, _ = cxl_rm1
    off, on, text, a, _ = cli_docs
    doc = json.loads(on)
    st = doc["stats"]
    assert st["schema"] == S.SCHEMA and st == yaml.safe_load(a.read_text())
    assert [int(k) for k in st["per_batch"]] == list(r.measured) == st["measured_batches"]
    lanes = {iv.lane for iv in r.trace.intervals if iv.batch in r.measured} - {"batch", "gpu.stream",
                                                                                "host_cpu.dispatch"}
    lanes |= {lane for rec in r.executor.records.values() for lane in rec.op.holds}
    for sec in [st["total"], *st["per_batch"].values()]:
        assert lanes <= set(sec["lanes"])
        assert set(sec["memories"]) == set(r.machine.memories)
        for m in sec["memories"].values():
            assert m["requests"] > 0 and m["latency_ns"]["read"]["p99"] >= m["latency_ns"]["read"]["p50"] > 0
            assert 0 < m["media_busy_fraction"] and m["queues"]["requester_slots"]["occupancy_mean"] > 0
        assert set(sec["links"]) == set(r.activity[0].link_B)
    assert "statistics over 2 measured batches" in text and '"stats"' not in off


def test_stats_off_leaves_the_json_as_it_was(cli_docs):
    off, on, *_ = cli_docs
    doc = json.loads(on)
    del doc["stats"]
    assert json.dumps(doc, indent=2) + "\n" == off


def test_bytes_are_the_workloads_own(cxl_rm1):
    """Lookup: every row looked up (no dedup here) × row size; update: each distinct row read and
    written; the undo log: the rows it copies, written in the agent's bursts; the MLP log: the
    ledger's MLP bytes in whole bursts."""
    r, st = cxl_rm1
    m = r.machine
    burst = m.agent.burst_B()
    for n in r.measured:
        b = m.batch(n)
        steps = st["per_batch"][str(n)]["memories"]["table_memory"]["by_step"]
        rows = b.unique_rows if m.pipe.lookup_dedup else b.lookup_rows
        assert steps["lookup"]["read_B"] == rows.size * m.row_B and steps["lookup"]["write_B"] == 0
        assert steps["update"]["read_B"] == steps["update"]["write_B"] == b.unique_rows.size * m.row_B
        assert steps["emb_log"]["read_B"] == b.unique_rows.size * m.row_B
        assert steps["emb_log"]["write_B"] == math.ceil(b.unique_rows.size * m.row_B / burst) * burst
        a = r.activity[n - r.measured.start]
        assert 0 <= steps["mlp_log"]["write_B"] - a.mlp_log_B < burst
        p = st["per_batch"][str(n)]["persistence"]
        assert p["log_write_B"] == steps["emb_log"]["write_B"] + steps["mlp_log"]["write_B"]
        mem = st["per_batch"][str(n)]["memories"]["table_memory"]
        flags = mem["requests"] - mem["reads"] - mem["writes"]  # one line each, written analytically
        assert mem["requests"] == a.media["table_memory"].accesses and flags >= 0
        assert mem["read_B"] + mem["write_B"] + flags * m.agent.flag_line_B() == mem["requested_B"]
        assert mem["requested_B"] == a.media["table_memory"].requested_B


def test_lane_busy_is_the_timelines(cxl_rm1):
    r, st = cxl_rm1
    for n in r.measured:
        sec = st["per_batch"][str(n)]
        on = {}
        for iv in r.trace.intervals:
            if iv.batch == n:
                on[iv.lane] = on.get(iv.lane, 0.0) + iv.end_ns - iv.start_ns
        for lane, s in sec["lanes"].items():
            if lane in r.trace.lanes:
                assert s["busy_ns"] == pytest.approx(on.get(lane, 0.0), rel=1e-9, abs=1e-6)
            assert s["busy_fraction"] == pytest.approx(s["busy_ns"] / sec["wall_ns"])
        stream = sum(v for k, v in on.items() if k.endswith(".stream"))
        assert sec["compute"]["gpu_stream_busy_ns"] == pytest.approx(stream, rel=1e-9)
    util = r.utilisation()
    for lane, s in st["total"]["lanes"].items():  # the same busy time, clipped to the measured span
        assert s["busy_fraction"] == pytest.approx(util.get(lane, 0.0), abs=0.01)


def test_diff_reports_the_moved_key(cli_docs, capsys):
    *_, a, b = cli_docs
    doc = json.loads(_cli(capsys, ["stats", "diff", str(a), str(b), "--json", "--threshold", "0.05"]))
    keys = [row["key"] for row in doc["moved"]]
    assert "total.memories.table_memory.latency_ns.write.mean" in keys
    changes = [abs(row["change"]) for row in doc["moved"] if row["change"] is not None]
    assert changes == sorted(changes, reverse=True) and min(changes) >= 0.05
    assert "nothing moved" in _cli(capsys, ["stats", "diff", str(a), str(a)])
    assert "change" in _cli(capsys, ["stats", "diff", str(a), str(b)])


@pytest.mark.parametrize("content", [None, "x: 1\n", "schema: [\n", "- 1\n"])
def test_diff_refuses_a_missing_or_foreign_file(tmp_path, capsys, cli_docs, content):
    bad = tmp_path / "bad.yaml"
    if content is not None:
        bad.write_text(content)
    assert main(["stats", "diff", str(bad), str(cli_docs[3])]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and err.count("\n") == 1


def test_stats_file_in_a_missing_folder_is_refused_first(tmp_path, capsys):
    assert main(RUN + ["--stats-file", str(tmp_path / "no" / "s.yaml")]) == 2
    assert "--stats-file" in capsys.readouterr().err


def test_diff_threshold_and_relative_change():
    a = {"schema": S.SCHEMA, "total": {"x_ns": 100.0, "y_B": 0.0, "z": 10, "gone": 1}}
    b = {"schema": S.SCHEMA, "total": {"x_ns": 150.0, "y_B": 5.0, "z": 10.5, "new": 2}}
    rows = S.diff(a, b, threshold=0.1)
    assert [r["key"] for r in rows] == ["total.y_B", "total.x_ns", "total.gone", "total.new"]
    assert rows[1]["change"] == pytest.approx(0.5) and math.isinf(rows[0]["change"])
    assert [r["key"] for r in S.diff(a, b, threshold=0.01)][2] == "total.z"


def test_latency_summary_from_the_histogram():
    from cxlsim.devices.memory.media import media_index as MI
    from cxlsim.devices.memory.media import media_kernel as K

    lat = np.array([100.0] * 50 + [1000.0] * 45 + [10000.0] * 5)
    v = np.zeros(MI.N_S)
    v[MI.S_READS], v[MI.S_READ_NS], v[MI.S_READ_MAX_NS] = lat.size, lat.sum(), lat.max()
    for x in lat:
        v[MI.S_HIST + K._lat_bucket(x)] += 1
    s = S.latency_summary(v, write=False)
    for p in S.PERCENTILES:
        exact = np.percentile(lat, p, method="inverted_cdf")
        assert exact / 1.0625 <= s[f"p{p}"] <= exact * 1.0625
    assert s["mean"] == lat.mean() and s["max"] == 10000.0 and S.latency_summary(v, write=True) is None
