"""What a family of the network kind must provide (data-centre network elements: NIC, parameter
server).

Derived from what the system layer calls: the parameter-server system (``systems/tpu_ps.py``)
reads their parameters (bandwidths, latencies, service rates) and ``energy/model.py`` prices them
through their families' energy hooks over wall time, busy time or bytes moved.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["NetworkElement"]


@runtime_checkable
class NetworkElement(Protocol):
    """A network element (kind ``network``).

    Contract: (units: the parameters' own, named in their keys; ns, W, J) ``params`` holds what a
    system reads of it; ``static_energy_J(wall_ns, count)`` ≥ 0, linear in ``wall_ns``: idle power of
    ``count`` elements; the family's energy hook returns non-negative parts.
    """

    params: Any

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...
