"""The run's input stream: a workload's trace (``trace: PATH``) or else the synthetic generator.

Contract: :func:`input_batches` yields :class:`~cxlsim.workloads.generator.Batch` objects, batch
``k`` a pure function of (workload parameters, seed, row_scale) and of the trace file where one is
set; every consumer of the index stream (the timing model's streams, the crash checker's reference,
``cxlsim workload``) takes it from here, so a trace drives every system the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cxlsim.errors import ConfigError
from cxlsim.workloads.generator import Batch, batches
from cxlsim.workloads.trace import trace_batches


def input_batches(workload: Any, seed: int = 0, n: int | None = None, row_scale: float = 1.0,
                  dense: bool = True) -> Iterator[Batch]:
    """``n`` batches (forever, or to the trace's end, if None) of ``workload``'s inputs for ``seed``:
    :func:`~cxlsim.workloads.trace.trace_batches` when ``params.trace`` is set (its rows are the
    recorded ones: ``row_scale`` must be 1), else :func:`~cxlsim.workloads.generator.batches`."""
    path = workload.params.trace
    if not path:
        return batches(workload, seed, n, row_scale, dense)
    if row_scale != 1.0:
        raise ConfigError(path, "", f"a trace's rows are recorded ids and cannot be scaled (row_scale {row_scale})")
    return trace_batches(workload, seed, n, dense)
