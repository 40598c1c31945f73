"""Measure the host's framework costs with PyTorch and fit the ``cpu`` family's instruction counts.

``cxlsim measure host`` (:mod:`cxlsim.cli.measure`) drives this module; torch is an optional extra
(``pip install 'cxlsim[measure]'``), imported only inside the functions that run it.

* **What is fitted.** The framework calls the GPU step charges (:data:`FITTED_CALLS`, keys of
  :data:`~cxlsim.devices.compute.cpu.SOFTWARE_CALLS`): an operator from Python with and without autograd
  recording, an operator nested in another or dispatched by the engine (C++), a Python list
  element of ``torch.tensor(list)``, a tensor attribute that dispatches no operator
  (``requires_grad_``), an ``nn.Module`` call, an autograd node, the ``backward()`` call,
  ``optimizer.step()`` per call and per tensor, ``zero_grad()`` per call.
* **The fit (pure, no torch).** A :class:`Row` is one measurement: how many of each call it makes,
  *counted the way cxlsim's op list counts them* (:mod:`cxlsim.workloads.dlrm_ops`), and its µs.
  :func:`fit_costs` solves the non-negative least-squares problem ``counts × cost ≈ µs`` on relative
  residuals (rows range from 0.1 µs to a millisecond), each times the row's weight, and refuses
  rows that cannot identify every cost. :func:`fit_step` is the whole fit: (1) the microbenchmarks
  alone give warm costs; (2) :func:`in_step_factor` scales them to the modelled step's level
  (warm loops keep their code and data in the caches and predictors; the step runs each piece once
  between others); (3) one fit of the modelled step's parts on the fit workloads (weight 1; counts
  from the op list through :func:`part_counts`) together with the scaled microbenchmarks
  (weight :data:`MICRO_WEIGHT`), which settle what the step cannot separate (e.g. SGD's per-call
  and per-tensor work: every workload has about 12 tensors). :func:`spread` summarises repeats;
  :func:`instructions` converts µs to the preset's convention (count = µs × ratio × 1000 ×
  clock_GHz × software_ipc); :func:`preset_document` builds a ``devices/cpu/<name>.yaml`` document.
* **The microbenchmarks** (:func:`microbenchmarks`): tiny tensors (host cost only, the kernels
  negligible): the same six operators with and without autograd recording; ``split`` into 4 and
  64 views (the nested-operator slope); ``F.linear`` (one operator, three nested); an
  ``nn.Sequential`` MLP and ``nn.BCELoss`` (module calls); backward of chains of 2, 8 and 32
  ``relu`` and of a two-layer MLP (nodes, the ``backward()`` call); ``SGD.step`` and ``zero_grad``
  (both settings) over 4 and 32 tensors; ``requires_grad_``; ``torch.tensor`` of the interaction's
  index lists for 21 and 81 vectors. Each is timed in a loop: the least of 7 samples' means.
* **The step** (:func:`measure_step`): DLRM as ``dlrm_s_pytorch.py`` (facebookresearch/dlrm) writes
  it -- ``DLRM_Net`` with a bottom ``nn.Sequential`` of ``Linear`` + ``ReLU``, one
  ``EmbeddingBag(mode="sum", sparse=True)`` per table, the workload's interaction as its own
  ``torch_module`` builds it (:mod:`cxlsim.workloads.interactions`; the dot: ``interact_features``
  verbatim, with its Python-list tril indices, ``torch.tensor(li)``), a top MLP with a final ``Sigmoid``, ``BCELoss``, and the
  loop ``Z = dlrm_wrap(X, lS_o, lS_i)``, ``E = loss_fn_wrap(Z, T)``, ``optimizer.zero_grad()``,
  ``E.backward()``, ``optimizer.step()`` (``torch.optim.SGD``), ``L = E.detach().cpu().numpy()``.
  Variant ``"reference"`` runs exactly that, and under ``torch.profiler`` with ``record_function``
  scopes per part counts the top-level and nested aten operators and the backward nodes (each
  node charged, by its sequence number, to the part of the forward operator that made it).
  Variant ``"modelled"`` is the step cxlsim models (the pooled vectors arrive as a leaf:
  ``requires_grad_`` + ``split``; SGD over the MLP's tensors), timed unprofiled per part
  (``time.perf_counter`` at the part boundaries, a tensor hook on the bottom MLP's output where its
  backward starts). The fit and the check run it at :func:`host_shapes` (the workload's layers and
  tables at batch 2, hidden widths <= 16): the same op list with negligible kernels, so a CPU
  step's time is host time. Embedding tables have ``rows_per_table`` rows: host costs do not
  depend on the rows.

Times in the results are µs (the unit the measurement speaks); a preset stores instructions.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cxlsim.devices.compute.cpu import SOFTWARE_CALLS, CpuModel
from cxlsim.devices.compute.gpu_step import StepModel

#: The host software calls this measurement fits (keys of cxlsim.devices.compute.cpu.SOFTWARE_CALLS).
FITTED_CALLS = (
    "op_dispatch_python", "op_dispatch_python_no_grad", "op_dispatch_cpp", "python_element",
    "tensor_attribute", "module_call", "autograd_node", "backward_call", "optimizer_step",
    "optimizer_tensor", "zero_grad_call",
)
#: The parts of the modelled step, in the order the loop runs them, and the cxlsim phase of each.
STEP_PARTS = {
    "b_fwd": "b_fwd", "hand-off": "t_mlp", "interaction": "t_mlp", "top_fwd": "t_mlp", "loss": "t_mlp",
    "zero_grad": "t_mlp", "backward": "t_mlp", "b_bwd": "b_bwd", "mlp_opt": "mlp_opt", "readback": "t_mlp",
}


class TorchMissing(ImportError):
    """PyTorch is not installed (``pip install 'cxlsim[measure]'``)."""


# ---- the fit (pure) ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One measurement: calls made per iteration (cxlsim's counting), measured µs per iteration,
    and its weight in the fit (relative residuals are multiplied by it)."""

    label: str
    counts: Mapping[str, float]
    us: float
    weight: float = 1.0


@dataclass(frozen=True)
class Fit:
    """Fitted µs per call, and per row the measured and fitted µs."""

    costs_us: dict[str, float]
    rows: tuple[tuple[str, float, float], ...]

    @property
    def worst_relative_error(self) -> float:
        return max(abs(f - m) / m for _, m, f in self.rows) if self.rows else 0.0


def nnls(a: np.ndarray, b: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Non-negative least squares, ``argmin ||a x - b||`` with ``x >= 0`` (Lawson and Hanson's
    active-set method)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = a.shape[1]
    x, passive = np.zeros(n), np.zeros(n, bool)
    for _ in range(3 * n + 10):
        w = a.T @ (b - a @ x)
        if passive.all() or (w[~passive] <= tol).all():
            break
        j = int(np.argmax(np.where(passive, -np.inf, w)))
        passive[j] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > tol).all():
                x = z
                break
            neg = passive & (z <= tol)
            alpha = np.min(x[neg] / (x[neg] - z[neg]))
            x = x + alpha * (z - x)
            passive &= x > tol
            x[~passive] = 0.0
    return x


def fit_costs(rows: Sequence[Row], calls: Sequence[str] = FITTED_CALLS) -> Fit:
    """µs per call of each of ``calls`` from ``rows``: non-negative least squares of the rows'
    relative residuals ``(counts · cost − us) / us``, each times the row's weight.

    Raises ValueError if a row counts a call not in ``calls``, a row's time is not positive, or the
    rows do not identify every cost (the count matrix's rank is below the number of calls)."""
    calls = list(calls)
    for r in rows:
        unknown = set(r.counts) - set(calls)
        if unknown:
            raise ValueError(f"row {r.label!r} counts calls that are not fitted: {sorted(unknown)}")
        if not r.us > 0:
            raise ValueError(f"row {r.label!r}: measured time must be > 0, got {r.us}")
    a = np.array([[float(r.counts.get(c, 0.0)) for c in calls] for r in rows]).reshape(len(rows), len(calls))
    if len(rows) < len(calls) or np.linalg.matrix_rank(a) < len(calls):
        missing = [c for j, c in enumerate(calls) if not a[:, j].any()]
        raise ValueError("the rows do not identify every cost" + (f" (never counted: {missing})" if missing else
                                                                   " (their counts are linearly dependent)"))
    b = np.array([r.us for r in rows])
    w = np.array([r.weight for r in rows])
    if (w <= 0).any():
        raise ValueError("row weights must be > 0")
    x = nnls(a * (w / b)[:, None], w)
    fitted = a @ x
    return Fit({c: float(v) for c, v in zip(calls, x, strict=True)},
               tuple((r.label, r.us, float(f)) for r, f in zip(rows, fitted, strict=True)))


def spread(values: Iterable[float]) -> dict[str, float]:
    """Median, min, max and the relative spread (max − min) / median of repeated values."""
    v = [float(x) for x in values]
    if not v:
        raise ValueError("no values")
    med = statistics.median(v)
    return {"median": med, "min": min(v), "max": max(v), "spread": (max(v) - min(v)) / med if med else 0.0, "n": len(v)}


def instructions(us: float, clock_GHz: float, software_ipc: float, ratio: float = 1.0) -> float:
    """The preset's count for a call taking ``us`` here on a host ``ratio`` times slower per thread
    (1: this host): ``us × ratio × 1000 × clock_GHz × software_ipc``."""
    if ratio <= 0 or clock_GHz <= 0 or software_ipc <= 0:
        raise ValueError("ratio, clock_GHz and software_ipc must be > 0")
    return us * ratio * 1e3 * clock_GHz * software_ipc


def preset_document(base_params: Mapping[str, Any], base_sources: Mapping[str, str], description: str,
                    values: Mapping[str, tuple[Any, str]]) -> dict[str, Any]:
    """A cpu preset document (``version``, ``family``, ``description``, ``params`` with ``value``
    and ``source`` each): ``values`` (key -> (value, source)) over the base preset's, in its order."""
    params: dict[str, dict[str, Any]] = {}
    for key, value in base_params.items():
        params[key] = {"value": value, "source": base_sources.get(key, "")}
    for key, (value, source) in values.items():
        params[key] = {"value": value, "source": source}
    return {"version": 1, "family": "cpu", "description": description, "params": params}


def model_part_costs(step: Any, shapes: Any, costs_us: Mapping[str, float],
                     no_copies: bool = True) -> dict[str, float]:
    """µs per part of cxlsim's op list (:data:`STEP_PARTS`) with the host's framework calls at
    ``costs_us``; with ``no_copies`` (the step on host tensors) the other calls cost 0 and the
    copies' nested operators are left out (a host tensor's ``.to`` returns itself; CPU indices
    need no move). ``step`` is the workload's op list over a step model (a
    :class:`~cxlsim.workloads.dlrm_ops.DlrmStep`: its ``model``, ``with_model`` and ``step_ops``,
    handed in by the caller); a probe host with clock 1 GHz, IPC 1 and the counts ``costs_us × 1000``
    prices its ops."""
    host = step.model.host
    changes = {"clock_GHz": 1.0, "software_ipc": 1.0}
    for call in SOFTWARE_CALLS:
        if call in costs_us:
            changes[f"{call}_instructions"] = costs_us[call] * 1e3
        elif no_copies:
            changes[f"{call}_instructions"] = 0.0
    probe = step.with_model(StepModel(step.model.gpu, CpuModel(host.params.replace(**changes)), step.model.link))
    out: dict[str, float] = {}
    for ops in probe.step_ops(shapes).values():
        for op in ops:
            if no_copies and (op.kind == "copy" or op.name in ("_to_copy", "empty_strided")
                              or (op.name == "to" and op.caller == "cpp")):
                continue  # a host tensor's .to(host) is one operator returning itself; CPU indices need no move
            out[op.part] = out.get(op.part, 0.0) + (op.dispatch_ns + (op.sync_ns if op.sync else 0.0)) / 1e3
    return out


# ---- the machine ----------------------------------------------------------------------------------------
def cpu_description() -> dict[str, Any]:
    """The CPU as the OS reports it: model name, family/model/stepping, MHz, flags of note."""
    info: dict[str, Any] = {"model_name": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return info
    first = text.split("\n\n")[0]
    fields = {}
    for line in first.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
    info.update({"model_name": fields.get("model name", info["model_name"]), "family": fields.get("cpu family"),
                 "model": fields.get("model"), "stepping": fields.get("stepping"), "mhz": fields.get("cpu MHz"),
                 "cache": fields.get("cache size"),
                 "hypervisor": "hypervisor" in fields.get("flags", "").split()})
    flags = set(fields.get("flags", "").split())
    info["isa"] = [f for f in ("avx2", "avx512f", "avx512_fp16", "amx_tile") if f in flags]
    return info


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise TorchMissing("needs PyTorch: pip install 'cxlsim[measure]' (or pip install torch)") from None
    return torch


# ---- microbenchmarks -------------------------------------------------------------------------------------
@dataclass
class Micro:
    """A microbenchmark: ``run(state)`` is one iteration, ``setup()`` (untimed, per iteration)
    makes its state when it needs a fresh one (a graph to run backward over); ``counts`` per
    iteration in cxlsim's counting."""

    label: str
    counts: dict[str, float]
    run: Callable[[Any], Any]
    setup: Callable[[], Any] | None = None


def linear_backward_counts(layers: int, set_to_none: bool = True) -> dict[str, float]:
    """cxlsim's counts for the backward of ``layers`` Linear + activation layers whose input needs
    no gradient (dlrm_ops' ``linear_backward``: 5 nodes per layer; activation backward, [t, mm dX],
    t, mm dW, t, sum, TBackward's t, and with kept gradients two ``add_``), plus the backward call."""
    cpp = sum(1 + (2 if i > 0 else 0) + 4 + 1 + (0 if set_to_none else 2) for i in range(layers))
    return {"backward_call": 1, "autograd_node": 5 * layers, "op_dispatch_cpp": cpp}


def microbenchmarks(torch: Any, device: str = "cpu") -> list[Micro]:
    """The microbenchmarks (see the module docstring), on ``device``."""
    nn, F = torch.nn, torch.nn.functional
    dev = torch.device(device)
    out: list[Micro] = []

    def leaf(*shape: int, grad: bool = False) -> Any:
        return torch.rand(*shape, device=dev).requires_grad_(grad)

    # the same six operators, with and without autograd recording (one top-level operator each)
    for grad in (True, False):
        a, a3, b3 = leaf(2, 4, grad=grad), leaf(1, 2, 4, grad=grad), leaf(1, 4, 2, grad=grad)

        def six(_: Any, a: Any = a, a3: Any = a3, b3: Any = b3) -> None:
            torch.relu(a)
            torch.sigmoid(a)
            a.view(-1)
            a.transpose(0, 1)
            torch.cat([a, a])
            torch.bmm(a3, b3)

        call = "op_dispatch_python" if grad else "op_dispatch_python_no_grad"
        out.append(Micro(f"6 ops ({'grad' if grad else 'no grad'})", {call: 6}, six))
    # split into n views: one operator from Python, n nested narrows (the hand-off, CatBackward)
    for grad in (True, False):
        for n in (4, 64):
            x = leaf(n, 2, grad=grad)
            call = "op_dispatch_python" if grad else "op_dispatch_python_no_grad"
            out.append(Micro(f"split into {n} ({'grad' if grad else 'no grad'})", {call: 1, "op_dispatch_cpp": n},
                             lambda _, x=x: x.split(1)))
    # F.linear without grad: linear, nested t, copy_ (bias), addmm
    xl, lin = leaf(2, 4), nn.Linear(4, 3).to(dev)
    w, bias = lin.weight.detach(), lin.bias.detach()
    out.append(Micro("F.linear (no grad)", {"op_dispatch_python_no_grad": 1, "op_dispatch_cpp": 3},
                     lambda _: F.linear(xl, w, bias)))
    # module calls: nn.Sequential(Linear, ReLU, Linear, Sigmoid) forward with grad: 5 modules, 4 ops
    # from Python (2 linear, relu, sigmoid), 6 nested (t, copy_, addmm per linear)
    mlp = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1), nn.Sigmoid()).to(dev)
    out.append(Micro("nn.Sequential MLP forward", {"module_call": 5, "op_dispatch_python": 4, "op_dispatch_cpp": 6},
                     lambda _: mlp(xl)))
    bce, target = nn.BCELoss(), torch.rand(2, 1, device=dev)
    p = torch.sigmoid(leaf(2, 1, grad=True))
    out.append(Micro("nn.BCELoss", {"module_call": 1, "op_dispatch_python": 1, "op_dispatch_cpp": 2},
                     lambda _: bce(p, target)))
    ident = nn.Sequential(*[nn.Identity() for _ in range(8)])
    out.append(Micro("nn.Sequential of 8 nn.Identity", {"module_call": 9}, lambda _: ident(xl)))
    # backward: chains of k relu (k nodes with one operator each, the leaf's AccumulateGrad stealing)
    for k in (2, 8, 32):
        x0, g = leaf(4, grad=True), torch.ones(4, device=dev)

        def chain(k: int = k, x0: Any = x0) -> Any:
            x0.grad = None
            y = x0
            for _ in range(k):
                y = torch.relu(y)
            return y

        out.append(Micro(f"backward of {k} relu", {"backward_call": 1, "autograd_node": k + 1, "op_dispatch_cpp": k},
                         lambda y, g=g: y.backward(g), chain))
    # backward of a two-layer MLP (the step's layer backward; gradients set to None first: stolen)
    mlp2 = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1), nn.Sigmoid()).to(dev)
    g1 = torch.ones(2, 1, device=dev)

    def mlp_graph() -> Any:
        for q in mlp2.parameters():
            q.grad = None
        return mlp2(xl)

    out.append(Micro("backward of a 2-layer MLP", linear_backward_counts(2), lambda y: y.backward(g1), mlp_graph))
    # the optimizer: SGD.step and zero_grad over k tensors
    for k in (4, 32):
        params = [nn.Parameter(torch.rand(4, device=dev)) for _ in range(k)]
        grads = [torch.rand(4, device=dev) for _ in range(k)]
        for q, gq in zip(params, grads, strict=True):
            q.grad = gq.clone()
        opt = torch.optim.SGD(params, lr=1e-9)
        out.append(Micro(f"SGD.step, {k} tensors", {"optimizer_step": 1, "optimizer_tensor": k,
                                                     "op_dispatch_python_no_grad": k}, lambda _, opt=opt: opt.step()))
        out.append(Micro(f"zero_grad(set_to_none=False), {k} tensors",
                         {"zero_grad_call": 1, "tensor_attribute": k, "op_dispatch_python_no_grad": k},
                         lambda _, opt=opt: opt.zero_grad(set_to_none=False)))
        opt2 = torch.optim.SGD([nn.Parameter(q.detach().clone()) for q in params], lr=1e-9)

        def regrad(opt2: Any = opt2, grads: Any = grads) -> None:
            for q, gq in zip(opt2.param_groups[0]["params"], grads, strict=True):
                q.grad = gq

        out.append(Micro(f"zero_grad(set_to_none=True), {k} tensors", {"zero_grad_call": 1, "tensor_attribute": k},
                         lambda _, opt2=opt2: opt2.zero_grad(set_to_none=True), regrad))
    # tensor attributes that dispatch no operator
    xa = leaf(4)
    out.append(Micro("requires_grad_", {"tensor_attribute": 1}, lambda _: xa.requires_grad_(False)))
    # the interaction's index list: a comprehension of C(n, 2) elements and torch.tensor of it
    for n in (21, 81):
        out.append(Micro(f"torch.tensor(li), {n} vectors", {"op_dispatch_python_no_grad": 1,
                                                             "python_element": n * (n - 1) // 2},
                         lambda _, n=n: torch.tensor([i for i in range(n) for j in range(i)])))
    return out


def time_micro(torch: Any, m: Micro, seconds: float = 0.05, samples: int = 7) -> float:
    """µs per iteration of ``m``: the least of ``samples`` samples' means, each over about
    ``seconds`` (a shared machine only ever adds time). Loops without per-iteration state time the
    loop, minus an empty loop's cost; with ``setup``, each iteration is timed alone."""
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    per_sample = []
    if m.setup is None:
        m.run(None)
        t0, n = time.perf_counter(), 0
        while time.perf_counter() - t0 < seconds / 5:
            m.run(None)
            n += 1
        n = max(10, int(5 * n))
        empty = _loop_us(lambda _: None, n)
        for _ in range(samples):
            sync()
            t = time.perf_counter()
            for _ in range(n):
                m.run(None)
            sync()
            per_sample.append((time.perf_counter() - t) / n * 1e6 - empty)
    else:
        m.run(m.setup())
        for _ in range(samples):
            total, n, t_end = 0.0, 0, time.perf_counter() + seconds
            while time.perf_counter() < t_end or n < 10:
                state = m.setup()
                sync()
                t = time.perf_counter()
                m.run(state)
                total += time.perf_counter() - t
                n += 1
            per_sample.append(total / n * 1e6)
    return max(min(per_sample), 1e-3)


def _loop_us(fn: Callable[[Any], Any], n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        fn(None)
    return (time.perf_counter() - t) / n * 1e6


# ---- the DLRM step ----------------------------------------------------------------------------------------
def _dlrm_net_class(torch: Any) -> type:
    """DLRM_Net as dlrm_s_pytorch.py writes it (the parts RM1-RM4 use: sigmoid on the top MLP's last
    layer, sum-pooled sparse EmbeddingBags), its ``interact_features`` the workload's interaction
    (``interaction.torch_module(torch)``, called as a method is: ``forward``), with :meth:`mark`
    calls at cxlsim's part boundaries."""
    nn = torch.nn

    class DLRM_Net(nn.Module):  # noqa: N801 (the reference's name)
        def create_mlp(self, ln: Sequence[int], sigmoid_layer: int) -> Any:
            layers = nn.ModuleList()
            for i in range(len(ln) - 1):
                n, m = int(ln[i]), int(ln[i + 1])
                LL = nn.Linear(n, m, bias=True)
                std_dev = math.sqrt(2 / (m + n))
                LL.weight.data = torch.randn(m, n) * std_dev
                LL.bias.data = torch.randn(m) * math.sqrt(1 / m)
                layers.append(LL)
                layers.append(nn.Sigmoid() if i == sigmoid_layer else nn.ReLU())
            return torch.nn.Sequential(*layers)

        def create_emb(self, m: int, ln: Sequence[int]) -> Any:
            emb_l = nn.ModuleList()
            for n in ln:
                EE = nn.EmbeddingBag(int(n), m, mode="sum", sparse=True)
                EE.weight.data = (torch.rand(int(n), m) * 2 - 1) * math.sqrt(1 / n)
                emb_l.append(EE)
            return emb_l

        def __init__(self, m_spa: int, ln_emb: Sequence[int], ln_bot: Sequence[int], ln_top: Sequence[int],
                     interaction: Any) -> None:
            super().__init__()
            self.emb_l = self.create_emb(m_spa, ln_emb)
            self.bot_l = self.create_mlp(ln_bot, -1)
            self.inter = interaction.torch_module(torch)
            self.top_l = self.create_mlp(ln_top, len(ln_top) - 2)
            self.loss_fn = torch.nn.BCELoss(reduction="mean")
            self.mark: Callable[[str], None] = lambda name: None
            self.pooled: Any = None  # the modelled step: the pooled vectors arrive from outside

        def apply_mlp(self, x: Any, layers: Any) -> Any:
            return layers(x)

        def apply_emb(self, lS_o: Any, lS_i: Any, emb_l: Any) -> list[Any]:
            ly = []
            for k, sparse_index_group_batch in enumerate(lS_i):
                sparse_offset_group_batch = lS_o[k]
                E = emb_l[k]
                V = E(sparse_index_group_batch, sparse_offset_group_batch, per_sample_weights=None)
                ly.append(V)
            return ly

        def interact_features(self, x: Any, ly: list[Any]) -> Any:
            return self.inter.forward(x, ly)

        def forward(self, dense_x: Any, lS_o: Any, lS_i: Any) -> Any:
            return self.sequential_forward(dense_x, lS_o, lS_i)

        def sequential_forward(self, dense_x: Any, lS_o: Any, lS_i: Any) -> Any:
            x = self.apply_mlp(dense_x, self.bot_l)
            if self.pooled is None:
                self.mark("embeddings")
                ly = self.apply_emb(lS_o, lS_i, self.emb_l)
            else:
                self.x_out = x
                self.mark("hand-off")
                pooled = self.pooled.requires_grad_()
                ly = list(pooled.split(x.shape[1], dim=1))
            self.mark("interaction")
            z = self.interact_features(x, ly)
            self.mark("top_fwd")
            p = self.apply_mlp(z, self.top_l)
            return p

    return DLRM_Net


@dataclass
class _Marks:
    """Part boundaries of one step: (name, perf_counter) in order; optionally record_function scopes."""

    torch: Any
    scopes: bool = False
    stamps: list[tuple[str, float]] = field(default_factory=list)
    _scope: Any = None

    def __call__(self, name: str) -> None:
        self.stamps.append((name, time.perf_counter()))
        if self.scopes:
            if self._scope is not None:
                self._scope.__exit__(None, None, None)
            self._scope = self.torch.profiler.record_function(name) if name != "end" else None
            if self._scope is not None:
                self._scope.__enter__()

    def parts_us(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for (name, t0), (_, t1) in zip(self.stamps[:-1], self.stamps[1:], strict=True):
            out[name] = out.get(name, 0.0) + (t1 - t0) * 1e6
        return out


def measure_step(shapes: Any, variant: str = "modelled", device: str = "cpu", rows_per_table: int = 1000,
                 iterations: int = 20, warmup: int = 3, seed: int = 0, profile: bool = False) -> dict[str, Any]:
    """Run DLRM's training step (``variant`` ``"modelled"`` or ``"reference"``: see the module
    docstring) at ``shapes`` (a :class:`~cxlsim.workloads.dlrm_ops.StepShapes`) on ``device``.

    Returns ``parts_us`` (median µs per part over ``iterations`` unprofiled steps) and, with
    ``profile``, ``profile`` (per cxlsim phase: top-level and all aten operators, backward nodes,
    µs, from one profiled step after the others)."""
    torch = _import_torch()
    if variant not in ("modelled", "reference"):
        raise ValueError(f"variant must be 'modelled' or 'reference', got {variant!r}")
    torch.manual_seed(seed)
    dev = torch.device(device)
    B, d, T = shapes.batch, shapes.dim, shapes.tables
    lookups = 1
    dlrm = _dlrm_net_class(torch)(d, [rows_per_table] * T, list(shapes.bottom), list(shapes.top),
                                  shapes.interaction).to(dev)
    if variant == "modelled":  # the MLP-side parameters, in the op list's order (StepShapes.parameter_tensors)
        params = list(dlrm.bot_l.parameters()) + list(dlrm.inter.parameters()) + list(dlrm.top_l.parameters())
    else:
        params = list(dlrm.parameters())
    optimizer = torch.optim.SGD(params, lr=0.01)
    X = torch.rand(B, shapes.bottom[0])
    Tgt = torch.randint(0, 2, (B, 1)).float()
    lS_o = [torch.arange(0, B * lookups, lookups).to(dev) for _ in range(T)]
    lS_i = [torch.randint(0, rows_per_table, (B * lookups,)).to(dev) for _ in range(T)]
    pooled_src = torch.rand(B, T * d, device=dev)
    sync = (lambda: torch.cuda.synchronize()) if dev.type == "cuda" else (lambda: None)

    def dlrm_wrap(X: Any, lS_o: Any, lS_i: Any) -> Any:
        return dlrm(X.to(dev), lS_o, lS_i)

    def loss_fn_wrap(Z: Any, T: Any) -> Any:
        return dlrm.loss_fn(Z, T.to(dev))

    def step(marks: _Marks) -> Any:
        dlrm.mark = marks
        if variant == "modelled":
            dlrm.pooled = pooled_src.detach().clone()  # arrives from the CXL-MEM (not timed: no part)
        sync()
        marks("b_fwd")
        Z = dlrm_wrap(X, lS_o, lS_i)
        marks("loss")
        E = loss_fn_wrap(Z, Tgt)
        if variant == "modelled":
            marks("_hook")  # the measurement's own tensor hook: in no part
            dlrm.x_out.register_hook(lambda g: marks("b_bwd"))
        marks("zero_grad")
        optimizer.zero_grad()
        marks("backward")
        E.backward()
        marks("mlp_opt" if variant == "modelled" else "step")
        optimizer.step()
        marks("readback")
        L = E.detach().cpu().numpy()
        marks("end")
        return L

    for _ in range(warmup):
        step(_Marks(torch))
    per_part: dict[str, list[float]] = {}
    for _ in range(iterations):
        m = _Marks(torch)
        step(m)
        for k, v in m.parts_us().items():
            if not k.startswith("_"):
                per_part.setdefault(k, []).append(v)
    result: dict[str, Any] = {"variant": variant, "device": str(dev), "batch": B, "rows_per_table": rows_per_table,
                              "iterations": iterations,
                              "parts_us": {k: statistics.median(v) for k, v in per_part.items()}}
    if profile:
        result["profile"] = _profiled_step(torch, step)
    return result


def _profiled_step(torch: Any, step: Callable[[_Marks], Any]) -> dict[str, dict[str, float]]:
    """One step under torch.profiler: per part scope, top-level and nested aten operators; per
    backward node the part of the forward operator that made it (its sequence number)."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=acts) as prof:
        step(_Marks(torch, scopes=True))
    events = list(prof.events())
    scope_names = set(STEP_PARTS) | {"embeddings", "step"}

    def scope_of(e: Any) -> str | None:
        while e is not None:
            if e.name in scope_names:
                return e.name
            e = e.cpu_parent
        return None

    out: dict[str, dict[str, float]] = {}

    def add(part: str, key: str, v: float = 1.0) -> None:
        out.setdefault(part, {"top_level_ops": 0, "all_ops": 0, "nodes": 0, "node_ops": 0, "us": 0.0})
        out[part][key] += v

    seq_part: dict[tuple[int, int], str] = {}
    for e in events:
        if e.name in scope_names:
            add(e.name, "us", e.time_range.end - e.time_range.start)
        if e.name.startswith("aten::"):
            part = scope_of(e)
            if part is None:
                continue
            add(part, "all_ops")
            if e.cpu_parent is not None and e.cpu_parent.name == part:
                add(part, "top_level_ops")
            if e.sequence_nr >= 0:
                seq_part.setdefault((e.thread, e.sequence_nr), part)
    last = None
    for e in events:
        if not e.name.startswith("autograd::engine::evaluate_function: "):
            continue
        part = seq_part.get((e.fwd_thread, e.sequence_nr)) if e.sequence_nr >= 0 else last
        part = f"{part or 'unattributed'} (backward)"
        last = part.removesuffix(" (backward)")
        add(part, "nodes")
        add(part, "us", e.time_range.end - e.time_range.start)
        add(part, "node_ops", sum(1 for c in _descendants(e) if c.name.startswith("aten::")))
    return out


def _descendants(e: Any) -> Iterable[Any]:
    for c in e.cpu_children:
        yield c
        yield from _descendants(c)


# ---- the whole measurement -----------------------------------------------------------------------------------
def host_shapes(shapes: Any, batch: int = 2, width: int = 16) -> Any:
    """``shapes`` with the same layers, tables and dim, but batch ``batch`` and hidden widths capped
    at ``width``: the same op list (counts do not depend on sizes) with kernels of negligible cost,
    so that a CPU-tensor step's time is host time."""
    bottom = (shapes.bottom[0], *(min(w, width) for w in shapes.bottom[1:-1]), shapes.bottom[-1])
    top = (shapes.top[0], *(min(w, width) for w in shapes.top[1:-1]), shapes.top[-1])
    return replace(shapes, batch=batch, bottom=bottom, top=top)


def step_options(torch_version: str, device: str) -> dict[str, bool]:
    """How the installed torch runs the step, as keyword arguments of the op list's options
    (:class:`~cxlsim.workloads.dlrm_ops.StepOptions`): 2.x's ``zero_grad`` sets gradients to None;
    on CUDA 2.x's SGD is foreach and addmm adds the bias in its epilogue (on CPU neither: SGD runs
    per tensor, addmm copies the bias)."""
    major = int(str(torch_version).split(".")[0])
    cuda = device.startswith("cuda")
    return {"zero_grad_set_to_none": major >= 2, "foreach": major >= 2 and cuda,
            "addmm_bias_epilogue": major >= 2 and cuda}


def part_counts(step: Any, shapes: Any, no_copies: bool = True) -> dict[str, dict[str, float]]:
    """Per part of cxlsim's op list ``step``, how many of each fitted call it makes
    (:func:`model_part_costs` with one call at 1 µs and the others at 0)."""
    out: dict[str, dict[str, float]] = {}
    for call in FITTED_CALLS:
        unit = {c: (1.0 if c == call else 0.0) for c in SOFTWARE_CALLS}
        for part, n in model_part_costs(step, shapes, unit, no_copies).items():
            out.setdefault(part, {})
            if round(n, 9):
                out[part][call] = round(n, 9)
    return out


def in_step_factor(counts: Mapping[str, Mapping[str, float]], costs_us: Mapping[str, float],
                   measured_us: Mapping[str, float]) -> float:
    """The factor that makes the op list's host time of the measured parts equal the step's:
    Σ measured / Σ (counts · costs), over the parts in both ``counts`` and ``measured_us``."""
    model = sum(sum(n * costs_us[c] for c, n in counts[p].items()) for p in measured_us if p in counts)
    total = sum(v for p, v in measured_us.items() if p in counts)
    if model <= 0:
        raise ValueError("the op list prices the measured parts at 0")
    return total / model


#: Weight of a microbenchmark row beside a step part's (1) in the fit: the step decides what it
#: can separate, the microbenchmarks the rest.
MICRO_WEIGHT = 0.25
#: Parts left out of the fit on host tensors, and why (they stay in the check).
CPU_EXCLUDED_PARTS = {"loss": "on CPU tensors binary_cross_entropy is a composite of about 20 nested operators "
                              "(one fused kernel on CUDA, as the op list has it)"}


def fit_step(rows: Sequence[Row], parts: Mapping[str, Mapping[str, float]],
             counts: Mapping[str, Mapping[str, Mapping[str, float]]], exclude: Iterable[str] = (),
             micro_weight: float = MICRO_WEIGHT) -> tuple[Fit, Fit, float]:
    """The fit: warm costs from the microbenchmark ``rows`` alone; the in-step factor ``k`` that
    scales them to the steps' ``parts`` (workload -> part -> µs; ``counts``: workload -> part ->
    call -> n); then one fit of the step parts (weight 1, ``exclude``'d parts left out) with the
    microbenchmarks scaled by ``k`` (weight ``micro_weight``). Returns (warm fit, final fit, k)."""
    warm = fit_costs(rows)
    skip = set(exclude)
    measured = {f"{w} {p}": us for w, ps in parts.items() for p, us in ps.items() if p not in skip and p in counts[w]}
    flat = {f"{w} {p}": counts[w][p] for w, ps in parts.items() for p in ps if p not in skip and p in counts[w]}
    k = in_step_factor(flat, warm.costs_us, measured)
    joint = [Row(label, flat[label], us) for label, us in measured.items()]
    joint += [Row(r.label, r.counts, r.us * k, micro_weight) for r in rows]
    return warm, fit_costs(joint), k


def measure_host(shapes: Any, device: str = "cpu", repeat: int = 5, rows_per_table: int = 1000,
                 iterations: int = 20, threads: int = 1, seconds: float = 0.1, reference: bool = True,
                 progress: Callable[[str], None] | None = None, base_host: Any = None,
                 fit_shapes: Mapping[str, Any] | None = None,
                 check_shapes: Mapping[str, Any] | None = None,
                 *, op_list: Callable[[StepModel, Mapping[str, bool]], Any]) -> dict[str, Any]:
    """``repeat`` runs of: the microbenchmarks, the modelled step at :func:`host_shapes` of each
    workload of ``fit_shapes`` and ``check_shapes`` (name -> StepShapes; default ``{"workload":
    shapes}`` and none), and :func:`fit_step` over the fit workloads (on host tensors without
    :data:`CPU_EXCLUDED_PARTS`). The fitted costs are the final fit's, with their spread over the
    runs; the check lists every workload's parts beside the op list priced by the median costs
    (the check workloads are out of sample). Then, if ``reference``, the reference loop at
    ``shapes`` and at its host shapes, profiled. ``base_host`` (a cpu model; default
    ``cpu/i5-9600k``) only carries the op list's other calls, which the check zeroes on host
    tensors. ``op_list(step_model, options)`` is the workload's op list over a step model run with
    the installed torch's options (:func:`step_options`; the CLI hands in
    :class:`~cxlsim.workloads.dlrm_ops.DlrmStep`). All times µs on this host."""
    from cxlsim.devices.registry import build_device

    torch = _import_torch()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TorchMissing("--device cuda: torch sees no CUDA device")
    torch.set_num_threads(threads)
    say = progress or (lambda _: None)
    cuda = device.startswith("cuda")
    options = step_options(torch.__version__, device)
    step = op_list(StepModel(build_device("gpu/rtx3090"), base_host or build_device("cpu/i5-9600k"), None), options)
    fit_shapes = dict(fit_shapes or {"workload": shapes})
    check_shapes = {k: v for k, v in (check_shapes or {}).items() if k not in fit_shapes}
    hs = {w: host_shapes(s) for w, s in {**fit_shapes, **check_shapes}.items()}
    counts = {w: part_counts(step, s, no_copies=not cuda) for w, s in hs.items()}
    exclude = () if cuda else tuple(CPU_EXCLUDED_PARTS)
    micros = microbenchmarks(torch, device)
    runs = []
    for r in range(repeat):
        rows = [Row(m.label, m.counts, time_micro(torch, m, seconds)) for m in micros]
        parts = {w: measure_step(s, "modelled", device, rows_per_table, iterations)["parts_us"] for w, s in hs.items()}
        warm, fit, k = fit_step(rows, {w: parts[w] for w in fit_shapes}, counts, exclude)
        runs.append({"rows": [{"label": lb, "measured_us": mu, "fitted_us": fu} for lb, mu, fu in warm.rows],
                     "warm_costs_us": warm.costs_us, "in_step_factor": k, "costs_us": fit.costs_us,
                     "parts_us": parts, "worst_row_error": warm.worst_relative_error})
        say(f"run {r + 1}/{repeat}: in-step factor {k:.2f}; "
            f"costs ({', '.join(f'{c} {v:.2f}' for c, v in fit.costs_us.items())}) us")
    costs_us = {c: spread(run["costs_us"][c] for run in runs) for c in FITTED_CALLS}
    median_costs = {c: s["median"] for c, s in costs_us.items()}
    check: dict[str, dict[str, Any]] = {}
    for w in hs:
        check[w] = {}
        for p in (p for p in STEP_PARTS if p in runs[0]["parts_us"][w]):
            measured = spread(run["parts_us"][w][p] for run in runs)
            model = sum(n * median_costs[c] for c, n in counts[w].get(p, {}).items())
            check[w][p] = {"phase": STEP_PARTS[p], "measured_us": measured, "model_us": model,
                           "fitted": w in fit_shapes and p not in exclude}
    result: dict[str, Any] = {
        "cpu": cpu_description(), "torch": torch.__version__, "device": device, "threads": threads, "repeat": repeat,
        "options": dict(options),
        "costs_us": costs_us,
        "warm_costs_us": {c: spread(run["warm_costs_us"][c] for run in runs) for c in FITTED_CALLS},
        "in_step_factor": spread(run["in_step_factor"] for run in runs),
        "worst_row_error": spread(run["worst_row_error"] for run in runs),
        "fit_workloads": list(fit_shapes), "check_workloads": list(check_shapes),
        "excluded_parts": {p: CPU_EXCLUDED_PARTS[p] for p in exclude},
        "check": {"shapes": {w: {"batch": s.batch, "bottom": list(s.bottom), "top": list(s.top), "tables": s.tables,
                                 "dim": s.dim} for w, s in hs.items()},
                  "iterations": iterations, "parts": check, "counts": counts},
        "runs": runs,
    }
    if reference:
        say(f"reference step at batch {shapes.batch}, profiled")
        result["reference"] = measure_step(shapes, "reference", device, rows_per_table, max(3, iterations // 4),
                                           profile=True)
        result["reference_host_shape"] = measure_step(host_shapes(shapes), "reference", device, rows_per_table,
                                                      iterations, profile=True)
    return result
