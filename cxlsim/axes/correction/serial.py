"""``correction: serial``: on the logic's own lanes, before the update."""

from __future__ import annotations

from cxlsim.axes.correction import Correction
from cxlsim.systems.dataflow import sfx


class Serial(Correction):
    @classmethod
    def add_op(cls, g, n: int, m: int) -> None:
        g.add("correction" + sfx(m), n, g.eng(m), cls._after_grads(g, n, m))
