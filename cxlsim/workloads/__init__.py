"""Workloads RM1–RM4: catalog, Criteo-like input streams, table layout and access analysis.

Python API::

    from cxlsim.workloads import load_workload, batches, TableLayout, analyze_batch
    w = load_workload("rm2", {"batch_size": 256})
    layout = TableLayout.from_workload(w)
    prev = None
    for batch in batches(w, seed=1, n=20):
        prev = analyze_batch(batch.indices, layout, prev, line_B=256, controllers=4, interleave_B=4096,
                             table_starts=batch.table_starts)
"""

from cxlsim.workloads.analysis import XPLINE_B, BatchAccess, analyze_batch
from cxlsim.workloads.catalog import Workload, list_workloads, load_workload, mlp_param_count
from cxlsim.workloads.generator import Batch, batches
from cxlsim.workloads.layout import TableLayout

__all__ = [
    "XPLINE_B", "Batch", "BatchAccess", "TableLayout", "Workload", "analyze_batch", "batches",
    "list_workloads", "load_workload", "mlp_param_count",
]
