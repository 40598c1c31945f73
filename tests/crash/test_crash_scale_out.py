"""Crash consistency on 2 GPUs x 2 CXL-MEMs (docs/design.md#scale-out): each CXL-MEM runs the
batch-aware undo log (and the relaxed checkpoint on cxl) for the rows and MLP shard it holds; a
batch is persistent only once every CXL-MEM's logs are flagged; recovery rolls every CXL-MEM back to
the same last globally persistent batch and matches the fault-free reference bit for bit. At the
instants where one CXL-MEM has flagged a batch and the other has not, a protocol that trusts a
single CXL-MEM's flags (``--inject-bug local-persistence``) fails and the global rule passes."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

from cxlsim.cli import main
from cxlsim.crash import image as im
from cxlsim.crash import prepare, replay, run_points
from cxlsim.crash.points import split_windows
from cxlsim.crash.run import instants
from cxlsim.errors import InputError
from cxlsim.systems.run import simulate

#: the tiny model of tests/crash/test_crash_protocols.py on 2 GPUs and 2 CXL-MEMs (whole tables: two each)
TWO_BY_TWO = [("workload_overrides.tables", 4), ("workload_overrides.rows_per_table", 400_000),
              ("workload_overrides.batch_size", 32), ("workload_overrides.lookups_per_table", 8),
              ("workload_overrides.dim", 16), ("workload_overrides.bottom_mlp", "13-1024-256-16"),
              ("workload_overrides.top_mlp", "26-16-1"), ("topology.gpus_count", 2), ("topology.cxl_mems_count", 2)]
SCALE, BATCHES, SEED, POINTS = 0.01, 4, 3, 300
SYSTEMS = ("cxl-b", "cxl")

_RUNS: dict = {}


def campaign(system: str, bug: str | None = None):
    if (system, bug) not in _RUNS:
        _RUNS[(system, bug)] = prepare(system, "rm1", SCALE, BATCHES, SEED, bug, TWO_BY_TWO)
    return _RUNS[(system, bug)]


@pytest.mark.parametrize("system", SYSTEMS)
def test_two_by_two_recovers_at_every_point(system):
    cr = campaign(system)
    rep = run_points(cr, POINTS, resume=2)
    s = rep.summary
    assert s["violations"] == 0 and s["first_violation"] is None, s["first_violation"]
    assert rep.resumed == 2 and s["lost_batches"]["max"] <= 1
    assert s["mlp_log_gap"]["max"] <= cr.protocol.mlp_gap_bound
    if system == "cxl-b":
        assert s["recovered_exact"] == POINTS


@pytest.mark.parametrize("system", SYSTEMS)
def test_each_cxl_mem_logs_what_the_timing_model_gives_it(system):
    """Rows per device = the timing model's per-device update rows; MLP shards tile the MLP; every
    device's steps write its own log regions on its own spans."""
    cr = campaign(system)
    pr = cr.protocol
    assert len(pr.mems) == 2 and cr.timeline.mems == 2
    res = simulate(cr.cfg, batches=BATCHES, warmup=0, seed=SEED, trace=False,
                   workload_sets={"rows_per_table": cr.workload.params.rows_per_table})
    for n in range(BATCHES):
        per_dev = [d.rows[n] for d in pr.mems]
        assert np.array_equal(np.sort(np.concatenate(per_dev)), cr.reference.unique_rows[n])
        for d in pr.mems:
            assert d.rows[n].size and np.array_equal(d.rows[n], np.sort(res.machine.update_rows(n, d.index)))
    assert pr.mems[0].mlp_lo == 0 and pr.mems[0].mlp_hi == pr.mems[1].mlp_lo and pr.mems[1].mlp_hi == pr.mlp_n
    labels = pr.events.step_labels
    for step in ("emb_log.1 2", "emb_log.1 2 flag", "update.1 2", "delete emb_log.1 1"):
        assert step in labels, step
    regions_1 = set(pr.mems[1].region_ids)
    e = np.flatnonzero(pr.events.step == labels.index("emb_log.1 2"))
    assert set(pr.events.region[e].tolist()) <= regions_1
    assert cr.timeline.span("emb_log", 2, 1) != cr.timeline.span("emb_log", 2, 0)


def _split_instants(cr) -> list[tuple[float, int]]:
    """(instant, batch) where one CXL-MEM's embedding-log flag of the batch is durable and the
    other's is not: the first flag's acknowledgement."""
    ev, pr = cr.protocol.events, cr.protocol
    out = []
    for n in range(1, BATCHES):
        acks = [float(ev.ack[(ev.step == ev.step_labels.index(f"emb_log{'' if d == 0 else '.1'} {n} flag"))][0])
                for d in range(2)]
        if acks[0] != acks[1]:
            out.append((min(acks), n))
    assert len(split_windows(pr)) >= len(out)
    return out


@pytest.mark.parametrize("system", SYSTEMS)
def test_split_flags_roll_every_cxl_mem_back_to_the_last_global_batch(system):
    """At a split instant of batch n's embedding logs, batch n is not persistent: every CXL-MEM is
    restored to the state after n − 2 (the last globally persistent batch n − 1, undone), not n − 1."""
    cr = campaign(system)
    split = _split_instants(cr)
    assert split, "the two CXL-MEMs flag every batch at the same instant: no split to test"
    ts = set(instants(cr, POINTS).tolist())
    for t, n in split:
        assert t in ts  # the campaign crashes there
        r = cr.checker.evaluate_slow(t)
        assert r.violation is None, (t, n, r.violation)
        assert r.m == n - 2, (n, r.m, r.used)
        assert any(u.startswith("CXL-MEM 0: emb_log") for u in r.used) and any(u.startswith("CXL-MEM 1: emb_log") for u in r.used)


@pytest.mark.parametrize("system", SYSTEMS)
def test_trusting_one_cxl_mem_fails_where_flags_split(system):
    """Each CXL-MEM trusting its own flags and recovery CXL-MEM 0's: the campaign finds violations
    (and replays them); the global rule passes every instant where the devices' flags split.
    (Whether the bug bites inside a split window depends on the schedule: with the undo log started
    from its inputs, batch n's update waits for every device's embedding log, so a split embedding
    flag leaves both data regions at n − 1; the bug then shows where one device's old logs are gone.)"""
    bad = campaign(system, "local-persistence")
    good = campaign(system)
    windows = split_windows(bad.protocol)
    assert windows.size
    ts = np.concatenate([windows[:, 0], windows.mean(axis=1)])
    assert not [t for t in ts if good.checker.evaluate_slow(float(t)).violation]
    s = run_points(bad, POINTS).summary
    assert s["violations"] > 0
    again = replay(bad, s["first_violation"]["replay"].split()[1], POINTS)
    assert not again["ok"] and again["reason"] == s["first_violation"]["reason"]


@pytest.mark.parametrize("system,bug", [("cxl-b", None), ("cxl", None), ("cxl-b", "local-persistence"),
                                        ("cxl", "local-persistence"), ("cxl", "delete-old-log-early")])
def test_fast_check_agrees_with_materialised_tables(system, bug):
    cr = campaign(system, bug)
    ts = instants(cr, 150)
    fast = {int(i): cr.checker.evaluate(float(ts[i])) for i in np.argsort(ts, kind="stable")}
    for i, f in fast.items():
        slow = cr.checker.evaluate_slow(float(ts[i]))
        assert (f.violation is None) == (slow.violation is None) and (f.m, f.gap) == (slow.m, slow.gap), (i, f, slow)


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("topology", [[("topology.tables_policy", "row_sharded")], [("topology.cxl_mems_count", 4)],
                                      [("topology.gpus_count", 4), ("topology.cxl_mems_count", 3),
                                       ("topology.attach_policy", "interleaved")]])
def test_other_topologies_recover(system, topology):
    cr = prepare(system, "rm1", SCALE, BATCHES, SEED, None, TWO_BY_TWO + topology)
    assert len(cr.protocol.mems) == cr.cfg.topology.cxl_mems_count
    s = run_points(cr, 200).summary
    assert s["violations"] == 0, s["first_violation"]


@pytest.mark.parametrize("bug", ["flag-before-data", "delete-old-log-early", "delete-on-embedding-flag"])
def test_single_device_bugs_are_caught_on_two_cxl_mems(bug):
    assert run_points(campaign("cxl-b", bug), POINTS).summary["violations"] > 0


def test_torn_flags_of_one_device_land_or_not():
    """A flag of CXL-MEM 1 in flight: recovery reads it on some instants and not on others."""
    cr = campaign("cxl-b")
    ev = cr.protocol.events
    e = int(np.flatnonzero((ev.step == ev.step_labels.index("emb_log.1 2 flag")) & (ev.kind == im.FLAG))[0])
    used = {tuple(cr.checker.evaluate_slow(t).used) for t in np.linspace(ev.issue[e], ev.ack[e], 40, endpoint=False)}
    assert len(used) == 2


def test_refused_combinations():
    with pytest.raises(InputError, match="needs several CXL-MEMs"):
        prepare("cxl-b", "rm1", SCALE, BATCHES, SEED, "local-persistence", TWO_BY_TWO[:-2])
    with pytest.raises(InputError, match="undo persistence"):
        prepare("cxl-d", "rm1", SCALE, BATCHES, SEED, None, TWO_BY_TWO)


@pytest.mark.slow
@pytest.mark.parametrize("system", SYSTEMS)
def test_cli_two_gpus_two_cxl_mems_default_scale(system):
    """The issue's command at the default scale (RM1 at 1e-3), fewer points."""
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["crashtest", "--system", system, "--set", "topology.gpus_count=2", "--set",
                     "topology.cxl_mems_count=2", "--points", "300", "--batches", "4", "--json"]) == 0
    d = json.loads(out.getvalue())
    assert d["points"] == 300 and d["violations"] == 0, d["first_violation"]
