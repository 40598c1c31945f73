"""What a family of the compute kind must provide (GPU, host CPU, accelerator chip, host package).

Derived from what the system layer calls (``systems/machine.py``, ``systems/tpu_ps.py``,
``energy/model.py``, the embedding-engine and checkpoint-agent axes, the GPU step of
:mod:`cxlsim.devices.compute.gpu_step`): every compute model is priced by busy time through its
family's energy hook; a GPU times MLP layers, optimizer steps and launches; a host CPU times
embedding lookups and updates from a medium, its page faults, its last-level cache and its
software calls; an accelerator chip offers its MLP rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol, runtime_checkable

__all__ = ["Accelerator", "Compute", "Gpu", "HostCpu"]


@runtime_checkable
class Compute(Protocol):
    """Any processor (kind ``compute``).

    Contract: (units: ns, W, J) ``params`` holds its parameters; ``static_energy_J(wall_ns,
    count)`` ≥ 0, linear in ``wall_ns``: idle power of ``count`` devices; the family's energy hook
    prices a :class:`~cxlsim.devices.base.Usage` whose ``busy_ns`` is the summed busy time (active
    power above idle) and returns non-negative parts.
    """

    params: Any

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...


@runtime_checkable
class Gpu(Compute, Protocol):
    """A GPU that trains the MLPs.

    Contract: (ns; ``direction`` in ``("forward", "backward")``) ``layer_ns(n_in, n_out, batch,
    direction)`` one fully connected layer's kernels, ≥ 0, non-decreasing in ``batch``, bounded
    below by ``bound_ns("layer", *same args)``; ``mlp_ns(widths, batch, direction)`` a whole MLP
    (Σ layers); ``optimizer_ns(n_params, n_tensors)`` the optimizer step; ``launch_ns`` (a property) one
    kernel launch; ``gemm`` / ``elementwise`` the kernel times an op graph is built of; ``table``
    the measured or generated MLP timing table it reads (or None: the formula).
    """

    BOUNDED_OPS: ClassVar[tuple[str, ...]]
    table: Any

    def layer_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> float: ...
    def mlp_ns(self, widths: Sequence[int], batch: int, direction: str) -> float: ...
    def optimizer_ns(self, n_params: int, n_tensors: int = 1) -> float: ...
    @property
    def launch_ns(self) -> float: ...
    def gemm(self, m: int, n: int, k: int, count: int = 1, extra_B: float = 0.0, name: str = "gemm") -> Any: ...
    def elementwise(self, size_B: float, flops: float = 0.0, name: str = "elementwise") -> Any: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...


@runtime_checkable
class HostCpu(Compute, Protocol):
    """The host CPU: the embedding engine of host-side systems and the software path's caller.

    Contract: (ns, B) ``rows_in_flight(row_B)`` / ``stream_writes_in_flight(size_B)`` /
    ``storage_reads_in_flight()``: the requests its cores keep outstanding (≥ 1);
    ``lookup_compute_ns(n_vectors, dim)`` / ``update_compute_ns(n_rows, dim)``: the arithmetic,
    ≥ 0 and non-decreasing in the count; ``lookup_ns(rows, dim, medium, modules)`` /
    ``update_ns``: whole operations over a medium (a :class:`~cxlsim.devices.memory.interface.MemoryModel`),
    bounded below by ``bound_ns``; ``fault_ns(n_faults)``: major page faults; ``llc_lines()`` /
    ``llc_hit_ns(lines)``: its last-level cache; ``software_ns(call, count)`` /
    ``op_dispatch_ns(caller)``: the framework's host calls.
    """

    BOUNDED_OPS: ClassVar[tuple[str, ...]]

    def rows_in_flight(self, row_B: int) -> int: ...
    def stream_writes_in_flight(self, size_B: int) -> int: ...
    def storage_reads_in_flight(self) -> int: ...
    def lookup_compute_ns(self, n_vectors: int, dim: int, threads: int | None = None) -> float: ...
    def update_compute_ns(self, n_rows: int, dim: int, n_grads: int | None = None, threads: int | None = None) -> float: ...
    def lookup_ns(self, rows: Any, dim: int, medium: Any, modules: int = 1) -> float: ...
    def update_ns(self, rows: Any, dim: int, medium: Any, modules: int = 1) -> float: ...
    def fault_ns(self, n_faults: int) -> float: ...
    def llc_lines(self) -> int: ...
    def llc_hit_ns(self, lines: int) -> float: ...
    def software_ns(self, call: str, count: float = 1) -> float: ...
    def op_dispatch_ns(self, caller: str) -> float: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...


@runtime_checkable
class Accelerator(Compute, Protocol):
    """An accelerator chip that trains the MLPs at a sustained rate (a TPU).

    Contract: ``mlp_flops_per_s()`` > 0, the sustained MLP rate of one chip (FLOP/s).
    """

    def mlp_flops_per_s(self) -> float: ...
