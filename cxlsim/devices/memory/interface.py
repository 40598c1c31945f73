"""What a family of the memory kinds must provide (``memory``, ``accelerator_memory``).

Derived from what the system layer calls on a memory role's model (``systems/machine.py``,
``systems/config.py``, ``energy/model.py``, the axes): it builds one media state per role, serves
access streams on it, reads the latencies, the access unit and the per-access cost, and prices the
role through the family's energy hook. :class:`AccessStream` is the one data type a requester hands
a memory model, and :class:`Crossing` the fabric path of a requester across one (both re-exported
here: a requester of another kind imports them from this interface).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from cxlsim.devices.base import Cost
from cxlsim.devices.memory.media.media import AccessStream, Crossing

__all__ = ["AccessStream", "AcceleratorMemory", "Crossing", "MemoryModel"]


@runtime_checkable
class MemoryModel(Protocol):
    """A memory module (kind ``memory``: DRAM, PMEM, SSD, ... interleaved by a memory role).

    Contract: (units: time ns, data B, bandwidth GB/s == B/ns, energy J; pure: state lives in the
    object ``new_state`` returns)

    * ``params`` (validated :class:`~cxlsim.config.params.ParamSet`) holds at least ``capacity_GB``
      and ``access_unit_B``; ``family`` is the family's name (its capabilities are asked of the
      registry, never of this name).
    * ``units(size_B)``: access units (of ``access_unit_B``) an access of ``size_B`` bytes touches.
    * ``read_latency_ns(pattern)`` / ``write_latency_ns(pattern)``: one idle access, ``pattern`` in
      ``("random", "sequential")``, ≥ 0.
    * ``read_ns(n_accesses, size_B, modules)`` / ``write_ns(...)``: analytic time of ``n_accesses``
      independent accesses of ``size_B`` on ``modules`` interleaved modules; ≥ 0, non-decreasing
      in ``n_accesses``, and in ``size_B`` over whole access units (a write of part of a unit may
      take longer than one of the whole unit: read-modify-write). ``BOUNDED_OPS`` lists ``"read"``/``"write"`` with
      ``bound_ns(op, *args) <= <op>_ns(*args)`` (latency + size / bandwidth, no loss).
    * ``access_cost(op, size_B)`` -> :class:`~cxlsim.devices.base.Cost` of one access (time, media
      bytes, dynamic energy); ``static_energy_J(wall_ns, count)``: background power of ``count``
      modules over ``wall_ns``.
    * ``new_state(modules, interleave_B)`` -> the mutable state of ``modules`` modules interleaved
      every ``interleave_B`` bytes; ``serve(stream, state, outstanding, modules, ...)`` serves an
      :class:`AccessStream` (issue times ns, addresses B, sizes B, write flags) with ``outstanding``
      requests in flight and returns the completions and the media traffic (bytes read and
      written, for the energy hook's :class:`~cxlsim.devices.base.Usage`).
    """

    params: Any
    family: str
    BOUNDED_OPS: ClassVar[tuple[str, ...]]

    def units(self, size_B: int) -> int: ...
    def read_latency_ns(self, pattern: str = "random") -> float: ...
    def write_latency_ns(self, pattern: str = "random") -> float: ...
    def read_ns(self, n_accesses: int, size_B: int, modules: int = 1) -> float: ...
    def write_ns(self, n_accesses: int, size_B: int, modules: int = 1) -> float: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...
    def access_cost(self, op: str, size_B: int) -> Cost: ...
    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...
    def new_state(self, modules: int = 1, interleave_B: int = 4096) -> Any: ...
    def serve(self, stream: AccessStream, state: Any, outstanding: Any, modules: int = 1, *args: Any,
              **kwargs: Any) -> Any: ...


@runtime_checkable
class AcceleratorMemory(Protocol):
    """Memory on an accelerator package read by the chip's own cores (kind ``accelerator_memory``).

    Contract: (units: B/s, J) ``params`` holds its capacity and bandwidth; ``gather_Bps()`` > 0 is
    the rate the chip gathers embedding rows at (B/s); ``static_energy_J(wall_ns, count)`` ≥ 0 its
    idle power of ``count`` stacks over ``wall_ns``. No media API, not provisioned: the energy hook
    prices moved bytes.
    """

    params: Any

    def gather_Bps(self) -> float: ...
    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...
