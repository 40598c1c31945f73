"""The crash checker's default batch count completes a relaxed MLP log."""

from __future__ import annotations

import pytest

from cxlsim.crash.options import DEFAULT_BATCHES, MAX_DEFAULT_BATCHES, MLP_LOG_MARGIN_BATCHES
from cxlsim.crash.run import default_batches, prepare


def test_a_log_completing_in_the_probe_sets_the_count():
    fr = [(0.0, 0.3), (0.3, 0.6), (0.6, 0.9), (0.9, 1.0), (0.0, 0.3), (0.3, 0.6)]
    assert default_batches(fr) == max(DEFAULT_BATCHES, 4 + MLP_LOG_MARGIN_BATCHES)


def test_a_slow_log_is_extrapolated_from_its_progress():
    fr = [(i * 0.1, (i + 1) * 0.1) for i in range(6)]  # 10 % a batch: completes in batch 9
    assert default_batches(fr) == 10 + MLP_LOG_MARGIN_BATCHES


def test_bounds():
    assert default_batches([(0.0, 0.0)] * 6) == DEFAULT_BATCHES
    assert default_batches([(i * 1e-3, (i + 1) * 1e-3) for i in range(6)]) == MAX_DEFAULT_BATCHES
    assert default_batches([(0.0, 1.0)] * 6) == DEFAULT_BATCHES


@pytest.mark.slow
def test_cxl_default_completes_an_mlp_log():
    cr = prepare("cxl", workload="rm1", seed=1)
    fr = cr.timeline.mlp_fractions(0)
    assert any(after >= 1.0 for _, after in fr), fr
    assert prepare("cxl-b", workload="rm1", seed=1).n_batches == DEFAULT_BATCHES
