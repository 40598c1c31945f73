"""GPU (family ``gpu``): MLP layers, DLRM dot interaction and the optimizer step, from timing tables.

Timing contract (all times in ns, sizes in elements unless a name says bytes, fp32 everywhere):

* :meth:`GpuModel.layer_time_ns` ``(n_in, n_out, batch, direction)`` -- one fully-connected layer,
  ``direction`` ``"forward"`` or ``"backward"``. Read from the preset's MLP timing table
  (``devices/gpu/<mlp_table_name>_mlp_measured.csv`` if present, else ``..._mlp.csv``), interpolated
  log-log between batch grid points; shapes or batches outside the table use the generator formula
  (:meth:`GpuModel.layer_formula_ns`), never zero.
* :meth:`GpuModel.mlp_time_ns`, :meth:`GpuModel.interaction_time_ns`,
  :meth:`GpuModel.optimizer_step_ns` -- sums of kernels, each kernel = roofline time with the GEMM
  efficiency model + one launch overhead.
* ``*_roofline_ns`` twins -- the analytic bound: per kernel max(FLOPs / peak, compulsory bytes /
  bandwidth), no efficiency loss, no launch. Every detailed time is >= its twin.
* :meth:`GpuModel.energy_J` -- active/idle power x busy/idle time.

The formula (documented in ``docs/devices-compute.md``): a GEMM ``C[M,N] = A[M,K] B[K,N]`` runs as
thread-block tiles ``BM x BN`` chosen from :data:`TILE_MENU` (CUTLASS SIMT SGEMM shapes), optionally
split along K; tiles execute in waves of ``sm_count`` (wave quantisation: a small M under-fills the
82 SMs); one tile costs ``2*BM*BN*Kpad / (SM peak * issue efficiency * gemm_peak_fraction)`` plus a
fixed ``gemm_tile_overhead_ns``. The issue efficiency of a thread micro-tile ``TM x TN`` is
``TM*TN / (TM*TN + (TM+TN)/4)``: per k-step a thread issues TM*TN FFMAs and (TM+TN)/4 LDS.128
shared-memory loads on the same issue slots. The menu entry and split minimising the time win (as a
library heuristic would). Nothing is fitted to the paper's batch times.

Simpy: :class:`GpuLane` is one execution lane (kernels of one stream serialise).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import BandwidthServer
from cxlsim.devices.gpu_table import MlpTable, find_table, params_signature
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.engine.component import Simulation
from cxlsim.units import US, watts_over

#: Bytes per fp32 element.
FP32_B = 4
#: Shared-memory loads are 128-bit (4 fp32) vectors (LDS.128), as CUTLASS SIMT kernels issue them.
LDS_VECTOR_ELEMENTS = 4
#: Split-K factors a GEMM may use (each split computes a K slice; partials are reduced via memory).
SPLIT_K_CHOICES = (1, 2, 4, 8, 16, 32, 64)
#: K is consumed in steps of this many elements (CUTLASS SIMT SGEMM threadblock K = 8).
TILE_K = 8

DIRECTIONS = ("forward", "backward")


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
        Param("sm_count", int, "streaming multiprocessors (thread-block tiles run in waves of this many)", minimum=1),
        Param("mem_bw_GBps", float, "device memory pin bandwidth", minimum=0, exclusive_minimum=True),
        Param("mem_bw_efficiency_fraction", float, "fraction of pin bandwidth a streaming kernel sustains", default=0.85, minimum=0, maximum=1, exclusive_minimum=True),
        Param("gemm_peak_fraction", float, "fraction of the issue-model FP32 peak a large SGEMM sustains (clock, register banks, stalls)", default=0.8, minimum=0, maximum=1, exclusive_minimum=True),
        Param("gemm_tile_overhead_ns", float, "fixed cost per thread-block tile (prologue load latency, epilogue store)", default=500.0, minimum=0),
        Param("kernel_launch_us", float, "launch overhead added to every kernel", minimum=0),
        Param("active_power_W", float, "board power while a kernel runs", minimum=0),
        Param("idle_power_W", float, "board power while idle", minimum=0),
        Param("mlp_table_name", str, "stem of the MLP timing tables devices/gpu/<name>_mlp[_measured].csv ('' = formula only)", default=""),
    ),
    checks=(lambda v: ("idle_power_W", "must be <= active_power_W") if v["idle_power_W"] > v["active_power_W"] else None,),
)


@dataclass(frozen=True)
class KernelTime:
    """One kernel: detailed time (ns, without launch), roofline bound (ns), FLOPs and bytes."""

    name: str
    time_ns: float
    roofline_ns: float
    flops: float
    bytes: float


class GpuModel:
    """Pure timing model of one GPU preset (no simpy). See the module docstring for the contract.

    ``table_path``/``measured_path`` override the catalog search for the MLP tables (a measured table
    takes precedence; a generated table is used only if it was generated with these parameters).
    """

    def __init__(self, params: ParamSet, table_path: str | Path | None = None, measured_path: str | Path | None = None) -> None:
        self.p = params
        self.sm_flops_per_ns = params.peak_fp32_TFLOPps * 1e3 / params.sm_count  # 1 TFLOP/s = 1e3 FLOP/ns
        self.peak_flops_per_ns = params.peak_fp32_TFLOPps * 1e3
        self.bw = params.mem_bw_GBps  # B/ns
        self.bw_eff = params.mem_bw_GBps * params.mem_bw_efficiency_fraction
        self.launch_ns = params.kernel_launch_us * US
        self.table: MlpTable | None = None
        self.table_kind = "formula"
        measured = Path(measured_path) if measured_path else find_table(params.mlp_table_name, measured=True)
        generated = Path(table_path) if table_path else find_table(params.mlp_table_name, measured=False)
        if measured is not None:
            self.table, self.table_kind = MlpTable.read(measured), "measured"
        elif generated is not None:
            table = MlpTable.read(generated)
            if table.signature == params_signature(params):
                self.table, self.table_kind = table, "generated"

    # ---- GEMM efficiency model -------------------------------------------------------------
    def gemm(self, m: int, n: int, k: int, count: int = 1, extra_bytes: float = 0.0, name: str = "gemm") -> KernelTime:
        """``count`` independent GEMMs ``[m,k] x [k,n]`` in one kernel (no launch in ``time_ns``).

        Time = min over tile shapes and split-K of max(wave-quantised compute, bytes / sustained
        bandwidth). ``extra_bytes`` adds compulsory traffic (e.g. reading a broadcast bias).
        """
        flops = 2.0 * m * n * k * count
        min_bytes = FP32_B * (m * k + k * n + m * n) * count + extra_bytes
        roofline = max(flops / self.peak_flops_per_ns, min_bytes / self.bw)
        best = math.inf
        for tile in TILE_MENU:
            tiles_mn = math.ceil(m / tile.bm) * math.ceil(n / tile.bn) * count
            rate = self.sm_flops_per_ns * tile.issue_efficiency * self.p.gemm_peak_fraction
            # every split is a candidate whatever K (slices are zero-padded to whole TILE_K steps),
            # so each candidate's time only grows with K and so does their minimum
            for split in SPLIT_K_CHOICES:
                k_slice = math.ceil(math.ceil(k / split) / TILE_K) * TILE_K
                tile_ns = 2.0 * tile.bm * tile.bn * k_slice / rate + self.p.gemm_tile_overhead_ns
                waves = math.ceil(tiles_mn * split / self.p.sm_count)
                reduce_bytes = 2.0 * FP32_B * split * m * n * count if split > 1 else 0.0
                t = max(waves * tile_ns, (min_bytes + reduce_bytes) / self.bw_eff)
                best = min(best, t)
        return KernelTime(name, best, roofline, flops, min_bytes)

    def gemm_efficiency(self, m: int, n: int, k: int) -> float:
        """Achieved fraction of FP32 peak of one GEMM (FLOPs / (peak x detailed time))."""
        kt = self.gemm(m, n, k)
        return kt.flops / (self.peak_flops_per_ns * kt.time_ns)

    def elementwise(self, n_bytes: float, flops: float = 0.0, name: str = "elementwise") -> KernelTime:
        """A streaming kernel moving ``n_bytes`` (memory-bound; ``flops`` only enter the bound)."""
        roofline = max(flops / self.peak_flops_per_ns, n_bytes / self.bw)
        return KernelTime(name, max(n_bytes / self.bw_eff, flops / self.peak_flops_per_ns), roofline, flops, n_bytes)

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
                self.gemm(b, o, i, extra_bytes=FP32_B * (o + b * o), name="fwd_gemm"),
                self.elementwise(2.0 * FP32_B * b * o, flops=b * o, name="fwd_activation"),
            ]
        return [
            self.elementwise(3.0 * FP32_B * b * o, flops=b * o, name="bwd_activation_grad"),
            self.gemm(o, i, b, name="bwd_grad_weight"),
            self.gemm(b, i, o, name="bwd_grad_input"),
            self.elementwise(FP32_B * (b * o + o), flops=b * o, name="bwd_grad_bias"),
        ]

    def layer_formula_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> float:
        """Generator formula for one layer: kernel times + one launch per kernel (ns)."""
        ks = self.layer_kernels(n_in, n_out, batch, direction)
        return sum(k.time_ns for k in ks) + self.launch_ns * len(ks)

    def layer_roofline_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> float:
        """Analytic bound of one layer: per-kernel roofline, no efficiency loss, no launch (ns)."""
        return sum(k.roofline_ns for k in self.layer_kernels(n_in, n_out, batch, direction))

    # ---- public timing API -----------------------------------------------------------------
    def layer_time_ns(self, n_in: int, n_out: int, batch: int, direction: str) -> float:
        """Time of one layer (ns): timing table if it holds the shape, else the generator formula."""
        _check_direction(direction)
        _check_positive(n_in=n_in, n_out=n_out, batch=batch)
        if self.table is not None:
            t = self.table.lookup(n_in, n_out, batch, direction, self.layer_formula_ns)
            if t is not None:
                return t
        return self.layer_formula_ns(n_in, n_out, batch, direction)

    def mlp_time_ns(self, widths: Sequence[int], batch: int, direction: str) -> float:
        """Time of an MLP given its widths ``[in, h1, ..., out]`` (ns): the sum over its layers."""
        return sum(self.layer_time_ns(a, b, batch, direction) for a, b in _layers(widths))

    def mlp_roofline_ns(self, widths: Sequence[int], batch: int, direction: str) -> float:
        """Analytic bound of :meth:`mlp_time_ns` (ns)."""
        return sum(self.layer_roofline_ns(a, b, batch, direction) for a, b in _layers(widths))

    def interaction_kernels(self, batch: int, n_vectors: int, dim: int, direction: str) -> list[KernelTime]:
        """DLRM dot interaction of ``n_vectors`` (tables + bottom-MLP output) of ``dim`` per sample.

        forward: batched GEMM Z = T T^T ([n,d] x [d,n] per sample), gather of the n(n-1)/2 strict
        lower triangle, concatenation with the dense vector. backward: scatter of the gradient into
        [n,n], batched GEMM dT = (dZ + dZ^T) T (symmetrised in the same pass), split back to vectors.
        """
        _check_direction(direction)
        _check_positive(batch=batch, n_vectors=n_vectors, dim=dim)
        n, d, b = n_vectors, dim, batch
        pairs = n * (n - 1) // 2
        out_bytes = FP32_B * b * (pairs + d)
        if direction == "forward":
            return [
                self.gemm(n, n, d, count=b, name="int_bmm"),
                self.elementwise(FP32_B * b * n * n + FP32_B * b * pairs, name="int_gather"),
                self.elementwise(2.0 * out_bytes, name="int_concat"),
            ]
        return [
            self.elementwise(FP32_B * b * pairs + FP32_B * b * n * n, name="int_scatter"),
            self.gemm(n, d, n, count=b, extra_bytes=FP32_B * b * n * n, name="int_bmm_grad"),
            self.elementwise(2.0 * FP32_B * b * n * d, name="int_split"),
        ]

    def interaction_time_ns(self, batch: int, n_vectors: int, dim: int, direction: str) -> float:
        """Time of the dot interaction (ns): kernels + one launch each."""
        ks = self.interaction_kernels(batch, n_vectors, dim, direction)
        return sum(k.time_ns for k in ks) + self.launch_ns * len(ks)

    def interaction_roofline_ns(self, batch: int, n_vectors: int, dim: int, direction: str) -> float:
        """Analytic bound of :meth:`interaction_time_ns` (ns)."""
        return sum(k.roofline_ns for k in self.interaction_kernels(batch, n_vectors, dim, direction))

    def optimizer_step_ns(self, n_params: int, n_tensors: int = 1) -> float:
        """Plain SGD over ``n_params`` fp32 parameters in ``n_tensors`` tensors (ns).

        Memory-bound: read parameter and gradient, write parameter (12 B each), one kernel (and
        launch) per tensor, as PyTorch's non-fused SGD does.
        """
        _check_positive(n_params=n_params, n_tensors=n_tensors)
        return 3.0 * FP32_B * n_params / self.bw_eff + self.launch_ns * n_tensors

    def optimizer_roofline_ns(self, n_params: int) -> float:
        """Analytic bound of :meth:`optimizer_step_ns` (ns)."""
        return 3.0 * FP32_B * n_params / self.bw

    def batch_for_forward_time(self, widths: Sequence[int], target_ns: float, powers_of_two: bool = False, max_batch: int = 1 << 22) -> int:
        """Smallest batch (an integer, or a power of two) whose MLP forward time reaches ``target_ns``.

        Forward time is non-decreasing in batch, so this is a bisection. Raises ValueError if even
        ``max_batch`` stays below the target.
        """
        def t(b: int) -> float:
            return self.mlp_time_ns(widths, b, "forward")

        if t(max_batch) < target_ns:
            raise ValueError(f"forward time at batch {max_batch} is below {target_ns} ns")
        if powers_of_two:
            b = 1
            while t(b) < target_ns:
                b *= 2
            return b
        lo, hi = 0, max_batch  # t(lo) < target (lo=0: empty batch) <= t(hi)
        if t(1) >= target_ns:
            return 1
        lo = 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if t(mid) >= target_ns:
                hi = mid
            else:
                lo = mid
        return hi

    # ---- energy ------------------------------------------------------------------------------
    def energy_J(self, busy_ns: float, idle_ns: float) -> float:
        """Board energy (J): active power while busy, idle power while idle."""
        return watts_over(self.p.active_power_W, busy_ns) + watts_over(self.p.idle_power_W, idle_ns)


class GpuLane(BandwidthServer):
    """The GPU as one execution lane: kernels of the training stream serialise (FCFS)."""

    def __init__(self, sim: Simulation, name: str, model: GpuModel, lane: str | None = None) -> None:
        super().__init__(sim, name, servers=1, lane=lane or name)
        self.model = model

    def mlp(self, widths: Sequence[int], batch: int, direction: str, label: str = "", batch_index: int = -1) -> Generator[Any, Any, float]:
        """Process: run an MLP pass on the lane; returns its completion time (ns)."""
        return (yield from self.serve(self.model.mlp_time_ns(widths, batch, direction), label or f"mlp {direction}", batch_index))


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
    """Per-layer and total forward/backward time (ns) of an MLP, with the roofline bound."""
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
                "fwd_ns": model.layer_time_ns(a, c, b, "forward"),
                "bwd_ns": model.layer_time_ns(a, c, b, "backward"),
                "roofline_fwd_ns": model.layer_roofline_ns(a, c, b, "forward"),
                "roofline_bwd_ns": model.layer_roofline_ns(a, c, b, "backward"),
            })
        entry = {
            "fwd_ns": model.mlp_time_ns(widths, b, "forward"),
            "bwd_ns": model.mlp_time_ns(widths, b, "backward"),
            "roofline_fwd_ns": model.mlp_roofline_ns(widths, b, "forward"),
            "roofline_bwd_ns": model.mlp_roofline_ns(widths, b, "backward"),
        }
        if batch:
            out["batch"] = b
            out["total"] = entry
            for lay in layers:
                out[f"layer_{lay['layer']}"] = {k: v for k, v in lay.items() if k != "layer"}
        else:
            out[f"batch_{b}"] = entry
    return out


FAMILY = register(
    DeviceFamily(
        name="gpu",
        doc="GPU: MLP layers from timing tables (roofline + GEMM wave-quantisation model), interaction, optimizer",
        schema=SCHEMA,
        build=GpuModel,
        microbench=microbench,
    )
)
