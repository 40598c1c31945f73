"""The host-DRAM vector cache's state when a run starts (``pipeline.vector_cache_start``).

``empty``: nothing cached (a cold start: the first batches of training). ``steady``: the state the
cache's own policy reaches over the input stream after long training, built from the stream's
stationary popularity without simulating the batches that would reach it, for the sets of the rows
the run's batches access (:func:`cxlsim.kernels.vector_cache_steady.steady_state_touched`;
docs/timing-model.md, "Vector cache"). It is a pure function of the workload, the seed and the
batches of the input streams and of the cache's geometry, so the most recent one is kept, as the
recipe of each set (:class:`~cxlsim.kernels.vector_cache_steady.SteadySets`), and each run gets a
cache that builds a set when the run first touches it (a run that stops early builds only the sets
it reached). Recipes are kept per process, the most recently used first, up to
:data:`KEPT_RECIPES_B` bytes (the latest always): the runs of a sweep or a comparison make each
workload's recipe once, whatever they sweep besides it (platforms, systems, other parameters), and
worker processes forked after it inherit it.
"""

from __future__ import annotations

import numpy as np

from cxlsim.errors import ConfigError
from cxlsim.kernels.row_bitmap import mark, members, members_ref, new_bitmap
from cxlsim.kernels.vector_cache import VectorCache, new_cache
from cxlsim.kernels.vector_cache_steady import SteadySets, steady_sets_touched
from cxlsim.systems.streams import StreamSet
from cxlsim.workloads.generator import table_keys

#: ``pipeline.vector_cache_start`` values.
STARTS = ("empty", "steady")


def touched_rows(streams: StreamSet, batches: int | None = None) -> np.ndarray:
    """The distinct global rows any of the first ``batches`` batches of ``streams`` (default all)
    accesses, ascending (generates those batches; analyses none: :meth:`StreamSet.rows`)."""
    batches = streams.n if batches is None else min(int(batches), streams.n)
    arrays = [streams.rows(n) for n in range(batches)]
    total = int(streams.layout.total_rows)
    if sum(a.size for a in arrays) * 64 < total:  # sparse (fewer ids than bitmap words): sort them
        return members_ref(arrays)
    bitmap = new_bitmap(total)
    for a in arrays:
        mark(bitmap, a)
    return members(bitmap)


def starting_cache(start: str, streams: StreamSet, capacity_rows: int, reverse_tables: bool = False,
                   batches: int | None = None) -> tuple[VectorCache]:
    """The cache state of ``capacity_rows`` entries a run over the first ``batches`` batches of
    ``streams`` (default all; the run's own count: a stream set an earlier run lengthened must not
    change it) starts from. ``reverse_tables``: the update visits the tables last first (its order
    sets the recency of the rows one batch touched)."""
    if start == "empty":
        return new_cache(capacity_rows)
    if start != "steady":
        raise ValueError(f"vector_cache_start: {start!r} is not one of {STARTS}")
    w = streams.workload
    if w.params.trace:
        raise ConfigError(w.params.trace, "pipeline.vector_cache_start", "steady builds the cache's state from the "
                          "generator's popularity, which a trace does not follow: --set "
                          "pipeline.vector_cache_start=empty (and warm-up batches) with a trace")
    batches = streams.n if batches is None else min(int(batches), streams.n)
    key = (w.name, tuple(sorted((k, str(v)) for k, v in w.params.items())), int(streams.seed), batches,
           int(capacity_rows), bool(reverse_tables))
    recipe = _KEPT.pop(key, None)
    if recipe is None:
        recipe = _build(streams, capacity_rows, reverse_tables, batches)
    _KEPT[key] = recipe  # the most recently used last
    while len(_KEPT) > 1 and sum(r.nbytes for r in _KEPT.values()) > KEPT_RECIPES_B:
        del _KEPT[next(iter(_KEPT))]
    return (recipe.new_cache(),)


#: Bytes of steady-state recipes a process keeps at most, their made sets counted whole (named
#: assumption: RM1–RM4's at 16 GB take 0.71 GiB together, so a comparison over them builds each
#: recipe and each set once; the latest is kept whatever its size).
KEPT_RECIPES_B = 2**30
_KEPT: dict[tuple, SteadySets] = {}


def _build(streams: StreamSet, capacity_rows: int, reverse_tables: bool, batches: int) -> SteadySets:
    layout, w = streams.layout, streams.workload
    p = w.params
    # positions per table and batch: B·L; with per-table bags the tables' mean, B·Σ L_t // T (a named
    # approximation: the steady state takes one count for every table; exact for fixed bags)
    positions = p.batch_size * w.lookups_per_sample // p.tables
    return steady_sets_touched(touched_rows(streams, batches), layout.rows, layout.row_base,
                               table_keys(streams.seed, layout.tables), float(p.popularity_exponent),
                               positions, float(p.reuse_prev_fraction), capacity_rows,
                               seed=streams.seed, reverse_tables=reverse_tables)
