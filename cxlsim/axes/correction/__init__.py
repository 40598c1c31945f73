"""The ``correction`` axis (relaxed lookup only, docs/design.md#relaxed-embedding-lookup): where
batch n's lookup, read before update n−1, gets that update's changes of shared rows.

Contract: ``add_op(graph, n, m)`` (class level) adds the ``correction`` op of batch ``n`` on
device ``m`` (:class:`~cxlsim.systems.dataflow.Graph`); an instance, ``cls(machine)``, times it
(:meth:`step`) and says what a fused correction adds to update ``n``'s compute (:meth:`fused_ns`).
"""

from __future__ import annotations

from cxlsim.engine.executor import OpOutcome
from cxlsim.systems.dataflow import sfx


class Correction:
    """Base: an adder pass of its own over the shared lookups (module docstring)."""

    def __init__(self, machine) -> None:
        self.m = machine

    @classmethod
    def add_op(cls, g, n: int, m: int) -> None:
        raise NotImplementedError

    @staticmethod
    def _after_grads(g, n: int, m: int) -> list[tuple]:
        return [("lookup" + sfx(m), n)] + [("grads" + sfx(gi, m), n - 1) for gi in g.gpus]

    def step(self, n, t, ex, m=0) -> OpOutcome:
        b = self.m.batch(n, m)
        self.m.ledger.logic.corrected_vectors += b.n_shared_lookups
        return OpOutcome(t + self.m.ndp.correction_ns(b.n_shared_lookups, self.m.dim))

    def fused_ns(self, n: int, ex, m: int) -> float:
        return 0.0

    def declare_unused(self) -> None:
        """Skip the role parameters this correction does not read (none by default)."""
