"""Sampling with stated confidence (``batches: auto``, :mod:`cxlsim.systems.sampling`): the
statistics against closed forms, the stopping and warm-up rules on constructed sequences, and a
run's auto counts against a fixed run of the same counts (the same simulation)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cxlsim.studies.sampling.simulation as sampling_simulation
from cxlsim.errors import ConfigError, InputError
from cxlsim.studies.sampling.report import markdown
from cxlsim.studies.sampling.simulation import check_one
from cxlsim.systems import sampling as sm
from cxlsim.systems.run import configure, simulate
from cxlsim.systems.sampling import AUTO, Sampling, decide

SMALL = {"batch_size": 32}  # a fast workload: the rule and the executor's stop, not the numbers


@pytest.mark.parametrize("df, t", [(1, 12.706), (4, 2.776), (19, 2.093), (30, 2.042), (40, 2.021), (60, 2.000),
                                   (120, 1.980), (10_000, 1.960)])
def test_t_quantile_matches_tables(df, t):
    assert sm.t975(df) == pytest.approx(t, abs=1.5e-3)


def test_t_quantile_decreases_to_normal():
    qs = [sm.t975(df) for df in range(1, 200)]
    assert all(a > b for a, b in zip(qs, qs[1:], strict=False))
    assert qs[-1] > 1.959964


def test_half_width_is_t_times_standard_error():
    x = np.array([10.0, 11.0, 9.0, 10.5, 9.5])
    assert sm.ci95_half_width(x) == pytest.approx(2.776 * np.std(x, ddof=1) / math.sqrt(5))
    assert sm.ci95_half_width(np.array([3.0])) is None


def test_variance_inflation_against_closed_forms():
    assert sm.variance_inflation(7, 0.0) == 1.0
    # m = 2: c = 1 + φ, so c (m − 1) / (m − c) = (1 + φ) / (1 − φ)
    assert sm.variance_inflation(2, 0.5) == pytest.approx(3.0)
    # large m: c → (1 + φ) / (1 − φ) and the bias correction → 1
    assert sm.variance_inflation(100_000, 0.76) == pytest.approx(1.76 / 0.24, rel=1e-3)
    assert sm.variance_inflation(5, 1.0) == math.inf
    with pytest.raises(ValueError):
        sm.variance_inflation(5, -0.1)


@given(st.integers(2, 200), st.floats(0, 0.99), st.floats(0, 0.99))
def test_variance_inflation_grows_with_the_correlation(m, a, b):
    lo, hi = sorted((a, b))
    assert 1.0 <= sm.variance_inflation(m, lo) <= sm.variance_inflation(m, hi) * (1 + 1e-12)
    assert math.isfinite(sm.variance_inflation(m, hi))


def test_half_width_with_correlation_is_inflated():
    x = np.array([10.0, 11.0, 9.0, 10.5, 9.5])
    base = sm.ci95_half_width(x)
    assert sm.ci95_half_width(x, 0.76) == pytest.approx(base * math.sqrt(sm.variance_inflation(5, 0.76)))
    assert sm.ci95_half_width(x, 1.0) is None


@pytest.mark.parametrize("m", [5, 10, 20])
def test_the_interval_covers_the_mean_of_a_correlated_series(m):
    """AR(1) series with φ = 0.76 (RM1–RM4's reuse): the corrected 95 % interval covers the true mean
    in about 95 % of windows; the textbook one, which assumes independent batches, far less often."""
    rng = np.random.default_rng(m)
    phi, reps = 0.76, 4000
    x = np.empty((reps, m))
    x[:, 0] = rng.normal(0, 1, reps)  # start in the stationary distribution (σ = 1)
    for i in range(1, m):
        x[:, i] = phi * x[:, i - 1] + rng.normal(0, math.sqrt(1 - phi ** 2), reps)
    means, sds = x.mean(axis=1), x.std(axis=1, ddof=1)
    t = sm.t975(m - 1)
    textbook = np.mean(np.abs(means) <= t * sds / math.sqrt(m))
    corrected = np.mean(np.abs(means) <= t * sds * math.sqrt(sm.variance_inflation(m, phi) / m))
    assert textbook < 0.75
    assert 0.90 <= corrected <= 0.99, corrected


def test_mser_cuts_a_transient_and_keeps_a_steady_sequence():
    rng = np.random.default_rng(0)
    steady = 100 + rng.normal(0, 0.5, 30)
    transient = steady.copy()
    transient[:4] += [40, 20, 10, 5]
    assert sm.mser_truncation(transient, 0, 15) == 4
    assert sm.mser_truncation(steady, 0, 15) <= 3  # nothing to cut: MSER keeps (nearly) everything


def test_fixed_rule_stops_at_its_counts():
    rule = Sampling(7, 3)
    assert not decide(np.ones(9), rule).stop
    d = decide(np.ones(10), rule)
    assert (d.warmup, d.batches, d.stop) == (3, 7, True)
    assert rule.max_total == 11


def test_auto_stops_at_the_minimum_on_a_steady_sequence():
    rule = Sampling(AUTO, AUTO, 0.01)
    x = np.full(40, 5.0)
    x[0] = 9.0  # batch 0 starts from an empty machine
    n = next(n for n in range(1, 40) if decide(x[:n], rule).stop)
    d = decide(x[:n], rule)
    assert (d.warmup, d.batches) == (sm.AUTO_WARMUP_MIN, sm.MIN_BATCHES)
    assert n == sm.AUTO_WARMUP_MIN + sm.MIN_BATCHES


def test_auto_stops_once_the_interval_is_within_the_target():
    rng = np.random.default_rng(3)
    x = 100 + rng.normal(0, 1.5, 40)  # CV 1.5 %: the 1 % half-width needs about 10 batches
    rule = Sampling(AUTO, 2, 0.01)
    n = next(n for n in range(1, 40) if decide(x[:n], rule).stop)
    d = decide(x[:n], rule)
    hw = sm.ci95_half_width(x[2:n])
    assert hw <= 0.01 * x[2:n].mean()
    assert sm.ci95_half_width(x[2:n - 1]) > 0.01 * x[2:n - 1].mean()  # not met one batch earlier
    assert (d.warmup, d.batches) == (2, n - 2)


def test_auto_stops_at_the_maximum_when_the_target_is_out_of_reach():
    rng = np.random.default_rng(4)
    x = 100 + rng.normal(0, 20, 60)
    rule = Sampling(AUTO, AUTO, 0.001)
    n = next(n for n in range(1, 60) if decide(x[:n], rule).stop)
    d = decide(x[:n], rule)
    assert d.batches == sm.MAX_BATCHES
    assert sm.AUTO_WARMUP_MIN <= d.warmup <= sm.AUTO_WARMUP_MAX
    assert n <= rule.max_total - 1


def test_auto_warmup_is_capped():
    x = np.concatenate([np.linspace(200, 120, 15), np.full(30, 100.0)])  # a long drift
    rule = Sampling(AUTO, AUTO, 0.01)
    n = next(n for n in range(1, 45) if decide(x[:n], rule).stop)
    d = decide(x[:n], rule)
    assert d.warmup == sm.AUTO_WARMUP_MAX
    assert n == rule.max_total - 1 and d.batches == sm.MAX_BATCHES


@pytest.mark.parametrize("text, frac", [("1%", 0.01), ("0.5 %", 0.005), ("0.02", 0.02)])
def test_ci_targets_parse(text, frac):
    assert sm.parse_ci(text) == pytest.approx(frac)


@pytest.mark.parametrize("text", ["0%", "100%", "-1%", "abc", "nan"])
def test_bad_ci_targets_are_refused(text):
    with pytest.raises(InputError):
        sm.parse_ci(text)


def test_auto_warmup_needs_auto_batches():
    with pytest.raises(InputError, match="batches: auto too"):
        Sampling(5, AUTO)
    with pytest.raises(ConfigError, match="warmup_batches"):
        configure("cxl", sets=[("warmup_batches", "auto")])


def test_ci_needs_auto_batches():
    with pytest.raises(InputError, match="--ci"):
        configure("cxl", batches=5, ci=0.02)
    assert configure("cxl", batches=AUTO, ci=0.02).batches_ci_fraction == 0.02
    cfg = configure("cxl", sets=[("batches", "auto"), ("warmup_batches", "auto"), ("batches_ci_fraction", "2%")])
    assert cfg.sampling == Sampling(AUTO, AUTO, 0.02)


def test_auto_batches_make_the_warmup_auto_unless_given():
    assert configure("cxl", batches=AUTO).warmup_batches == AUTO
    assert configure("cxl", batches=AUTO, warmup=3).warmup_batches == 3


@pytest.mark.parametrize("system", [pytest.param("cxl", marks=pytest.mark.slow),
                                    pytest.param("pmem", marks=pytest.mark.slow), "tpu-ps"])
def test_auto_is_the_fixed_run_of_the_counts_it_chose(system):
    """The executor's stop rule ends the run where a fixed run of the chosen counts ends: the same
    batch times, bit for bit (nothing re-simulated, nothing different)."""
    auto = simulate(system, workload="rm1", batches=AUTO, seed=1, workload_sets=SMALL, trace=False, ci=0.005)
    cfg = auto.config
    assert isinstance(cfg.batches, int) and isinstance(cfg.warmup_batches, int)
    assert sm.MIN_BATCHES <= cfg.batches <= sm.MAX_BATCHES
    fixed = simulate(system, workload="rm1", batches=cfg.batches, warmup=cfg.warmup_batches, seed=1,
                     workload_sets=SMALL, trace=False)
    np.testing.assert_array_equal(auto.batch_times_ns, fixed.batch_times_ns)
    d, f = auto.to_dict(), fixed.to_dict()
    assert d["batches_mode"] == "auto" and f["batches_mode"] == "fixed"
    assert d["batch_time_ms"] == f["batch_time_ms"]
    assert d["batch_time_ci95_ms"] == pytest.approx(f["batch_time_ci95_ms"])
    assert (d["batches"], d["warmup_batches"]) == (cfg.batches, cfg.warmup_batches)
    assert d["sampling"]["ci_target_fraction"] == 0.005 and f["sampling"] == {"mode": "fixed", "batch_correlation": 0.76, "period_batches": 1}
    assert d["sampling"]["batch_correlation"] == 0.76  # rm1's reuse_prev_fraction
    again = simulate(system, workload="rm1", batches=AUTO, seed=1, workload_sets=SMALL, trace=False, ci=0.005)
    np.testing.assert_array_equal(again.batch_times_ns, auto.batch_times_ns)  # deterministic


def test_one_fixed_batch_has_no_interval():
    d = simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False).to_dict()
    assert d["batch_time_ci95_ms"] is None and d["batch_time_ci95_fraction"] is None
    assert d["batches_mode"] == "fixed" and d["warmup_batches"] == 0


@pytest.mark.slow
def test_the_check_reports_one_cell_consistently():
    c = check_one(("cxl", "rm1", "prototype", 0.01, SMALL))
    assert c["batches"] >= sm.MIN_BATCHES and c["auto_batch_simulations"] == c["warmup_batches"] + c["batches"] + 1
    gap = abs(c["auto_mean_ms"] - c["reference_mean_ms"])
    assert c["difference_fraction"] == pytest.approx((c["auto_mean_ms"] - c["reference_mean_ms"]) / c["reference_mean_ms"])
    assert c["within_target"] == (gap <= 0.01 * c["reference_mean_ms"] * (1 + 1e-9))
    assert c["in_reference_ci"] == (gap <= c["reference_ci95_ms"] * (1 + 1e-9) + 1e-9 * c["reference_mean_ms"])
    assert "| prototype | cxl | rm1 |" in markdown({"ci_target_fraction": 0.01, "cells": [c],
                                                    "counts": {"cells": 1, "in_reference_ci": 1,
                                                               "reference_in_auto_ci": 1, "within_target": 1}})


#: Cells whose auto mean is outside the 20-batch interval though within the 1 % target, with why.
OUTSIDE_EXCEPTIONS = {
    ("pmem", "rm3"): "the host LLC starts empty and its dirty lines, and so its write-backs, "
                     "build up over the first batches (4.86 MB a batch over auto's 5 measured, 5.16 "
                     "over 20): auto's mean is 0.25 % below the 20-batch mean, whose interval is "
                     "±0.23 %. Starting the LLC in the state training leaves it in (as "
                     "pipeline.vector_cache_start: steady does for ssd's cache) is the open fix",
}


@pytest.mark.slow
def test_auto_is_within_its_target_of_20_batches_on_every_system_and_rm():
    """The full check (docs/validation.md, about 4 minutes on 2 cores): every system but ``ssd``
    (whose batch times drift over 20 batches as its vector cache warms: documented there) is within 1 % of the
    20-batch mean on both platforms, at fewer batch simulations."""
    doc = sampling_simulation.run(workers=os.cpu_count() or 1)
    steady = [c for c in doc["cells"] if c["system"] != "ssd"]
    assert len(steady) == 2 * 4 * (len(doc["cells"]) // 8 - 1)
    off = [(c["platform"], c["system"], c["workload"], c["difference_fraction"]) for c in steady if not c["within_target"]]
    assert not off, off
    # every auto mean inside the 20-batch mean's 95 % interval, ssd's included (both intervals for
    # batches with the workload's correlation, as every run states them)
    outside = [(c["platform"], c["system"], c["workload"]) for c in doc["cells"] if not c["in_reference_ci"]]
    named = [o for o in outside if (o[1], o[2]) in OUTSIDE_EXCEPTIONS]
    assert not [o for o in outside if o not in named], outside
    for key in OUTSIDE_EXCEPTIONS:  # a named exception must still be one (else remove it)
        assert any((o[1], o[2]) == key for o in named), f"{key} is inside the 20-batch interval now: remove it"
    # the cost docs/validation.md states: about half the reference's simulations (829 of 1,656 after
    # the posted-write fix, 731 of 1,656 before it), held at 55 %
    assert sum(c["auto_batch_simulations"] for c in steady) < 0.55 * sum(c["reference_batch_simulations"] for c in steady)


def test_the_input_stream_has_the_correlation_the_interval_assumes():
    """A per-batch sum over lookup positions (here: the share of rows ≡ 0 mod 7) has lag-l
    correlation reuse_prev_fraction**l (Workload.batch_correlation), the AR(1) the interval uses."""
    from cxlsim.workloads.catalog import load_workload
    from cxlsim.workloads.generator import batches

    wl = load_workload("rm1", {"batch_size": 64})
    x = np.array([np.mean(b.indices % 7 == 0) for b in batches(wl, seed=3, n=400, row_scale=0.001, dense=False)])[1:]
    y = x - x.mean()
    acf = [float((y[lag:] * y[:-lag]).sum() / (y * y).sum()) for lag in (1, 2)]
    assert wl.batch_correlation == 0.76
    assert acf[0] == pytest.approx(0.76, abs=0.06) and acf[1] == pytest.approx(0.76 ** 2, abs=0.08), acf
    independent = load_workload("rm1", {"batch_size": 64, "reuse_prev_fraction": 0.0})
    assert independent.batch_correlation == 0.0


def test_period_means_correlation_against_the_closed_form():
    """Means of 2 consecutive AR(1) batches: ρ_1 = φ (1 + φ) / 2 (the cross terms φ, φ², φ², φ³ over
    the block variance 2 + 2φ)."""
    phi = 0.76
    np.testing.assert_allclose(sm.lag_correlations(phi, 6), phi ** np.arange(1, 6))
    assert sm.lag_correlations(phi, 3, period=2)[0] == pytest.approx(phi * (1 + phi) / 2)
    assert sm.lag_correlations(0.0, 5, period=4) == pytest.approx(np.zeros(4))
    assert sm.variance_inflation(5, phi, period=4) < sm.variance_inflation(5, phi)  # period means decorrelate


def _periodic(n: int, period: int, seed: int = 0) -> np.ndarray:
    """Batch times with a checkpoint batch every ``period`` (+40 %) and 0.1 % AR(1) noise."""
    rng = np.random.default_rng(seed)
    noise = np.empty(n)
    noise[0] = rng.normal()
    for i in range(1, n):
        noise[i] = 0.76 * noise[i - 1] + rng.normal(0, math.sqrt(1 - 0.76 ** 2))
    x = 100 * (1 + 0.001 * noise)
    x[period - 1::period] *= 1.4
    x[0] *= 1.5  # batch 0: an empty machine
    return x


@pytest.mark.parametrize("period", [2, 3, 4, 8])
def test_a_periodic_schedule_is_sampled_in_whole_periods(period):
    x = _periodic(80, period)
    rule = Sampling(AUTO, AUTO, 0.01, batch_correlation=0.76, period_batches=period)
    n = next(n for n in range(1, 80) if decide(x[:n], rule).stop)
    d = decide(x[:n], rule)
    assert d.batches % period == 0 and rule.min_batches <= d.batches <= rule.max_batches
    assert rule.max_batches == max(sm.MAX_BATCHES // period, sm.MIN_BATCHES) * period
    assert n <= rule.max_total - 1
    tail = x[d.warmup:d.warmup + d.batches]
    hw = sm.ci95_half_width(tail, 0.76, period)
    assert hw <= 0.01 * tail.mean()  # the period means agree to the noise: the target is met
    # batch by batch the same times swing by the checkpoint: an interval of several per cent
    assert sm.ci95_half_width(tail, 0.76) > 5 * hw
    s = sm.summary(tail, rule, d.warmup)
    assert s["batch_time_ci95_ms"] == pytest.approx(hw / 1e6)


def test_cnr_samples_in_its_checkpoint_interval():
    from cxlsim.workloads.catalog import load_workload

    wl = load_workload("rm1")
    assert sm.rule_for(configure("cxl-cnr", batches=AUTO), wl).period_batches == 4
    assert sm.rule_for(configure("cxl-cnr", batches=AUTO, sets=[("pipeline.cnr_interval_batches", 3)]),
                       wl).period_batches == 3
    assert sm.rule_for(configure("cxl", batches=AUTO), wl).period_batches == 1
    assert sm.rule_for(configure("tpu-ps", batches=AUTO), wl).period_batches == 1  # no pipeline


def test_the_cli_names_why_there_is_no_interval():
    from cxlsim.cli.run import ci_text

    periodic = {"mode": "fixed", "batch_correlation": 0.76, "period_batches": 4}
    assert ci_text({"batch_time_ci95_ms": None, "sampling": periodic}) == "n/a (fewer than 2 whole periods of 4 batches)"
    assert ci_text({"batch_time_ci95_ms": 0.01, "batch_time_ci95_fraction": 0.002, "sampling": periodic}) \
        == "± 0.010 ms (± 0.20%) over periods of 4 batches"
    assert "one sample" in ci_text({"batch_time_ci95_ms": None, "sampling": {"mode": "fixed", "batch_correlation": 1.0}})
    assert ci_text({"batch_time_ci95_ms": None, "sampling": {"mode": "fixed"}}) == "n/a (one batch)"


def test_mser_with_a_period_compares_whole_periods_to_the_end():
    x = _periodic(21, 4)
    # candidates 1 and 5 leave whole periods to batch 20; 2, 3, 4, 6 would drop a partial one
    assert sm.mser_truncation(x, 1, 6, period=4) in (1, 5)
    assert sm.mser_truncation(x[:19], 1, 2, period=8) in (1, 2)  # none whole: every candidate
