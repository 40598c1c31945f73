"""``correction: fused``: update n−1's pass adds each row's change to batch n's bags as it
computes it, on the logic's adder lanes after the update's own."""

from __future__ import annotations

from cxlsim.axes.correction import Correction
from cxlsim.engine.executor import OpOutcome
from cxlsim.systems.dataflow import sfx


class Fused(Correction):
    @classmethod
    def add_op(cls, g, n: int, m: int) -> None:
        c = sfx(m)  # ready when update n−1's pass ends
        g.add("correction" + c, n, g.eng(m) + ".corr", [("lookup" + c, n), ("update" + c, n - 1)])

    def step(self, n, t, ex, m=0) -> OpOutcome:
        return OpOutcome(t)  # update n−1's pass did the adds (:meth:`fused_ns`)

    def fused_ns(self, n: int, ex, m: int) -> float:
        """Batch ``n``'s update pass, as it computes each row's change, also adds it to every
        vector of batch n+1's bags that holds the row (the relaxed lookup already pooled them from
        the table before update n). The adds run on the logic's adder lanes after the update's own
        (ns of lane time); 0 without a next lookup."""
        if ("lookup" + sfx(m), n + 1) not in ex.ops:
            return 0.0
        shared = self.m.batch(n + 1, m).n_shared_lookups
        self.m.ledger.logic.corrected_vectors += shared
        return self.m.ndp.correction_ns(shared, self.m.dim)
