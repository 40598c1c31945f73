"""CXL-MEM frontend logic: near-data computing logic (family ``ndp``) and checkpointing logic
(family ``ckpt_logic``), as built on the FPGA of the paper's prototype (SPEC §1.1, §2.7).

Computing logic timing contract (times ns, sizes in fp32 elements unless named bytes):

* :meth:`NdpModel.pool_ns` ``(n_vectors, dim)`` -- sum-pool adds in the adder array;
* :meth:`NdpModel.update_ns` ``(n_rows, dim, n_grads=None)`` -- SGD: accumulate duplicate-row
  gradients, multiply by the learning rate, add to the row;
* :meth:`NdpModel.correction_ns` ``(n_shared, dim)`` -- relaxed-lookup correction adds (SPEC §3.3);
* :meth:`NdpModel.stream_ns` ``(n_lines, medium_latency_ns, medium_bw_GBps)`` -- the memory side
  of streaming lines from the memory controllers: max(outstanding-request limit, bandwidth);
* :meth:`NdpModel.lookup_ns`/:meth:`NdpModel.row_update_ns` -- compute and streaming overlapped
  (pipelined): the maximum of the two;
* scratchpad: :meth:`NdpModel.scratchpad_fits`, :meth:`NdpModel.spill_bytes`.

Compute: ``ops`` element operations on ``lanes`` fp32 units at ``clock_MHz`` take
``ceil(ops / lanes) + pipeline_latency_cycles`` cycles; the bound (``*_bound_ns``) is
``ops / (lanes * clock)``. Energy: ``add_pJ_per_op`` / ``mul_pJ_per_op`` per element operation.

Checkpointing logic (:class:`CkptLogicModel`): a DMA engine copying data region -> log region and
pulling MLP parameters from the GPU; :meth:`CkptLogicModel.copy_issue_ns` is the engine-side issue
limit (descriptors + beats of its datapath); :meth:`CkptLogicModel.copy_concurrency_ns` is the
Little's-law limit of its outstanding requests against a round-trip time; the media time comes from
the memory model and the system takes the maximum. Two counters and two persistent flags
(:class:`LogCounters`); a flag is one persisted 64 B line (:attr:`CkptLogicModel.flag_write_bytes`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import BandwidthServer, Cost
from cxlsim.devices.base import check_non_negative as _check
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.engine.component import Simulation
from cxlsim.units import PJ, KiB, watts_over

FP32_B = 4
LINE_B = 64

NDP_SCHEMA = Schema(
    "ndp",
    (
        Param("clock_MHz", float, "logic clock", minimum=0, exclusive_minimum=True),
        Param("adder_lanes", int, "fp32 adders (element adds per cycle)", minimum=1),
        Param("multiplier_lanes", int, "fp32 multipliers (element multiplies per cycle)", minimum=1),
        Param("pipeline_latency_cycles", int, "fill latency of the add (and multiply-add) pipeline", minimum=0),
        Param("scratchpad_KiB", float, "on-chip scratchpad for interim pooled vectors", minimum=0, exclusive_minimum=True),
        Param("memory_controllers_count", int, "backend memory controllers the logic streams rows from", minimum=1),
        Param("outstanding_per_mc_count", int, "max outstanding line requests per memory controller", minimum=1),
        Param("add_pJ_per_op", float, "dynamic energy of one fp32 add", minimum=0),
        Param("mul_pJ_per_op", float, "dynamic energy of one fp32 multiply", minimum=0),
        Param("scratchpad_pJ_per_B", float, "dynamic energy per scratchpad byte read or written", minimum=0),
        Param("static_W", float, "static power of the computing logic", minimum=0),
        Param("update_table_order", str, "order in which the update visits the tables: 'forward' as the lookup "
              "(table 0 first) or 'reverse' (last table first, as backpropagation runs)", default="reverse",
              choices=("forward", "reverse")),
    ),
)

CKPT_SCHEMA = Schema(
    "ckpt_logic",
    (
        Param("clock_MHz", float, "logic clock", minimum=0, exclusive_minimum=True),
        Param("datapath_B", int, "DMA datapath width (bytes per cycle)", minimum=1),
        Param("burst_B", int, "largest DMA request (burst) size", minimum=1),
        Param("descriptor_cycles_count", int, "cycles to set up one contiguous segment (descriptor)", minimum=0),
        Param("outstanding_count", int, "max outstanding DMA requests", minimum=1),
        Param("channels_count", int, "DMA channels copying concurrently (the relaxed MLP log takes its own "
              "when >= 2, so it can use every GPU window)", default=1, minimum=1),
        Param("flag_line_B", int, "bytes of one persistent flag write (a persisted line)", default=64, minimum=1),
        Param("counter_bits", int, "width of each of the two counters (rows logged, MLP bytes logged)", default=64, minimum=1),
        Param("dma_pJ_per_B", float, "dynamic energy of the DMA logic per byte copied (media and link energy excluded)", minimum=0),
        Param("static_W", float, "static power of the checkpointing logic", minimum=0),
    ),
    checks=(lambda v: ("datapath_B", "must be <= burst_B") if v["datapath_B"] > v["burst_B"] else None,),
)


class NdpModel:
    """Pure timing model of the near-data computing logic (see the module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.p = params
        self.cycle_ns = 1e3 / params.clock_MHz

    def _ops_ns(self, ops: float, lanes: int, extra_latency_cycles: int = 0) -> float:
        if ops <= 0:
            return 0.0
        return (math.ceil(ops / lanes) + self.p.pipeline_latency_cycles + extra_latency_cycles) * self.cycle_ns

    def _ops_bound_ns(self, ops: float, lanes: int) -> float:
        return max(ops, 0) / lanes * self.cycle_ns

    # ---- compute -----------------------------------------------------------------------------
    def pool_ns(self, n_vectors: int, dim: int) -> float:
        """Sum-pool ``n_vectors`` rows of ``dim`` fp32 (one add per element per vector) (ns)."""
        _check(n_vectors=n_vectors, dim=dim)
        return self._ops_ns(n_vectors * dim, self.p.adder_lanes)

    def pool_bound_ns(self, n_vectors: int, dim: int) -> float:
        """Analytic bound of :meth:`pool_ns` (ns)."""
        return self._ops_bound_ns(n_vectors * dim, self.p.adder_lanes)

    def update_ns(self, n_rows: int, dim: int, n_grads: int | None = None) -> float:
        """SGD on ``n_rows`` rows (ns): accumulate ``n_grads - n_rows`` duplicate gradients, then
        multiply by the learning rate and add (multiplier and adder pipelined back to back)."""
        _check(n_rows=n_rows, dim=dim)
        grads = n_rows if n_grads is None else n_grads
        if grads < n_rows:
            raise ValueError(f"n_grads ({grads}) must be >= n_rows ({n_rows})")
        acc = self._ops_ns((grads - n_rows) * dim, self.p.adder_lanes)
        elems = n_rows * dim
        if elems == 0:
            return acc
        lanes = min(self.p.adder_lanes, self.p.multiplier_lanes)
        return acc + self._ops_ns(elems, lanes, extra_latency_cycles=self.p.pipeline_latency_cycles)

    def update_bound_ns(self, n_rows: int, dim: int, n_grads: int | None = None) -> float:
        """Analytic bound of :meth:`update_ns` (ns)."""
        grads = n_rows if n_grads is None else n_grads
        elems = n_rows * dim
        return max(self._ops_bound_ns((grads - n_rows) * dim + elems, self.p.adder_lanes), self._ops_bound_ns(elems, self.p.multiplier_lanes))

    def correction_ns(self, n_shared: int, dim: int) -> float:
        """Relaxed-lookup correction (ns): add one row update per (bag, shared row) occurrence."""
        _check(n_shared=n_shared, dim=dim)
        return self._ops_ns(n_shared * dim, self.p.adder_lanes)

    def correction_bound_ns(self, n_shared: int, dim: int) -> float:
        """Analytic bound of :meth:`correction_ns` (ns)."""
        return self._ops_bound_ns(n_shared * dim, self.p.adder_lanes)

    # ---- memory streaming ----------------------------------------------------------------------
    def stream_ns(self, n_lines: float, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """Stream ``n_lines`` 64 B lines from the controllers (ns): max(Little's-law limit of the
        outstanding requests over the medium latency, bytes / bandwidth)."""
        if medium_bw_GBps <= 0:
            raise ValueError(f"bandwidth must be > 0, got {medium_bw_GBps!r}")
        if n_lines <= 0:
            return 0.0
        in_flight = self.p.memory_controllers_count * self.p.outstanding_per_mc_count
        return max(math.ceil(n_lines / in_flight) * medium_latency_ns, n_lines * LINE_B / medium_bw_GBps)

    def stream_bound_ns(self, n_lines: float, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """Analytic bound of :meth:`stream_ns` (ns): no request-granularity rounding."""
        in_flight = self.p.memory_controllers_count * self.p.outstanding_per_mc_count
        return max(n_lines * medium_latency_ns / in_flight, n_lines * LINE_B / medium_bw_GBps)

    def lookup_ns(self, n_vectors: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """Lookup = row streaming and pooling pipelined: max of the two (ns)."""
        lines = n_vectors * math.ceil(dim * FP32_B / LINE_B)
        return max(self.pool_ns(n_vectors, dim), self.stream_ns(lines, medium_latency_ns, medium_bw_GBps))

    def lookup_bound_ns(self, n_vectors: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """Analytic bound of :meth:`lookup_ns` (ns)."""
        return max(self.pool_bound_ns(n_vectors, dim), self.stream_bound_ns(n_vectors * dim * FP32_B / LINE_B, medium_latency_ns, medium_bw_GBps))

    # ---- scratchpad ----------------------------------------------------------------------------
    def scratchpad_bytes(self, n_bags: int, dim: int) -> int:
        """Bytes of ``n_bags`` interim pooled fp32 vectors."""
        return n_bags * dim * FP32_B

    def scratchpad_fits(self, n_bags: int, dim: int) -> bool:
        """Whether ``n_bags`` pooled vectors fit the scratchpad at once."""
        return self.scratchpad_bytes(n_bags, dim) <= self.p.scratchpad_KiB * KiB

    def spill_bytes(self, n_bags: int, dim: int) -> float:
        """Bytes that do not fit the scratchpad (to be written out and read back by the system)."""
        return max(0.0, self.scratchpad_bytes(n_bags, dim) - self.p.scratchpad_KiB * KiB)

    # ---- energy --------------------------------------------------------------------------------
    def pool_cost(self, n_vectors: int, dim: int) -> Cost:
        """Time, scratchpad bytes and dynamic energy (J) of a pool."""
        adds = n_vectors * dim
        sp = 2.0 * adds * FP32_B  # read-modify-write of the accumulator
        return Cost(self.pool_ns(n_vectors, dim), sp, adds * self.p.add_pJ_per_op * PJ + sp * self.p.scratchpad_pJ_per_B * PJ)

    def update_cost(self, n_rows: int, dim: int, n_grads: int | None = None) -> Cost:
        """Time and dynamic energy (J) of an SGD update (adds for accumulation + update, multiplies)."""
        grads = n_rows if n_grads is None else n_grads
        adds, muls = grads * dim, n_rows * dim
        return Cost(self.update_ns(n_rows, dim, n_grads), 0.0, (adds * self.p.add_pJ_per_op + muls * self.p.mul_pJ_per_op) * PJ)

    def correction_cost(self, n_shared: int, dim: int) -> Cost:
        """Time and dynamic energy (J) of a relaxed-lookup correction."""
        return Cost(self.correction_ns(n_shared, dim), 0.0, n_shared * dim * self.p.add_pJ_per_op * PJ)

    def static_energy_J(self, duration_ns: float) -> float:
        """Static energy (J) of the computing logic over ``duration_ns``."""
        return watts_over(self.p.static_W, duration_ns)


@dataclass(frozen=True)
class LogCounters:
    """The checkpointing logic's two counters and the two persistent flags of the current log."""

    rows_logged: int = 0
    mlp_bytes_logged: int = 0
    embedding_flag: bool = False
    mlp_flag: bool = False

    def log_rows(self, n: int) -> LogCounters:
        return replace(self, rows_logged=self.rows_logged + n)

    def log_mlp_bytes(self, n: int) -> LogCounters:
        return replace(self, mlp_bytes_logged=self.mlp_bytes_logged + n)

    def set_flags(self, embedding: bool | None = None, mlp: bool | None = None) -> LogCounters:
        return replace(
            self,
            embedding_flag=self.embedding_flag if embedding is None else embedding,
            mlp_flag=self.mlp_flag if mlp is None else mlp,
        )


class CkptLogicModel:
    """Pure timing model of the checkpointing logic's DMA engine (see the module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.p = params
        self.cycle_ns = 1e3 / params.clock_MHz

    @property
    def flag_write_bytes(self) -> int:
        """Bytes written to persist one flag (one line)."""
        return self.p.flag_line_B

    def requests(self, n_bytes: float, n_segments: int = 1) -> int:
        """DMA requests for ``n_bytes`` in ``n_segments`` equal contiguous pieces (bursts per piece)."""
        if n_bytes <= 0:
            return 0
        n_segments = max(1, int(n_segments))
        return n_segments * math.ceil(n_bytes / n_segments / self.p.burst_B)

    def copy_issue_ns(self, n_bytes: float, n_segments: int = 1) -> float:
        """Engine-side issue time (ns) of copying ``n_bytes`` in ``n_segments`` contiguous segments
        (e.g. one per embedding row): descriptor setup per segment + one datapath beat per
        ``datapath_B``. The read and write sides stream concurrently, so each beat counts once."""
        _check(n_segments=n_segments)
        if n_bytes <= 0:
            return 0.0
        beats = n_segments * math.ceil(n_bytes / max(1, n_segments) / self.p.datapath_B)
        return (beats + n_segments * self.p.descriptor_cycles_count) * self.cycle_ns

    def copy_issue_bound_ns(self, n_bytes: float) -> float:
        """Analytic bound of :meth:`copy_issue_ns` (ns): bytes / (datapath x clock)."""
        return max(n_bytes, 0) / self.p.datapath_B * self.cycle_ns

    def copy_concurrency_ns(self, n_bytes: float, round_trip_ns: float, n_segments: int = 1) -> float:
        """Little's-law limit (ns): ``outstanding_count`` requests in flight, each taking
        ``round_trip_ns`` (read from the source + write to the log, from the memory/link models)."""
        return math.ceil(self.requests(n_bytes, n_segments) / self.p.outstanding_count) * round_trip_ns

    def copy_cost(self, n_bytes: float, n_segments: int = 1) -> Cost:
        """Issue time, bytes moved and dynamic energy (J) of the DMA logic for one copy."""
        return Cost(self.copy_issue_ns(n_bytes, n_segments), float(n_bytes), n_bytes * self.p.dma_pJ_per_B * PJ)

    def static_energy_J(self, duration_ns: float) -> float:
        """Static energy (J) of the checkpointing logic over ``duration_ns``."""
        return watts_over(self.p.static_W, duration_ns)


class LogicLane(BandwidthServer):
    """One logic unit (the adder array, or the DMA engine) as a single FCFS lane."""

    def __init__(self, sim: Simulation, name: str, lane: str | None = None) -> None:
        super().__init__(sim, name, servers=1, lane=lane or name)


def ndp_microbench(model: NdpModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Pool/update/correction times of an RM1-like batch (20 tables x 80 lookups, dim 32)."""
    batch = int(options.get("batch") or 512)
    dim, tables, lookups = 32, 20, 80
    n = batch * tables * lookups
    bags = batch * tables
    return {
        "batch": batch,
        "pool": {"vectors": n, "time_ns": model.pool_ns(n, dim), "bound_ns": model.pool_bound_ns(n, dim)},
        "update": {"rows": n, "time_ns": model.update_ns(n, dim), "bound_ns": model.update_bound_ns(n, dim)},
        "correction_per_1000_rows": {"time_ns": model.correction_ns(1000, dim), "bound_ns": model.correction_bound_ns(1000, dim)},
        "adds_GBps_equivalent": model.p.adder_lanes * FP32_B * model.p.clock_MHz / 1e3,
        "scratchpad": {"bags": bags, "bytes": model.scratchpad_bytes(bags, dim), "fits": model.scratchpad_fits(bags, dim)},
        "max_outstanding_lines": model.p.memory_controllers_count * model.p.outstanding_per_mc_count,
    }


def ckpt_microbench(model: CkptLogicModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """DMA issue time and rate per segment size (64 B ... 4 KiB), and the flag write size."""
    out: dict[str, Any] = {}
    total = 1 << 20
    for size in (64, 128, 256, 1024, 4096):
        segs = total // size
        t = model.copy_issue_ns(total, segs)
        out[f"copy_{size}B_segments"] = {"issue_ns_per_MiB": t, "issue_GBps": total / t}
    out["flag_write_bytes"] = model.flag_write_bytes
    out["outstanding_count"] = model.p.outstanding_count
    return out


NDP_FAMILY = register(
    DeviceFamily(
        name="ndp",
        doc="CXL-MEM near-data computing logic: fp32 adder/multiplier lanes, scratchpad, row streaming",
        schema=NDP_SCHEMA,
        build=NdpModel,
        microbench=ndp_microbench,
    )
)

CKPT_FAMILY = register(
    DeviceFamily(
        name="ckpt_logic",
        doc="CXL-MEM checkpointing logic: DMA engine (issue and outstanding limits), two counters, persistent flags",
        schema=CKPT_SCHEMA,
        build=CkptLogicModel,
        microbench=ckpt_microbench,
    )
)
