"""Tables placed over two memory tiers: host DRAM (near) and the table memory (far, e.g. a CXL
memory expander), by page, as the operating system places them (``pipeline.table_placement``).

Contract: :class:`Tiering` ``(pipeline, data_base_B, row_B, streams)``; :meth:`Tiering.near`
``(addr_B)`` → a boolean mask, True where the address's page is in host DRAM. Pages are
:data:`PAGE_B` (Linux's base page). Policies:

* ``interleave``: Linux's weighted interleave (``weighted_interleave`` sysfs weights, the N:M
  page-interleave patch of the embedding-reduction experiment): of every ``near + far``
  consecutive pages of the table region, the first ``near`` are in DRAM, the next ``far`` in the
  table memory (``table_placement_near_weight``, ``table_placement_far_weight``;
  :func:`interleaved`);
* ``hot_first``: the most-accessed pages in DRAM, up to ``table_placement_near_GB``, the rest in
  the table memory: the state a TPP-like promotion of hot pages converges to (named
  approximation: promotion has converged). Hotness is the generator's long-run popularity (each
  table's bounded power law over ranks, scattered over its rows by the generator's own keyed
  permutation, weighted by the table's lookups a batch): the hottest rows across tables, each
  promoting its page. Hot rows are scattered, so a page promoted for one carries its cold
  neighbours: page-granular tiering holds far fewer hot rows than its bytes would. A trace has no
  popularity model: its pages rank by their accesses over the run's batches.

Used by :class:`~cxlsim.systems.machine.memory.MemoryServices`: a stream to the table memory is
split by tier, each part served by its tier's memory model (with the host's path to it).
"""

from __future__ import annotations

import numpy as np

from cxlsim.config.params import ParamSet
from cxlsim.kernels.sampling import EXPONENT_ONE_TOL, feistel_permute
from cxlsim.systems.config import placement_weights
from cxlsim.systems.streams import StreamSet
from cxlsim.units import GB
from cxlsim.workloads.generator import table_keys

#: Placement granularity: a base page (Linux, x86-64).
PAGE_B = 4096


class Tiering:
    """Which table pages sit in host DRAM (module docstring)."""

    def __init__(self, pipeline: ParamSet, data_base_B: int, row_B: int, streams: StreamSet) -> None:
        if pipeline.table_placement == "interleave":
            self.near_pages, far = placement_weights(pipeline)
            self.period = self.near_pages + far
            self.hot = None
        else:
            budget = int(pipeline.table_placement_near_GB * GB // PAGE_B)
            if streams.workload.params.trace:
                self.hot = accessed_pages(streams, data_base_B, row_B, budget)
            else:
                self.hot = popular_pages(streams, data_base_B, row_B, budget)

    def near(self, addr_B: np.ndarray) -> np.ndarray:
        """True where ``addr_B``'s page is in host DRAM."""
        page = np.asarray(addr_B, dtype=np.int64) // PAGE_B
        if self.hot is None:
            return interleaved(page, self.near_pages, self.period - self.near_pages)
        if self.hot.size == 0:
            return np.zeros(page.shape, bool)
        i = np.minimum(np.searchsorted(self.hot, page), self.hot.size - 1)  # the hot pages are sorted
        return self.hot[i] == page


def interleaved(page: np.ndarray, near: int, far: int) -> np.ndarray:
    """Weighted interleave: True for the pages of every ``near + far`` consecutive ones that are
    among the first ``near`` (the near node's)."""
    return page % (near + far) < near


def rank_mass(k: np.ndarray, n: int | np.ndarray, exponent: float) -> np.ndarray:
    """Probability of rank ``k`` under the generator's bounded power law over ``[0, n)``
    (:func:`cxlsim.kernels.sampling.power_law_ranks`: the rank is ``⌊x⌋ - 1`` of ``x`` with density
    ∝ x^-exponent on ``[1, n + 1)``)."""
    k = np.asarray(k, dtype=np.float64)
    top = np.asarray(n, dtype=np.float64) + 1.0
    if abs(exponent - 1.0) < EXPONENT_ONE_TOL:
        return (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(top)
    a = 1.0 - exponent
    return ((k + 2.0) ** a - (k + 1.0) ** a) / (top**a - 1.0)


def popular_pages(streams: StreamSet, data_base_B: int, row_B: int, budget: int) -> np.ndarray:
    """The pages of the hottest rows by the generator's popularity (module docstring), at most
    ``budget``, sorted. A global threshold on a row's expected accesses a batch picks each table's
    leading ranks (its popularity falls with rank), found by bisection so that about ``budget``
    rows are hot; each maps to its row by the table's keyed permutation."""
    if budget <= 0:
        return np.zeros(0, np.int64)
    w = streams.workload
    p = w.params
    n_t = np.asarray(w.rows_per_table_scaled(1.0), dtype=np.int64)
    per_batch = np.asarray(w.max_bag_sizes, dtype=np.float64) * p.batch_size  # lookups a batch, each table
    e = float(p.popularity_exponent)

    def leading(level: float) -> np.ndarray:  # ranks of each table at or above ``level`` accesses a batch
        lo, hi = np.zeros(n_t.size, np.int64), n_t.copy()  # the first rank below the level, every table at once
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            above = per_batch * rank_mass(mid, n_t, e) >= level
            lo = np.where((lo < hi) & above, mid + 1, lo)
            hi = np.where((lo < hi) & ~above, mid, hi)
        return lo

    lo, hi = 1e-30, float(per_batch.max())
    for _ in range(200):  # bisection on the level (log scale)
        mid = float(np.sqrt(lo * hi))
        if leading(mid).sum() > budget:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-9:
            break
    counts = leading(hi)
    keys = table_keys(streams.seed, n_t.size)
    rows = [streams.layout.row_base[t] + feistel_permute(np.arange(c, dtype=np.int64), int(n_t[t]), keys[t])
            for t, c in enumerate(counts.tolist()) if c]
    if not rows:
        return np.zeros(0, np.int64)
    pages = np.unique((data_base_B + np.concatenate(rows) * row_B) // PAGE_B)
    return pages[:budget]


def accessed_pages(streams: StreamSet, data_base_B: int, row_B: int, budget: int) -> np.ndarray:
    """The ``budget`` most-accessed pages of the tables over ``streams``' batches (lookups), sorted;
    ties by the lower page."""
    if budget <= 0:
        return np.zeros(0, np.int64)
    pages = [(data_base_B + streams.batch(n).lookup_rows.astype(np.int64) * row_B) // PAGE_B for n in range(streams.n)]
    touched, counts = np.unique(np.concatenate(pages) if pages else np.zeros(0, np.int64), return_counts=True)
    if touched.size <= budget:
        return touched
    order = np.lexsort((touched, -counts))[:budget]
    return np.sort(touched[order])


def loop_shares(outstanding: int, accesses: list[int], latencies_ns: list[float]) -> list[int]:
    """One closed loop of ``outstanding`` requests over several tiers, as one loop per tier: each
    gets the share of the requests its accesses hold by Little's law (accesses × idle latency), so
    latency-bound tiers finish together, as the one loop would (at least one each; named
    approximation: a tier's loaded latency is not known here)."""
    weights = [a * lat for a, lat in zip(accesses, latencies_ns, strict=True)]
    total = sum(weights)
    return [max(1, round(outstanding * w / total)) if total > 0 else max(1, outstanding) for w in weights]
