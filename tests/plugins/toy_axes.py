"""A third-party package's axis implementations, for tests/contracts/test_axes_plugins.py: it imports
cxlsim's public interfaces only and registers through the ``cxlsim.axes`` entry point."""

from __future__ import annotations

from cxlsim.axes.data_movement.cxl_cache import CxlCache
from cxlsim.axes.persistence.redo.scheme import Redo
from cxlsim.engine.executor import OpOutcome
from cxlsim.systems.axes import register


@register("persistence", "toy_redo")
class ToyRedo(Redo):
    """The redo scheme under another name: a run with it must equal a run with redo."""


@register("data_movement", "toy_slow_flush")
class SlowFlush(CxlCache):
    """CXL.cache flushes that take twice as long (the link bytes unchanged)."""

    def move(self, nbytes, t, src, dst):
        out = super().move(nbytes, t, src, dst)
        return OpOutcome(t + 2 * (out.end_ns - t))
