"""What the sampling check compares against: the reference run's batch counts and the checks'
tolerance."""

from __future__ import annotations

REFERENCE_BATCHES, REFERENCE_WARMUP = 20, 2
#: relative tolerance of the interval checks (floating-point noise around a zero-width interval)
TOLERANCE = 1e-9
