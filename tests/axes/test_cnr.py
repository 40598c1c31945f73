"""The Check-N-Run-style scheme (``persistence: cnr``), added through the persistence interface
alone: its schedule, its timing against per-batch redo, its quantiser and its crash invariant."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cxlsim.axes.persistence.cnr.scheme import quant_row_B, quantise
from cxlsim.crash import prepare, run_points
from cxlsim.systems.run import simulate

CNR = str(Path(__file__).resolve().parents[2] / "configs" / "cxl-cnr.yaml")


def test_checkpoints_every_k_batches_and_costs_less_than_redo():
    k = 3
    res = simulate(CNR, batches=6, warmup=0, seed=2, sets=[("pipeline.cnr_interval_batches", k)])
    taken = sorted(n for name, n in res.executor.records if name == "cnr" and n < 6)
    assert taken == [n for n in range(6) if (n + 1) % k == 0]
    redo = simulate("cxl-d", batches=6, warmup=0, seed=2)
    assert res.batch_times_ns.mean() < redo.batch_times_ns.mean()
    # the update after a checkpoint waits for it: it reads rows the update would overwrite
    rec = res.executor.records
    assert rec[("update", k)].start_ns >= rec[("cnr", k - 1)].end_ns


def test_quantised_checkpoint_writes_fewer_bytes():
    full = simulate(CNR, batches=4, warmup=0, seed=2, sets=[("pipeline.cnr_quant_bits", 0)])
    q8 = simulate(CNR, batches=4, warmup=0, seed=2, sets=[("pipeline.cnr_quant_bits", 8)])

    def written(res):  # media bytes written to the table memory over every batch
        return sum(led.traffic("table_memory").media_write_B for led in res.machine.ledgers.values())

    assert written(q8) < written(full)
    assert quant_row_B(64 * 4, 8) == 64 + 8


@pytest.mark.parametrize("bits", [2, 4, 8])
def test_quantiser_stays_within_its_declared_error(bits):
    rows = np.random.default_rng(bits).normal(size=(50, 16)).astype(np.float32)
    back, bound = quantise(rows, bits)
    assert np.abs(back - rows).max() <= bound
    assert np.abs(back - rows).max() > bound / 4  # the bound is not vacuous



@pytest.mark.parametrize("bits", [2, 3, 4, 8])
def test_quantised_rows_take_the_codes_a_record_holds(bits):
    """``bits`` per element hold 2^bits codes: each row dequantises to at most 2^bits distinct values,
    on the uniform grid lo + q (hi − lo) / (2^bits − 1), q = 0 … 2^bits − 1, whose ends are the row's
    own minimum and maximum (asymmetric quantisation keeps both extremes exactly)."""
    rng = np.random.default_rng(100 + bits)
    rows = rng.normal(size=(64, 256)).astype(np.float32)
    rows[0] = np.linspace(-1, 1, 256, dtype=np.float32)  # every level used
    back, _ = quantise(rows, bits)
    levels = 2 ** bits
    x = rows.astype(np.float64)
    lo, hi = x.min(axis=1), x.max(axis=1)
    assert max(np.unique(r).size for r in back) <= levels
    assert np.unique(back[0]).size == levels
    np.testing.assert_array_equal(back.min(axis=1), rows.min(axis=1))
    np.testing.assert_array_equal(back.max(axis=1), rows.max(axis=1))
    code = (back - lo[:, None]) / ((hi - lo) / (levels - 1))[:, None]
    assert code.min() >= -1e-4 and code.max() <= levels - 1 + 1e-4
    np.testing.assert_allclose(code, np.round(code), atol=1e-3)

@pytest.mark.slow
@pytest.mark.parametrize("bits", [0, 8])
def test_crash_invariant_holds(bits):
    cr = prepare(CNR, n_batches=9, sets=[("pipeline.cnr_quant_bits", bits)])
    assert (cr.protocol.tolerance == 0) == (bits == 0)
    s = run_points(cr, 200).summary
    assert s["violations"] == 0
    assert 0 < s["lost_batches"]["max"] <= 4  # up to k batches since the last checkpoint


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["flag-before-data", "delete-old-log-early"])
def test_crash_checker_finds_injected_bugs(bug):
    cr = prepare(CNR, n_batches=9, bug=bug, sets=[("pipeline.cnr_quant_bits", 0)])
    assert run_points(cr, 200).summary["violations"] > 0


def test_crash_invariant_and_an_injected_bug_on_a_short_run():
    """The fast tier's share of the two tests above: 5 batches (one checkpoint period and a
    batch), 30 crash points; the quantised scheme recovers within k batches and a flag written
    before its data is caught."""
    cr = prepare(CNR, n_batches=5, sets=[("pipeline.cnr_quant_bits", 8)])
    s = run_points(cr, 30).summary
    assert s["violations"] == 0 and 0 < s["lost_batches"]["max"] <= 4
    bad = prepare(CNR, n_batches=5, bug="flag-before-data", sets=[("pipeline.cnr_quant_bits", 0)])
    assert run_points(bad, 30).summary["violations"] > 0
