"""Row access statistics over hours of training: which rows an interval touches, and how often.

The process simulates a representative sample of ``rows_sampled_count`` rows with power-law
popularity p(rank k) ∝ k^−s (a random permutation maps ranks to row ids), the same model as the
workload generator (``popularity_exponent``; docs/design.md#workloads). Its rate is calibrated so
that a ``calibration_interval_h`` interval touches ``modified_fraction`` of the rows (Check-N-Run:
about 26 % per 30 minutes); fractions of the sample stand for fractions of the whole model.

Accesses of one work interval are a pure function of (seed, interval grid, interval index): a
redone interval after a rollback sees the same rows again, as re-reading the same data would.
Per-row counters and modified-row bit vectors are built by the kernels of :mod:`cxlsim.kernels.ft`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from cxlsim.kernels.ft import count_accesses, mark_modified, new_bit_vector
from cxlsim.rng import stream as rng_stream
from cxlsim.workloads.catalog import load_workload

#: Bisection steps when calibrating the access rate (relative precision 2^-60).
CALIBRATION_STEPS = 60


def workload_exponent(name: str) -> float:
    """Popularity exponent of catalog workload ``name``."""
    return float(load_workload(name).params["popularity_exponent"])


def touched_fraction(probabilities: np.ndarray, accesses: float) -> float:
    """Expected fraction of rows touched at least once by ``accesses`` independent draws."""
    return float(np.mean(-np.expm1(-accesses * probabilities)))


class AccessProcess:
    """Seeded power-law accesses over a row sample; see the module docstring."""

    def __init__(self, rows: int, exponent: float, modified_fraction: float, calibration_s: float,
                 seed: int, stream: str = "ft.access") -> None:
        self.rows = rows
        self.exponent = exponent
        self.seed = seed
        self.stream = stream
        ranks = np.arange(1, rows + 1, dtype=np.float64)
        weights = ranks ** (-exponent)
        perm = rng_stream(seed, stream + ".permutation").permutation(rows)
        self.p = np.empty(rows)
        self.p[perm] = weights / weights.sum()
        self.cdf = np.cumsum(self.p)
        self.cdf[-1] = 1.0
        self.accesses_per_s = self._calibrate(modified_fraction) / calibration_s
        self.calibration_s = calibration_s

    def _calibrate(self, target: float) -> float:
        """Accesses per calibration interval whose expected touched fraction equals ``target``."""
        if target >= 1.0:
            raise ValueError("modified_fraction must be < 1")
        lo, hi = 0.0, 1.0
        while touched_fraction(self.p, hi) < target:
            hi *= 2.0
        for _ in range(CALIBRATION_STEPS):
            mid = 0.5 * (lo + hi)
            if touched_fraction(self.p, mid) < target:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    def indices(self, length_s: float, index: int) -> np.ndarray:
        """Row ids accessed during interval ``index`` of a grid of ``length_s``-second intervals."""
        n = int(round(self.accesses_per_s * length_s))
        rng = rng_stream(self.seed, f"{self.stream}.{length_s:.6g}.{index}")
        # n independent draws from p, grouped by row (order within an interval is immaterial here)
        return np.repeat(np.arange(self.rows, dtype=np.int64), rng.multinomial(n, self.p))

    @lru_cache(maxsize=4096)  # noqa: B019 - a process lives as long as its scenario run
    def counts(self, length_s: float, index: int) -> np.ndarray:
        """Per-row access counts of one interval (the MFU counters' increments)."""
        c = np.zeros(self.rows, dtype=np.int64)
        return count_accesses(self.indices(length_s, index), c)

    @lru_cache(maxsize=4096)  # noqa: B019
    def modified(self, length_s: float, index: int) -> np.ndarray:
        """Packed modified-row bit vector of one interval."""
        return mark_modified(self.indices(length_s, index), new_bit_vector(self.rows))

    def thinned_rows(self, length_s: float, index: int, period: int, stream: str) -> np.ndarray:
        """Rows seen by a sampler keeping every ``period``-th access (binomial thinning, 1/period)."""
        rng = rng_stream(self.seed, f"{self.stream}.{stream}.{length_s:.6g}.{index}")
        kept = rng.binomial(self.counts(length_s, index), 1.0 / period)
        return np.flatnonzero(kept)


def from_scenario(access, seed: int) -> AccessProcess:
    """Build the process from an ``access`` section (workload exponent wired in when asked)."""
    exponent = access.zipf_exponent
    if access.source_name == "workload":
        exponent = workload_exponent(access.workload_name)
    return AccessProcess(access.rows_sampled_count, exponent, access.modified_fraction,
                         access.calibration_interval_h * 3600.0, seed)

