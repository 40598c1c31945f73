"""Host CPU (family ``cpu``): embedding lookup and update on the host, framework dispatch overhead.

Contract (times ns, rates GB/s == B/ns, sizes in elements unless named ``*_B``, fp32 rows; the API
of :mod:`cxlsim.devices.base`). The mechanism is the one the simulator runs: the host gathers rows
from a medium as one media stream with :meth:`CpuModel.rows_in_flight` rows in flight: each core
has at most ``line_fill_buffers_count`` L1 misses outstanding, one per cache line
(``cache_line_B``), so cores × line-fill buffers lines (:attr:`CpuModel.outstanding_count`) make
that many rows only when a row is one line; overlapped with its compute:

* :meth:`CpuModel.lookup_compute_ns` ``(n_vectors, dim)``, :meth:`CpuModel.update_compute_ns`
  ``(n_rows, dim, n_grads=None)`` -- the compute terms
  ``(n × dim × cycles_per_element + n × per_vector_overhead_cycles) / (threads × clock_GHz)``
  (an update also accumulates ``n_grads − n_rows`` duplicate gradients at lookup cost);
* :meth:`CpuModel.lookup_ns` ``(rows, dim, medium, modules=1)`` -- gather + sum-pool the rows
  numbered ``rows`` (row ``r`` at byte ``r × dim × 4``) from ``modules`` interleaved modules of
  ``medium`` (a :class:`~cxlsim.devices.memory.media.media.MediaModel`, idle): one read per row, all issued at 0,
  ``rows_in_flight`` in flight; max(the stream's last data, the compute);
* :meth:`CpuModel.update_ns` ``(rows, dim, medium, modules=1)`` -- SGD on the distinct ``rows``:
  read, write, read, write, ... in one stream (as the simulator issues it), until the last write is
  acknowledged, overlapped with :meth:`update_compute_ns`;
* bounds (ops ``"lookup"``, ``"update"``): the three-term analytic model, max(compute, latency,
  bandwidth): latency = ceil(accesses / outstanding) × the shortest access latency of the medium
  (Little's law on the line-fill buffers), bandwidth = the media bytes that must be read /
  (read bandwidth × modules); ``bound_factor`` states the gap (random vs sequential latency, bank
  conflicts, the writes' media work in an update);
* the last-level cache in front of the tables (``llc_capacity_B``, 0: none; ``llc_ways_count``,
  lines of ``cache_line_B``): :attr:`CpuModel.llc_lines` and :meth:`CpuModel.llc_hit_ns`
  ``(lines)`` (lines that hit, as a stream with :attr:`outstanding_count` in flight: max(Little's law
  at ``llc_hit_latency_ns``, the bytes at ``llc_hit_bw_GBps``)); the cache's state and what goes
  through it are the machine's (:mod:`cxlsim.systems.host_llc`);
* host software costs follow from **instruction counts at the host's clock**: a call of kind
  ``k`` (:data:`SOFTWARE_CALLS`) executes ``<k>_instructions`` at ``software_ipc`` instructions
  per cycle, so :meth:`CpuModel.software_ns` ``(k, count=1)`` = ``count × <k>_instructions /
  (software_ipc × clock_GHz)``. The counts are the software's (the i5-9600K preset derives them
  once from µs -- measured or published -- at its 3.7 GHz and a named IPC, so it reproduces those
  µs exactly); another host runs the same counts at its own clock and IPC. Named accessors:
  :meth:`CpuModel.op_dispatch_ns` ``(caller)`` (a framework operator called from Python with
  autograd recording, from Python without it, or from C++: the autograd engine and nested ops),
  :meth:`CpuModel.launch_call_ns`, :meth:`CpuModel.sync_call_ns`, :meth:`CpuModel.memcpy_call_ns`
  (the CUDA-like runtime calls of the software data path), :meth:`CpuModel.mmio_write_ns` ``(n)``
  (issuing ``n`` MMIO register writes), :meth:`CpuModel.python_elements_ns`
  ``(n)`` (``n`` elements of a Python list built and converted to a tensor),
  :meth:`CpuModel.tensor_attribute_ns`, :meth:`CpuModel.module_call_ns` and
  :meth:`CpuModel.autograd_node_ns` ``(n)`` (the framework's Python and engine work that is no
  operator; ``backward_call``, ``optimizer_step``, ``optimizer_tensor`` and ``zero_grad_call`` through
  :meth:`software_ns`). The counts of the framework calls are fitted by ``cxlsim measure host``
  (:mod:`cxlsim.calibrate.host_measure`). The GPU step
  (:mod:`cxlsim.devices.compute.gpu_step`) and the software path (:mod:`cxlsim.devices.fabric.pcie`) take the host
  model and read these; the machine's embedding operators (the host engine's one call per batch)
  cost :meth:`op_dispatch_ns` ``("python")``; the CXL protocol takes the host for its register
  writes;
* energy: ``static_energy_J(wall_ns, count=1)`` (``idle_power_W``) and
  ``active_energy_J(core_busy_ns)`` (``tdp_W − idle_power_W`` over busy time weighted by the
  share of cores busy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from cxlsim.arrays import unique as sorted_unique
from cxlsim.config.bounds import (
    MAX_OUTSTANDING_REQUESTS,
    PLAUSIBLE_CPU_CORES,
    PLAUSIBLE_CPU_THREADS,
)
from cxlsim.config.params import Param, ParamSet, Schema, check_product_le
from cxlsim.devices.base import PoweredModel, powered_energy
from cxlsim.devices.base import check_non_negative as _check
from cxlsim.devices.memory.interface import AccessStream
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import FP32_B, US

#: Host software calls whose cost is an instruction count (``<call>_instructions`` in the preset),
#: with what one call is.
SOFTWARE_CALLS: dict[str, str] = {
    "op_dispatch_python": "instructions of one framework operator called from Python with autograd recording "
                          "(binding, argument parsing, dispatcher, autograd node, output allocation)",
    "op_dispatch_python_no_grad": "instructions of one framework operator called from Python without autograd recording",
    "op_dispatch_cpp": "instructions of one framework operator dispatched from C++ (the autograd engine's backward "
                       "ops, ops nested in another op, a kernel launched inside an op)",
    "kernel_launch": "instructions of one kernel-launch call of the software data path (CUDA-like runtime + driver)",
    "stream_sync": "instructions of one stream synchronisation call (after the wait for the device)",
    "memcpy_call": "instructions of one memcpy call (set-up of one DMA copy: runtime, driver, descriptor)",
    "mmio_write": "instruction-equivalents of one posted MMIO register write issued by the host (the driver's "
                  "instructions and the cycles the core stalls on the uncached store)",
    "python_element": "instructions per element of a Python list built in a comprehension and converted by "
                      "torch.tensor (interpreter loop + per-item conversion)",
    "tensor_attribute": "instructions of one tensor attribute or method call from Python that dispatches no "
                        "framework operator (requires_grad_, p.grad = None, .numpy() of a host tensor)",
    "module_call": "instructions of one nn.Module call from Python beyond the operators its forward dispatches "
                   "(__call__'s hook checks, the forward method's own Python)",
    "autograd_node": "instructions of the autograd engine per backward node it runs, beyond the operators the node "
                     "dispatches (ready queue, the node's call, hooks, its outputs' input buffers)",
    "backward_call": "instructions of one loss.backward() call beyond its root gradient and its nodes "
                     "(torch.autograd.backward's Python, the engine's graph task: set-up, hand-off, finish)",
    "optimizer_step": "instructions of one optimizer.step() call's fixed Python (profiling hook, grad-mode "
                      "decorator, parameter-group set-up), beyond its per-tensor work",
    "optimizer_tensor": "instructions of the optimizer's Python per parameter tensor in step() (gathering the tensor, "
                        "its gradient and state; the update loop), beyond the tensor's update operator",
    "zero_grad_call": "instructions of one optimizer.zero_grad() call's fixed Python (profiling hook, the loop's "
                      "set-up), beyond its per-tensor work",
}
#: The framework-operator callers of :meth:`CpuModel.op_dispatch_ns` and their calls.
DISPATCH_CALLERS = {"python": "op_dispatch_python", "python_no_grad": "op_dispatch_python_no_grad",
                    "cpp": "op_dispatch_cpp"}

SCHEMA = Schema(
    "cpu",
    (
        Param("cores_count", int, "physical cores", minimum=1, plausible=PLAUSIBLE_CPU_CORES),
        Param("threads_count", int, "hardware threads (default worker threads for embedding ops)", minimum=1,
              plausible=PLAUSIBLE_CPU_THREADS),
        Param("clock_GHz", float, "sustained core clock", minimum=0, exclusive_minimum=True),
        Param("cache_line_B", int, "cache line size; rows are fetched in whole lines", default=64, minimum=1),
        Param("line_fill_buffers_count", int, "outstanding L1D misses per core (memory-level parallelism)", minimum=1),
        Param("llc_capacity_B", int, "bytes of the last-level cache in front of the host's table memory (a "
              "set-associative, true-LRU, write-back write-allocate cache of cache_line_B lines); 0: none",
              default=0, minimum=0),
        Param("llc_ways_count", int, "ways of a set of the last-level cache", default=16, minimum=1),
        Param("llc_hit_latency_ns", float, "load-to-use latency of a line that hits in the last-level cache",
              default=0.0, minimum=0),
        Param("llc_hit_bw_GBps", float, "bandwidth of lines served from the last-level cache to the cores, all "
              "cores together", default=1.0, minimum=0, exclusive_minimum=True),
        Param("streaming_store_lines_count", int, "64 B lines one core keeps in flight with non-temporal (streaming) "
              "stores, each until the memory controller accepts it; 0 = as line_fill_buffers_count", default=0,
              minimum=0),
        Param("lookup_cycles_per_element", float, "core cycles per fp32 element gathered and added into a pooled vector", minimum=0),
        Param("update_cycles_per_element", float, "core cycles per fp32 element of an SGD row update (w -= lr*g)", minimum=0),
        Param("per_vector_overhead_cycles", float, "core cycles per row: index load, bounds check, address arithmetic, loop", minimum=0),
        Param("major_fault_us", float, "host CPU time to handle one major page fault of a memory-mapped file: trap, page "
              "allocation, block layer, NVMe submission and completion, page-table update (the device's read excluded)",
              default=0.0, minimum=0),
        Param("software_ipc", float, "instructions per cycle the core sustains on host software (framework, runtime, "
              "driver code)", minimum=0, exclusive_minimum=True),
        *(Param(f"{call}_instructions", float, doc, minimum=0)
          for call, doc in SOFTWARE_CALLS.items()),
        Param("dram_channels_count", int, "host DDR channels", minimum=1,
              descriptive="the host's memory channels bound the modules of the system's DRAM roles "
                          "(cxlsim.systems.host_agreement refuses a role with more)"),
        Param("pcie_rate_GTps", float, "signalling rate of the host's PCIe root port (a link trains at the slower end)",
              default=0.0, minimum=0,
              descriptive="bounds the pcie role's rate_GTps (cxlsim.systems.host_agreement); 0 = not checked"),
        Param("pcie_lanes_count", int, "lanes of the host's PCIe root port for the GPU or card", default=0, minimum=0,
              descriptive="bounds the pcie role's lanes_count (cxlsim.systems.host_agreement); 0 = not checked"),
        Param("tdp_W", float, "package power with all cores busy (TDP)", minimum=0),
        Param("idle_power_W", float, "package power when idle", minimum=0),
        Param("software_memory_GB", float, "host DRAM the OS, framework and input pipeline occupy (energy provisioning)", default=0.0, minimum=0),
        Param("update_table_order", str, "order in which the embedding update visits the tables: 'forward' as the "
              "lookup (table 0 first) or 'reverse' (last table first)", default="forward", choices=("forward", "reverse")),
        Param("host_dram_preset_name", str, "DRAM module preset of the host memory where a system configures no DRAM role (energy provisioning)",
              default="dram/ddr4-2666"),
    ),
    checks=(
        lambda v: ("idle_power_W", "must be <= tdp_W") if v["idle_power_W"] > v["tdp_W"] else None,
        check_product_le(("cores_count", "line_fill_buffers_count"), MAX_OUTSTANDING_REQUESTS, "accesses one requester keeps in flight"),
        lambda v: (("llc_capacity_B", "must be a whole number of sets (a multiple of cache_line_B x llc_ways_count)")
                   if v["llc_capacity_B"] % (v["cache_line_B"] * v["llc_ways_count"]) else None),
    ),
)


#: Stated factors of the two ops, for rows drawn from a table much larger than the batch (so that
#: few rows share a medium unit), the catalog's media presets, 1-8 modules and up to 10^5 rows (tests
#: check them): the bound charges every access the medium's shortest latency and perfect spreading
#: over banks, the stream pays random latencies, bank conflicts and, in an update, the writes' media
#: work and read-modify-write fills. Rows packed into few units chain one unit's writes and reads
#: (read-after-write), which the bound does not follow: an update of such rows can be far slower.
BOUND_FACTORS = {"lookup": 4.0, "update": 16.0}


class CpuModel(PoweredModel):
    """Pure model of a host CPU's embedding operations (see the module docstring). Energy: idle power
    per package, ``tdp_W`` while busy (its busy time is weighted by the share of cores busy: all cores
    busy for 1 ns = 1 ns)."""

    BOUNDED_OPS = ("lookup", "update")
    STATIC_POWER_PARAM = "idle_power_W"
    ACTIVE_POWER_PARAM = "tdp_W"

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    @property
    def outstanding_count(self) -> int:
        """Cache-line misses the host keeps in flight to memory: cores × line-fill buffers."""
        return self.params.cores_count * self.params.line_fill_buffers_count

    def rows_in_flight(self, row_B: int) -> int:
        """Rows of ``row_B`` bytes the host keeps in flight: a line-fill buffer tracks one cache
        line, so a row of several lines takes several (at least one row)."""
        lines = max(1, math.ceil(row_B / self.params.cache_line_B))
        return max(1, self.outstanding_count // lines)

    def stream_writes_in_flight(self, size_B: int) -> int:
        """Writes of ``size_B`` bytes the host keeps in flight with non-temporal stores (its log and
        redo records): each core holds ``streaming_store_lines_count`` lines (at least one write)."""
        p = self.params
        per_core = p.streaming_store_lines_count or p.line_fill_buffers_count
        lines = max(1, math.ceil(size_B / p.cache_line_B))
        return max(1, p.cores_count * per_core // lines)

    @property
    def llc_lines(self) -> int:
        """Lines the last-level cache holds (0: no last-level cache in front of the tables)."""
        return self.params.llc_capacity_B // self.params.cache_line_B

    def llc_hit_ns(self, lines: int) -> float:
        """Time (ns) the cores take to get ``lines`` lines that hit in the last-level cache, as a
        stream with :attr:`outstanding_count` in flight: max(Little's law on the line-fill buffers
        at ``llc_hit_latency_ns``, the bytes at ``llc_hit_bw_GBps``); 0 for none."""
        p = self.params
        latency_ns, bw_GBps = p.llc_hit_latency_ns, p.llc_hit_bw_GBps
        if lines <= 0:
            return 0.0
        return max(math.ceil(lines / self.outstanding_count) * latency_ns, lines * p.cache_line_B / bw_GBps)

    def row_B(self, dim: int) -> int:
        """Bytes of one fp32 row of ``dim`` elements."""
        return dim * FP32_B

    def _threads(self, threads: int | None) -> int:
        t = self.params.threads_count if threads is None else int(threads)
        if t < 1:
            raise ValueError(f"threads must be >= 1, got {threads!r}")
        return min(t, self.params.threads_count)

    # ---- compute ------------------------------------------------------------------------------
    def compute_ns(self, n_vectors: int, dim: int, cycles_per_element: float, threads: int | None = None) -> float:
        """Core-bound time (ns) of ``n_vectors`` rows at ``cycles_per_element`` plus per-row overhead."""
        cycles = n_vectors * (dim * cycles_per_element + self.params.per_vector_overhead_cycles)
        return cycles / (self._threads(threads) * self.params.clock_GHz)

    def lookup_compute_ns(self, n_vectors: int, dim: int, threads: int | None = None) -> float:
        """Compute of a lookup: gather and add ``n_vectors`` rows of ``dim`` fp32 (ns)."""
        return self.compute_ns(n_vectors, dim, self.params.lookup_cycles_per_element, threads)

    def update_compute_ns(self, n_rows: int, dim: int, n_grads: int | None = None, threads: int | None = None) -> float:
        """Compute of an SGD update of ``n_rows`` rows (ns); ``n_grads`` (default ``n_rows``)
        gradient vectors, the duplicates accumulated first at lookup cost."""
        grads = n_rows if n_grads is None else n_grads
        if grads < n_rows:
            raise ValueError(f"n_grads ({grads}) must be >= n_rows ({n_rows})")
        t = self.compute_ns(n_rows, dim, self.params.update_cycles_per_element, threads)
        if grads > n_rows:
            t += self.compute_ns(grads - n_rows, dim, self.params.lookup_cycles_per_element, threads)
        return t

    def storage_reads_in_flight(self) -> int:
        """Reads a memory-mapped table file keeps in flight: a major fault blocks its thread, so one
        per worker thread (synchronous faults)."""
        return self.params.threads_count

    def fault_ns(self, n_faults: int) -> float:
        """Host CPU time of ``n_faults`` major faults spread over the worker threads (ns): each
        thread handles its faults one after another."""
        if n_faults <= 0:
            return 0.0
        return math.ceil(n_faults / self.params.threads_count) * self.params.major_fault_us * US

    # ---- host software: instruction counts at the host's clock ------------------------------------
    def software_ns(self, call: str, count: float = 1) -> float:
        """Time (ns) of ``count`` host software calls of kind ``call`` (:data:`SOFTWARE_CALLS`):
        ``count × <call>_instructions / (software_ipc × clock_GHz)``."""
        if call not in SOFTWARE_CALLS:
            raise ValueError(f"unknown software call {call!r}; known: {', '.join(SOFTWARE_CALLS)}")
        _check(count=count)
        p = self.params
        return count * p[f"{call}_instructions"] / (p.software_ipc * p.clock_GHz)

    def op_dispatch_ns(self, caller: str) -> float:
        """Host time (ns) of one framework operator: ``caller`` ``"python"`` (called from Python,
        autograd recording), ``"python_no_grad"`` or ``"cpp"`` (the autograd engine, nested ops)."""
        if caller not in DISPATCH_CALLERS:
            raise ValueError(f"caller must be one of {', '.join(DISPATCH_CALLERS)}, got {caller!r}")
        return self.software_ns(DISPATCH_CALLERS[caller])

    def launch_call_ns(self) -> float:
        """Host time (ns) of one kernel-launch call of the software data path."""
        return self.software_ns("kernel_launch")

    def sync_call_ns(self) -> float:
        """Host time (ns) of one stream synchronisation call (beyond waiting for the device)."""
        return self.software_ns("stream_sync")

    def memcpy_call_ns(self) -> float:
        """Host time (ns) of one memcpy call (setting up one DMA copy; the transfer is the link's)."""
        return self.software_ns("memcpy_call")

    def mmio_write_ns(self, n_writes: int = 1) -> float:
        """Host time (ns) to issue ``n_writes`` posted MMIO register writes."""
        return self.software_ns("mmio_write", n_writes)

    def python_elements_ns(self, n_elements: int) -> float:
        """Host time (ns) to build a Python list of ``n_elements`` and convert it to a tensor."""
        return self.software_ns("python_element", n_elements)

    def tensor_attribute_ns(self, n: int = 1) -> float:
        """Host time (ns) of ``n`` tensor attribute or method calls that dispatch no operator."""
        return self.software_ns("tensor_attribute", n)

    def module_call_ns(self, n: int = 1) -> float:
        """Host time (ns) of ``n`` nn.Module calls beyond their forwards' operators."""
        return self.software_ns("module_call", n)

    def autograd_node_ns(self, n: int = 1) -> float:
        """Host time (ns) of the autograd engine's work for ``n`` backward nodes beyond their operators."""
        return self.software_ns("autograd_node", n)

    # ---- the mechanism the simulator runs, and its bound -------------------------------------------
    def _rows(self, rows: Any, dim: int) -> np.ndarray:
        r = np.asarray(rows, dtype=np.int64).ravel()
        _check(dim=dim)
        if r.size and r.min() < 0:
            raise ValueError("row numbers must be >= 0")
        return r

    def lookup_ns(self, rows: Any, dim: int, medium: Any, modules: int = 1) -> float:
        """Gather + sum-pool of the rows ``rows`` from an idle ``medium`` (ns): see the module
        docstring; 0 for no rows."""
        r = self._rows(rows, dim)
        if r.size == 0:
            return 0.0
        row_B = self.row_B(dim)
        res = medium.serve(AccessStream.of(0.0, r * row_B, row_B, False), medium.new_state(modules),
                           self.rows_in_flight(row_B), modules, per_access=False)
        return max(res.done_ns, self.lookup_compute_ns(r.size, dim))

    def update_ns(self, rows: Any, dim: int, medium: Any, modules: int = 1) -> float:
        """SGD update of the distinct rows ``rows`` on an idle ``medium`` (ns): read, write, ... one
        stream; 0 for no rows."""
        r = self._rows(rows, dim)
        if r.size == 0:
            return 0.0
        res = medium.serve(self._update_stream(r, dim), medium.new_state(modules),
                           self.rows_in_flight(self.row_B(dim)), modules, per_access=False)
        return max(res.done_ns, self.update_compute_ns(r.size, dim))

    def _update_stream(self, rows: np.ndarray, dim: int) -> AccessStream:
        """Read, write, read, write, ... of each row, all issued at 0."""
        row_B = self.row_B(dim)
        return AccessStream.of(0.0, np.repeat(rows * row_B, 2), row_B, np.tile(np.array([False, True]), rows.size))

    def _bound_lookup(self, rows: Any, dim: int, medium: Any, modules: int = 1) -> float:
        """max(compute, ceil(n / outstanding) × sequential read latency, the medium's occupancy
        bound of the stream (:meth:`~cxlsim.devices.memory.media.media.MediaModel.occupancy_ns`)) (ns)."""
        r = self._rows(rows, dim)
        if r.size == 0:
            return 0.0
        p = medium.params
        row_B = self.row_B(dim)
        latency = math.ceil(r.size / self.rows_in_flight(row_B)) * p.read_latency_sequential_ns
        bandwidth = medium.occupancy_ns(AccessStream.of(0.0, r * row_B, row_B, False), modules)
        return max(self.lookup_compute_ns(r.size, dim), latency, bandwidth)

    def _bound_update(self, rows: Any, dim: int, medium: Any, modules: int = 1) -> float:
        """max(compute, ceil(2n / outstanding) × the shortest access latency (sequential read,
        buffered read, write acknowledgement), the medium's occupancy bound of the stream) (ns)."""
        r = self._rows(rows, dim)
        if r.size == 0:
            return 0.0
        p = medium.params
        shortest = min(p.read_latency_sequential_ns, p.write_latency_ns)
        if p.wcb_entries > 0:
            shortest = min(shortest, p.wcb_read_latency_ns)
        latency = math.ceil(2 * r.size / self.rows_in_flight(self.row_B(dim))) * shortest
        bandwidth = medium.occupancy_ns(self._update_stream(r, dim), modules)
        return max(self.update_compute_ns(r.size, dim), latency, bandwidth)

    def _bound_factor(self, op: str) -> float:
        return BOUND_FACTORS[op]

    # ---- energy -----------------------------------------------------------------------------------

# -- microbenchmark --------------------------------------------------------------------------
#: Rows the microbenchmark's table holds (2 GiB of 128 B rows); lookups are uniform over them.
TABLE_ROWS = 1 << 24
DIM = 32
DEFAULT_BATCH = 512


def microbench(model: CpuModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Lookup and update of a batch (``options["batch"]``, default 512) × 20 tables × 80 lookups
    (dim 32, uniform random rows of a 2 GiB table, seeded) by the simulator's mechanism on
    ``options["medium"]`` (a media model, required) × ``options["modules"]`` (default 1), with
    the three-term bound; and the host software calls' µs (:data:`SOFTWARE_CALLS`)."""
    medium = options.get("medium")
    if medium is None:
        raise ValueError("the cpu microbenchmark needs options['medium'], a media model to read rows from")
    modules = int(options.get("modules") or 1)
    n = int(options.get("batch") or DEFAULT_BATCH) * 20 * 80
    rng = np.random.default_rng(int(options.get("seed") or 0))
    rows = rng.integers(0, TABLE_ROWS, n)
    unique = sorted_unique(rows)
    out: dict[str, Any] = {"vectors": n, "dim": DIM, "threads": model.params.threads_count,
                           "outstanding_count": model.outstanding_count, "modules": modules}
    lookup, update = model.lookup_ns(rows, DIM, medium, modules), model.update_ns(unique, DIM, medium, modules)
    out["lookup"] = {
        "time_ns": lookup,
        "bound_ns": model.bound_ns("lookup", rows, DIM, medium, modules),
        "compute_ns": model.lookup_compute_ns(n, DIM),
    }
    out["update"] = {
        "rows": int(unique.size),
        "time_ns": update,
        "bound_ns": model.bound_ns("update", unique, DIM, medium, modules),
        "compute_ns": model.update_compute_ns(int(unique.size), DIM),
    }
    out["dispatch_per_op_ns"] = model.op_dispatch_ns("python")
    out["software_us"] = {call: model.software_ns(call) / US for call in SOFTWARE_CALLS}
    return out


FAMILY = register(
    DeviceFamily(
        name="cpu",
        doc="host CPU: embedding gather/pool and SGD update as media streams with cores × LFB in flight, plus compute",
        schema=SCHEMA,
        build=CpuModel,
        kind="compute",
        energy=powered_energy,
        microbench=microbench,
    )
)
