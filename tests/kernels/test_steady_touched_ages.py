"""The touched steady state's untouched rows (cxlsim.kernels.vector_cache_steady, steady_state_touched):
their mean measure on the age grid is, per set, the expected count of rows of age <= tau less the
touched rows of age <= tau: a touched row of age exactly tau counts as touched by tau."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.kernels.vector_cache_steady import _binned, _survival_terms, _touched_inputs, _young

SHIFT_32 = np.uint64(32)


def _tables(rows):
    rows = np.asarray(rows, np.int64)
    base = np.concatenate(([0], np.cumsum(rows)[:-1])).astype(np.int64)
    keys = np.arange(1, rows.size + 1, dtype=np.uint64) * np.uint64(0x5851F42D4C957F2D)
    return rows, base, keys


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")  # reuse 1's infinite beta
@settings(max_examples=25, deadline=None)
@given(rows_per_table=st.lists(st.integers(1, 5000), min_size=1, max_size=4),
       exponent=st.sampled_from([0.9, 1.0, 1.1, 1.2]), positions=st.integers(1, 200),
       reuse=st.sampled_from([0.0, 0.5, 0.76, 1.0]), capacity=st.integers(16, 2048), ways=st.sampled_from([1, 4, 16]),
       share=st.floats(0.01, 0.5), seed=st.integers(0, 2**16))
def test_a_row_of_age_tau_counts_as_touched_by_tau(rows_per_table, exponent, positions, reuse, capacity, ways,
                                                   share, seed):
    rows, base, keys = _tables(rows_per_table)
    total = int(rows.sum())
    rng = np.random.default_rng(seed)
    touched = np.unique(rng.integers(0, total, max(1, int(share * total))))
    (_, _, _, n_sets, _, _, _, _, rec_keys, _, grid, mu) = _touched_inputs(
        touched, rows, base, keys, exponent, positions, reuse, capacity, ways, seed, False, None)
    ages = np.sort((rec_keys >> SHIFT_32).astype(np.int64))  # a recency key is age << 32 | visit order
    assert ages.size == touched.size and (ages >= 1).all()
    terms = _survival_terms(_binned(rows, exponent), float(positions), float(reuse))
    with np.errstate(invalid="ignore"):  # reuse 1: an infinite beta at age 1 (masked by _young)
        young = np.array([_young(terms, float(tau)) for tau in grid])
    touched_by = np.array([int(np.count_nonzero(ages <= tau)) for tau in grid])  # age == tau included
    want = np.maximum.accumulate(np.maximum(young - touched_by, 0.0)) / n_sets
    np.testing.assert_allclose(mu, want, rtol=1e-12, atol=1e-12)
