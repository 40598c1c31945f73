"""Resume training from a recovered state and run it to the end of the run
(docs/design.md#crash-and-recovery).

The resumed run applies batches ``m + 1 … N − 1`` with the same step function and the same seeded
gradients as the reference (:func:`~cxlsim.crash.reference.train_step`), then compares its final
tables (and, when the MLP log gap was 0, its MLP) with the reference's bit for bit, or the tables
within the error the persistence scheme declares (``tolerance``: a quantised checkpoint's).
"""

from __future__ import annotations

import numpy as np

from cxlsim.crash.reference import Reference, index_stream, train_step
from cxlsim.workloads.generator import Batch


def resume_to_end(ref: Reference, stream: list[Batch], table: np.ndarray, mlp: np.ndarray, m: int,
                  tolerance: float = 0.0) -> tuple[bool, bool]:
    """Run batches ``m + 1 …`` on ``table``/``mlp`` (modified in place); (tables equal, MLP equal)
    to the reference's final state (tables: within ``tolerance`` per element when positive; the
    gradients do not depend on the state, so the recovered error carries over unchanged up to
    fp32 rounding of the updates, one ulp of the values' size per resumed batch)."""
    lr = ref.workload.params.learning_rate
    for b in stream[m + 1:]:
        train_step(table, mlp, b, ref.layout, ref.seed, lr)
    last = ref.n_batches - 1
    want = ref.table(last)
    if tolerance > 0:
        slack = tolerance + (len(stream) - m) * float(np.abs(want).max()) * 2.0 ** -23
        same_tables = bool(np.all(np.abs(table - want) <= slack))
    else:
        same_tables = np.array_equal(table.view(np.uint32), want.view(np.uint32))
    same_mlp = np.array_equal(mlp.view(np.uint32), ref.mlp(last).view(np.uint32))
    return bool(same_tables), bool(same_mlp)


def input_stream(ref: Reference) -> list[Batch]:
    """The run's batches again (the same seeded stream the reference consumed)."""
    return list(index_stream(ref.workload, ref.seed, ref.n_batches))
