"""What a family of the logic kind must provide (logic on a memory device).

Derived from what the system layer calls (the embedding-engine, correction and checkpoint-agent
axes, ``energy/model.py``): near-data logic pools, updates and corrects embedding rows and streams
lines from the medium beside it; checkpointing logic issues DMA copies. Every logic model is priced
by its family's energy hook over the operations it did (``Usage.ops``, ``Usage.dim``) and the
bytes its DMA engine copied (``Usage.moved_B``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from cxlsim.devices.base import Cost, Usage

__all__ = ["CheckpointLogic", "Logic", "NearData"]


@runtime_checkable
class Logic(Protocol):
    """Any logic on a memory device (kind ``logic``).

    Contract: (ns, B, J) ``params``; ``static_energy_J(wall_ns, count)`` ≥ 0, linear in
    ``wall_ns``; ``dynamic_energy_J(usage)`` ≥ 0 from the usage's operation counts and bytes;
    ``BOUNDED_OPS`` with ``bound_ns(op, *args) <= <op>_ns(*args)`` for each.
    """

    params: Any
    BOUNDED_OPS: ClassVar[tuple[str, ...]]

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...
    def dynamic_energy_J(self, use: Usage) -> float: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...


@runtime_checkable
class NearData(Logic, Protocol):
    """Near-data processing logic (the CXL-MEM's embedding engine).

    Contract: (ns; ``dim`` elements per vector) ``pool_ns(n_vectors, dim)``, ``update_ns(n_rows,
    dim, n_grads)``, ``correction_ns(n_shared, dim)``: ≥ 0, non-decreasing in the count, bounded
    below by ``bound_ns``; ``lines(n_vectors, dim)`` the lines a lookup reads;
    ``stream_ns(n_lines, medium_latency_ns, medium_bw_GBps)`` reading them from the medium;
    ``scratchpad_fits(n_bags, dim)`` whether a batch's pooled vectors fit its scratchpad.
    """

    def pool_ns(self, n_vectors: int, dim: int) -> float: ...
    def update_ns(self, n_rows: int, dim: int, n_grads: int | None = None) -> float: ...
    def correction_ns(self, n_shared: int, dim: int) -> float: ...
    def lines(self, n_vectors: int, dim: int) -> int: ...
    def stream_ns(self, n_lines: float, medium_latency_ns: float, medium_bw_GBps: float) -> float: ...
    def scratchpad_fits(self, n_bags: int, dim: int) -> bool: ...
    def pool_cost(self, n_vectors: int, dim: int) -> Cost: ...


@runtime_checkable
class CheckpointLogic(Logic, Protocol):
    """Checkpointing logic (a DMA engine that copies rows into the checkpoint).

    Contract: (ns, B) ``copy_issue_ns(size_B, n_segments)`` ≥ 0, non-decreasing in ``size_B``,
    bounded below by ``bound_ns("copy_issue", ...)``; ``outstanding()`` its (read, write) requests
    in flight; ``copy_cost`` -> :class:`~cxlsim.devices.base.Cost`; ``flag_write_B()`` bytes of a
    persistent flag write.
    """

    def copy_issue_ns(self, size_B: float, n_segments: int = 1) -> float: ...
    def outstanding(self) -> tuple[int, int]: ...
    def copy_cost(self, size_B: float, n_segments: int = 1) -> Cost: ...
    def flag_write_B(self) -> int: ...
