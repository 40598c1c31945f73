"""The one simulation engine: the op-graph executor that runs every system, and its trace.

:mod:`~cxlsim.engine.executor` runs :class:`~cxlsim.engine.executor.Op` s on exclusive lanes on the
simpy clock (ns) and records who gated whom; :mod:`~cxlsim.engine.trace` keeps the busy intervals
that timelines are drawn from. Device models are pure (no simpy); contention between steps is the
executor's lanes.
"""

from cxlsim.engine.executor import Executor, Op, OpOutcome, OpRecord
from cxlsim.engine.trace import Interval, TraceRecorder

__all__ = ["Executor", "Interval", "Op", "OpOutcome", "OpRecord", "TraceRecorder"]
