"""Workloads RM1–RM4: catalog, Criteo-like input streams, table layout and access analysis.

Python API::

    from cxlsim.workloads import load_workload, batches, TableLayout, analyze_batch
    w = load_workload("rm2", {"batch_size": 256})
    layout = TableLayout.from_workload(w)
    prev = None
    for batch in batches(w, seed=1, n=20):
        prev = analyze_batch(batch.indices, layout, prev, line_B=256, controllers=4, interleave_B=4096,
                             table_starts=batch.table_starts)

``batches`` is the synthetic generator; ``input_batches`` is the run's stream, the workload's trace
(``trace: PATH``, :mod:`cxlsim.workloads.trace`) where one is set.
"""

from cxlsim.workloads.analysis import XPLINE_B, BatchAccess, analyze_batch
from cxlsim.workloads.catalog import Workload, list_workloads, load_workload, mlp_param_count
from cxlsim.workloads.generator import Batch, batches
from cxlsim.workloads.layout import TableLayout
from cxlsim.workloads.source import input_batches
from cxlsim.workloads.trace import Trace, read_trace, write_trace

__all__ = [
    "XPLINE_B", "Batch", "BatchAccess", "TableLayout", "Trace", "Workload", "analyze_batch", "batches",
    "input_batches", "list_workloads", "load_workload", "mlp_param_count", "read_trace", "write_trace",
]
