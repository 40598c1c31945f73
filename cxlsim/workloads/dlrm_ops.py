"""The DLRM training step as PyTorch eager runs it: the operators the host dispatches, per phase.

One DLRM training step (facebookresearch/dlrm ``dlrm_s_pytorch.py``: ``apply_mlp``,
``interact_features`` -- the workload's interaction, :mod:`cxlsim.workloads.interactions`, which
emits its own operators --, ``BCELoss``/``MSELoss``, the training loop) is the list of
framework operators the host dispatches, in order, grouped by the machine's GPU phases (:data:`PHASES`):
``b_fwd`` (bottom-MLP forward), ``t_mlp`` (hand-off of the pooled embeddings, interaction,
top-MLP forward, loss, then the backward of loss, top MLP and interaction), ``b_bwd`` (bottom-MLP
backward) and ``mlp_opt`` (the optimizer step, one kernel per parameter tensor). The embedding
tables are not on the GPU (cxlsim's engines pool and update them); their pooled vectors arrive in
GPU memory and their gradient leaves it. ``docs/devices-compute.md`` lists the ops and why.

This is workload knowledge: which operators the step runs. The device mechanics -- what an operator
costs on a GPU, a host and a link, and the CUDA stream schedule -- are the step model's
(:mod:`cxlsim.devices.compute.gpu_step`), which this module reads duck-typed (the device and workload
layers import neither the other); the system layer joins the two.

Contract (times ns, sizes B; pure, no simulation engine):

* :class:`StepShapes` -- what the op list depends on: batch, bottom widths (dense input first), top
  widths (the interaction's output first, as DLRM prepends it to ``--arch-mlp-top``), tables, dim,
  the interaction (default: the dot of these tables and dim).
  :meth:`StepShapes.from_workload` builds them from a workload (duck-typed).
* :class:`StepOptions` -- the framework's behaviour where versions differ (loss, addmm's bias,
  ``zero_grad``'s ``set_to_none``, ``foreach`` SGD, the loop's input copies and loss read-back,
  cached interaction indices); the defaults are the reference DLRM on PyTorch 1.x (2022).
* :class:`DlrmStep` ``(model, options)`` over a step model (a
  :class:`~cxlsim.devices.compute.gpu_step.StepModel`: its ``dispatch_ns``, ``host_op``, ``host_call``,
  ``kernel``, ``copy``, ``elementwise_ns``, ``gemm_ns``, ``layer_kernels_ns``,
  ``python_elements_ns`` price each op as a ``StepOp``; ``schedule`` places them):
  :meth:`DlrmStep.phase_ops` ``(shapes, phase) -> list[StepOp]``, :meth:`DlrmStep.step_ops`, each
  op's ``part`` the phase's name, or in ``t_mlp`` ``hand-off``, ``interaction``, ``top_fwd``,
  ``loss``, ``readback``, ``zero_grad``, ``backward`` (what ``cxlsim measure host`` times).
* :meth:`DlrmStep.phase_ns` -- a phase alone (host and GPU idle at 0), from its first dispatch to
  its end (its last kernel's end when the GPU finishes last); :meth:`DlrmStep.batch_for_phase_time`
  -- the smallest batch whose phase takes a target time (the batch-size rule of
  docs/design.md#workloads).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cxlsim.search import smallest_reaching
from cxlsim.units import FP32_B
from cxlsim.workloads.interactions.dot import Dot

#: The machine's GPU phases, in the order one step runs them.
PHASES = ("b_fwd", "t_mlp", "b_bwd", "mlp_opt")
#: torch.cat batches up to this many inputs into one kernel (CAT_ARRAY_BATCH_SIZE in ATen's
#: cuda/Shape.cu, 128 in PyTorch 1.x/2.x; recalled, not checked here: every workload has <= 81 inputs).
CAT_INPUTS_PER_KERNEL = 128
#: multi_tensor_apply (foreach ops): elements per chunk, chunks (blocks) per launch, and tensors per
#: launch for one-list (zero_) and two-list (add_) ops (ATen's cuda/MultiTensorApply.cuh
#: kChunkSize, depth_to_max_blocks, depth_to_max_tensors; recalled, not checked here).
FOREACH_CHUNK_ELEMENTS = 65536
FOREACH_CHUNKS_PER_KERNEL = 320
FOREACH_TENSORS_PER_KERNEL = {1: 110, 2: 64}


@dataclass(frozen=True)
class StepShapes:
    """The shapes one training step depends on (see the module docstring)."""

    batch: int
    bottom: tuple[int, ...]
    top: tuple[int, ...]
    tables: int
    dim: int
    interaction: Any = None

    def __post_init__(self) -> None:
        if self.batch < 1 or self.tables < 1 or self.dim < 1:
            raise ValueError(f"batch, tables and dim must be >= 1, got {self.batch}, {self.tables}, {self.dim}")
        if len(self.bottom) < 2 or len(self.top) < 2 or min(self.bottom + self.top) < 1:
            raise ValueError(f"MLPs need at least two positive widths, got {self.bottom} and {self.top}")
        if self.interaction is None:
            object.__setattr__(self, "interaction", Dot(self.tables, self.dim, self.bottom[-1]))
        i = self.interaction
        if (i.tables, i.dim, i.dense) != (self.tables, self.dim, self.bottom[-1]):
            raise ValueError(f"the interaction is built for {i.tables} tables of dim {i.dim} and a bottom output of "
                             f"{i.dense}, not {self.tables}, {self.dim}, {self.bottom[-1]}")
        problem = i.problem()
        if problem is not None:
            raise ValueError(f"{i.name} interaction: {problem[1]}")
        if self.top[0] != self.interaction_width:
            raise ValueError(f"the top MLP's input ({self.top[0]}) must equal the {i.name} interaction's output "
                             f"({self.interaction_width})")

    @classmethod
    def from_workload(cls, workload: Any, batch: int | None = None) -> StepShapes:
        """Shapes of ``workload`` (its ``bottom_widths``, ``top_widths``, ``interaction``,
        ``params.tables``, ``params.dim``, ``params.batch_size`` unless ``batch``): the top MLP gets the
        interaction's output width prepended, as ``dlrm_s_pytorch.py`` does with ``--arch-mlp-top``."""
        p = workload.params
        bottom = tuple(int(w) for w in workload.bottom_widths)
        inter = workload.interaction
        top = (inter.output_width(), *(int(w) for w in workload.top_widths))
        return cls(int(batch if batch is not None else p.batch_size), bottom, top, int(p.tables), int(p.dim), inter)

    def with_batch(self, batch: int) -> StepShapes:
        return replace(self, batch=int(batch))

    @property
    def n_vectors(self) -> int:
        """Vectors the interaction joins: the bottom MLP's output and one per table."""
        return self.tables + 1

    @property
    def pairs(self) -> int:
        """Distinct pairs of vectors (the strict lower triangle the dot keeps)."""
        return self.n_vectors * (self.n_vectors - 1) // 2

    @property
    def interaction_width(self) -> int:
        """The interaction's output per sample (the top MLP's input)."""
        return self.interaction.output_width()

    def layers(self, mlp: str) -> list[tuple[int, int]]:
        """``(n_in, n_out)`` of each layer of the ``"bottom"`` or ``"top"`` MLP."""
        ws = self.bottom if mlp == "bottom" else self.top
        return list(zip(ws[:-1], ws[1:], strict=False))

    def parameter_tensors(self) -> list[tuple[str, int]]:
        """``(name, elements)`` of every MLP-side parameter tensor in the order the optimizer gets
        them (per layer: weight, bias; the bottom MLP's, the interaction's own, the top MLP's)."""
        out = []
        for mlp in ("bottom", "top"):
            if mlp == "top":
                out += list(self.interaction.parameter_tensors())
            for i, (a, b) in enumerate(self.layers(mlp)):
                out += [(f"{mlp}{i}.weight", a * b), (f"{mlp}{i}.bias", b)]
        return out


@dataclass(frozen=True)
class StepOptions:
    """How the framework runs the step where PyTorch versions and scripts differ.

    Defaults: the reference DLRM loop on PyTorch 1.x, the release line of 2022 when the paper's
    RTX 3090 cycles were measured (an assumption: the paper names no version).

    * ``loss``: ``"bce"`` (``--loss-function=bce``, DLRM's Criteo scripts) or ``"mse"`` (DLRM's default).
    * ``addmm_bias_epilogue``: False (PyTorch <= 1.12): ``addmm`` copies the broadcast bias into its
      output, then runs the GEMM with beta = 1 (two kernels); True (>= 1.13 for outputs wider than
      one column): cuBLASLt adds the bias in the GEMM's epilogue (one kernel).
    * ``zero_grad_set_to_none``: False (PyTorch < 2.0 default): ``optimizer.zero_grad()`` zeroes
      each gradient (one kernel per tensor) and backward's AccumulateGrad adds into it (one more
      kernel per tensor); True (2.0 default): no kernels, AccumulateGrad steals the new gradient.
    * ``foreach``: False (PyTorch 1.x default for SGD): one ``param.add_`` kernel per tensor; True
      (2.0 default on CUDA): one ``_foreach_add_`` dispatch whose multi-tensor kernels each take up
      to 64 tensors / 320 chunks of 65536 elements (and ``zero_grad`` uses ``_foreach_zero_``).
    * ``input_copies``: DLRM's ``dlrm_wrap`` moves the dense features (``X.to(device)``) and
      ``loss_fn_wrap`` the targets (``T.to(device)``) from pageable host memory: a memcpy and a
      stream synchronisation each.
    * ``loss_to_host``: the loop reads the loss back (``L = E.detach().cpu().numpy()``): a D2H
      copy that synchronises.
    * ``cached_tril_indices``: False (the reference): ``interact_features`` builds the lower-triangle
      index lists in Python every step (``torch.tensor([i for i in ...])``) and indexing a CUDA
      tensor with CPU indices copies each to the GPU with a synchronisation; True: indices built once
      on the GPU (as optimised forks do): no host work, no copies.
    """

    loss: str = "bce"
    addmm_bias_epilogue: bool = False
    zero_grad_set_to_none: bool = False
    foreach: bool = False
    input_copies: bool = True
    loss_to_host: bool = True
    cached_tril_indices: bool = False

    def __post_init__(self) -> None:
        if self.loss not in ("bce", "mse"):
            raise ValueError(f"loss must be 'bce' or 'mse', got {self.loss!r}")



class DlrmStep:
    """The DLRM step's op lists priced by ``model`` (a step model: a GPU, a host, a link), run with
    ``options`` (default :class:`StepOptions`)."""

    def __init__(self, model: Any, options: StepOptions | None = None) -> None:
        self.model = model
        self.options = options if options is not None else StepOptions()

    def with_model(self, model: Any) -> DlrmStep:
        """The same op lists priced by another step model."""
        return DlrmStep(model, self.options)

    def phase_ops(self, shapes: StepShapes, phase: str) -> list[Any]:
        """The ops PyTorch dispatches in ``phase`` (:data:`PHASES`), in order."""
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
        return _PhaseBuilder(self.model, shapes, self.options).build(phase)

    def step_ops(self, shapes: StepShapes) -> dict[str, list[Any]]:
        """Every phase's ops, in step order."""
        return {phase: self.phase_ops(shapes, phase) for phase in PHASES}

    def phase_schedule(self, shapes: StepShapes, phase: str) -> Any:
        """``phase`` alone: the host and the GPU idle at 0 (the step model's ``Schedule``)."""
        return self.model.schedule(self.phase_ops(shapes, phase))

    def phase_ns(self, shapes: StepShapes, phase: str) -> float:
        """``phase`` alone, from its first dispatch to its end (its last kernel's end when the GPU
        finishes last), ns."""
        return self.phase_schedule(shapes, phase).span_ns

    def batch_for_phase_time(self, shapes: StepShapes, phase: str, target_ns: float, max_batch: int = 1 << 20) -> int:
        """Smallest batch whose ``phase`` (:meth:`phase_ns`) takes at least ``target_ns``.

        Every op's time is non-decreasing in the batch (kernel times, copy sizes; the host costs do
        not depend on it) and the schedule's end is non-decreasing in each op's time, so this is a
        bisection. Raises ValueError if ``max_batch`` stays below the target.
        """
        def t(b: int) -> float:
            return self.phase_ns(shapes.with_batch(b), phase)

        if t(max_batch) < target_ns:
            raise ValueError(f"{phase} at batch {max_batch} takes {t(max_batch):.0f} ns, below {target_ns} ns")
        if t(1) >= target_ns:
            return 1
        return smallest_reaching(t, target_ns, 1, max_batch)

    def summary(self, shapes: StepShapes) -> dict[str, dict[str, float]]:
        """Per phase: ops, kernels (and copies), synchronisations, Σ dispatch, Σ gpu and the phase's
        span alone (ns); for reports and docs."""
        out = {}
        for phase, ops in self.step_ops(shapes).items():
            sch = self.model.schedule(ops)
            out[phase] = {
                "ops": len(ops),
                "kernels": sum(op.kind == "kernel" for op in ops),
                "copies": sum(op.kind == "copy" for op in ops),
                "syncs": sum(op.sync for op in ops),
                "dispatch_ns": sum(op.dispatch_ns for op in ops),
                "gpu_ns": sch.gpu_busy_ns,
                "span_ns": sch.span_ns,
            }
        return out


@dataclass
class _PhaseBuilder:
    """Builds the op lists of :meth:`DlrmStep.phase_ops` (one instance per call)."""

    model: Any
    shapes: StepShapes
    options: StepOptions
    ops: list[Any] = field(default_factory=list)
    part: str = ""

    def _add(self, op: Any) -> None:
        self.ops.append(replace(op, part=self.part))

    # ---- primitives: ops priced by the step model (a GPU, a host, a link) ----------------------------
    def _dispatch(self, caller: str) -> float:
        return self.model.dispatch_ns(caller)

    def host_op(self, name: str, what: str, caller: str = "python", dispatch_ns: float | None = None) -> None:
        """An op with no stream work (a view, a shape op, a CPU tensor, Python work)."""
        self._add(self.model.host_op(name, what, caller, dispatch_ns))

    def host_call(self, call: str, name: str, what: str, count: int = 1) -> None:
        """Python or engine work that dispatches no operator, priced by the host's software call
        ``call`` (:data:`~cxlsim.devices.compute.cpu.SOFTWARE_CALLS`)."""
        self._add(self.model.host_call(call, name, what, count))

    def module(self, name: str, what: str) -> None:
        """An ``nn.Module`` call (``__call__`` and its forward's own Python; its operators follow)."""
        self.host_call("module_call", name, f"{what}: nn.Module call")

    def node(self, name: str, what: str) -> None:
        """The autograd engine runs one backward node (its operators follow)."""
        self.host_call("autograd_node", name, f"{what}: autograd engine runs the node")

    def attribute(self, name: str, what: str) -> None:
        """A tensor attribute or method call from Python that dispatches no operator."""
        self.host_call("tensor_attribute", name, what)

    def kernel(self, name: str, what: str, caller: str, gpu_ns: float, dispatch_ns: float | None = None) -> None:
        self._add(self.model.kernel(name, what, caller, gpu_ns, dispatch_ns))

    def copy(self, name: str, what: str, caller: str, size_B: float, direction: str) -> None:
        """A synchronous copy from or to pageable host memory (PyTorch's copy_ with non_blocking=False),
        ``direction`` ``"h2d"`` (to the GPU) or ``"d2h"``."""
        self._add(self.model.copy(name, what, caller, size_B, direction))

    def to_device(self, name: str, what: str, caller: str, size_B: float, direction: str) -> None:
        """``Tensor.to(device)`` (``direction`` ``"h2d"``) / ``.cpu()`` (``"d2h"``) between pageable host
        memory and the GPU: ``to`` ->
        ``_to_copy`` -> ``empty_strided`` (the destination) and ``copy_`` (the copy, which
        synchronises); four operators, as the profiler lists them."""
        self.host_op(name, f"{what}: dispatch", caller)
        self.host_op("_to_copy", f"{what}: (nested)", "cpp")
        self.host_op("empty_strided", f"{what}: the destination (nested)", "cpp")
        self.copy("copy_", f"{what}: the copy (nested), pageable (synchronises)", "cpp", size_B, direction)

    def elementwise_ns(self, size_B: float) -> float:
        return self.model.elementwise_ns(size_B)

    def _layer_kernels(self, n_in: int, n_out: int, direction: str) -> dict[str, float]:
        return self.model.layer_kernels_ns(n_in, n_out, self.shapes.batch, direction)

    # ---- framework pieces ----------------------------------------------------------------------
    def linear_forward(self, mlp: str, i: int, n_in: int, n_out: int, activation: str) -> None:
        """nn.Linear (F.linear -> t + addmm) and its activation module."""
        b, o = self.shapes.batch, self.options.addmm_bias_epilogue
        k = self._layer_kernels(n_in, n_out, "forward")
        tag = f"{mlp} layer {i} ({n_in}->{n_out})"
        self.module("nn.Linear", tag)
        self.host_op("linear", f"{tag}: nn.Linear -> F.linear")
        self.host_op("t", f"{tag}: weight transpose (view)", "cpp")
        if not o or n_out == 1:
            self.kernel("copy_", f"{tag}: addmm copies the broadcast bias into its output", "cpp",
                        self.elementwise_ns(FP32_B * (b * n_out + n_out)))
        self.kernel("addmm", f"{tag}: GEMM [{b},{n_in}]x[{n_in},{n_out}] + bias", "cpp", k["fwd_gemm"])
        self.module("nn.ReLU" if activation == "relu" else "nn.Sigmoid", tag)
        self.kernel(activation, f"{tag}: {activation}", "python", k["fwd_activation"])

    def linear_backward(self, mlp: str, i: int, n_in: int, n_out: int, activation: str, input_grad: bool) -> None:
        """Autograd's kernels for activation(addmm(bias, x, W^T)), then AccumulateGrad of W and b."""
        k = self._layer_kernels(n_in, n_out, "backward")
        tag = f"{mlp} layer {i} ({n_in}->{n_out})"
        name = "threshold_backward" if activation == "relu" else f"{activation}_backward"
        self.node("ReluBackward0" if activation == "relu" else "SigmoidBackward0", tag)
        self.kernel(name, f"{tag}: {activation} backward", "cpp", k["bwd_activation_grad"])
        self.node("AddmmBackward0", tag)
        if input_grad:
            self.host_op("t", f"{tag}: AddmmBackward, W^T transposed back (view)", "cpp")
            self.kernel("mm", f"{tag}: AddmmBackward, dX = dY W", "cpp", k["bwd_grad_input"])
        self.host_op("t", f"{tag}: AddmmBackward, X^T (view)", "cpp")
        self.kernel("mm", f"{tag}: AddmmBackward, dW^T = X^T dY", "cpp", k["bwd_grad_weight"])
        self.host_op("t", f"{tag}: AddmmBackward, result transposed to W^T's layout (view)", "cpp")
        self.kernel("sum", f"{tag}: bias gradient, sum_to_size of the broadcast", "cpp", k["bwd_grad_bias"])
        self.accumulate_grad(f"{tag} bias", n_out)
        self.node("TBackward0", tag)
        self.host_op("t", f"{tag}: TBackward (view)", "cpp")
        self.accumulate_grad(f"{tag} weight", n_in * n_out)

    def accumulate_grad(self, what: str, elements: int) -> None:
        """AccumulateGrad (a node): with zeroed gradients kept (set_to_none False) an in-place add;
        else the new gradient is stolen (no op)."""
        self.node("AccumulateGrad", what)
        if not self.options.zero_grad_set_to_none:
            self.kernel("add_", f"AccumulateGrad {what}: grad += new grad", "cpp", self.elementwise_ns(3 * FP32_B * elements))

    def cat_kernels(self, name: str, what: str, caller: str, n_inputs: int, size_B: float) -> None:
        launches = math.ceil(n_inputs / CAT_INPUTS_PER_KERNEL)
        for j in range(launches):
            self.kernel(name, what if launches == 1 else f"{what} (part {j + 1})",
                        caller if j == 0 else "cpp", self.elementwise_ns(2 * size_B / launches))

    # ---- phases --------------------------------------------------------------------------------
    def build(self, phase: str) -> list[Any]:
        self.part = phase
        getattr(self, f"_{phase}")()
        return self.ops

    def _b_fwd(self) -> None:
        s = self.shapes
        if self.options.input_copies:
            self.to_device("to", "dlrm_wrap: dense features X.to(device), H2D", "python_no_grad",
                           FP32_B * s.batch * s.bottom[0], "h2d")
        self.module("DLRM_Net", "dlrm_wrap: dlrm(X, lS_o, lS_i)")
        self.module("nn.Sequential", "apply_mlp: the bottom MLP")
        for i, (a, c) in enumerate(s.layers("bottom")):
            self.linear_forward("bottom", i, a, c, "relu")

    def _t_mlp(self) -> None:
        s, o = self.shapes, self.options
        b, t, d = s.batch, s.tables, s.dim
        # hand-off: the pooled vectors [B, T*d] in GPU memory become T leaf views collecting their gradient
        self.part = "hand-off"
        self.attribute("requires_grad_", "hand-off: the pooled vectors become a leaf that collects its gradient "
                       "(a flag on the tensor, no operator)")
        self.host_op("split", f"hand-off: [B, {t}x{d}] split into the {t} per-table tensors of apply_emb (views)")
        for _ in range(t):
            self.host_op("narrow", "hand-off: one table's view (nested in split)", "cpp")
        # interact_features: the workload's interaction emits its operators
        self.part = "interaction"
        s.interaction.forward_ops(self)
        # top MLP forward: ReLU layers, the last one sigmoid (DLRM's sigmoid_top)
        top = s.layers("top")
        self.part = "top_fwd"
        self.module("nn.Sequential", "apply_mlp: the top MLP")
        for i, (a, c) in enumerate(top):
            self.linear_forward("top", i, a, c, "sigmoid" if i == len(top) - 1 else "relu")
        # loss
        self.part = "loss"
        if o.input_copies:
            self.to_device("to", "loss_fn_wrap: targets T.to(device), H2D", "python_no_grad", FP32_B * b, "h2d")
        loss = "binary_cross_entropy" if o.loss == "bce" else "mse_loss"
        self.module("nn.BCELoss" if o.loss == "bce" else "nn.MSELoss", "loss_fn_wrap: dlrm.loss_fn(Z, T)")
        self.kernel(loss, f"loss: {loss} per sample", "python", self.elementwise_ns(3 * FP32_B * b))
        self.kernel("mean", "loss: mean reduction (nested)", "cpp", self.elementwise_ns(FP32_B * b))
        if o.loss == "bce":
            self.kernel("copy_", "loss: BCE copies the reduced value into its output (nested)", "cpp",
                        self.elementwise_ns(2 * FP32_B))
        if o.loss_to_host:
            self.part = "readback"
            self.host_op("detach", "loop: L = E.detach().cpu().numpy(): E.detach()", "python_no_grad")
            self.host_op("detach", "loop: E.detach(): the view (nested)", "cpp")
            self.to_device("cpu", "loop: .cpu(), D2H", "python_no_grad", FP32_B, "d2h")
            self.attribute("numpy", "loop: .numpy() of the host tensor (no operator)")
        # optimizer.zero_grad(), then E.backward()
        self.part = "zero_grad"
        self._zero_grad()
        self.part = "backward"
        self.kernel("ones_like", "backward: the root gradient (torch.autograd._make_grads)", "python_no_grad",
                    self.elementwise_ns(FP32_B))
        self.host_call("backward_call", "run_backward", "backward: torch.autograd.backward and the engine's graph task")
        if o.loss == "bce":
            self.node("BinaryCrossEntropyBackward0", "loss backward")
            self.host_op("expand", "loss backward: grad expanded to the input (view)", "cpp")
            self.kernel("binary_cross_entropy_backward", "loss backward", "cpp", self.elementwise_ns(4 * FP32_B * b))
            self.kernel("div_", "loss backward: mean reduction's 1/B (nested)", "cpp", self.elementwise_ns(2 * FP32_B * b))
        else:
            self.node("MseLossBackward0", "loss backward")
            self.kernel("mse_loss_backward", "loss backward: 2 (x - y) g / B", "cpp", self.elementwise_ns(4 * FP32_B * b))
        for i, (a, c) in reversed(list(enumerate(top))):
            self.linear_backward("top", i, a, c, "sigmoid" if i == len(top) - 1 else "relu", input_grad=True)
        # interaction backward
        s.interaction.backward_ops(self)
        self.node("SplitBackward0", "hand-off backward: split of the pooled vectors")
        self.kernel("cat", f"hand-off backward: SplitBackward, the pooled vectors' gradient [B, {t}x{d}]", "cpp",
                    self.elementwise_ns(2 * FP32_B * b * t * d))
        self.node("AccumulateGrad", "hand-off backward: the pooled vectors' leaf takes its gradient (stolen, no op)")

    def _b_bwd(self) -> None:
        for i, (a, c) in reversed(list(enumerate(self.shapes.layers("bottom")))):
            self.linear_backward("bottom", i, a, c, "relu", input_grad=i > 0)

    def _mlp_opt(self) -> None:
        tensors = self.shapes.parameter_tensors()
        self.host_call("optimizer_step", "SGD.step", "optimizer.step(): the call's fixed Python")
        if self.options.foreach:
            for name, _ in tensors:
                self.host_call("optimizer_tensor", "SGD tensor", f"SGD (foreach): {name} gathered")
            self.host_op("_foreach_add_", "SGD (foreach): params += -lr * grads, one dispatch", "python_no_grad")
            for j, elements in enumerate(_foreach_launches([e for _, e in tensors], depth=2)):
                self.kernel("multi_tensor_apply", f"SGD (foreach): launch {j + 1}", "cpp",
                            self.elementwise_ns(3 * FP32_B * elements), self._dispatch("cpp") if j else 0.0)
            return
        for name, elements in tensors:
            self.host_call("optimizer_tensor", "SGD tensor", f"SGD: {name}: the per-tensor Python")
            self.kernel("add_", f"SGD: {name} += -lr * grad", "python_no_grad", self.elementwise_ns(3 * FP32_B * elements))

    def _zero_grad(self) -> None:
        tensors = self.shapes.parameter_tensors()
        self.host_call("zero_grad_call", "zero_grad", "optimizer.zero_grad(): the call's fixed Python")
        if self.options.zero_grad_set_to_none:
            for name, _ in tensors:  # Python attribute stores only: no operator
                self.attribute("grad = None", f"zero_grad: {name}.grad = None")
            return
        for name, elements in tensors:
            self.attribute("requires_grad_", f"zero_grad: {name}.grad.requires_grad_(False) (no operator)")
            if not self.options.foreach:
                self.kernel("zero_", f"zero_grad: {name}.grad.zero_()", "python_no_grad", self.elementwise_ns(FP32_B * elements))
        if self.options.foreach:
            self.host_op("_foreach_zero_", "zero_grad (foreach): one dispatch", "python_no_grad")
            for j, elements in enumerate(_foreach_launches([e for _, e in tensors], depth=1)):
                self.kernel("multi_tensor_apply", f"zero_grad (foreach): launch {j + 1}", "cpp",
                            self.elementwise_ns(FP32_B * elements), self._dispatch("cpp") if j else 0.0)


def _foreach_launches(elements: Sequence[int], depth: int) -> list[int]:
    """Elements each multi_tensor_apply launch processes over tensors of ``elements``: a launch
    fills up to :data:`FOREACH_CHUNKS_PER_KERNEL` chunks of :data:`FOREACH_CHUNK_ELEMENTS` from up
    to ``FOREACH_TENSORS_PER_KERNEL[depth]`` tensors."""
    max_tensors = FOREACH_TENSORS_PER_KERNEL[depth]
    launches, cur, chunks, tensors = [], 0, 0, 0
    for n in elements:
        tensors += 1
        left = n
        while left > 0:
            take = min(left, FOREACH_CHUNK_ELEMENTS)
            cur, chunks, left = cur + take, chunks + 1, left - take
            if chunks == FOREACH_CHUNKS_PER_KERNEL or (left == 0 and tensors == max_tensors):
                launches.append(cur)
                cur, chunks = 0, 0
                tensors = 1 if left > 0 else 0
    if cur:
        launches.append(cur)
    return launches
