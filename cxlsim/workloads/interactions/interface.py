"""The interaction: how a DLRM joins the bottom MLP's output and the pooled embeddings before the
top MLP (a workload choice, ``interaction: dot | cat | dcn | ...``).

An implementation is one file in this folder (or in a third party's package), registered by name
through the entry-point group ``cxlsim.interactions`` (:mod:`cxlsim.workloads.interactions.registry`).
Everything that needs the model's architecture -- the workload's parameter counts, the GPU's op
graph (:mod:`cxlsim.workloads.dlrm_ops`), a device's pricing of kernels, the tpu-ps step's FLOPs and
the host's measured step (:mod:`cxlsim.calibrate.host_measure`) -- reads it from the workload's
interaction object, never from a device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from cxlsim.config.params import Param
from cxlsim.units import FP32_B

DIRECTIONS = ("forward", "backward")


@dataclass(frozen=True)
class Gemm:
    """``count`` independent GEMMs ``[m,k] x [k,n]`` in one kernel; ``extra_B`` compulsory bytes
    beyond the operands (a broadcast bias, a gradient read in the same pass); ``weights``: one operand
    is the interaction's own parameter (an MLP-like GEMM, the dense work the tpu-ps model counts), not
    two activations (the dot's ``bmm``)."""

    name: str
    m: int
    n: int
    k: int
    count: int = 1
    extra_B: float = 0.0
    weights: bool = False
    kind: ClassVar[str] = "gemm"

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.count

    @property
    def size_B(self) -> float:
        return FP32_B * (self.m * self.k + self.k * self.n + self.m * self.n) * self.count + self.extra_B


@dataclass(frozen=True)
class Stream:
    """A streaming (memory-bound) kernel moving ``size_B`` bytes; ``flops`` its arithmetic."""

    name: str
    size_B: float
    flops: float = 0.0
    kind: ClassVar[str] = "stream"


Kernel = Gemm | Stream


@runtime_checkable
class Interaction(Protocol):
    """Contract: an interaction of one workload's shape.

    * Built by ``cls.build(tables, dim, dense, values)``: ``tables`` pooled vectors of ``dim``
      elements and the bottom MLP's output of ``dense`` elements per sample; ``values`` the
      workload's validated parameters, of which it reads only its own (:attr:`PARAMS`, declared in
      the workload schema beside the core's; each must have a default, the value an interaction that
      does not read it leaves alone). Frozen and comparable (equal shapes, equal objects).
    * :attr:`name` its registered name; :attr:`PARAMS` the workload parameters it declares.
    * :meth:`problem` -- ``(workload key, message)`` where the shape cannot be built (the dot needs
      ``dense == dim``), else None; the workload schema refuses the file with it.
    * :meth:`output_width` -- elements per sample it hands the top MLP (the top MLP's input).
    * :meth:`parameter_tensors` -- ``(name, elements)`` of its trainable tensors in creation order
      (none for dot and cat): they are MLP-side (dense) parameters, counted in the MLP parameter
      bytes the checkpoint pulls and logs and stepped by the optimizer after the bottom MLP's.
    * :meth:`kernels` ``(batch, direction)`` -- its work as device-agnostic kernels, ``"forward"``
      or ``"backward"`` (another raises ValueError: :func:`check_direction`): :class:`Gemm` shapes
      and :class:`Stream` bytes, every number >= 0, linear in ``batch`` (a device prices them:
      :meth:`~cxlsim.devices.compute.gpu.GpuModel.ops_ns`; tpu-ps times the GEMMs against the
      interaction's own parameters, ``Gemm.weights``, with the top MLP).
    * :meth:`forward_ops` / :meth:`backward_ops` ``(step)`` -- the framework operators PyTorch
      eager dispatches for it, emitted on the GPU op graph's builder (:mod:`cxlsim.workloads.dlrm_ops`:
      ``step.kernel``, ``host_op``, ``node``, ``module``, ``to_device``, ``cat_kernels``,
      ``accumulate_grad``, ``elementwise_ns``, ``model.gemm_ns``, ``model.python_elements_ns``;
      ``step.shapes.batch``, ``step.options``). Forward runs between the hand-off of the pooled
      vectors and the top MLP; backward between the top MLP's backward and the hand-off's.
    * :meth:`torch_module` ``(torch)`` -- an ``nn.Module`` whose ``forward(x, ly)`` (``x``
      ``[B, dense]``, ``ly`` a list of ``tables`` ``[B, dim]`` tensors) returns ``[B,
      output_width]``, with :meth:`parameter_tensors`' tensors as its parameters in that order; torch
      is passed in (imported lazily by the caller), never imported here.
    """

    name: ClassVar[str]
    PARAMS: ClassVar[tuple[Param, ...]]
    tables: int
    dim: int
    dense: int

    @classmethod
    def build(cls, tables: int, dim: int, dense: int, values: Any) -> Interaction: ...

    def problem(self) -> tuple[str, str] | None: ...

    def output_width(self) -> int: ...

    def parameter_tensors(self) -> tuple[tuple[str, int], ...]: ...

    def kernels(self, batch: int, direction: str) -> list[Kernel]: ...

    def forward_ops(self, step: Any) -> None: ...

    def backward_ops(self, step: Any) -> None: ...

    def torch_module(self, torch: Any) -> Any: ...


@dataclass(frozen=True)
class InteractionBase:
    """What every built-in shares: the shape, the defaults of the contract's simple parts."""

    tables: int
    dim: int
    dense: int

    name: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()

    @classmethod
    def build(cls, tables: int, dim: int, dense: int, values: Any = None) -> InteractionBase:
        return cls(int(tables), int(dim), int(dense))

    def problem(self) -> tuple[str, str] | None:
        return None

    def parameter_tensors(self) -> tuple[tuple[str, int], ...]:
        return ()

    @property
    def n_vectors(self) -> int:
        """Vectors per sample: the bottom MLP's output and one per table."""
        return self.tables + 1

    @property
    def input_width(self) -> int:
        """Elements of the concatenation ``[x] + ly`` per sample."""
        return self.dense + self.tables * self.dim


def check_direction(direction: str) -> None:
    """ValueError unless ``direction`` is ``"forward"`` or ``"backward"``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")


def parameter_count(interaction: Interaction) -> int:
    """Trainable elements of ``interaction`` (the sum of its :meth:`~Interaction.parameter_tensors`)."""
    return sum(e for _, e in interaction.parameter_tensors())


def weight_macs_per_sample(interaction: Interaction) -> float:
    """Multiply-accumulates per sample of its forward GEMMs against its own parameters
    (``Gemm.weights``): the dense work the tpu-ps model counts as it counts an MLP layer's."""
    return sum(k.flops / 2 for k in interaction.kernels(1, "forward") if k.kind == "gemm" and k.weights)


def kernel_flops(interaction: Interaction, batch: int, direction: str | None = None) -> float:
    """FLOPs of its kernels at ``batch``, one direction or (None) both."""
    dirs = DIRECTIONS if direction is None else (direction,)
    return sum(k.flops for d in dirs for k in interaction.kernels(batch, d))
