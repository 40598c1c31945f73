"""The failure-and-checkpoint simulator: Monte Carlo vs closed forms, schemes, scenarios, CLI."""

from __future__ import annotations

import json

import pytest

from cxlsim.cli import main
from cxlsim.config.catalog import catalog_roots
from cxlsim.errors import ConfigError
from cxlsim.ft import formulas as F
from cxlsim.ft import run_scenario
from cxlsim.ft.scenario import parse_scenario

H = 3600.0
CONFIGS = sorted((catalog_roots("configs")[0] / "ft").glob("*.yaml"))  # the shipped scenarios
#: Monte-Carlo tolerance: ~400-1000 failures give a 3 % standard error of the mean; we allow 8 %.
MC_REL_TOL = 0.08


def scenario(schemes, **sections):
    doc = {
        "version": 1, "name": "t", "seed": 1,
        "job": {"duration_h": 2000, "step_s": 0.1},
        "model": {"embedding_GB": 1.0, "dense_GB": 0.0, "row_B": 64, "emb_shards_count": 4, "nodes_count": 4},
        "storage": {"write_GBps": 1e6, "read_GBps": 1e6, "latency_s": 0.0},
        "failures": {"process_policy": "exponential", "mtbf_h": 5, "shards_fraction": 0.25, "reschedule_s": 0},
        "schemes": schemes,
    }
    for k, v in sections.items():
        doc[k] = {**doc.get(k, {}), **v} if isinstance(v, dict) else v
    return parse_scenario(doc, "test.yaml")


def one(sc):
    return run_scenario(sc)["schemes"]


def test_mean_lost_work_is_half_the_interval():
    (r,) = one(scenario([{"kind": "full", "interval_h": 1.0}]))
    lost_per_failure_h = r["overhead_pct"]["lost"] / 100 * 2000 / r["interruptions_handled"]
    assert r["interruptions_handled"] > 300
    assert lost_per_failure_h == pytest.approx(0.5, rel=MC_REL_TOL)


def test_pls_monte_carlo_matches_expected_pls():
    sc = scenario([{"kind": "partial", "interval_h": 1.0}], job={"duration_h": 4000},
                  failures={"mtbf_h": 4})
    (r,) = one(sc)
    assert r["overhead_pct"]["lost"] == 0
    assert r["pls"] == pytest.approx(F.expected_pls(1 * H, 4 * H, 4), rel=MC_REL_TOL)


def test_full_recovery_overhead_matches_eq1_at_the_optimum():
    # O_save = 60 s, O_load = 120 s, O_res = 300 s
    sc = scenario([{"kind": "full"}], job={"duration_h": 5000}, failures={"mtbf_h": 10, "reschedule_s": 300},
                  storage={"write_GBps": 1.0 / 60, "read_GBps": 1.0 / 120, "latency_s": 0.0})
    (r,) = one(sc)
    t_opt = F.optimal_full_interval_s(60.0, 10 * H)
    assert r["details"]["interval_h"] == pytest.approx(t_opt / H)
    expected = F.full_overhead_s(5000 * H, t_opt, 10 * H, 60.0, 120.0, 300.0)
    assert r["overhead_pct"]["total"] / 100 * 5000 * H == pytest.approx(expected, rel=MC_REL_TOL)


def test_schemes_on_one_trace_are_deterministic_and_account_exactly():
    path = str(next(p for p in CONFIGS if p.name == "side-by-side.yaml"))
    from cxlsim.ft import load_scenario

    a, b = run_scenario(load_scenario(path)), run_scenario(load_scenario(path))
    assert json.dumps(a, default=str) == json.dumps(b, default=str)
    kinds = {r["kind"] for r in a["schemes"]}
    assert kinds == {"full", "partial", "cpr", "check-n-run", "ecrec", "tpu-epoch", "undo-log"}
    for r in a["schemes"]:
        o = r["overhead_pct"]
        assert abs(r["accounting_error_s"]) < 1e-3
        assert o["total"] == pytest.approx(o["save"] + o["load"] + o["lost"] + o["reschedule"])
        assert r["wall_time_h"] == pytest.approx(48 * (1 + o["total"] / 100))
    other = run_scenario(load_scenario(path, [("seed", 8)]))
    assert other["trace"] != a["trace"]


def test_check_n_run_policies_sizes_and_intermittent_rule():
    pol = lambda p, **kw: {"name": p, "kind": "check-n-run", "incremental_policy": p, "quant_policy": "none", **kw}  # noqa: E731
    sc = scenario([pol("full"), pol("one-shot"), pol("consecutive"), pol("intermittent"),
                   {"name": "q", "kind": "check-n-run", "quant_policy": "auto"}],
                  job={"duration_h": 24}, failures={"mtbf_h": 8}, access={"rows_sampled_count": 4096})
    res = {r["scheme"]: r for r in one(sc)}
    assert res["consecutive"]["checkpoint_bytes_written"] < res["one-shot"]["checkpoint_bytes_written"] \
        < res["full"]["checkpoint_bytes_written"]
    inter = res["intermittent"]["details"]["checkpoints"]
    incs: list[float] = []
    for c in inter[1:]:  # every decision follows F_c <= I_c on the increments since the baseline
        if c["kind"] == "full":
            incs = []
        else:
            incs.append(c["fraction"])
    first_inc = next(c for c in inter if c["kind"] == "increment")
    assert first_inc["fraction"] == pytest.approx(0.26, abs=0.03)  # calibrated update sparsity
    q = res["q"]["details"]
    assert q["bits"] == F.cnr_bit_width(24 / 8) == 3 and q["quant_mode"] == "adaptive"
    # 3-bit rows of dim 16: 16·3/8 + 8 B of range vs 64 B
    assert q["full_checkpoint_bytes"] == pytest.approx(res["intermittent"]["details"]["full_checkpoint_bytes"] * 14 / 64)
    errs = q["quantization_error"]
    assert errs["2"]["mean_l2_error"] > errs["3"]["mean_l2_error"] > errs["4"]["mean_l2_error"] > errs["8"]["mean_l2_error"]


def test_intermittent_decisions_replay_the_rule():
    sc = scenario([{"kind": "check-n-run", "incremental_policy": "intermittent", "quant_policy": "none"}],
                  job={"duration_h": 30}, failures={"process_policy": "none"},
                  access={"rows_sampled_count": 4096, "modified_fraction": 0.1})
    cps = one(sc)[0]["details"]["checkpoints"]
    incs: list[float] = []
    kinds = []
    for c in cps[1:]:
        expected = "full" if F.intermittent_take_full(incs) else "increment"
        kinds.append(c["kind"])
        assert c["kind"] == expected
        incs = [] if c["kind"] == "full" else incs + [c["fraction"]]
    assert "full" in kinds and "increment" in kinds


def test_ecrec_no_lost_work_and_degraded_throughput():
    sc = scenario([{"name": "ckpt", "kind": "full", "interval_h": 0.5},
                   {"name": "ec2", "kind": "ecrec", "k_count": 2}, {"name": "ec4", "kind": "ecrec", "k_count": 4}],
                  job={"duration_h": 4}, failures={"process_policy": "none"},
                  trace=[{"at_h": 1.25, "kind": "failure", "shards_fraction": 0.25}])
    res = {r["scheme"]: r for r in one(sc)}
    assert res["ckpt"]["overhead_pct"]["lost"] / 100 * 4 * 60 == pytest.approx(15, rel=0.01)
    for name, k in (("ec2", 2), ("ec4", 4)):
        r = res[name]
        assert r["overhead_pct"]["lost"] == 0 and r["interruptions_handled"] == 1
        assert r["details"]["memory_factor"] == (k + 1) / k
        assert r["details"]["update_traffic_factor"] == 2.0
        assert 0 < r["throughput_during_recovery"] < 1
    assert res["ec4"]["throughput_during_recovery"] < res["ec2"]["throughput_during_recovery"]


def test_tpu_notices_keep_progress_and_holds_cost_their_length():
    trace = [{"at_h": 2.5, "kind": "preemption", "notice_s": 600}, {"at_h": 5.2, "kind": "permanent-hold", "duration_s": 7200}]
    sc = scenario([{"name": "n", "kind": "tpu-epoch", "use_notices": True},
                   {"name": "x", "kind": "tpu-epoch", "use_notices": False},
                   {"name": "u", "kind": "undo-log", "idle_window_s": 0.0016, "log_GBps": 4.21}],
                  job={"duration_h": 8}, failures={"process_policy": "none"}, trace=trace,
                  interruptions={"preemption_downtime_s": 900})
    res = {r["scheme"]: r for r in one(sc)}
    assert res["n"]["overhead_pct"]["lost"] == 0
    # without notices: the work since the 2 h epoch checkpoint (two 60 s drains stalled the clock)
    assert res["x"]["overhead_pct"]["lost"] / 100 * 8 * H == pytest.approx(0.5 * H - 2 * 60, rel=1e-6)
    for r in res.values():
        assert r["hold_h"] == pytest.approx(2.0)
        assert r["overhead_pct"]["reschedule"] / 100 * 8 * H >= 7200 + 900 - 1e-6
    assert res["u"]["overhead_pct"]["lost"] / 100 * 8 * H <= 0.1  # at most the in-flight batch


@pytest.mark.parametrize(("edit", "key"), [
    ({"job": {"duration_h": 5, "speed": 1}}, "job.speed: unknown key"),
    ({"failures": {"process_policy": "weibull"}}, "failures.process_policy: must be one of"),
    ({"schemes": [{"kind": "full", "interval_hours": 1}]}, "schemes[0].interval_hours: unknown key; did you mean interval_h"),
    ({"schemes": [{"kind": "raid"}]}, "schemes[0].kind: must be one of"),
    ({"schemes": [{"kind": "ecrec", "k_count": 5, "servers_count": 5}]}, "schemes[0].k_count: k + 1 must not exceed"),
    ({"trace": [{"at_h": 1, "kind": "meteor"}]}, "trace[0].kind: must be one of"),
])
def test_bad_scenarios_name_file_and_key(edit, key):
    doc = {"version": 1, "job": {"duration_h": 5}, "model": {"embedding_GB": 1}, "schemes": [{"kind": "full"}]}
    doc.update(edit)
    with pytest.raises(ConfigError) as err:
        parse_scenario(doc, "bad.yaml")
    assert str(err.value).startswith("bad.yaml: ") and key in str(err.value) and "\n" not in str(err.value)


@pytest.mark.slow
def test_cli_runs_every_scenario(capsys, tmp_path):
    assert {p.name for p in CONFIGS} >= {"cpr-emulation.yaml", "check-n-run.yaml", "ecrec.yaml", "tpu.yaml", "side-by-side.yaml"}
    for path in CONFIGS:
        assert main(["ft", "--scenario", str(path), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        for r in data["schemes"]:
            assert set(r["overhead_pct"]) == {"save", "load", "lost", "reschedule", "total"}
            for key in ("pls", "checkpoint_bytes_written", "peak_checkpoint_capacity_bytes",
                        "recovery_time_s", "throughput_during_recovery"):
                assert key in r
    png = tmp_path / "ft.png"
    assert main(["ft", "--config", str(CONFIGS[0]), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "total%" in out and png.stat().st_size > 1000
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\njob: {duration_h: 1}\nmodel: {embedding_GB: 1}\nschemes: [{kind: full, intervl_h: 1}]\n")
    assert main(["ft", "--scenario", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err and "schemes[0].intervl_h" in err


def test_undo_log_idle_window_has_no_python_default():
    """The idle window the undo log overlaps is the scenario's to state (with its source)."""
    with pytest.raises(ConfigError, match="idle_window_s"):
        scenario([{"name": "u", "kind": "undo-log", "log_GBps": 4.21}])


def test_storage_device_is_a_memory_preset():
    """Storage bandwidth comes from a memory-kind preset's declared keys; other kinds are refused."""
    from cxlsim.devices import load_preset
    from cxlsim.ft.storage import preset_read_GBps, preset_write_GBps

    ssd = load_preset("ssd/intel-750").params
    assert preset_read_GBps("ssd/intel-750", "x.yaml") == ssd.read_bw_GBps
    assert preset_write_GBps("ssd/intel-750", "x.yaml") == ssd.write_bw_GBps
    with pytest.raises(ConfigError, match="a storage or log device is a memory device"):
        preset_read_GBps("gpu/rtx3090", "x.yaml")
