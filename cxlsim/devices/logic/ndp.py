"""CXL-MEM near-data computing logic (family ``ndp``), as built on the FPGA of the paper's prototype
(docs/design.md#hardware, #host-cpu-and-near-data-logic). The checkpointing logic beside it is
family ``ckpt_logic`` (:mod:`cxlsim.devices.logic.ckpt_logic`).

Contract (times ns, sizes in fp32 elements unless named ``*_B``; the API of
:mod:`cxlsim.devices.base`):

* :meth:`NdpModel.pool_ns` ``(n_vectors, dim)`` -- sum-pool adds in the adder array;
* :meth:`NdpModel.update_ns` ``(n_rows, dim, n_grads=None)`` -- SGD: accumulate duplicate-row
  gradients, multiply by the learning rate, add to the row;
* :meth:`NdpModel.correction_ns` ``(n_shared, dim)`` -- relaxed-lookup correction adds
  (docs/design.md#relaxed-embedding-lookup);
* :meth:`NdpModel.stream_ns` ``(n_lines, medium_latency_ns, medium_bw_GBps)`` -- the memory side
  of streaming 64 B lines from the memory controllers: max(outstanding-request limit, bandwidth);
* :meth:`NdpModel.lookup_ns` ``(n_vectors, dim, medium_latency_ns, medium_bw_GBps)`` -- compute and
  streaming overlapped (pipelined): the maximum of the two;
* scratchpad: :meth:`NdpModel.scratchpad_B`, :meth:`NdpModel.scratchpad_fits`,
  :meth:`NdpModel.spill_B`.

Compute: ``ops`` element operations on ``lanes`` fp32 units at ``clock_MHz`` take
``ceil(ops / lanes) + pipeline_latency_cycles`` cycles. Bounds (ops ``"pool"``, ``"update"``,
``"correction"``, ``"stream"``, ``"lookup"``): pipeline fill + ``ops / lanes`` cycles (the update:
its two fills + the busier of adders and multipliers), and for streaming max(one medium latency,
Little's law without request rounding, bytes / bandwidth); ``bound_factor`` from the parameters.
Energy: ``add_pJ_per_op`` / ``mul_pJ_per_op`` per element operation and ``scratchpad_pJ_per_B``
per scratchpad byte (``pool_cost``, ``update_cost``, ``correction_cost``, and per batch
:meth:`NdpModel.ops_energy_J`); ``static_energy_J(wall_ns, count=1)`` (``static_W``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cxlsim.config.bounds import MAX_OUTSTANDING_REQUESTS
from cxlsim.config.params import Param, ParamSet, Schema, check_product_le
from cxlsim.devices.base import Cost, PoweredModel, Usage, powered_energy
from cxlsim.devices.base import check_non_negative as _check
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import FP32_B, PJ, KiB

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
    checks=(check_product_le(("memory_controllers_count", "outstanding_per_mc_count"), MAX_OUTSTANDING_REQUESTS,
                             "accesses one requester keeps in flight"),),
)


class NdpModel(PoweredModel):
    """Pure model of the near-data computing logic (see the module docstring)."""

    BOUNDED_OPS = ("pool", "update", "correction", "stream", "lookup")
    STATIC_POWER_PARAM = "static_W"

    def __init__(self, params: ParamSet) -> None:
        self.params = params
        self.cycle_ns = 1e3 / params.clock_MHz

    def _ops_ns(self, ops: float, lanes: int, extra_latency_cycles: int = 0) -> float:
        if ops <= 0:
            return 0.0
        return (math.ceil(ops / lanes) + self.params.pipeline_latency_cycles + extra_latency_cycles) * self.cycle_ns

    def _bound_ops(self, ops: float, lanes: int) -> float:
        if ops <= 0:
            return 0.0
        return (self.params.pipeline_latency_cycles + ops / lanes) * self.cycle_ns

    def _bound_factor(self, op: str) -> float:
        """pool, correction: ``1 + 1 / max(fill, 1 / adder_lanes)`` (one rounded-up cycle over
        fill + ops / lanes); update: ``2 + 2 / max(fill, 1 / max lanes)`` (two rounded pipelines,
        and the multiply-add runs on the narrower array); stream: 2 (request rounding); lookup: the
        larger of pool's and stream's."""
        p = self.params
        fill = p.pipeline_latency_cycles
        pool = 1 + 1 / max(fill, 1 / p.adder_lanes)
        if op in ("pool", "correction"):
            return pool
        if op == "update":
            return 2 + 2 / max(fill, 1 / max(p.adder_lanes, p.multiplier_lanes))
        if op == "stream":
            return 2.0
        return max(pool, 2.0)

    # ---- compute -----------------------------------------------------------------------------
    def pool_ns(self, n_vectors: int, dim: int) -> float:
        """Sum-pool ``n_vectors`` rows of ``dim`` fp32 (one add per element per vector) (ns)."""
        _check(n_vectors=n_vectors, dim=dim)
        return self._ops_ns(n_vectors * dim, self.params.adder_lanes)

    def _bound_pool(self, n_vectors: int, dim: int) -> float:
        return self._bound_ops(n_vectors * dim, self.params.adder_lanes)

    def _grads(self, n_rows: int, n_grads: int | None) -> int:
        grads = n_rows if n_grads is None else n_grads
        if grads < n_rows:
            raise ValueError(f"n_grads ({grads}) must be >= n_rows ({n_rows})")
        return grads

    def update_ns(self, n_rows: int, dim: int, n_grads: int | None = None) -> float:
        """SGD on ``n_rows`` rows (ns): accumulate ``n_grads - n_rows`` duplicate gradients, then
        multiply by the learning rate and add (multiplier and adder pipelined back to back)."""
        _check(n_rows=n_rows, dim=dim)
        grads = self._grads(n_rows, n_grads)
        acc = self._ops_ns((grads - n_rows) * dim, self.params.adder_lanes)
        elems = n_rows * dim
        if elems == 0:
            return acc
        lanes = min(self.params.adder_lanes, self.params.multiplier_lanes)
        return acc + self._ops_ns(elems, lanes, extra_latency_cycles=self.params.pipeline_latency_cycles)

    def _bound_update(self, n_rows: int, dim: int, n_grads: int | None = None) -> float:
        """Fills of the pipelines used + the busier of the adders (accumulation and update adds)
        and the multipliers, ns."""
        p = self.params
        grads = self._grads(n_rows, n_grads)
        acc, elems = (grads - n_rows) * dim, n_rows * dim
        fills = (p.pipeline_latency_cycles if acc > 0 else 0) + (2 * p.pipeline_latency_cycles if elems > 0 else 0)
        work = max((acc + elems) / p.adder_lanes, elems / p.multiplier_lanes)
        return (fills + work) * self.cycle_ns if acc + elems > 0 else 0.0

    def correction_ns(self, n_shared: int, dim: int) -> float:
        """Relaxed-lookup correction (ns): add one row update per (bag, shared row) occurrence."""
        _check(n_shared=n_shared, dim=dim)
        return self._ops_ns(n_shared * dim, self.params.adder_lanes)

    def _bound_correction(self, n_shared: int, dim: int) -> float:
        return self._bound_ops(n_shared * dim, self.params.adder_lanes)

    # ---- memory streaming ----------------------------------------------------------------------
    @property
    def outstanding_count(self) -> int:
        """Line requests in flight to the memory controllers: controllers × per-controller limit."""
        return self.params.memory_controllers_count * self.params.outstanding_per_mc_count

    def stream_ns(self, n_lines: float, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """Stream ``n_lines`` 64 B lines from the controllers (ns): max(Little's-law limit of the
        outstanding requests over the medium latency, bytes / bandwidth)."""
        if medium_bw_GBps <= 0:
            raise ValueError(f"bandwidth must be > 0, got {medium_bw_GBps!r}")
        if n_lines <= 0:
            return 0.0
        return max(math.ceil(n_lines / self.outstanding_count) * medium_latency_ns, n_lines * LINE_B / medium_bw_GBps)

    def _bound_stream(self, n_lines: float, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """max(one medium latency, Little's law without request rounding, bytes / bandwidth), ns."""
        if n_lines <= 0:
            return 0.0
        return max(medium_latency_ns, n_lines * medium_latency_ns / self.outstanding_count, n_lines * LINE_B / medium_bw_GBps)

    def lines(self, n_vectors: int, dim: int) -> int:
        """64 B lines of ``n_vectors`` rows of ``dim`` fp32 (each row in whole lines)."""
        return n_vectors * math.ceil(dim * FP32_B / LINE_B)

    def lookup_ns(self, n_vectors: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        """Lookup = row streaming and pooling pipelined: max of the two (ns)."""
        return max(self.pool_ns(n_vectors, dim), self.stream_ns(self.lines(n_vectors, dim), medium_latency_ns, medium_bw_GBps))

    def _bound_lookup(self, n_vectors: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float) -> float:
        return max(self._bound_pool(n_vectors, dim),
                   self._bound_stream(self.lines(n_vectors, dim), medium_latency_ns, medium_bw_GBps))

    # ---- scratchpad ----------------------------------------------------------------------------
    def scratchpad_B(self, n_bags: int, dim: int) -> int:
        """Bytes of ``n_bags`` interim pooled fp32 vectors."""
        return n_bags * dim * FP32_B

    def scratchpad_fits(self, n_bags: int, dim: int) -> bool:
        """Whether ``n_bags`` pooled vectors fit the scratchpad at once."""
        return self.scratchpad_B(n_bags, dim) <= self.params.scratchpad_KiB * KiB

    def spill_B(self, n_bags: int, dim: int) -> float:
        """Bytes that do not fit the scratchpad (to be written out and read back by the system)."""
        return max(0.0, self.scratchpad_B(n_bags, dim) - self.params.scratchpad_KiB * KiB)

    # ---- energy --------------------------------------------------------------------------------
    def pool_cost(self, n_vectors: int, dim: int) -> Cost:
        """Time, scratchpad bytes and dynamic energy (J) of a pool."""
        adds = n_vectors * dim
        sp = 2.0 * adds * FP32_B  # read-modify-write of the accumulator
        p = self.params
        return Cost(self.pool_ns(n_vectors, dim), sp, adds * p.add_pJ_per_op * PJ + sp * p.scratchpad_pJ_per_B * PJ)

    def update_cost(self, n_rows: int, dim: int, n_grads: int | None = None) -> Cost:
        """Time and dynamic energy (J) of an SGD update (adds for accumulation + update, multiplies)."""
        grads = self._grads(n_rows, n_grads)
        adds, muls = grads * dim, n_rows * dim
        p = self.params
        return Cost(self.update_ns(n_rows, dim, n_grads), 0.0, (adds * p.add_pJ_per_op + muls * p.mul_pJ_per_op) * PJ)

    def correction_cost(self, n_shared: int, dim: int) -> Cost:
        """Time and dynamic energy (J) of a relaxed-lookup correction."""
        return Cost(self.correction_ns(n_shared, dim), 0.0, n_shared * dim * self.params.add_pJ_per_op * PJ)

    def ops_energy_J(self, dim: int, n_pooled: int, n_rows_updated: int, n_grads: int, n_corrected: int) -> float:
        """Dynamic energy (J) of a batch's operations: sum-pool ``n_pooled`` vectors (an add per
        element and a read-modify-write of the fp32 accumulator in the scratchpad), SGD-update
        ``n_rows_updated`` rows from ``n_grads`` gradients (an add per gradient element, a multiply
        per row element), and add ``n_corrected`` vectors in the relaxed-lookup correction."""
        p = self.params
        adds = (n_pooled + n_grads + n_corrected) * dim
        muls = n_rows_updated * dim
        scratch_B = 2 * n_pooled * dim * FP32_B
        return (adds * p.add_pJ_per_op + muls * p.mul_pJ_per_op + scratch_B * p.scratchpad_pJ_per_B) * PJ

    def dynamic_energy_J(self, use: Usage) -> float:
        """Dynamic energy (J) of the operations in ``use.ops`` (``pooled_vectors``, ``updated_rows``,
        ``gradient_vectors``, ``corrected_vectors``) on vectors of ``use.dim`` elements
        (:meth:`ops_energy_J`)."""
        o = use.ops
        return self.ops_energy_J(use.dim, o.get("pooled_vectors", 0), o.get("updated_rows", 0),
                                 o.get("gradient_vectors", 0), o.get("corrected_vectors", 0))


def microbench(model: NdpModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Pool/update/correction times of an RM1-like batch (20 tables x 80 lookups, dim 32), with bounds."""
    batch = int(options.get("batch") or 512)
    dim, tables, lookups = 32, 20, 80
    n = batch * tables * lookups
    bags = batch * tables
    return {
        "batch": batch,
        "pool": {"vectors": n, "time_ns": model.pool_ns(n, dim), "bound_ns": model.bound_ns("pool", n, dim)},
        "update": {"rows": n, "time_ns": model.update_ns(n, dim), "bound_ns": model.bound_ns("update", n, dim)},
        "correction_per_1000_rows": {"time_ns": model.correction_ns(1000, dim),
                                     "bound_ns": model.bound_ns("correction", 1000, dim)},
        "adds_GBps_equivalent": model.params.adder_lanes * FP32_B * model.params.clock_MHz / 1e3,
        "scratchpad": {"bags": bags, "bytes": model.scratchpad_B(bags, dim), "fits": model.scratchpad_fits(bags, dim)},
        "max_outstanding_lines": model.outstanding_count,
    }


FAMILY = register(
    DeviceFamily(
        name="ndp",
        doc="CXL-MEM near-data computing logic: fp32 adder/multiplier lanes, scratchpad, row streaming",
        schema=NDP_SCHEMA,
        build=NdpModel,
        kind="logic",
        energy=powered_energy,
        microbench=microbench,
    )
)
