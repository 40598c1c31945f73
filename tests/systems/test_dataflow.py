"""The shared batch dataflow: dependencies, lanes, and critical-path attribution."""

from __future__ import annotations

import pytest

from cxlsim.config.params import ParamSet
from cxlsim.engine.executor import Executor, OpOutcome
from cxlsim.systems.config import PIPELINE
from cxlsim.systems.critical_path import breakdown
from cxlsim.systems.dataflow import build_graph

DUR = {"begin": 0, "config": 5, "b_fwd": 600, "lookup": 500, "correction": 50, "pooled": 40,
       "t_mlp": 1600, "grads": 40, "b_bwd": 900, "update": 2700, "mlp_opt": 100,
       "emb_log": 400, "mlp_log": 2000, "redo": 1800, "redo_mlp": 1000}


class FixedMachine:
    engine_lane, mover_lane, agent_lane = "ndp", "cxl.link", "ckpt_logic"
    mlp_log_lane = "ckpt_logic"

    def __init__(self, dur=DUR):
        self.dur = dur

    def step(self, name, batch, start_ns, ex):
        return OpOutcome(start_ns + self.dur[name])


def pipeline(**kw) -> ParamSet:
    # the schedule these tests were written for: gradients handed over after the interaction
    # backward, undo logs after the lookup, the correction on the logic's lanes before the update
    base = {"tables_on": "table_memory", "embedding_engine": "ndp", "data_movement": "cxl_cache",
            "persistence": "redo", "grads_handoff": "after_interaction", "undo_log_start": "lookup",
            "correction": "serial"}
    base.update(kw)
    return PIPELINE.validate(base, {}, "test")


def run(pipe, n=6, machine=None):
    ex = Executor()
    build_graph(ex, machine or FixedMachine(), pipe, n)
    ex.run()
    return ex


@pytest.mark.parametrize("kw", [
    {"persistence": "redo"},
    {"persistence": "undo"},
    {"persistence": "undo", "relaxed_lookup": True, "relaxed_mlp_log": True},
    {"persistence": "none"},
])
def test_breakdown_sums_to_batch_time(kw):
    ex = run(pipeline(**kw))
    for n in range(1, 5):
        charges, path = breakdown(ex.records, ("begin", n), ("begin", n + 1))
        span = ex.records[("begin", n + 1)].start_ns - ex.records[("begin", n)].start_ns
        assert sum(charges.values()) == pytest.approx(span)
        assert charges["idle"] == pytest.approx(0.0)
        assert path, "a batch has a critical path"


def test_redo_batch_is_serial_sum():
    ex = run(pipeline(persistence="redo"))
    span = ex.records[("begin", 3)].start_ns - ex.records[("begin", 2)].start_ns
    # config ‖ b_fwd/lookup, pooled, t_mlp, grads, update, redo (b_bwd+opt hidden under update)
    expect = DUR["config"] + DUR["lookup"] + DUR["pooled"] + DUR["t_mlp"] + DUR["grads"] + DUR["update"] + DUR["redo"]
    assert span == pytest.approx(max(expect, DUR["b_fwd"] + DUR["t_mlp"] + DUR["grads"] + DUR["update"] + DUR["redo"]))
    charges, _ = breakdown(ex.records, ("begin", 2), ("begin", 3))
    assert charges["checkpoint"] == pytest.approx(DUR["redo"])


def test_undo_hides_logging_in_idle_window():
    redo = run(pipeline(persistence="redo"))
    undo = run(pipeline(persistence="undo"))
    relaxed = run(pipeline(persistence="undo", relaxed_lookup=True, relaxed_mlp_log=True))

    def bt(ex):
        return ex.records[("begin", 4)].start_ns - ex.records[("begin", 3)].start_ns

    none = run(pipeline(persistence="none"))
    assert bt(relaxed) <= bt(undo) <= bt(redo)
    # one DMA channel: the logs (400 + 2000 ns) run back to back from the lookup's end; the update
    # waits for the embedding log only (docs/design.md#batch-aware-undo-log), the optimizer step for
    # the MLP log
    for n in range(1, 5):
        upd, opt = undo.records[("update", n)], undo.records[("mlp_opt", n)]
        assert upd.start_ns >= undo.records[("emb_log", n)].end_ns
        assert upd.start_ns < undo.records[("mlp_log", n)].end_ns  # not gated by the MLP log
        assert opt.start_ns >= undo.records[("mlp_log", n)].end_ns
    window = DUR["pooled"] + DUR["t_mlp"] + DUR["grads"] + DUR["b_bwd"]
    logs = DUR["emb_log"] + DUR["mlp_log"]
    assert 0 <= bt(undo) - bt(none) <= max(0, logs - window) + DUR["mlp_opt"]  # only what outlasts the window
    charges, _ = breakdown(undo.records, ("begin", 3), ("begin", 4))
    assert charges["checkpoint"] == pytest.approx(bt(undo) - bt(none))  # what is exposed is logging


def test_relaxed_lookup_runs_during_previous_batch():
    ex = run(pipeline(persistence="undo", relaxed_lookup=True, relaxed_mlp_log=True))
    look = ex.records[("lookup", 3)]
    assert look.start_ns < ex.records[("begin", 3)].start_ns
    assert look.start_ns >= ex.records[("emb_log", 2)].end_ns
    # the correction waits for batch 2's gradients
    assert ex.records[("correction", 3)].start_ns >= ex.records[("grads", 2)].end_ns


class TwoChannelMachine(FixedMachine):
    mlp_log_lane = "ckpt_logic.mlp"


def test_relaxed_mlp_log_on_its_own_channel_starts_with_the_gpu_window():
    ex = run(pipeline(persistence="undo", relaxed_lookup=True, relaxed_mlp_log=True), machine=TwoChannelMachine())
    for n in range(1, 5):
        log, window = ex.records[("mlp_log", n)], ex.records[("t_mlp", n)]
        assert log.op.lane == "ckpt_logic.mlp"
        assert log.start_ns >= window.start_ns
        # it waits for nothing else of its batch: not the embedding log, not the next lookup
        if ex.records[("mlp_log", n - 1)].end_ns <= window.start_ns:
            assert log.start_ns == window.start_ns
    one = run(pipeline(persistence="undo", relaxed_lookup=True, relaxed_mlp_log=True))
    assert one.records[("mlp_log", 3)].start_ns >= one.records[("lookup", 4)].end_ns  # one channel: Figure 12c order


@pytest.mark.parametrize("kw", [{}, {"persistence": "undo"},
                                {"persistence": "undo", "relaxed_lookup": True, "relaxed_mlp_log": True}])
def test_closing_batch_stops_at_its_begin(kw):
    """``run(until_batch=k)``: the records of batches before k equal a full run's, ``begin k``
    started, and ops of batch k that would start later are skipped; the trace holds every op
    that started (including those still running at the stop)."""
    full = run(pipeline(**kw), n=5)
    ex = Executor()
    build_graph(ex, FixedMachine(), pipeline(**kw), 5)
    ex.run(until_batch=4)
    for key, rec in ex.records.items():
        ref = full.records[key]
        if key[1] < 4 or key == ("begin", 4):
            assert (rec.start_ns, rec.end_ns, rec.gate) == (ref.start_ns, ref.end_ns, ref.gate), key
        elif rec.start_ns == rec.start_ns:  # started before the stop: as in the full run
            assert (rec.start_ns, rec.end_ns) == (ref.start_ns, ref.end_ns), key
    skipped = [k for k, r in ex.records.items() if r.start_ns != r.start_ns]
    assert skipped and all(k[1] == 4 for k in skipped)  # the closing batch's later ops
    started = {f"{k[0]} {k[1]}" for k, r in ex.records.items() if r.start_ns == r.start_ns}
    assert sorted(ex.trace.intervals, key=repr) == sorted((iv for iv in full.trace.intervals if iv.label in started), key=repr)


def test_lane_grants_same_instant_requests_by_priority_then_order():
    """Ops released by one event compete for the lane: priority first, then the order they were added."""
    from cxlsim.engine.executor import Op

    ex = Executor()

    def takes(d):
        return lambda start: OpOutcome(start + d)

    ex.add(Op("a", 0, "L", "sync", takes(10)))
    ex.add(Op("b", 0, "L", "sync", takes(5), [("a", 0)]))
    ex.add(Op("c", 0, "L", "sync", takes(5), [("a", 0)], priority=-1))
    ex.add(Op("d", 0, "L", "sync", takes(5), [("a", 0)]))
    ex.run()
    start = {k[0]: r.start_ns for k, r in ex.records.items()}
    assert start == {"a": 0, "c": 10, "b": 15, "d": 20}
    assert ex.records[("b", 0)].gate == ("lane", ("c", 0))


@pytest.mark.parametrize("mlp_relaxed", [True, False])
def test_relaxed_lookup_reads_the_table_before_the_update_it_precedes(mlp_relaxed):
    """Write after read: update n waits for lookup n+1, whose table is the one before update n."""
    ex = run(pipeline(persistence="undo", relaxed_lookup=True, relaxed_mlp_log=mlp_relaxed), n=8)
    for n in range(7):
        assert ex.records[("update", n)].start_ns >= ex.records[("lookup", n + 1)].end_ns


@pytest.mark.parametrize("kw", [{"persistence": "redo"}, {"persistence": "undo"}, {"persistence": "none"}])
def test_device_engine_receives_indices_a_batch_ahead(kw):
    """Double buffer: batch n's hand-over waits for batch n−2's slot, not for batch n's begin."""
    ex = run(pipeline(**kw), n=6)
    r = ex.records
    for n in range(1, 6):
        assert r[("lookup", n)].start_ns == r[("begin", n)].start_ns  # indices already there
        assert r[("config", n)].end_ns <= r[("begin", n)].start_ns
        if n >= 2:
            assert r[("config", n)].start_ns >= r[("update", n - 2)].end_ns
            if kw["persistence"] == "redo":
                assert r[("config", n)].start_ns >= r[("redo", n - 2)].end_ns


class HostEngineMachine(FixedMachine):
    engine_lane = mover_lane = agent_lane = "host_cpu"


def test_host_engine_dispatches_at_batch_begin():
    ex = run(pipeline(embedding_engine="host_cpu", data_movement="software", checkpoint_agent="host_cpu"),
             machine=HostEngineMachine())
    for n in range(6):
        assert ex.records[("config", n)].start_ns >= ex.records[("begin", n)].start_ns


@pytest.mark.parametrize("handoff", ["after_backward", "after_interaction"])
def test_grads_handoff(handoff):
    """after_backward: the gradients leave once loss.backward() returned (after the bottom-MLP
    backward); after_interaction: as soon as the interaction backward produced them."""
    ex = run(pipeline(persistence="undo", grads_handoff=handoff))
    for n in range(1, 5):
        grads = ex.records[("grads", n)]
        if handoff == "after_backward":
            assert grads.start_ns >= ex.records[("b_bwd", n)].end_ns
        else:
            assert grads.start_ns == ex.records[("t_mlp", n)].end_ns
            assert grads.start_ns < ex.records[("b_bwd", n)].end_ns


def test_redo_mlp_pull_beside_the_update():
    """cxl-d (docs/design.md#redo-checkpoint): the record's MLP part starts when the optimizer step
    has produced the parameters, beside the update; the commit (end of ``redo``) follows both
    parts."""
    late = run(pipeline(persistence="redo"))
    early = run(pipeline(persistence="redo", redo_mlp_pull="with_optimizer"), machine=TwoChannelMachine())
    for n in range(1, 5):
        part, rec = early.records[("redo_mlp", n)], early.records[("redo", n)]
        assert part.op.lane == "ckpt_logic.mlp"
        assert part.start_ns == early.records[("mlp_opt", n)].end_ns
        assert part.start_ns < early.records[("update", n)].end_ns  # beside the update
        assert rec.start_ns >= early.records[("update", n)].end_ns
        assert ("redo_mlp", n) not in late.records

    def bt(ex):
        return ex.records[("begin", 4)].start_ns - ex.records[("begin", 3)].start_ns

    assert bt(early) <= bt(late)


def test_undo_log_starts_with_its_inputs():
    """undo_log_start: inputs — the checkpointing logic starts the embedding log once the
    indices are there and the previous update is done, beside the lookup; lookup — after it."""
    inputs = run(pipeline(persistence="undo", undo_log_start="inputs"))
    after = run(pipeline(persistence="undo", undo_log_start="lookup"))
    for n in range(1, 5):
        log = inputs.records[("emb_log", n)]
        assert log.start_ns < inputs.records[("lookup", n)].end_ns
        assert log.start_ns >= max(inputs.records[("config", n)].end_ns, inputs.records[("update", n - 1)].end_ns)
        assert after.records[("emb_log", n)].start_ns >= after.records[("lookup", n)].end_ns


@pytest.mark.parametrize("mode", ["fused", "own_engine", "serial"])
def test_correction_placement(mode):
    """fused: the update of batch n−1 does the adds, the corrected vectors ready when it ends;
    own_engine: an adder bank beside the update; serial: the logic's lanes, before the update."""
    ex = run(pipeline(persistence="undo", relaxed_lookup=True, relaxed_mlp_log=True, correction=mode))
    for n in range(2, 5):
        corr = ex.records[("correction", n)]
        if mode == "fused":
            assert corr.start_ns >= ex.records[("update", n - 1)].end_ns
            assert corr.op.lane == "ndp.corr"
        else:
            assert corr.start_ns >= ex.records[("grads", n - 1)].end_ns
            assert corr.op.lane == ("ndp.corr" if mode == "own_engine" else "ndp")


def test_segmented_op_decides_each_segment_when_it_begins():
    """An op served in segments holds its lane throughout; each segment is decided at its start,
    so another lane's op that starts meanwhile is seen by the later segments; a stop serves the
    remaining segments of a running op (in time order) so its record ends where its work ends."""
    from cxlsim.engine.executor import Op

    seen: list[tuple[float, int]] = []
    other_started = []

    def seg(t, i):
        seen.append((t, len(other_started)))
        return OpOutcome(t + 10, resume=(lambda now: seg(now, i + 1)) if i < 4 else None)

    def other(t):
        other_started.append(t)
        return OpOutcome(t + 1)

    for until in (None, 1):
        seen.clear()
        other_started.clear()
        ex = Executor()
        ex.add(Op("copy", 0, "ckpt", "checkpoint", lambda t: seg(t, 0)))
        ex.add(Op("next", 0, "ckpt", "checkpoint", lambda t: OpOutcome(t + 1)))
        ex.add(Op("lookup", 0, "ndp", "embedding", other, [("copy", 0, "start")]))
        ex.add(Op("begin", 1, "batch", "sync", lambda t: OpOutcome(t), [("lookup", 0)]))
        ex.run(until_batch=until)
        rec = ex.records[("copy", 0)]
        assert (rec.start_ns, rec.end_ns) == (0.0, 50.0)
        assert [t for t, _ in seen] == [0, 10, 20, 30, 40]
        assert seen[0][1] == 0 and seen[1][1] == 1  # the second segment sees the lookup
        if until is None:
            assert ex.records[("next", 0)].start_ns == 50.0  # the lane is held to the last segment
