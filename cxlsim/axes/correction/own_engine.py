"""``correction: own_engine``: an adder bank of its own (lane ``<engine>.corr``), beside the update."""

from __future__ import annotations

from cxlsim.axes.correction import Correction
from cxlsim.systems.dataflow import sfx


class OwnEngine(Correction):
    @classmethod
    def add_op(cls, g, n: int, m: int) -> None:
        g.add("correction" + sfx(m), n, g.eng(m) + ".corr", cls._after_grads(g, n, m))
