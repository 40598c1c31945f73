"""``embedding_engine: host_cpu``: the host runs the embedding operators (the software baselines)."""

from __future__ import annotations

from cxlsim.axes.embedding_engine import EmbeddingEngine
from cxlsim.engine.executor import OpOutcome


class HostCpu(EmbeddingEngine):
    """The host's cores: line-fill buffers in flight, per-element cycles; it dispatches the
    operator itself (no hand-over of indices)."""

    lane = "host_cpu"
    maps_storage = True

    @property
    def device(self):
        return self.m.cpu

    def outstanding(self) -> int:
        """The host's line-fill buffers (per cache line of a row)."""
        return self.m.cpu.rows_in_flight(self.m.row_B)

    def lookup_compute_ns(self, b, ledger) -> float:
        return self.m.cpu.lookup_compute_ns(b.n_indices, self.m.dim)

    def update_compute_ns(self, b, ledger) -> float:
        return self.m.cpu.update_compute_ns(b.n_unique, self.m.dim)

    def config(self, n: int, t: float, m: int) -> OpOutcome:
        return OpOutcome(t + self.m.cpu.op_dispatch_ns("python"))
