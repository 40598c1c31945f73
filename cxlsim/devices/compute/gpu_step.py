"""A host driving one CUDA stream: operators priced on a GPU, a host and a link, and their schedule.

The device mechanics of a framework's training step: what one dispatched operator costs (the
host's dispatch, the GPU's launch latency and kernel time, the link's DMA for a copy) and how the
host, running ahead, and the stream place a list of them. *Which* operators a step dispatches is
the workload's (the DLRM step: :mod:`cxlsim.workloads.dlrm_ops`); the caller hands the op list in.

Contract (times ns, sizes B; pure, no simulation engine):

* :class:`StepOp` -- one dispatched operator: ``name`` (the aten op or Python step), ``what``,
  ``caller`` (``"python"``: called from Python with autograd recording; ``"python_no_grad"``;
  ``"cpp"``: dispatched by the autograd engine or nested in another op; ``"host"``: Python or
  engine work that dispatches no operator -- an ``nn.Module`` call, an autograd node, a tensor
  attribute such as ``requires_grad_``, the ``backward()`` call, ``SGD.step``'s and ``zero_grad``'s
  Python per call and per tensor, a Python list), ``kind`` (``"kernel"``, ``"copy"``: a DMA on
  the stream, ``"host"``: no stream work -- views, shape ops, CPU tensors), ``dispatch_ns`` (host time), ``launch_ns`` (kernels: the
  GPU's launch latency; copies 0), ``gpu_ns`` (the kernel's or the DMA's time on the stream) and
  ``sync``/``sync_ns`` (the host waits for the stream after it, then pays the synchronisation call),
  ``part`` (where in the step the workload's op list puts it).
* :class:`StepModel` ``(gpu, host, link)`` prices ops: :meth:`~StepModel.host_op`,
  :meth:`~StepModel.host_call`, :meth:`~StepModel.kernel`, :meth:`~StepModel.copy` return a
  :class:`StepOp`; :meth:`~StepModel.elementwise_ns`, :meth:`~StepModel.gemm_ns`,
  :meth:`~StepModel.layer_kernels_ns` kernel times. Host costs come from the host model
  (:meth:`~cxlsim.devices.compute.cpu.CpuModel.op_dispatch_ns`, ``memcpy_call_ns``, ``sync_call_ns``,
  ``python_elements_ns``, ``software_ns`` of a software call: counts fitted by ``cxlsim measure
  host``), kernel times from the GPU model (a layer's kernels are the MLP timing table's layer time
  split in the formula's proportions; other kernels from :meth:`~cxlsim.devices.compute.gpu.GpuModel.gemm`
  / ``elementwise``), the launch latency from the GPU preset, copies from the link
  (``link.dma_ns(size, direction)``, the copy's direction ``"h2d"`` or ``"d2h"``; no link: 0).
* :func:`schedule` ``(ops, host_free_ns, gpu_free_ns, sync_at=(), sync_at_end=False, sync_ns=0)
  -> Schedule`` -- the stream: the host dispatches op ``i`` at ``D_i = D_{i-1} + dispatch_i``
  (running ahead of the GPU); the GPU starts op ``i``'s kernel at ``max(end of the previous stream
  op, D_i + launch_i)``; the host waits for the stream only at a synchronisation (an op's ``sync``,
  an index in ``sync_at``, or the end with ``sync_at_end``), then pays ``sync_ns`` (the op's own
  for its ``sync``). :meth:`StepModel.schedule` passes the host's ``sync_call_ns`` as ``sync_ns``.
* Bound (op ``"schedule"``): ``bound_ns("schedule", ops, host_free_ns=0, gpu_free_ns=0, ...)`` =
  max(``host_free`` + Σ dispatch + Σ synchronisation calls, max(``gpu_free``, ``host_free`` +
  the first stream op's launch) + Σ gpu) <= ``schedule_ns`` (the schedule's end). Stated factor 4
  for op lists whose kernels share one launch latency ``L``, whose synchronisation calls each cost
  at least ``L`` and whose stream starts with a kernel or holds a synchronisation (every list
  the DLRM step builds with the presets): each of the ``n`` synchronisations ends a
  segment that may add one ``L`` beyond Σ dispatch + Σ calls + Σ gpu, so the end is at most
  Σ dispatch + Σ calls + Σ gpu + (n + 1) L <= 4 × the bound (3 found by a random search; a
  hypothesis test checks random lists).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cxlsim.devices.base import DeviceModel, check_non_negative
from cxlsim.devices.compute.gpu import GpuModel

if TYPE_CHECKING:
    from cxlsim.devices.compute.cpu import CpuModel
    from cxlsim.devices.fabric.interface import HostLink as PcieLink

CALLERS = ("python", "python_no_grad", "cpp", "host")
KINDS = ("kernel", "copy", "host")
#: Stated factor of the schedule over its bound (see the module docstring for its domain).
SCHEDULE_BOUND_FACTOR = 4.0


@dataclass(frozen=True)
class StepOp:
    """One dispatched operator (see the module docstring for the fields)."""

    name: str
    what: str
    caller: str
    kind: str
    dispatch_ns: float
    launch_ns: float = 0.0
    gpu_ns: float = 0.0
    sync: bool = False
    sync_ns: float = 0.0
    part: str = ""

    def __post_init__(self) -> None:
        if self.caller not in CALLERS:
            raise ValueError(f"caller must be one of {CALLERS}, got {self.caller!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        check_non_negative(dispatch_ns=self.dispatch_ns, launch_ns=self.launch_ns, gpu_ns=self.gpu_ns,
                           sync_ns=self.sync_ns)
        if self.kind == "host" and (self.gpu_ns or self.launch_ns):
            raise ValueError(f"{self.name}: a host op has no stream work")

    @property
    def on_stream(self) -> bool:
        """The op puts work on the stream (a kernel or a copy)."""
        return self.kind != "host"


@dataclass(frozen=True)
class ScheduledOp:
    """An op placed by :func:`schedule`: its dispatch interval on the host, its interval on the
    stream (None for host ops) and how long the host then waited for the stream."""

    op: StepOp
    dispatch_start_ns: float
    dispatch_end_ns: float
    stream_start_ns: float | None
    stream_end_ns: float | None
    host_wait_ns: float = 0.0


@dataclass(frozen=True)
class Schedule:
    """The result of :func:`schedule`: per-op intervals and the host's and the GPU's end times."""

    ops: tuple[ScheduledOp, ...]
    start_ns: float
    host_end_ns: float
    gpu_end_ns: float
    gpu_busy_ns: float
    host_busy_ns: float
    host_wait_ns: float

    @property
    def end_ns(self) -> float:
        """When both the host and the stream are done."""
        return max(self.host_end_ns, self.gpu_end_ns)

    @property
    def span_ns(self) -> float:
        """From the start (the host's first dispatch) to :attr:`end_ns`."""
        return self.end_ns - self.start_ns

    def dispatch_intervals(self) -> list[tuple[str, float, float]]:
        """``(op name, start, end)`` of every dispatch on the host (for timelines)."""
        return [(s.op.name, s.dispatch_start_ns, s.dispatch_end_ns) for s in self.ops]

    def stream_intervals(self) -> list[tuple[str, float, float]]:
        """``(op name, start, end)`` of every kernel or copy on the stream (for timelines)."""
        return [(s.op.name, s.stream_start_ns, s.stream_end_ns) for s in self.ops if s.stream_start_ns is not None]


def schedule(ops: Sequence[StepOp], host_free_ns: float = 0.0, gpu_free_ns: float = 0.0,
             sync_at: Iterable[int] = (), sync_at_end: bool = False, sync_ns: float = 0.0) -> Schedule:
    """Place ``ops`` on the host and one CUDA stream (the rule in the module docstring).

    ``host_free_ns``: when the host may dispatch the first op; ``gpu_free_ns``: when the stream's
    earlier work ends. ``sync_at``: indices of ops after which the host synchronises with the stream
    (beyond the ops' own ``sync``), paying ``sync_ns`` each; ``sync_at_end``: one more at the end.
    """
    check_non_negative(sync_ns=sync_ns)
    extra = set(sync_at)
    if any(not 0 <= i < len(ops) for i in extra):
        raise ValueError(f"sync_at indices must be in [0, {len(ops)}), got {sorted(extra)}")
    d, g = float(host_free_ns), float(gpu_free_ns)
    placed, busy_gpu, busy_host, waited = [], 0.0, 0.0, 0.0
    for i, op in enumerate(ops):
        d0 = d
        d += op.dispatch_ns
        busy_host += op.dispatch_ns
        s = e = None
        if op.on_stream:
            s = max(g, d + op.launch_ns)
            e = g = s + op.gpu_ns
            busy_gpu += op.gpu_ns
        wait = 0.0
        if op.sync or i in extra:
            wait = max(0.0, g - d)
            cost = op.sync_ns if op.sync else sync_ns
            d = max(d, g) + cost
            busy_host += cost
            waited += wait
        placed.append(ScheduledOp(op, d0, d0 + op.dispatch_ns, s, e, wait))
    if sync_at_end:
        waited += max(0.0, g - d)
        d = max(d, g) + sync_ns
        busy_host += sync_ns
    return Schedule(tuple(placed), float(host_free_ns), d, g, busy_gpu, busy_host, waited)


def schedule_bound_ns(ops: Sequence[StepOp], host_free_ns: float = 0.0, gpu_free_ns: float = 0.0,
                      sync_at: Iterable[int] = (), sync_at_end: bool = False, sync_ns: float = 0.0) -> float:
    """Analytic twin of :func:`schedule`'s end: max(host_free + Σ dispatch + Σ synchronisation
    calls, max(gpu_free, host_free + the first stream op's launch) + Σ gpu)."""
    extra = set(sync_at)
    calls = sum(op.sync_ns if op.sync else sync_ns for i, op in enumerate(ops) if op.sync or i in extra)
    host = host_free_ns + sum(op.dispatch_ns for op in ops) + calls + (sync_ns if sync_at_end else 0.0)
    stream = [op for op in ops if op.on_stream]
    if not stream:
        return max(host, gpu_free_ns)
    return max(host, max(gpu_free_ns, host_free_ns + stream[0].launch_ns) + sum(op.gpu_ns for op in stream))


class StepModel(DeviceModel):
    """Ops priced on ``gpu`` driven by ``host`` (copies over ``link``), and their stream schedule.

    ``gpu`` (:class:`~cxlsim.devices.compute.gpu.GpuModel`), ``host`` (:class:`~cxlsim.devices.compute.cpu.CpuModel`)
    and ``link`` (:class:`~cxlsim.devices.fabric.pcie.PcieLink` or None) are models, passed in.
    """

    BOUNDED_OPS = ("schedule",)

    def __init__(self, gpu: GpuModel, host: CpuModel, link: PcieLink | None = None) -> None:
        self.gpu, self.host, self.link = gpu, host, link

    # ---- priced ops ------------------------------------------------------------------------------
    def dispatch_ns(self, caller: str) -> float:
        """Host time of one framework operator dispatched by ``caller``."""
        return self.host.op_dispatch_ns(caller)

    def host_op(self, name: str, what: str, caller: str = "python", dispatch_ns: float | None = None) -> StepOp:
        """An op with no stream work (a view, a shape op, a CPU tensor, Python work): the caller's
        dispatch, or ``dispatch_ns`` where given."""
        d = self.dispatch_ns(caller) if dispatch_ns is None else dispatch_ns
        return StepOp(name, what, caller, "host", d)

    def host_call(self, call: str, name: str, what: str, count: int = 1) -> StepOp:
        """Python or engine work that dispatches no operator, priced by the host's software call
        ``call`` (:data:`~cxlsim.devices.compute.cpu.SOFTWARE_CALLS`)."""
        return StepOp(name, what, "host", "host", self.host.software_ns(call, count))

    def kernel(self, name: str, what: str, caller: str, gpu_ns: float, dispatch_ns: float | None = None) -> StepOp:
        """A kernel of ``gpu_ns`` on the stream after the GPU's launch latency; the caller's
        dispatch, or ``dispatch_ns`` where given (a later launch of one multi-kernel dispatch)."""
        d = self.dispatch_ns(caller) if dispatch_ns is None else dispatch_ns
        return StepOp(name, what, caller, "kernel", d, self.gpu.launch_ns, gpu_ns)

    def copy(self, name: str, what: str, caller: str, size_B: float, direction: str) -> StepOp:
        """A synchronous copy from or to pageable host memory in ``direction`` (``"h2d"`` host →
        GPU, ``"d2h"`` GPU → host): dispatch + one memcpy call, the DMA on the stream, then a stream
        synchronisation."""
        host, link = self.host, self.link
        return StepOp(name, what, caller, "copy", self.dispatch_ns(caller) + host.memcpy_call_ns(), 0.0,
                      link.dma_ns(size_B, direction) if link is not None else 0.0, True, host.sync_call_ns())

    def python_elements_ns(self, n: int) -> float:
        """Host time of Python building ``n`` list elements."""
        return self.host.python_elements_ns(n)

    def elementwise_ns(self, size_B: float) -> float:
        """An elementwise kernel moving ``size_B`` on the GPU."""
        return self.gpu.elementwise(size_B).time_ns

    def gemm_ns(self, m: int, n: int, k: int, count: int = 1) -> float:
        """``count`` GEMMs [m, k] x [k, n] on the GPU."""
        return self.gpu.gemm(m, n, k, count=count).time_ns

    def layer_kernels_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> dict[str, float]:
        """A layer's kernel times (ns) by name: the GPU model's layer time (timing table or
        formula) split in the proportions of the formula's kernels."""
        gpu = self.gpu
        ks = gpu.layer_kernels(n_in, n_out, batch, direction)
        formula = sum(k.time_ns for k in ks)
        scale = gpu.layer_ns(n_in, n_out, batch, direction) / formula if formula > 0 else 1.0
        return {k.name: scale * k.time_ns for k in ks}

    # ---- schedule ------------------------------------------------------------------------------
    def schedule(self, ops: Sequence[StepOp], host_free_ns: float = 0.0, gpu_free_ns: float = 0.0,
                 sync_at: Iterable[int] = (), sync_at_end: bool = False) -> Schedule:
        """:func:`schedule` with the host's synchronisation call for the explicit sync points."""
        return schedule(ops, host_free_ns, gpu_free_ns, sync_at, sync_at_end, self.host.sync_call_ns())

    def schedule_ns(self, ops: Sequence[StepOp], host_free_ns: float = 0.0, gpu_free_ns: float = 0.0,
                    sync_at: Iterable[int] = (), sync_at_end: bool = False) -> float:
        """End of :meth:`schedule` (both the host and the stream done), ns."""
        return self.schedule(ops, host_free_ns, gpu_free_ns, sync_at, sync_at_end).end_ns

    def _bound_schedule(self, ops: Sequence[StepOp], host_free_ns: float = 0.0, gpu_free_ns: float = 0.0,
                        sync_at: Iterable[int] = (), sync_at_end: bool = False) -> float:
        """Bound of :meth:`schedule_ns` (:func:`schedule_bound_ns`)."""
        return schedule_bound_ns(ops, host_free_ns, gpu_free_ns, sync_at, sync_at_end, self.host.sync_call_ns())

    def _bound_factor(self, op: str) -> float:
        return SCHEDULE_BOUND_FACTOR

