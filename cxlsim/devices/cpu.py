"""Host CPU (family ``cpu``): embedding lookup and update on the host, framework dispatch overhead.

Timing contract (times ns, rates GB/s == B/ns, sizes in elements unless named bytes, fp32 rows):

* :meth:`CpuModel.embedding_lookup_ns` ``(n_vectors, dim, medium_latency_ns, medium_bw_GBps,
  threads=None)`` -- gather ``n_vectors`` rows of ``dim`` fp32 from a medium and sum-pool them;
* :meth:`CpuModel.embedding_update_ns` ``(n_rows, dim, medium_latency_ns, medium_bw_GBps,
  threads=None, medium_write_bw_GBps=None, n_grads=None)`` -- SGD read-modify-write of ``n_rows``
  rows (``n_grads`` >= ``n_rows`` gradient vectors accumulated first).

Each is the maximum of three bounds (documented in ``docs/devices-compute.md``)::

    compute   = (n*dim*cycles_per_element + n*per_vector_overhead_cycles) / (threads * clock_GHz)
    latency   = n * lines_per_row * medium_latency_ns / (threads * line_fill_buffers_count)
    bandwidth = n * lines_per_row * 64 B / medium_bw_GBps      (+ written lines / write bandwidth)

The latency term is Little's law on the line-fill buffers: a core has at most
``line_fill_buffers_count`` L1 misses in flight, so it moves at most that many lines per medium
latency. :meth:`CpuModel.lookup_bound_ns`/:meth:`CpuModel.update_bound_ns` are the analytic twins
(the bandwidth and latency terms with no compute or overhead, i.e. a lower bound). Framework
dispatch overhead per operator is :meth:`CpuModel.dispatch_ns`. Simpy: :class:`CpuThreads` has
``threads`` servers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import BandwidthServer
from cxlsim.devices.base import check_non_negative as _check
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.engine.component import Simulation
from cxlsim.units import US, watts_over

FP32_B = 4

SCHEMA = Schema(
    "cpu",
    (
        Param("cores_count", int, "physical cores", minimum=1),
        Param("threads_count", int, "hardware threads (default worker threads for embedding ops)", minimum=1),
        Param("clock_GHz", float, "sustained core clock", minimum=0, exclusive_minimum=True),
        Param("cache_line_B", int, "cache line size; rows are fetched in whole lines", default=64, minimum=1),
        Param("line_fill_buffers_count", int, "outstanding L1D misses per core (memory-level parallelism)", minimum=1),
        Param("lookup_cycles_per_element", float, "core cycles per fp32 element gathered and added into a pooled vector", minimum=0),
        Param("update_cycles_per_element", float, "core cycles per fp32 element of an SGD row update (w -= lr*g)", minimum=0),
        Param("per_vector_overhead_cycles", float, "core cycles per row: index load, bounds check, address arithmetic, loop", minimum=0),
        Param("op_dispatch_us", float, "framework cost per operator call on the host (dispatch, allocation)", minimum=0),
        Param("dram_channels_count", int, "host DDR channels (informative; the medium model owns bandwidth)", minimum=1),
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
    ),
)


class CpuModel:
    """Pure timing model of a host CPU's embedding operations (see the module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.p = params

    def lines_per_row(self, dim: int) -> int:
        """Cache lines touched by one fp32 row of ``dim`` elements (rows assumed line-aligned)."""
        return math.ceil(dim * FP32_B / self.p.cache_line_B)

    def _threads(self, threads: int | None) -> int:
        t = self.p.threads_count if threads is None else int(threads)
        if t < 1:
            raise ValueError(f"threads must be >= 1, got {threads!r}")
        return min(t, self.p.threads_count)

    # ---- the three bounds --------------------------------------------------------------------
    def compute_ns(self, n_vectors: int, dim: int, cycles_per_element: float, threads: int | None = None) -> float:
        """Core-bound time (ns) of ``n_vectors`` rows at ``cycles_per_element`` plus per-row overhead."""
        cycles = n_vectors * (dim * cycles_per_element + self.p.per_vector_overhead_cycles)
        return cycles / (self._threads(threads) * self.p.clock_GHz)

    def latency_ns(self, n_lines: float, medium_latency_ns: float, threads: int | None = None) -> float:
        """Memory-level-parallelism bound (ns): ``n_lines`` misses, line-fill buffers per thread."""
        return n_lines * medium_latency_ns / (self._threads(threads) * self.p.line_fill_buffers_count)

    def bandwidth_ns(self, n_bytes: float, bw_GBps: float) -> float:
        """Bandwidth bound (ns) of moving ``n_bytes`` at ``bw_GBps`` (B/ns)."""
        if bw_GBps <= 0:
            raise ValueError(f"bandwidth must be > 0, got {bw_GBps!r}")
        return n_bytes / bw_GBps

    # ---- public API --------------------------------------------------------------------------
    def embedding_lookup_ns(self, n_vectors: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float, threads: int | None = None) -> float:
        """Gather + sum-pool of ``n_vectors`` rows (ns) = max(compute, latency, bandwidth)."""
        _check(n_vectors=n_vectors, dim=dim)
        lines = n_vectors * self.lines_per_row(dim)
        return max(
            self.compute_ns(n_vectors, dim, self.p.lookup_cycles_per_element, threads),
            self.latency_ns(lines, medium_latency_ns, threads),
            self.bandwidth_ns(lines * self.p.cache_line_B, medium_bw_GBps),
        )

    def lookup_bound_ns(self, n_vectors: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float, threads: int | None = None) -> float:
        """Analytic bound of the lookup (ns): compulsory bytes / bandwidth and latency / MLP."""
        n_bytes = n_vectors * dim * FP32_B
        return max(self.bandwidth_ns(n_bytes, medium_bw_GBps), self.latency_ns(n_bytes / self.p.cache_line_B, medium_latency_ns, threads))

    def embedding_update_ns(
        self,
        n_rows: int,
        dim: int,
        medium_latency_ns: float,
        medium_bw_GBps: float,
        threads: int | None = None,
        medium_write_bw_GBps: float | None = None,
        n_grads: int | None = None,
    ) -> float:
        """SGD update of ``n_rows`` distinct rows (ns) = max(compute, latency, bandwidth).

        Compute covers accumulating ``n_grads`` gradient vectors (default ``n_rows``) and the
        read-modify-write; latency covers the row reads (stores retire through the store buffer);
        bandwidth covers reading and writing back every line, writes at ``medium_write_bw_GBps``
        (default: the same channel as reads, so read and write bytes add).
        """
        _check(n_rows=n_rows, dim=dim)
        grads = n_rows if n_grads is None else n_grads
        if grads < n_rows:
            raise ValueError(f"n_grads ({grads}) must be >= n_rows ({n_rows})")
        lines = n_rows * self.lines_per_row(dim)
        n_bytes = lines * self.p.cache_line_B
        compute = self.compute_ns(n_rows, dim, self.p.update_cycles_per_element, threads)
        compute += self.compute_ns(grads - n_rows, dim, self.p.lookup_cycles_per_element, threads) if grads > n_rows else 0.0
        return max(compute, self.latency_ns(lines, medium_latency_ns, threads), self._rmw_bw_ns(n_bytes, medium_bw_GBps, medium_write_bw_GBps))

    def update_bound_ns(
        self, n_rows: int, dim: int, medium_latency_ns: float, medium_bw_GBps: float,
        threads: int | None = None, medium_write_bw_GBps: float | None = None,
    ) -> float:
        """Analytic bound of the update (ns): compulsory read + write bytes and read latency / MLP."""
        n_bytes = n_rows * dim * FP32_B
        return max(self._rmw_bw_ns(n_bytes, medium_bw_GBps, medium_write_bw_GBps), self.latency_ns(n_bytes / self.p.cache_line_B, medium_latency_ns, threads))

    def _rmw_bw_ns(self, n_bytes: float, read_bw: float, write_bw: float | None) -> float:
        if write_bw is None:
            return self.bandwidth_ns(2 * n_bytes, read_bw)
        return max(self.bandwidth_ns(n_bytes, read_bw), self.bandwidth_ns(n_bytes, write_bw))

    def dispatch_ns(self, n_ops: int) -> float:
        """Host framework overhead (ns) of ``n_ops`` operator calls."""
        return n_ops * self.p.op_dispatch_us * US

    def energy_J(self, busy_ns: float, idle_ns: float, busy_threads: int | None = None) -> float:
        """Package energy (J): idle power always, plus (TDP - idle) x busy share of the cores."""
        share = 1.0 if busy_threads is None else min(busy_threads, self.p.cores_count) / self.p.cores_count
        return watts_over(self.p.idle_power_W, busy_ns + idle_ns) + watts_over((self.p.tdp_W - self.p.idle_power_W) * share, busy_ns)


class CpuThreads(BandwidthServer):
    """The host's worker threads: ``threads_count`` servers; each request holds one thread."""

    def __init__(self, sim: Simulation, name: str, model: CpuModel, lane: str | None = None) -> None:
        super().__init__(sim, name, servers=model.p.threads_count, lane=lane or name)
        self.model = model


#: Example media for the microbenchmark (not a configuration): DDR4 random read latency and two
#: DDR4-2666 channels (reference/devices.md), and Optane random read latency with six DIMMs.
EXAMPLE_MEDIA = {"dram": (101.0, 2 * 21.3), "optane": (305.0, 37.6)}


def microbench(model: CpuModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Lookup/update time of a 2048 x 20 x 80-vector batch (dim 32) on example media, with bounds."""
    n = int(options.get("batch") or 2048) * 20 * 80
    dim = 32
    out: dict[str, Any] = {"vectors": n, "dim": dim, "threads": model.p.threads_count}
    for name, (lat, bw) in EXAMPLE_MEDIA.items():
        out[f"lookup_{name}"] = {
            "time_ns": model.embedding_lookup_ns(n, dim, lat, bw),
            "bound_ns": model.lookup_bound_ns(n, dim, lat, bw),
            "compute_ns": model.compute_ns(n, dim, model.p.lookup_cycles_per_element),
            "latency_ns": model.latency_ns(n * model.lines_per_row(dim), lat),
            "bandwidth_ns": model.bandwidth_ns(n * model.lines_per_row(dim) * model.p.cache_line_B, bw),
        }
        out[f"update_{name}"] = {
            "time_ns": model.embedding_update_ns(n, dim, lat, bw),
            "bound_ns": model.update_bound_ns(n, dim, lat, bw),
        }
    out["dispatch_per_op_ns"] = model.dispatch_ns(1)
    return out


FAMILY = register(
    DeviceFamily(
        name="cpu",
        doc="host CPU: embedding gather/pool and SGD update bounded by compute, line-fill buffers and bandwidth",
        schema=SCHEMA,
        build=CpuModel,
        microbench=microbench,
    )
)
