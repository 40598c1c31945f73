"""How long each dataflow step takes on one system's devices (the :class:`~.dataflow.Machine`).

One machine serves every system: the pipeline settings choose the engine (near-data logic or host
CPU), the mover (CXL.cache flushes or the software path over PCIe) and the persistence agent. Memory
steps are served access by access by the media model of the role that holds the data, with state
carried across steps and batches (write-combining buffers, pending writes: read-after-write is
decided per access from the real index streams). Links are exclusive lanes in the op graph.

Address map of the table memory: the data region holds the tables at ``table_region_offset_B``
(layout order, :class:`~cxlsim.workloads.layout.TableLayout`); the log region starts at the next
GiB boundary after it: two embedding-log slots (batch parity), an MLP-log area and a redo-record
ring, each written sequentially.

Named modelling choices (documented in docs/timing-model.md):
- indices travel as 4 B row numbers; the host also writes ``CONFIG_REGISTERS`` scalar registers per
  batch (learning rate, vector length, MLP address and size);
- pooled vectors and embedding gradients are fp32, ``batch × tables × dim × 4`` bytes each way;
- the update reads each distinct row, adds its accumulated gradient and writes it back: one stream
  read, write, read, write, ... issued at the step's start, at most ``outstanding`` in flight (a
  write is not held until its own row's read returns; the closed loop bounds them together);
- a flag is one line written after every write it covers is acknowledged (fence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cxlsim.devices.media import AccessStream
from cxlsim.engine.executor import Executor, OpOutcome
from cxlsim.errors import InputError
from cxlsim.kernels.vector_cache import cache_access, new_cache
from cxlsim.systems.activity import BatchLedger
from cxlsim.systems.config import DeviceRole
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.streams import BatchStreams, StreamSet
from cxlsim.units import GiB

INDEX_B = 4
CONFIG_REGISTERS = 4
FP32_B = 4
#: The host writes log and redo records sequentially in 4 KiB pieces (a page, as the host writes
#: to an SSD); the checkpointing logic writes them in its DMA engine's ``burst_B``.
HOST_WRITE_B = 4096


class Memory:
    """Modules of one role serving access streams, with persistent media state.

    Accounting is the machine's: :meth:`TrainingMachine._serve` charges what a stream moved to the
    ledger of the batch being served.
    """

    def __init__(self, role: DeviceRole, model) -> None:
        self.role = role.role
        self.model = model  # the role's model from the system's device graph
        self.modules = role.count
        self.interleave_B = role.interleave_B
        self.state = self.model.new_state(self.modules, self.interleave_B)

    def serve(self, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int):
        """Serve accesses issued together at ``t_ns`` (in order, at most ``outstanding`` in flight).

        Every stream of a step is issued at the step's start: the media model needs issue times
        that never decrease across calls, and steps start in simulated-time order. Only totals are
        kept; ``.done_ns`` of the result is when the stream is done for its requester (reads: data
        returned; writes: acknowledged, durable in the ADR domain; media work may go on, SPEC §2.2).
        """
        stream = AccessStream.of(t_ns, addr_B, size_B, is_write)
        return self.model.serve(stream, self.state, outstanding, self.modules, self.interleave_B, per_access=False)


def interleave(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[a0, b0, a1, b1, ...]`` for equal-length arrays."""
    out = np.empty(a.size + b.size, dtype=np.result_type(a, b))
    out[0::2], out[1::2] = a, b
    return out


@dataclass
class MlpLogProgress:
    """Relaxed MLP logging: bytes copied of the log in progress and the batches it spans."""

    done_B: float = 0.0
    first_batch: int = -1
    complete_span: tuple[int, int] | None = None  # (first, last) batch of the latest complete log


class TrainingMachine:
    """Durations of dataflow steps for ``cfg`` on ``streams`` (see module docstring)."""

    def __init__(self, devices: DeviceGraph, streams: StreamSet) -> None:
        cfg = self.cfg = devices.config
        self.devices = devices
        p = self.pipe = cfg.pipeline
        self.streams = streams
        w = self.workload = streams.workload
        self.B = w.params.batch_size
        self.T = w.params.tables
        self.dim = w.params.dim
        self.row_B = w.row_B
        self.bottom = list(w.bottom_widths)
        self.top = list(w.top_widths)
        mp = w.mlp_params
        self.mlp_params = mp["bottom"] + mp["top"]
        self.mlp_B = self.mlp_params * FP32_B
        self.mlp_tensors = 2 * (len(self.bottom) - 1 + len(self.top) - 1)
        self.pooled_B = self.B * self.T * self.dim * FP32_B

        self.gpu = devices["gpu"]
        self.cpu = devices["host_cpu"]
        self.tables = Memory(cfg.role(p.tables_on), devices[p.tables_on])
        self.ckpt_mem = self.tables
        if p.persistence != "none" and p.checkpoint_on != p.tables_on:
            self.ckpt_mem = Memory(cfg.role(p.checkpoint_on), devices[p.checkpoint_on])
        #: every memory role the machine serves, by role
        self.memories: dict[str, Memory] = {m.role: m for m in (self.tables, self.ckpt_mem)}
        self.ndp = devices.get("ndp")
        self.ckpt = devices.get("ckpt_logic")
        self.cxl = devices.get("cxl_protocol")
        # CXL-MEM↔GPU (pooled vectors, gradients, MLP pulls) and host↔CXL-MEM (configuration)
        self.gpu_path, self.host_path = devices.gpu_path, devices.host_path
        self.pcie = devices.get("pcie")
        self.cache = None
        if p.vector_cache_GB > 0:
            self.host_dram = Memory(cfg.role("host_dram"), devices["host_dram"])
            self.memories[self.host_dram.role] = self.host_dram
            self.cache = new_cache(int(p.vector_cache_GB * 1e9 // self.row_B))
        self.engine_lane = "ndp" if p.embedding_engine == "ndp" else "host_cpu"
        self.mover_lane = "cxl.link" if p.data_movement == "cxl_cache" else "host_cpu"
        self.agent_lane = {"ckpt_logic": "ckpt_logic", "ndp": "ndp", "host_cpu": "host_cpu"}[p.checkpoint_agent]
        self.mlp_log_lane = ("ckpt_logic.mlp" if self.ckpt is not None and self.ckpt.params.channels_count >= 2
                             else "ckpt_logic")

        data_end = p.table_region_offset_B + streams.layout.total_B
        self.data_base = p.table_region_offset_B
        log_base = (data_end // GiB + 1) * GiB if self.ckpt_mem is self.tables else 0
        self.emb_log_base = [log_base, log_base + self._slot_B()]
        self.mlp_log_base = log_base + 2 * self._slot_B()
        self.redo_base = self.mlp_log_base + self._round(self.mlp_B)
        self.redo_cursor = 0
        self.mlp_log = MlpLogProgress()
        #: what each batch did (:mod:`cxlsim.systems.activity`), filled as its ops run
        self.ledgers: dict[int, BatchLedger] = {}
        self._ledger = BatchLedger()
        if self.ndp is not None:
            self._check_scratchpad()
        self._declare_unused()

    def _check_scratchpad(self) -> None:
        """The near-data logic holds a batch's pooled vectors in its scratchpad until they are
        flushed to the GPU (the ``ndp`` preset's sizing); spilling them to the memory is not
        modelled, so a batch that does not fit is refused."""
        need_B = self.ndp.scratchpad_B(self.B * self.T, self.dim)
        if not self.ndp.scratchpad_fits(self.B * self.T, self.dim):
            raise InputError(
                f"devices.ndp.params.scratchpad_KiB: {self.ndp.params.scratchpad_KiB:g} KiB cannot hold a batch's "
                f"pooled vectors ({need_B / 1024:.0f} KiB for {self.B} samples × {self.T} tables × {self.dim} fp32); "
                "spilling them is not modelled: enlarge the scratchpad or reduce the batch")

    def _declare_unused(self) -> None:
        """Say which role parameters this pipeline does not use, and why (the reach check and the
        refusal of overrides read these reasons, :mod:`cxlsim.systems.reach`)."""
        p = self.pipe
        cpu = self.cpu.params
        for key in self.cfg.topology:  # interim, until the machine trains on several devices (issue 18)
            self.cfg.topology.skip(key, "this revision trains on one GPU and one memory device")
        if not any(self._on_storage(m) for m in self.memories.values()):
            cpu.skip("major_fault_us", "no table is memory-mapped from storage here")
        if p.embedding_engine == "ndp":
            why = "the embeddings run on the near-data logic (pipeline.embedding_engine: ndp)"
            for key in ("clock_GHz", "line_fill_buffers_count", "lookup_cycles_per_element",
                        "update_cycles_per_element", "per_vector_overhead_cycles", "update_table_order"):
                cpu.skip(key, why)
            cpu.skip("op_dispatch_us", "the host dispatches no embedding operator here (pipeline.embedding_engine: "
                     "ndp), and GPU operators are timed without framework dispatch")
            if p.persistence == "none" or p.checkpoint_agent != "host_cpu":
                cpu.skip("cache_line_B", "the host neither streams rows nor writes the persistent flags here")
        if self.pcie is not None:
            pcie = self.pcie.params
            bounces = p.embedding_engine == "ndp"  # a PCIe card: device → host → device
            if not bounces:
                for key in ("bounce_host_copy", "host_copy_bw_GBps"):
                    pcie.skip(key, "no copy of this system bounces through host memory (the host is the embedding engine)")
            elif not pcie.bounce_host_copy:
                pcie.skip("host_copy_bw_GBps", "bounce_host_copy is false: the bounce uses one staging buffer")
        if self.cxl is not None:
            cxl = self.cxl.params
            cxl.skip("dcoh_snoop_ns", "no step of this dataflow snoops a DCOH (flushes push the lines to their home)")
            cxl.skip("mmio_read_ns", "the host only writes device registers (posted MMIO writes); no step reads one")

    # -- helpers -----------------------------------------------------------------------------
    def _round(self, nbytes: float) -> int:
        return int(math.ceil(nbytes / GiB) * GiB)

    def _slot_B(self) -> int:
        return self._round(self.B * self.T * self.workload.params.lookups_per_table * self.row_B)

    def _batch(self, n: int) -> BatchStreams:
        return self.streams.batch(n)

    def _rows_addr(self, rows: np.ndarray) -> np.ndarray:
        return self.data_base + rows * self.row_B

    def _engine_outstanding(self) -> int:
        """Rows the embedding engine keeps in flight: the near-data logic's per-port limit on each
        of its memory-controller ports, or the host's line-fill buffers (per cache line of a row)."""
        if self.pipe.embedding_engine == "ndp":
            p = self.ndp.params
            return p.outstanding_per_mc_count * p.memory_controllers_count
        return self.cpu.rows_in_flight(self.row_B)

    def _on_storage(self, mem: Memory) -> bool:
        """Whether the host engine reaches ``mem`` as storage: an SSD holding the tables is memory
        mapped, so a read of a row not in memory is a major page fault (named assumption,
        docs/timing-model.md)."""
        return self.pipe.embedding_engine == "host_cpu" and mem.model.family == "ssd"

    def _host_read(self, mem: Memory, t: float, rows: np.ndarray, out: int):
        """The host engine's reads of ``rows`` from ``mem``: a memory stream with ``out`` in flight,
        or, from storage, synchronous page faults (one per worker thread in flight) whose handling
        the threads pay on top of the device's time. Returns (result, done_ns)."""
        if not self._on_storage(mem):
            res = self._serve(mem, t, self._rows_addr(rows), self.row_B, False, out)
            return res, res.done_ns
        res = self._serve(mem, t, self._rows_addr(rows), self.row_B, False, self.cpu.storage_reads_in_flight())
        return res, res.done_ns + self.cpu.fault_ns(rows.size)

    def _write_back(self, mem: Memory, t: float, rows: np.ndarray, out: int) -> float:
        """Write evicted (dirty) cached rows back to ``mem``; returns when acknowledged."""
        if rows.size == 0:
            return t
        if self._on_storage(mem):
            out = self.cpu.storage_reads_in_flight()
        return self._serve(mem, t, self._rows_addr(rows), self.row_B, True, out).done_ns

    def _count_link(self, path: str, nbytes: float) -> None:
        """Accounting, no timing effect: ``nbytes`` on link ``path`` in the batch being served
        (paths: :data:`~cxlsim.systems.activity.LINK_PATHS`)."""
        self._ledger.add_link(path, nbytes)

    def _serve(self, mem: Memory, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int):
        """:meth:`Memory.serve`, charging what it moved to the batch being served."""
        res = mem.serve(t_ns, addr_B, size_B, is_write, outstanding)
        tr = self._ledger.traffic(mem.role)
        tr.media_read_B += float(res.media_read_B)
        tr.media_write_B += float(res.media_write_B)
        tr.requested_B += float(np.sum(size_B)) if np.ndim(size_B) else float(size_B) * len(addr_B)
        return res

    # -- dispatch ----------------------------------------------------------------------------
    def step(self, name: str, batch: int, start_ns: float, ex: Executor) -> OpOutcome:
        self._ledger = self.ledgers.setdefault(batch, BatchLedger())
        return getattr(self, f"_{name}")(batch, start_ns, ex)

    def _begin(self, n, t, ex):
        return OpOutcome(t)

    # -- host configuration ---------------------------------------------------------------------
    def _config(self, n, t, ex):
        b = self._batch(n)
        idx_B = b.n_indices * INDEX_B
        if self.pipe.embedding_engine == "host_cpu":
            return OpOutcome(t + self.cpu.dispatch_ns(1))
        if self.pipe.data_movement == "cxl_cache":
            self._count_link("cxl_host", self.cxl.read_cost(idx_B, 0.0, self.host_path).size_B)  # the device's index DMA
            return OpOutcome(t + self.cxl.configure_batch_ns(CONFIG_REGISTERS, idx_B, self.host_path))
        self._count_link("pcie", self.pcie.memcpy_cost(idx_B, False).size_B)
        return OpOutcome(t + self.pcie.launch_ns() + self.pcie.memcpy_ns(idx_B, False))

    # -- GPU -----------------------------------------------------------------------------------
    def _b_fwd(self, n, t, ex):
        return OpOutcome(t + self.gpu.mlp_ns(self.bottom, self.B, "forward"))

    def _t_mlp(self, n, t, ex):
        g, B = self.gpu, self.B
        d = (g.interaction_ns(B, self.T + 1, self.dim, "forward") + g.mlp_ns(self.top, B, "forward")
             + g.mlp_ns(self.top, B, "backward") + g.interaction_ns(B, self.T + 1, self.dim, "backward"))
        return OpOutcome(t + d)

    def _b_bwd(self, n, t, ex):
        return OpOutcome(t + self.gpu.mlp_ns(self.bottom, self.B, "backward"))

    def _mlp_opt(self, n, t, ex):
        return OpOutcome(t + self.gpu.optimizer_ns(self.mlp_params, self.mlp_tensors))

    # -- embedding engine ------------------------------------------------------------------------
    def _lookup(self, n, t, ex):
        b = self._batch(n)
        rows = b.unique_rows if self.pipe.lookup_dedup else b.lookup_rows
        out = self._engine_outstanding()
        led = self._ledger
        if self.cache is not None:
            hit, evicted = cache_access(rows, False, *self.cache)
            r_hit = self._serve(self.host_dram, t, self._rows_addr(rows[hit]), self.row_B, False, out)
            r_miss, miss_end = self._host_read(self.tables, t, rows[~hit], out)
            end = max(t, r_hit.done_ns, miss_end, self._write_back(self.tables, t, evicted, out))
            led.cache_lookups += int(hit.size)
            led.cache_hits += int(np.count_nonzero(hit))
            led.cache_writebacks += int(evicted.size)
            led.raw_stall_ns += float(r_miss.raw_stall_ns)
            led.raw_stall_count += int(r_miss.raw_stall_count)
            media_end = end
        else:
            res, media_end = self._host_read(self.tables, t, rows, out)
            led.raw_stall_ns += float(res.raw_stall_ns)
            led.raw_stall_count += int(res.raw_stall_count)
        if self.pipe.embedding_engine == "ndp":
            compute = self.ndp.pool_ns(b.n_indices, self.dim)
            led.logic.pooled_vectors += b.n_indices
        else:
            compute = self.cpu.lookup_compute_ns(b.n_indices, self.dim)
        return OpOutcome(max(media_end, t + compute))

    def _correction(self, n, t, ex):
        b = self._batch(n)
        self._ledger.logic.corrected_vectors += b.n_shared_lookups
        return OpOutcome(t + self.ndp.correction_ns(b.n_shared_lookups, self.dim))

    def update_rows(self, n: int) -> np.ndarray:
        """The distinct rows batch ``n``'s update writes, in the order the engine visits them
        (``update_table_order`` of the ndp or host CPU preset)."""
        b = self._batch(n)
        engine = self.ndp if self.pipe.embedding_engine == "ndp" else self.cpu
        if engine.params.update_table_order == "reverse":
            return self.streams.layout.tables_reversed(b.unique_rows)
        return b.unique_rows

    def _update(self, n, t, ex):
        b = self._batch(n)
        rows = self.update_rows(n)
        out = self._engine_outstanding()
        evicted_end = t
        if self.cache is not None:
            hit, evicted = cache_access(rows, True, *self.cache)
            mem = self.host_dram
            evicted_end = self._write_back(self.tables, t, evicted, out)
            self._ledger.cache_writebacks += int(evicted.size)
        else:
            mem = self.tables
        addr = self._rows_addr(rows)
        # read each distinct row, add its accumulated gradient, write it back (read, write, ...)
        wr = interleave(np.zeros(addr.size, bool), np.ones(addr.size, bool))
        if self._on_storage(mem):  # the reads fault the pages in; the writes dirty them
            res = self._serve(mem, t, interleave(addr, addr), self.row_B, wr, self.cpu.storage_reads_in_flight())
            done = res.done_ns + self.cpu.fault_ns(rows.size)
        else:
            res = self._serve(mem, t, interleave(addr, addr), self.row_B, wr, out)
            done = res.done_ns
        if self.pipe.embedding_engine == "ndp":
            compute = self.ndp.update_ns(b.n_unique, self.dim, b.n_indices)
            self._ledger.logic.updated_rows += b.n_unique
            self._ledger.logic.gradient_vectors += b.n_indices
        else:
            compute = self.cpu.update_compute_ns(b.n_unique, self.dim)
        return OpOutcome(max(t, done, evicted_end, t + compute))

    # -- data movement -------------------------------------------------------------------------
    def _move(self, nbytes: float, t: float, to_gpu: bool) -> OpOutcome:
        if self.pipe.data_movement == "cxl_cache":
            lines = math.ceil(nbytes / self.cxl.line_B)
            self._count_link("cxl_gpu", self.cxl.flush_cost(lines, self.gpu_path).size_B)
            return OpOutcome(t + self.cxl.flush_ns(lines, self.gpu_path))
        bounce = self.pipe.embedding_engine == "ndp"  # a PCIe card: device → host → device
        self._count_link("pcie", self.pcie.memcpy_cost(nbytes, bounce).size_B)
        return OpOutcome(t + self.pcie.sync_ns() + self.pcie.memcpy_ns(nbytes, bounce) + self.pcie.launch_ns())

    def _pooled(self, n, t, ex):
        return self._move(self.pooled_B, t, True)

    def _grads(self, n, t, ex):
        return self._move(self.pooled_B, t, False)

    # -- persistence -----------------------------------------------------------------------------
    def _flag_ns(self, mem: Memory) -> float:
        """A persistent flag: one line written after the data it covers is acknowledged (a fence),
        so it costs one idle write of the flag's line after that point (pure API: the flag is issued
        in the future, beyond the streams already served); its media traffic is charged to the
        batch. The line is the checkpointing logic's ``flag_line_B``, or the host's cache line."""
        line_B = (self.ckpt.params.flag_line_B if self.pipe.checkpoint_agent == "ckpt_logic"
                  else self.cpu.params.cache_line_B)
        m = mem.model
        tr = self._ledger.traffic(mem.role)
        tr.media_write_B += m.units(line_B) * m.unit_B
        if m.params.read_modify_write and line_B % m.unit_B:  # a partial unit is read first
            tr.media_read_B += m.unit_B
        tr.requested_B += line_B
        return m.access_cost("write", line_B).time_ns

    def _burst_B(self) -> int:
        """Bytes the checkpoint agent writes to the log or redo record per request."""
        if self.pipe.checkpoint_agent == "ckpt_logic":
            return self.ckpt.params.burst_B
        return HOST_WRITE_B

    def _copy_rows(self, rows: np.ndarray, dst_base: int, t: float, outstanding: int, read_source: bool = True) -> float:
        """Copy rows into a sequential log area: rows are gathered (read) from the data region and
        written packed, in the agent's bursts (:meth:`_burst_B`), each burst after the reads that
        fill it.
        Returns the time the last write is acknowledged."""
        if rows.size == 0:
            return t
        burst_B = self._burst_B()
        nbytes = rows.size * self.row_B
        k = int(math.ceil(nbytes / burst_B))
        dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
        if not read_source:
            return self._serve(self.ckpt_mem, t, dst, burst_B, True, outstanding).done_ns
        src = self._rows_addr(rows)
        if self.ckpt_mem is not self.tables:
            r = self._serve(self.tables, t, src, self.row_B, False, outstanding)
            w = self._serve(self.ckpt_mem, t, dst, burst_B, True, outstanding)
            return max(r.done_ns, w.done_ns)
        per = max(1, burst_B // self.row_B)
        burst_of = np.arange(rows.size) // per
        # order: reads of burst 0, write of burst 0, reads of burst 1, ...
        key = np.concatenate([burst_of * 2, np.arange(k) * 2 + 1])
        addr = np.concatenate([src, dst])
        size = np.concatenate([np.full(rows.size, self.row_B), np.full(k, burst_B)])
        wr = np.concatenate([np.zeros(rows.size, bool), np.ones(k, bool)])
        order = np.argsort(key, kind="stable")
        res = self._serve(self.tables, t, addr[order], size[order], wr[order], outstanding)
        return res.done_ns

    def pull_mlp_ns(self, nbytes: float) -> float:
        """Time to bring ``nbytes`` of MLP parameters from the GPU to the checkpointing side."""
        if nbytes <= 0:
            return 0.0
        if self.pipe.mlp_pull == "cxl_cache":
            lines = math.ceil(nbytes / self.cxl.line_B)
            # GPU memory serves lines at its streaming bandwidth; its load latency (hundreds of ns)
            # is not a GPU-preset parameter and is negligible against megabyte pulls: left out
            gpu_bw = self.gpu.params.mem_bw_GBps * self.gpu.params.mem_bw_efficiency_fraction
            return self.cxl.cache_fill_ns(lines, 0.0, self.gpu_path, self.cxl.line_B / gpu_bw)
        bounce = self.pipe.checkpoint_agent == "ndp"
        return self.pcie.sync_ns() + self.pcie.memcpy_ns(nbytes, bounce)

    def _write_mlp(self, nbytes: float, base: int, t: float, pull_ns: float, outstanding: int) -> float:
        """Write ``nbytes`` sequentially at ``base`` while they arrive over ``pull_ns``; returns the
        later of the last acknowledgement and the end of the pull."""
        if nbytes <= 0:
            return t
        # the bytes pulled as pull_mlp_ns times them (counted here: relaxed logging pulls part)
        self._ledger.mlp_log_B += nbytes
        if self.pipe.checkpoint_agent == "ckpt_logic" and self.pipe.mlp_pull == "cxl_cache":
            self._ledger.logic.dma_B += nbytes  # the checkpointing logic pulls them itself
        if self.pipe.mlp_pull == "cxl_cache":
            self._count_link("cxl_gpu", self.cxl.read_cost(nbytes, 0.0, self.gpu_path).size_B)
        else:
            self._count_link("pcie", self.pcie.memcpy_cost(nbytes, self.pipe.checkpoint_agent == "ndp").size_B)
        burst_B = self._burst_B()
        k = int(math.ceil(nbytes / burst_B))
        addr = base + np.arange(k, dtype=np.int64) * burst_B
        w = self._serve(self.ckpt_mem, t, addr, burst_B, True, outstanding)
        return float(max(w.done_ns, t + pull_ns))

    def _ckpt_outstanding(self) -> int:
        if self.pipe.checkpoint_agent == "ckpt_logic":
            return self.ckpt.params.outstanding_count
        return self._engine_outstanding()

    def _emb_log(self, n, t, ex):
        b = self._batch(n)
        out = self._ckpt_outstanding()
        self._ledger.logic.dma_B += b.n_unique * self.row_B
        end = self._copy_rows(b.unique_rows, self.emb_log_base[n % 2], t, out)
        end = max(end, t + self.ckpt.copy_issue_ns(b.n_unique * self.row_B, b.n_unique))
        end += self._flag_ns(self.ckpt_mem)
        return OpOutcome(end)

    def _mlp_log(self, n, t, ex):
        out = self._ckpt_outstanding()
        if not self.pipe.relaxed_mlp_log:
            pull = self.pull_mlp_ns(self.mlp_B)
            end = self._write_mlp(self.mlp_B, self.mlp_log_base, t, pull, out)
            end = max(end, t + pull) + self._flag_ns(self.ckpt_mem)
            return OpOutcome(end)
        # relaxed: copy only while the GPU runs interaction + top MLP of batch n (SPEC §3.4)
        window_end = ex.planned_end(("t_mlp", n))
        prog = self.mlp_log
        if prog.first_batch < 0:
            prog.first_batch = n
        left = self.mlp_B - prog.done_B
        end = t
        if window_end > t and left > 0:
            rate_ns_per_B = self.pull_mlp_ns(self.mlp_B) / self.mlp_B
            nbytes = min(left, (window_end - t) / rate_ns_per_B)
            pull = nbytes * rate_ns_per_B
            end = self._write_mlp(nbytes, self.mlp_log_base + int(prog.done_B), t, pull, out)
            prog.done_B += nbytes
        if prog.done_B >= self.mlp_B - 1e-6:
            end += self._flag_ns(self.ckpt_mem)
            prog.complete_span = (prog.first_batch, n)
            prog.done_B, prog.first_batch = 0.0, -1
        gap = n - prog.complete_span[0] if prog.complete_span else n + 1
        self._ledger.mlp_log_gap_batches = gap
        return OpOutcome(end, label=f"mlp_log {n} ({100 * prog.done_B / self.mlp_B:.0f}%)")

    def _redo(self, n, t, ex):
        b = self._batch(n)
        out = self._ckpt_outstanding()
        base = self.redo_base + self.redo_cursor
        agent = self.pipe.checkpoint_agent
        # the host already holds the rows it just updated; logic reads them from the data region
        rows_end = self._copy_rows(b.unique_rows, base, t, out, read_source=agent != "host_cpu")
        if agent == "ckpt_logic":
            rows_end = max(rows_end, t + self.ckpt.copy_issue_ns(b.n_unique * self.row_B, b.n_unique))
            self._ledger.logic.dma_B += b.n_unique * self.row_B
        pull = self.pull_mlp_ns(self.mlp_B)
        mlp_base = base + b.n_unique * self.row_B
        mlp_end = self._write_mlp(self.mlp_B, mlp_base, t, pull, out)
        record_B = b.n_unique * self.row_B + self.mlp_B
        self.redo_cursor = (self.redo_cursor + self._round(record_B)) % (64 * self._round(record_B))
        end = max(rows_end, mlp_end, t + pull) + self._flag_ns(self.ckpt_mem)
        return OpOutcome(end)
