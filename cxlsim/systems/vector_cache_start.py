"""The host-DRAM vector cache's state when a run starts (``pipeline.vector_cache_start``).

``empty``: nothing cached (a cold start: the first batches of training). ``steady``: the state the
cache's own policy reaches over the input stream after long training, built from the stream's
stationary popularity without simulating the batches that would reach it
(:func:`cxlsim.kernels.vector_cache_steady.steady_state`; docs/timing-model.md, "Vector cache").
The steady state is a pure function of the workload, the seed (the one of the input streams) and the
cache's geometry, so the most recent one is kept and each run gets a copy (the runs of a sweep or a
comparison over one workload build it once: RM1 at 16 GB costs ≈ 45 s of CPU to build, 0.2 s to copy;
kept: 4 B an entry, 0.5 GB).
"""

from __future__ import annotations

from cxlsim.kernels.vector_cache import VectorCache, new_cache
from cxlsim.kernels.vector_cache_steady import steady_state
from cxlsim.workloads.catalog import Workload
from cxlsim.workloads.generator import table_keys
from cxlsim.workloads.layout import TableLayout

#: ``pipeline.vector_cache_start`` values.
STARTS = ("empty", "steady")


def starting_cache(start: str, workload: Workload, seed: int, capacity_rows: int,
                   reverse_tables: bool = False) -> tuple[VectorCache]:
    """The cache state of ``capacity_rows`` entries a run over ``workload``'s streams for ``seed``
    starts from. ``reverse_tables``: the update visits the tables last first (its order sets the
    recency of the rows one batch touched)."""
    if start == "empty":
        return new_cache(capacity_rows)
    if start != "steady":
        raise ValueError(f"vector_cache_start: {start!r} is not one of {STARTS}")
    p = workload.params
    key = (workload.name, tuple(sorted((k, str(v)) for k, v in p.items())), int(seed), int(capacity_rows),
           bool(reverse_tables))
    if key not in _KEPT:
        _KEPT.clear()
        _KEPT[key] = _build(workload, seed, capacity_rows, reverse_tables)
    return (_KEPT[key][0].copy(),)


_KEPT: dict[tuple, tuple[VectorCache]] = {}


def _build(workload: Workload, seed: int, capacity_rows: int, reverse_tables: bool) -> tuple[VectorCache]:
    layout = TableLayout.from_workload(workload)
    p = workload.params
    state, _ = steady_state(layout.rows, layout.row_base, table_keys(seed, layout.tables), float(p.popularity_exponent),
                            p.batch_size * p.lookups_per_table, float(p.reuse_prev_fraction), capacity_rows,
                            seed=seed, reverse_tables=reverse_tables)
    return state
