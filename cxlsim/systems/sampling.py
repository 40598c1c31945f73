"""How many batches a run measures: a fixed count, or ``auto``, sampling with stated confidence.

``batches: auto`` follows SMARTS (Wunderlich, Wenisch, Falsafi & Hoe, ISCA 2003): keep measuring
until the 95 % confidence interval of the mean batch time is narrower than a target, here a
relative half-width ``ci_fraction`` (default :data:`DEFAULT_CI_FRACTION`, 1 %)::

    half_width = t(0.975, m − 1) · s / √m  ≤  ci_fraction · mean

over the ``m`` measured batches (Student's t: ``m`` is small, the batch-time variance unknown),
with ``m`` between :data:`MIN_BATCHES` and :data:`MAX_BATCHES`.

Consecutive batches are not independent: a fraction ``p`` of a batch's lookup positions repeat
the previous batch's row (the workload's ``reuse_prev_fraction``, 0.76 in RM1–RM4), so any
per-batch sum over positions has lag-``l`` correlation ``p**l`` exactly (a position keeps its row
over ``l`` batches with probability ``p**l``, and draws an independent one otherwise), and batch
times inherit it (measured lag-1 correlation 0.57–0.77 over 400-batch runs; docs/validation.md).
The interval therefore inflates the variance of the mean as for a stationary AR(1) series with
``ρ_l = φ**l`` (φ = :attr:`Sampling.batch_correlation`)::

    s² · c(m, φ) (m − 1) / (m (m − c(m, φ))),     c(m, φ) = 1 + 2 Σ_{l=1}^{m−1} (1 − l/m) φ**l

— ``σ² c / m`` is the variance of the mean of ``m`` such observations and ``σ² (m − c)/(m − 1)``
the expectation of their sample variance (Law, *Simulation Modeling and Analysis*, §4.4), so the
product is unbiased (:func:`variance_inflation`; 1 for φ = 0, the textbook interval). Without it
the 95 % interval of a 20-batch mean covered the long-run mean in only 41–61 % of windows (the corrected one: 88–100 %).

A system whose schedule repeats every ``P`` batches (a checkpoint every ``P``: the persistence
scheme's :meth:`~cxlsim.axes.persistence.Persistence.period_batches`) is sampled in whole periods
(the batch-means method with the period as the batch, Law §9.5.3): its observations are the means
of ``P`` consecutive batches, the measured count a whole number of periods (at least
:data:`MIN_BATCHES` periods, at most :data:`MAX_BATCHES` batches or :data:`MIN_BATCHES` periods if
more), and the correlation of consecutive period means follows from φ (:func:`lag_correlations`).
Batch-by-batch, such a series swings by the checkpoint's whole cost and neither interval above
would describe its mean.

``warmup_batches: auto`` decides the warm-up the same way, from the batch times themselves: the
truncation point ``d`` that minimises the marginal standard error (MSER, White 1997; White, Cobb &
Spratt 2000)::

    MSER(d) = Σ_{i=d}^{n−1} (x_i − x̄_d)² / (n − d)²        (x̄_d: the mean of x_d … x_{n−1})

(over period means, from ``d`` on, for a periodic schedule)

over ``AUTO_WARMUP_MIN ≤ d ≤ min(AUTO_WARMUP_MAX, n // 2)`` (the half-sample bound is the rule's
usual guard: near the end of a sequence its statistic rests on too few points). Hoad, Robinson &
Davies (J. Oper. Res. Soc. 61(9), 2010) found MSER-5 the most reliable of 44 warm-up methods; the
``-5`` averages raw observations in fives first, and a batch time is already the mean of a batch's
many operations, so the rule applies to batch times directly (MSER-1).

The rule is applied after every batch, as the simulation goes (:func:`decide`); the run stops at
the first batch where it is met, so it never re-simulates: the simulation is the one a fixed run
of the chosen counts makes (:func:`cxlsim.systems.run.simulate`).

Named choices (docs/validation.md, "Sampling with stated confidence"):

- :data:`MIN_BATCHES` = 5: below it the sample standard deviation is too unreliable to stop on
  (its relative standard error is about 1/√(2(m − 1)), 35 % at m = 5) and the t quantile grows
  fast (2.78 at 4 degrees of freedom, 4.30 at 2);
- :data:`MAX_BATCHES` = 20: the count every system's configuration measures, so ``auto`` never
  measures more than a fixed run; a run that reaches it reports the interval it achieved;
- :data:`AUTO_WARMUP_MIN` = 1: batch 0 starts from an empty machine (no previous batch, no pending
  writes or logs) and is never a steady-state sample;
- :data:`AUTO_WARMUP_MAX` = 6: three times the fixed default of 2, a cap on what a slow drift can
  cost; with it a run simulates at most 6 + 20 + 1 batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cxlsim.errors import InputError
from cxlsim.systems import axes

AUTO = "auto"
DEFAULT_CI_FRACTION = 0.01
MIN_BATCHES = 5
MAX_BATCHES = 20
AUTO_WARMUP_MIN = 1
AUTO_WARMUP_MAX = 6
#: two-sided 95 %: the t quantile at 0.975
CONFIDENCE = 0.95

#: Student's t quantile t(0.975, df) for df = 1 … 30 (standard tables, e.g. NIST/SEMATECH
#: e-Handbook of Statistical Methods, §1.3.6.7.2)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
_Z975 = 1.959964


def t975(df: int) -> float:
    """Student's t quantile at 0.975 with ``df`` degrees of freedom: the table up to 30, then the
    Cornish–Fisher expansion in 1/df (Abramowitz & Stegun 26.7.5; error below 1e-4 beyond 30)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3


def lag_correlations(phi: float, m: int, period: int = 1) -> np.ndarray:
    """Correlations ``ρ_1 … ρ_{m−1}`` of consecutive observations when batch times have lag-``l``
    correlation ``phi**l``: the batches themselves (``period`` 1: ``phi**l``), or the means of
    ``period`` consecutive batches (``ρ_l = Σ_{i,j<P} phi**|lP + j − i| / Σ_{i,j<P} phi**|j − i|``)."""
    lags = np.arange(1, m, dtype=float)
    if period == 1:
        return phi ** lags
    i = np.arange(period, dtype=float)
    gap = i[None, :] - i[:, None]  # j − i
    base = float(np.sum(phi ** np.abs(gap)))
    return np.array([float(np.sum(phi ** np.abs(lag * period + gap))) / base for lag in lags])


def variance_inflation(m: int, phi: float, period: int = 1) -> float:
    """``c (m − 1) / (m − c)`` with ``c = 1 + 2 Σ_{l<m} (1 − l/m) ρ_l`` (module docstring): the
    factor by which ``s² / m`` of ``m`` consecutive observations (batches, or means of ``period``
    batches) understates the variance of their mean, in expectation, when batch times have lag-``l``
    correlation ``phi**l`` (:func:`lag_correlations`). 1 for ``phi`` = 0; finite for
    ``0 ≤ phi < 1`` and ``m ≥ 2`` (then ``c < m``); infinite for ``phi`` = 1 (every batch repeats
    the previous one's lookups: the batches are one sample, whatever their number)."""
    if not 0 <= phi <= 1:
        raise ValueError(f"the batch-time correlation must be in [0, 1], got {phi!r}")
    if phi == 0 or m < 2:
        return 1.0
    if phi == 1:
        return math.inf
    lags = np.arange(1, m, dtype=float)
    c = 1.0 + 2.0 * float(np.sum((1.0 - lags / m) * lag_correlations(phi, m, period)))
    return c * (m - 1) / (m - c)


def period_means(x: np.ndarray, period: int) -> np.ndarray:
    """Means of the whole periods of ``x`` from its start (a trailing partial period left out)."""
    x = np.asarray(x, dtype=float)
    whole = x.size // period * period
    return x[:whole] if period == 1 else x[:whole].reshape(-1, period).mean(axis=1)


def ci95_half_width(x: np.ndarray, correlation: float = 0.0, period: int = 1) -> float | None:
    """Half-width of the 95 % confidence interval of the mean of ``x`` for consecutive batches with
    lag-1 correlation ``correlation`` (module docstring; 0: the textbook interval of independent
    observations), over whole periods of ``period`` batches. None (no interval) with fewer than two
    observations, or for a correlation of 1."""
    obs = period_means(x, period)
    m = int(obs.size)
    if m < 2 or correlation >= 1:
        return None
    return float(t975(m - 1) * np.std(obs, ddof=1) * math.sqrt(variance_inflation(m, correlation, period) / m))


def mser_truncation(x: np.ndarray, lo: int, hi: int, period: int = 1) -> int:
    """The MSER truncation point of ``x`` in ``[lo, hi]`` (module docstring; ties: the smallest),
    over the means of whole periods of ``period`` batches from each candidate on. With a period,
    the candidates are those that leave whole periods to the end of ``x`` (each statistic then
    rests on every batch after its candidate; any candidate if none in range does)."""
    n = x.size
    candidates = [d for d in range(lo, hi + 1) if (n - d) % period == 0] or list(range(lo, hi + 1))
    best, best_d = math.inf, candidates[0]
    for d in candidates:
        tail = period_means(x[d:], period)
        if tail.size < 2:
            break
        stat = float(np.sum((tail - tail.mean()) ** 2)) / tail.size ** 2
        if stat < best:
            best, best_d = stat, d
    return best_d


@dataclass(frozen=True)
class Sampling:
    """How a run picks its batches: fixed counts, or ``auto`` (module docstring).

    ``batches`` / ``warmup`` are whole numbers or :data:`AUTO`; ``ci_fraction`` is the target
    relative half-width of ``auto`` (used only then); ``batch_correlation`` the lag-1 correlation
    of consecutive batch times the interval assumes and ``period_batches`` the schedule's period
    (module docstring; a run takes them from its workload and persistence scheme, :func:`rule_for`)."""

    batches: int | str
    warmup: int | str
    ci_fraction: float = DEFAULT_CI_FRACTION
    batch_correlation: float = 0.0
    period_batches: int = 1

    def __post_init__(self) -> None:
        if self.warmup == AUTO and self.batches != AUTO:
            raise InputError("warmup_batches: auto decides the warm-up from the measured batches' statistics; "
                             "give batches: auto too (--batches auto), or a fixed warm-up")
        if not 0 < self.ci_fraction < 1:
            raise InputError(f"the confidence-interval target must be in (0, 100 %), got {self.ci_fraction!r}")
        if not 0 <= self.batch_correlation <= 1:
            raise InputError(f"the batch-time correlation must be in [0, 1], got {self.batch_correlation!r}")
        if not (isinstance(self.period_batches, int) and self.period_batches >= 1):
            raise InputError(f"the schedule's period must be a whole number of batches >= 1, got {self.period_batches!r}")

    @property
    def auto(self) -> bool:
        return self.batches == AUTO

    @property
    def min_batches(self) -> int:
        """Measured batches ``auto`` needs at least: :data:`MIN_BATCHES` periods."""
        return MIN_BATCHES * self.period_batches

    @property
    def max_batches(self) -> int:
        """Measured batches ``auto`` takes at most: :data:`MAX_BATCHES` in whole periods, at least
        :data:`MIN_BATCHES` periods."""
        p = self.period_batches
        return max(MAX_BATCHES // p, MIN_BATCHES) * p

    @property
    def max_total(self) -> int:
        """Batches a run simulates at most, the closing one included."""
        if not self.auto:
            return int(self.warmup) + int(self.batches) + 1
        warm = AUTO_WARMUP_MAX if self.warmup == AUTO else int(self.warmup)
        return warm + self.max_batches + 1

    def describe(self) -> dict[str, Any]:
        """The rule as result files record it."""
        if not self.auto:
            return {"mode": "fixed", "batch_correlation": self.batch_correlation, "period_batches": self.period_batches}
        return {"mode": "auto", "ci_target_fraction": self.ci_fraction, "confidence": CONFIDENCE,
                "batch_correlation": self.batch_correlation, "period_batches": self.period_batches,
                "min_batches": self.min_batches, "max_batches": self.max_batches,
                "warmup": "MSER" if self.warmup == AUTO else "fixed",
                "warmup_min": AUTO_WARMUP_MIN if self.warmup == AUTO else int(self.warmup),
                "warmup_max": AUTO_WARMUP_MAX if self.warmup == AUTO else int(self.warmup)}


@dataclass(frozen=True)
class Decision:
    """The batches to report after ``n`` simulated ones: warm-up ``warmup``, measured ``batches``
    (batches ``warmup … warmup + batches − 1``), and whether the run may stop."""

    warmup: int
    batches: int
    stop: bool


def decide(times_ns: np.ndarray, rule: Sampling) -> Decision:
    """Apply ``rule`` to the batch times of the first ``n = len(times_ns)`` batches (every batch
    simulated so far, warm-up included)."""
    x = np.asarray(times_ns, dtype=float)
    n = x.size
    if not rule.auto:
        w, b = int(rule.warmup), int(rule.batches)
        return Decision(w, b, n >= w + b)
    p = rule.period_batches
    if rule.warmup == AUTO:
        lo = AUTO_WARMUP_MIN
        d = mser_truncation(x, lo, min(AUTO_WARMUP_MAX, n // 2), p) if n > lo else lo
    else:
        d = int(rule.warmup)
    d = max(d, n - rule.max_batches)  # the latest max_batches at most
    m = max(n - d, 0) // p * p  # whole periods
    if m < rule.min_batches:
        return Decision(d, m, False)
    tail = x[d:d + m]
    hw = ci95_half_width(tail, rule.batch_correlation, p)
    met = hw is not None and hw <= rule.ci_fraction * float(tail.mean())
    return Decision(d, m, met or m >= rule.max_batches or n >= rule.max_total - 1)


def summary(times_ns: np.ndarray, rule: Sampling, warmup: int) -> dict[str, Any]:
    """What a result reports about its sampling: the counts, the interval and the rule."""
    x = np.asarray(times_ns, dtype=float)
    hw = ci95_half_width(x, rule.batch_correlation, rule.period_batches)
    mean = float(x.mean()) if x.size else float("nan")
    return {"batches_mode": AUTO if rule.auto else "fixed", "warmup_batches": int(warmup),
            "batch_time_ci95_ms": None if hw is None else hw / 1e6,
            "batch_time_ci95_fraction": None if hw is None or mean == 0 else hw / mean,
            "sampling": rule.describe()}


def parse_ci(value: Any, where: str = "--ci") -> float:
    """A confidence-interval target: ``1%``, ``0.5 %`` or a fraction such as ``0.01``."""
    text = str(value).strip()
    try:
        frac = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise InputError(f"{where}: expected a percentage such as 1% (or a fraction such as 0.01), got {value!r}") from None
    if not 0 < frac < 1 or not math.isfinite(frac):
        raise InputError(f"{where}: the relative half-width must be above 0 % and below 100 %, got {value!r}")
    return frac


def rule_for(cfg: Any, workload: Any) -> Sampling:
    """``cfg``'s batch counts (:attr:`~cxlsim.systems.config.SystemConfig.sampling`) with what the
    system and its workload imply for the interval: the workload's batch-time correlation
    (:attr:`~cxlsim.workloads.catalog.Workload.batch_correlation`) and the persistence scheme's
    period (:meth:`~cxlsim.axes.persistence.Persistence.period_batches`; 1 without a pipeline)."""
    period = 1 if cfg.pipeline is None else int(axes.of(cfg.pipeline, "persistence").period_batches(cfg.pipeline))
    return replace(cfg.sampling, batch_correlation=workload.batch_correlation, period_batches=period)
