"""GPU (family ``gpu``): MLP layers, a workload's kernels (its interaction's) and the optimizer step, from timing tables.

Timing contract (all times in ns, sizes in elements unless a name ends in ``_B``, fp32 everywhere;
the API of :mod:`cxlsim.devices.base`):

* :meth:`GpuModel.layer_ns` ``(n_in, n_out, batch, direction)`` -- one fully-connected layer,
  ``direction`` ``"forward"`` or ``"backward"``. Read from the preset's MLP timing table
  (``devices/gpu/<mlp_table_name>_mlp_measured.csv`` if present, else ``..._mlp.csv``: found when
  the preset loads, the parameters ``mlp_measured_table_file`` / ``mlp_table_file``), interpolated
  log-log between batch grid points; shapes or batches outside the table use the generator formula
  (:meth:`GpuModel.layer_formula_ns`), never zero.
* :meth:`GpuModel.mlp_ns` ``(widths, batch, direction)`` (the sum of its layers),
  :meth:`GpuModel.ops_ns` ``(kernels)`` (a workload's device-agnostic kernels: GEMM shapes
  ``kind == "gemm"`` with ``m, n, k, count, extra_B``, streams ``kind == "stream"`` with ``size_B,
  flops``, e.g. an interaction's, :mod:`cxlsim.workloads.interactions`; the GPU knows no interaction),
  :meth:`GpuModel.optimizer_ns` ``(n_params, n_tensors=1)`` -- sums of kernel times with the GEMM
  efficiency model. **Kernel times only**: a kernel's launch is not in it.
* Launch latency :attr:`GpuModel.launch_ns` (``kernel_launch_us``): from the end of the host's
  launch call to the earliest start of the kernel on the stream. The training step as the
  framework runs it (:mod:`cxlsim.devices.compute.gpu_step`) adds it once per kernel in its stream
  schedule, where launches overlap kernels that are still running.
* Bounds (ops ``"layer"``, ``"mlp"``, ``"ops"``, ``"optimizer"``): ``bound_ns(op, *args)``
  = per kernel max(FLOPs / peak + the fixed latency it cannot avoid (a GEMM: one tile's
  ``gemm_tile_overhead_ns``), compulsory bytes / pin bandwidth); no efficiency loss. Every detailed
  time is >= its bound and <= ``bound_factor(op)`` × it (:data:`BOUND_FACTORS`, stated for the
  formula; a measured table may say otherwise). :func:`roofline_total_ns` gives the pure roofline
  of kernels (the tables' ``roofline_*`` columns).
* Energy: ``static_energy_J(wall_ns, count=1)`` (``idle_power_W``) and
  ``active_energy_J(busy_ns)`` (``active_power_W − idle_power_W`` while kernels run).

The formula (documented in ``docs/devices-compute.md``): a GEMM ``C[M,N] = A[M,K] B[K,N]`` runs as
thread-block tiles ``BM x BN`` chosen from :data:`TILE_MENU` (CUTLASS SIMT SGEMM shapes), optionally
split along K; tiles execute in waves of ``sm_count`` (wave quantisation: a small M under-fills the
82 SMs); one tile costs ``2*BM*BN*Kpad / (SM peak * issue efficiency * gemm_peak_fraction)`` plus a
fixed ``gemm_tile_overhead_ns``. The issue efficiency of a thread micro-tile ``TM x TN`` is
``TM*TN / (TM*TN + (TM+TN)/4)``: per k-step a thread issues TM*TN FFMAs and (TM+TN)/4 LDS.128
shared-memory loads on the same issue slots. The menu entry and split minimising the time win (as a
library heuristic would). Nothing is fitted to the paper's batch times.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.config.bounds import PLAUSIBLE_GPU_SMS
from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import PoweredModel, powered_energy
from cxlsim.devices.compute.gpu_table import MlpTable, find_table, params_signature
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.search import smallest_reaching
from cxlsim.units import FP32_B, US

#: What an MLP table name may be: a file-name stem (no folder, no ``..``); the tables are found by it
#: in the catalogs' ``devices/gpu/`` only.
TABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*")


def table_name_problem(name: str, exists: bool = True) -> str | None:
    """Why ``mlp_table_name`` ``name`` cannot be used, or None: '' (the formula) is fine; any other
    name must be a file-name stem and, with ``exists``, name a table of a catalog (a name that finds
    nothing is an error, never a silent fallback to the formula: a user would believe measured
    data were used)."""
    if not name:
        return None
    if not TABLE_NAME.fullmatch(name):
        return (f"{name!r} is not a table name: a file-name stem of letters, digits, _ + - (no folder): "
                "tables are found in the catalogs' devices/gpu/")
    if exists and find_table(name, measured=True) is None and find_table(name, measured=False) is None:
        return (f"no table {name}_mlp.csv or {name}_mlp_measured.csv in devices/gpu/ of the catalogs (shipped, "
                "$CXLSIM_PATH); generate one (python -m cxlsim.calibrate.gpu_table) or give '' for the formula")
    return None


def _check_table_name(values: Mapping[str, Any]) -> tuple[str, str] | None:
    problem = table_name_problem(values["mlp_table_name"])
    return ("mlp_table_name", problem) if problem else None


#: Shared-memory loads are 128-bit (4 fp32) vectors (LDS.128), as CUTLASS SIMT kernels issue them.
LDS_VECTOR_ELEMENTS = 4
#: Split-K factors a GEMM may use (each split computes a K slice; partials are reduced via memory).
SPLIT_K_CHOICES = (1, 2, 4, 8, 16, 32, 64)
#: K is consumed in steps of this many elements (CUTLASS SIMT SGEMM threadblock K = 8).
TILE_K = 8

DIRECTIONS = ("forward", "backward")
#: Stated factors between the formula's kernel times and their bounds, for layer widths up to
#: 20000, batches up to 100000 and interactions of up to 128 vectors (tests check them over those
#: ranges): a layer loses to tile padding, wave quantisation, per-tile overhead beyond the one tile
#: the bound charges and sustained vs pin bandwidth (≈6.8 found: the backward of a 1 × 1 layer at a
#: batch of 100000, whose weight- and input-gradient GEMMs pad a 1 × 1 output to a 32 × 32 tile over
#: a K as deep as the batch; ≈2 for the workloads' layers); ``ops`` (stated for the dot
#: interaction's kernels, the worst of the shipped ones): its batched GEMM pads every sample's tiny n × n × dim product to a whole thread-block tile whose fixed
#: overhead repeats every wave of ``sm_count`` samples (≈95 found for 2 vectors of dim 1; ≈1.2 for the
#: workloads' 21-81 vectors of dim 16-32). The optimizer's factor is 1 / mem_bw_efficiency_fraction.
BOUND_FACTORS = {"layer": 7.5, "mlp": 7.5, "ops": 100.0}



@dataclass(frozen=True)
class TileShape:
    """A thread-block tile ``bm x bn`` computed by 256 threads each holding a ``tm x tn`` micro-tile."""

    bm: int
    bn: int
    tm: int
    tn: int

    @property
    def issue_efficiency(self) -> float:
        """Fraction of issue slots doing FFMA: tm*tn FFMA per (tm+tn)/4 LDS.128 per k-step."""
        ffma = self.tm * self.tn
        return ffma / (ffma + (self.tm + self.tn) / LDS_VECTOR_ELEMENTS)


#: Thread-block tiles of CUTLASS's SIMT SGEMM configurations (256 threads; the 128x128 default has
#: 32x64 warp tiles, i.e. 8x8 per thread); smaller tiles trade issue efficiency for fewer padded rows.
TILE_MENU: tuple[TileShape, ...] = (
    TileShape(128, 128, 8, 8),
    TileShape(128, 64, 8, 4),
    TileShape(64, 128, 4, 8),
    TileShape(64, 64, 4, 4),
    TileShape(32, 32, 2, 2),
)

SCHEMA = Schema(
    "gpu",
    (
        Param("peak_fp32_TFLOPps", float, "FP32 peak = CUDA cores x 2 FLOP x boost clock", minimum=0, exclusive_minimum=True),
        Param("sm_count", int, "streaming multiprocessors (thread-block tiles run in waves of this many)", minimum=1,
              plausible=PLAUSIBLE_GPU_SMS),
        Param("mem_bw_GBps", float, "device memory pin bandwidth", minimum=0, exclusive_minimum=True),
        Param("mem_bw_efficiency_fraction", float, "fraction of pin bandwidth a streaming kernel sustains", default=0.85, minimum=0, maximum=1, exclusive_minimum=True),
        Param("gemm_peak_fraction", float, "fraction of the issue-model FP32 peak a large SGEMM sustains (clock, register banks, stalls)", default=0.8, minimum=0, maximum=1, exclusive_minimum=True),
        Param("gemm_tile_overhead_ns", float, "fixed cost per thread-block tile (prologue load latency, epilogue store)", default=500.0, minimum=0),
        Param("kernel_launch_us", float, "launch latency: from the end of the host's launch call to the kernel's "
              "earliest start on the stream", minimum=0),
        Param("active_power_W", float, "board power while a kernel runs", minimum=0),
        Param("idle_power_W", float, "board power while idle", minimum=0),
        Param("mlp_table_name", str, "stem of the MLP timing tables devices/gpu/<name>_mlp[_measured].csv ('' = formula only)", default=""),
        Param("mlp_table_file", str, "the generated MLP timing table: resolved when the preset loads from mlp_table_name "
              "(devices/gpu/<name>_mlp.csv, the last catalog root of $CXLSIM_PATH that has it); '' = none", default=""),
        Param("mlp_measured_table_file", str, "the measured MLP timing table, resolved as mlp_table_file "
              "(<name>_mlp_measured.csv); it takes precedence over the generated one; '' = none", default=""),
    ),
    checks=(lambda v: ("idle_power_W", "must be <= active_power_W") if v["idle_power_W"] > v["active_power_W"] else None,
            _check_table_name),
)


@dataclass(frozen=True)
class KernelTime:
    """One kernel: detailed time (ns, without launch), roofline (ns), FLOPs, compulsory bytes and
    its bound (ns: the roofline with the fixed latency the kernel cannot avoid on its compute leg)."""

    name: str
    time_ns: float
    roofline_ns: float
    flops: float
    size_B: float
    bound_ns: float = 0.0


def roofline_total_ns(kernels: Iterable[KernelTime]) -> float:
    """Roofline of ``kernels`` run one after another, without launches (ns)."""
    return sum(k.roofline_ns for k in kernels)


class GpuModel(PoweredModel):
    """Pure model of one GPU preset. See the module docstring for the contract.

    ``table_path``/``measured_path`` override the tables the preset resolved at load (a measured table
    takes precedence; a generated table is used only if it was generated with these parameters).
    Energy: idle power per board, ``active_power_W`` while kernels run (stream busy time, every GPU's
    summed).
    """

    STATIC_POWER_PARAM = "idle_power_W"
    ACTIVE_POWER_PARAM = "active_power_W"

    BOUNDED_OPS = ("layer", "mlp", "ops", "optimizer")

    def __init__(self, params: ParamSet, table_path: str | Path | None = None, measured_path: str | Path | None = None) -> None:
        self.params = params
        self.sm_flops_per_ns = params.peak_fp32_TFLOPps * 1e3 / params.sm_count  # 1 TFLOP/s = 1e3 FLOP/ns
        self.peak_flops_per_ns = params.peak_fp32_TFLOPps * 1e3
        self.bw = params.mem_bw_GBps  # B/ns
        self.bw_eff = params.mem_bw_GBps * params.mem_bw_efficiency_fraction
        self.table: MlpTable | None = None
        self.table_kind = "formula"
        self.table_name = params.mlp_table_name
        measured = measured_path or params.mlp_measured_table_file or None
        generated = table_path or params.mlp_table_file or None
        if measured is not None:
            self.table, self.table_kind = MlpTable.read(measured), "measured"
        elif generated is not None:
            table = MlpTable.read(generated)
            if table.signature == params_signature(params):
                self.table, self.table_kind = table, "generated"

    @property
    def launch_ns(self) -> float:
        """Launch latency of one kernel (ns): host launch call end -> earliest kernel start."""
        return self.params.kernel_launch_us * US

    # ---- GEMM efficiency model -------------------------------------------------------------
    def gemm(self, m: int, n: int, k: int, count: int = 1, extra_B: float = 0.0, name: str = "gemm") -> KernelTime:
        """``count`` independent GEMMs ``[m,k] x [k,n]`` in one kernel (no launch in ``time_ns``).

        Time = min over tile shapes and split-K of max(wave-quantised compute, bytes / sustained
        bandwidth). ``extra_B`` adds compulsory traffic (e.g. reading a broadcast bias).
        """
        flops = 2.0 * m * n * k * count
        min_B = FP32_B * (m * k + k * n + m * n) * count + extra_B
        roofline = max(flops / self.peak_flops_per_ns, min_B / self.bw)
        best = math.inf
        for tile in TILE_MENU:
            tiles_mn = math.ceil(m / tile.bm) * math.ceil(n / tile.bn) * count
            rate = self.sm_flops_per_ns * tile.issue_efficiency * self.params.gemm_peak_fraction
            # every split is a candidate whatever K (slices are zero-padded to whole TILE_K steps),
            # so each candidate's time only grows with K and so does their minimum
            for split in SPLIT_K_CHOICES:
                k_slice = math.ceil(math.ceil(k / split) / TILE_K) * TILE_K
                tile_ns = 2.0 * tile.bm * tile.bn * k_slice / rate + self.params.gemm_tile_overhead_ns
                waves = math.ceil(tiles_mn * split / self.params.sm_count)
                reduce_B = 2.0 * FP32_B * split * m * n * count if split > 1 else 0.0
                t = max(waves * tile_ns, (min_B + reduce_B) / self.bw_eff)
                best = min(best, t)
        # no candidate beats one tile's fixed overhead on top of the FLOPs at peak (see the module doc)
        bound = max(flops / self.peak_flops_per_ns + self.params.gemm_tile_overhead_ns, min_B / self.bw)
        return KernelTime(name, best, roofline, flops, min_B, bound)

    def gemm_efficiency(self, m: int, n: int, k: int) -> float:
        """Achieved fraction of FP32 peak of one GEMM (FLOPs / (peak x detailed time))."""
        kt = self.gemm(m, n, k)
        return kt.flops / (self.peak_flops_per_ns * kt.time_ns)

    def elementwise(self, size_B: float, flops: float = 0.0, name: str = "elementwise") -> KernelTime:
        """A streaming kernel moving ``size_B`` bytes (memory-bound; ``flops`` only enter the bound)."""
        roofline = max(flops / self.peak_flops_per_ns, size_B / self.bw)
        return KernelTime(name, max(size_B / self.bw_eff, flops / self.peak_flops_per_ns), roofline, flops, size_B, roofline)

    # ---- kernels of one layer --------------------------------------------------------------
    def layer_kernels(self, n_in: int, n_out: int, batch: int, direction: str) -> list[KernelTime]:
        """Kernels of a fully-connected layer with bias and activation (see docs/devices-compute.md).

        forward: GEMM Y = X W^T + b (bias folded in as cuBLAS beta=1) and the activation in place.
        backward: activation gradient, dW = dZ^T X, dX = dZ W, bias gradient (column reduction).
        """
        _check_direction(direction)
        _check_positive(n_in=n_in, n_out=n_out, batch=batch)
        b, i, o = batch, n_in, n_out
        if direction == "forward":
            return [
                self.gemm(b, o, i, extra_B=FP32_B * (o + b * o), name="fwd_gemm"),
                self.elementwise(2.0 * FP32_B * b * o, flops=b * o, name="fwd_activation"),
            ]
        return [
            self.elementwise(3.0 * FP32_B * b * o, flops=b * o, name="bwd_activation_grad"),
            self.gemm(o, i, b, name="bwd_grad_weight"),
            self.gemm(b, i, o, name="bwd_grad_input"),
            self.elementwise(FP32_B * (b * o + o), flops=b * o, name="bwd_grad_bias"),
        ]

    def layer_formula_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> float:
        """Generator formula for one layer: the sum of its kernel times (ns; no launches)."""
        return sum(k.time_ns for k in self.layer_kernels(n_in, n_out, batch, direction))

    def _bound_kernels(self, kernels: list[KernelTime]) -> float:
        return sum(k.bound_ns for k in kernels)

    def _bound_layer(self, n_in: int, n_out: int, batch: int, direction: str) -> float:
        """Bound of one layer: the sum of its kernels' bounds (ns)."""
        return self._bound_kernels(self.layer_kernels(n_in, n_out, batch, direction))

    def _bound_factor(self, op: str) -> float:
        if op == "optimizer":
            return 1 / self.params.mem_bw_efficiency_fraction
        return BOUND_FACTORS[op]

    # ---- public timing API -----------------------------------------------------------------
    def layer_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> float:
        """Time of one layer (ns): timing table if it holds the shape, else the generator formula."""
        _check_direction(direction)
        _check_positive(n_in=n_in, n_out=n_out, batch=batch)
        if self.table is not None:
            t = self.table.lookup(n_in, n_out, batch, direction, self.layer_formula_ns)
            if t is not None:
                return t
        return self.layer_formula_ns(n_in, n_out, batch, direction)

    def mlp_ns(self, widths: Sequence[int], batch: int, direction: str) -> float:
        """Time of an MLP given its widths ``[in, h1, ..., out]`` (ns): the sum over its layers."""
        return sum(self.layer_ns(a, b, batch, direction) for a, b in _layers(widths))

    def _bound_mlp(self, widths: Sequence[int], batch: int, direction: str) -> float:
        """Bound of :meth:`mlp_ns`: the sum of its layers' bounds (ns)."""
        return sum(self._bound_layer(a, b, batch, direction) for a, b in _layers(widths))

    def kernel_times(self, kernels: Iterable[Any]) -> list[KernelTime]:
        """A workload's device-agnostic kernels priced on this GPU (module docstring): a GEMM by
        :meth:`gemm`, a stream by :meth:`elementwise`."""
        out = []
        for k in kernels:
            if k.kind == "gemm":
                out.append(self.gemm(k.m, k.n, k.k, count=k.count, extra_B=k.extra_B, name=k.name))
            elif k.kind == "stream":
                out.append(self.elementwise(k.size_B, flops=k.flops, name=k.name))
            else:
                raise ValueError(f"kernel {k.name!r}: kind must be 'gemm' or 'stream', got {k.kind!r}")
        return out

    def ops_ns(self, kernels: Sequence[Any]) -> float:
        """Time of a workload's kernels (ns): the sum of their times (no launches)."""
        return sum(k.time_ns for k in self.kernel_times(kernels))

    def _bound_ops(self, kernels: Sequence[Any]) -> float:
        """Bound of :meth:`ops_ns`: the sum of its kernels' bounds (ns)."""
        return self._bound_kernels(self.kernel_times(kernels))

    def optimizer_ns(self, n_params: int, n_tensors: int = 1) -> float:
        """Plain SGD over ``n_params`` fp32 parameters in ``n_tensors`` tensors (ns).

        Memory-bound: read parameter and gradient, write parameter (12 B each), one kernel per
        tensor as PyTorch's non-fused SGD does (kernel times only: ``n_tensors`` changes no time
        here; the step model launches one kernel per tensor).
        """
        _check_positive(n_params=n_params, n_tensors=n_tensors)
        return 3.0 * FP32_B * n_params / self.bw_eff

    def _bound_optimizer(self, n_params: int, n_tensors: int = 1) -> float:
        """Bound of :meth:`optimizer_ns`: bytes / pin bandwidth (ns)."""
        _check_positive(n_params=n_params, n_tensors=n_tensors)
        return 3.0 * FP32_B * n_params / self.bw

    def batch_for_forward_time(self, widths: Sequence[int], target_ns: float, powers_of_two: bool = False, max_batch: int = 1 << 22) -> int:
        """Smallest batch (an integer, or a power of two) whose MLP forward time reaches ``target_ns``.

        Forward time is non-decreasing in batch, so this is a bisection. Raises ValueError if even
        ``max_batch`` stays below the target.
        """
        def t(b: int) -> float:
            return self.mlp_ns(widths, b, "forward")

        if t(max_batch) < target_ns:
            raise ValueError(f"forward time at batch {max_batch} is below {target_ns} ns")
        if powers_of_two:
            b = 1
            while t(b) < target_ns:
                b *= 2
            return b
        if t(1) >= target_ns:
            return 1
        return smallest_reaching(t, target_ns, 1, max_batch)

    # ---- energy ------------------------------------------------------------------------------

def _layers(widths: Sequence[int]) -> list[tuple[int, int]]:
    ws = [int(w) for w in widths]
    if len(ws) < 2:
        raise ValueError(f"an MLP needs at least two widths, got {list(widths)!r}")
    return list(zip(ws[:-1], ws[1:], strict=False))


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'forward' or 'backward', got {direction!r}")


def _check_positive(**values: int) -> None:
    for key, v in values.items():
        if v < 1:
            raise ValueError(f"{key} must be >= 1, got {v!r}")


def parse_widths(text: str) -> list[int]:
    """``"13-8192-2048-32"`` -> ``[13, 8192, 2048, 32]``."""
    try:
        ws = [int(x) for x in text.split("-")]
    except ValueError:
        raise ValueError(f"MLP widths look like 13-8192-2048-32, got {text!r}") from None
    if len(ws) < 2 or min(ws) < 1:
        raise ValueError(f"MLP widths look like 13-8192-2048-32, got {text!r}")
    return ws


#: Default microbenchmark: RM1's bottom MLP at a few batch sizes.
DEFAULT_MLP = "13-8192-2048-32"
DEFAULT_BATCHES = (128, 512, 2048, 8192)


def microbench(model: GpuModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Per-layer and total forward/backward time (ns) of an MLP, with the kernels' roofline
    (without launches: the ``roofline_*`` columns of the timing tables)."""
    from cxlsim.errors import InputError

    try:
        widths = parse_widths(options.get("mlp") or DEFAULT_MLP)
    except ValueError as exc:
        raise InputError(f"--mlp: {exc}") from None
    batch = options.get("batch")
    if batch is not None and batch < 1:
        raise InputError(f"--batch: must be >= 1, got {batch}")
    batches = [int(batch)] if batch else list(DEFAULT_BATCHES)
    out: dict[str, Any] = {"mlp": "-".join(map(str, widths)), "table": model.table_kind}
    for b in batches:
        layers = []
        for a, c in _layers(widths):
            layers.append({
                "layer": f"{a}x{c}",
                "fwd_ns": model.layer_ns(a, c, b, "forward"),
                "bwd_ns": model.layer_ns(a, c, b, "backward"),
                "roofline_fwd_ns": roofline_total_ns(model.layer_kernels(a, c, b, "forward")),
                "roofline_bwd_ns": roofline_total_ns(model.layer_kernels(a, c, b, "backward")),
            })
        entry = {
            "fwd_ns": model.mlp_ns(widths, b, "forward"),
            "bwd_ns": model.mlp_ns(widths, b, "backward"),
            "roofline_fwd_ns": sum(lay["roofline_fwd_ns"] for lay in layers),
            "roofline_bwd_ns": sum(lay["roofline_bwd_ns"] for lay in layers),
        }
        if batch:
            out["batch"] = b
            out["total"] = entry
            for lay in layers:
                out[f"layer_{lay['layer']}"] = {k: v for k, v in lay.items() if k != "layer"}
        else:
            out[f"batch_{b}"] = entry
    return out


def resolve_tables(params: ParamSet) -> dict[str, tuple[str, str]]:
    """The family's load-time resolution: the MLP timing tables of ``mlp_table_name`` in the catalog
    roots (``$CXLSIM_PATH`` shadows the shipped catalog), for the table files the preset left empty."""
    values = params.as_dict()
    out = {}
    for key, measured in (("mlp_table_file", False), ("mlp_measured_table_file", True)):
        if values[key]:
            continue
        path = find_table(values["mlp_table_name"], measured=measured)
        if path is not None:
            out[key] = (str(path), f"resolved at load from mlp_table_name {values['mlp_table_name']!r} (catalog roots)")
    return out


FAMILY = register(
    DeviceFamily(
        name="gpu",
        doc="GPU: MLP layers from timing tables (roofline + GEMM wave-quantisation model), interaction, optimizer",
        schema=SCHEMA,
        build=GpuModel,
        kind="compute",
        energy=powered_energy,
        microbench=microbench,
        resolve=resolve_tables,
    )
)
