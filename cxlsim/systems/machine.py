"""How long each dataflow step takes on one system's devices (the :class:`~.dataflow.Machine`).

One machine serves every system: the pipeline settings choose the engine (near-data logic or host
CPU), the mover (CXL.cache flushes or the software path over PCIe) and the persistence agent. Memory
steps are served access by access by the media model of the role that holds the data, with state
carried across steps and batches (write-combining buffers, pending writes: read-after-write is
decided per access from the real index streams). Links are exclusive lanes in the op graph.

Several devices (SPEC §12, :mod:`cxlsim.systems.topology`): the machine holds one
:class:`MemSide` per memory device (a CXL-MEM or PCIe card with its own modules, near-data and
checkpointing logic, logs and MLP-log shard; or the host, for host-engine systems) and one lane per
GPU. Steps of device ``i`` are named ``<step>.<i>`` and run on ``<lane>.<i>`` (device 0 keeps the
plain names); a transfer between CXL-MEM ``m`` and GPU ``g`` is ``pooled.<m>.<g>`` /
``grads.<g>.<m>``... (``pooled``/``grads`` for the first pair) and holds every link direction of its
path. The GPUs train data-parallel on ``batch_size`` samples each; every device's lookup serves all
GPUs' samples for the rows it holds; MLP gradients are all-reduced (``allreduce``, a ring over the
GPUs) before the optimizer steps; each memory device logs its own rows and a ``1/M`` shard of the
MLP parameters, pulled from GPU ``m mod G``.

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
- a flag is one line written after every write it covers is acknowledged (fence);
- the GPU phases are the PyTorch eager step (:mod:`cxlsim.devices.gpu_step`): the ops the host
  dispatches and a CUDA stream schedule. Each GPU has one dispatching host thread that runs ahead of
  its stream: a phase's dispatch starts when that thread is free and the phase's inputs other than
  the same GPU's earlier phases are ready (pooled vectors, the all-reduce); its kernels start no
  earlier than the GPU is free. A GPU that *replays* a step measured elsewhere (the platform gives a
  ``replay_host`` role: the prototype's Vortex replays RTX 3090 cycles measured from an i5-9600K)
  takes each phase's span as that host and GPU ran it alone, and its own host dispatches nothing.
  The dispatching thread is not charged against the host's embedding work (one core of several).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cxlsim.devices.gpu_step import StepModel, StepShapes
from cxlsim.devices.media import AccessStream
from cxlsim.engine.executor import Executor, OpOutcome
from cxlsim.errors import InputError
from cxlsim.kernels.vector_cache import cache_access, new_cache
from cxlsim.systems.activity import BatchLedger, cxl_path_key
from cxlsim.systems.config import DeviceRole
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.streams import BatchStreams, StreamSet
from cxlsim.systems.symmetry import Reduction, SystemFabric, group_ring_edges
from cxlsim.systems.topology import Fabric, Placement
from cxlsim.units import FP32_B, WIRE_INDEX_B, GiB

CONFIG_REGISTERS = 4
#: The host writes log and redo records sequentially in 4 KiB pieces (a page, as the host writes
#: to an SSD); the checkpointing logic writes them in its DMA engine's ``burst_B``.
HOST_WRITE_B = 4096
#: Long media streams (an engine's lookup and update, the checkpointing logic's copies) are served
#: in segments of at most this many requested bytes, each decided when the previous one ends
#: (:class:`~cxlsim.engine.executor.OpOutcome` ``resume``), so streams that overlap in time share
#: the media at that granularity. A modelling resolution, not hardware (named assumption,
#: docs/timing-model.md): the media model serves a stream whole when it is issued, so an unsegmented
#: stream would hold, from its first instant, every bank slot it will use over milliseconds, and a
#: stream that starts a little later would wait for all of it.
SEGMENT_B = 1 << 20


class Memory:
    """Modules of one role serving access streams, with persistent media state.

    Accounting is the machine's: :meth:`TrainingMachine._serve` charges what a stream moved to the
    ledger of the batch being served.
    """

    def __init__(self, role: DeviceRole, model, suffix: str = "") -> None:
        self.role = role.role
        self.key = role.role + suffix  # its ledger key: the role, and the device when several hold it
        self.model = model  # the role's model from the system's device graph
        self.modules = role.count
        self.interleave_B = role.interleave_B
        self.state = self.model.new_state(self.modules, self.interleave_B)

    def serve(self, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int | tuple[int, int]):
        """Serve accesses issued together at ``t_ns`` (in order, at most ``outstanding`` in flight:
        one closed loop, or ``(reads, writes)``, a requester with separate read and write channels).

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


def log_copy_stream(src_B: np.ndarray, dst_base: int, row_B: int, burst_B: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(addr, size, is_write)`` of copying rows at ``src_B`` (in that order) into a packed log
    from ``dst_base`` in one memory: the reads of burst 0's rows, the write of burst 0, the reads
    of burst 1's rows, ... (``burst_B`` bytes a burst, ``row_B`` a row)."""
    n = src_B.size
    k = int(math.ceil(n * row_B / burst_B))
    dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
    burst_of = np.arange(n) // max(1, burst_B // row_B)
    key = np.concatenate([burst_of * 2, np.arange(k) * 2 + 1])
    order = np.argsort(key, kind="stable")
    addr = np.concatenate([src_B, dst])[order]
    size = np.concatenate([np.full(n, row_B), np.full(k, burst_B)])[order]
    return addr, size, np.concatenate([np.zeros(n, bool), np.ones(k, bool)])[order]


@dataclass
class MlpLogProgress:
    """Relaxed MLP logging: bytes copied of the log in progress and the batches it spans."""

    done_B: float = 0.0
    first_batch: int = -1
    complete_span: tuple[int, int] | None = None  # (first, last) batch of the latest complete log


@dataclass
class MemSide:
    """One memory device: its modules' state, lanes, logs and the part of each batch it holds."""

    index: int
    tables: Memory
    ckpt_mem: Memory
    engine_lane: str
    agent_lane: str
    mlp_log_lane: str
    tables_count: int  # tables whose rows it holds (pooled vectors per sample)
    mlp_B: float  # its shard of the MLP parameters (logged and checkpointed here)
    source_gpu: int  # the GPU it pulls its MLP shard from
    redo_cursor: int = 0
    mlp_log: MlpLogProgress = field(default_factory=MlpLogProgress)


class TrainingMachine:
    """Durations of dataflow steps for a system's devices on ``streams`` (module docstring)."""

    def __init__(self, devices: DeviceGraph, streams: StreamSet, gpus: int = 1, mems: int = 1,
                 fabric: Fabric | None = None, placement: Placement | None = None,
                 reduction: Reduction | None = None, system_fabric: Fabric | None = None) -> None:
        cfg = self.cfg = devices.config
        self.devices = devices
        p = self.pipe = cfg.pipeline
        self.streams = streams
        w = self.workload = streams.workload
        self.gpus, self.mems = gpus, mems  # the devices simulated (a reduced run: the representative group's)
        self.fabric, self.placement = fabric, placement
        #: symmetry reduction (:mod:`cxlsim.systems.symmetry`): None in full detail
        self.reduction = reduction
        self.system_gpus = reduction.gpus if reduction else gpus
        self.system_mems = reduction.mems if reduction else mems
        #: the whole system's switch tree (paths, energy); the simulated one in full detail
        self.system_fabric = system_fabric if reduction else fabric
        self._sysfab = (SystemFabric(system_fabric, self.system_gpus, self.system_mems)
                        if reduction and system_fabric is not None else None)
        self._transfers: dict[tuple, tuple[float, list[tuple[str, float]]]] = {}
        self._ar_step: dict[float, float] = {}
        self.B = w.params.batch_size // gpus  # per GPU (the streams hold every GPU's samples)
        self.T = w.params.tables
        self.dim = w.params.dim
        self.row_B = w.row_B
        mp = w.mlp_params
        self.mlp_params = mp["bottom"] + mp["top"]
        self.mlp_B = self.mlp_params * FP32_B
        self.pooled_B = self.B * self.T * self.dim * FP32_B

        self.gpu = devices["gpu"]
        self.cpu = devices["host_cpu"]
        self.pcie = devices.get("pcie")
        #: the host whose dispatch a replaying GPU's phases were measured with (None: this system's host dispatches)
        self.replay_host = devices.get("replay_host")
        self.step_model = StepModel(self.gpu, self.replay_host or self.cpu, self.pcie)
        self.shapes = StepShapes.from_workload(w, batch=self.B)
        self.phase_ops = self.step_model.step_ops(self.shapes)
        #: a replaying GPU's phases: their spans as measured alone (from idle), placed at each start
        self._replayed = ({ph: self.step_model.schedule(ops) for ph, ops in self.phase_ops.items()}
                          if self.replay_host is not None else {})
        self._host_free = [0.0] * gpus  # each GPU's dispatching thread
        self.ndp = devices.get("ndp")
        self.ckpt = devices.get("ckpt_logic")
        self.cxl = devices.get("cxl_protocol")
        # the first CXL-MEM↔GPU (pooled vectors, gradients, MLP pulls) and host↔CXL-MEM (configuration)
        self.gpu_path = fabric.path(("mem", 0), ("gpu", 0)) if fabric is not None else None
        self.host_path = fabric.path("host", ("mem", 0)) if fabric is not None else None
        self.cache = None
        self.memories: dict[str, Memory] = {}  # every memory the machine serves, by ledger key
        self.sides = [self._side(m) for m in range(mems)]
        side = self.sides[0]
        self.tables, self.ckpt_mem = side.tables, side.ckpt_mem  # the first device's, by their plain names
        if p.vector_cache_GB > 0:
            self.host_dram = Memory(cfg.role("host_dram"), devices["host_dram"])
            self.memories[self.host_dram.role] = self.host_dram
            self.cache = new_cache(int(p.vector_cache_GB * 1e9 // self.row_B))
        self.engine_lane = side.engine_lane
        self.mover_lane = "cxl.link" if p.data_movement == "cxl_cache" else "host_cpu"
        self.agent_lane = side.agent_lane
        self.mlp_log_lane = side.mlp_log_lane

        data_end = p.table_region_offset_B + streams.layout.total_B
        self.data_base = p.table_region_offset_B
        log_base = (data_end // GiB + 1) * GiB if self.ckpt_mem is self.tables else 0
        self.emb_log_base = [log_base, log_base + self._slot_B()]
        self.mlp_log_base = log_base + 2 * self._slot_B()
        self.redo_base = self.mlp_log_base + self._round(self.mlp_B)
        self.mlp_log = side.mlp_log
        self._views: dict[tuple[int, int], BatchStreams] = {}
        #: what each batch did (:mod:`cxlsim.systems.activity`), filled as its ops run
        self.ledgers: dict[int, BatchLedger] = {}
        self._ledger = BatchLedger()
        if self.ndp is not None:
            self._check_scratchpad()
        self._declare_unused()

    def _side(self, m: int) -> MemSide:
        cfg, p, d = self.cfg, self.pipe, self.devices
        s = sfx(m)
        tables = Memory(cfg.role(p.tables_on), d[p.tables_on], s)
        ckpt_mem = tables
        if p.persistence != "none" and p.checkpoint_on != p.tables_on:
            ckpt_mem = Memory(cfg.role(p.checkpoint_on), d[p.checkpoint_on], s)
        for mem in (tables, ckpt_mem):
            self.memories[mem.key] = mem
        engine = ("ndp" if p.embedding_engine == "ndp" else "host_cpu")
        agent = {"ckpt_logic": "ckpt_logic", "ndp": "ndp", "host_cpu": "host_cpu"}[p.checkpoint_agent]
        ckpt = d.get("ckpt_logic")
        mlp_lane = "ckpt_logic.mlp" if ckpt is not None and ckpt.params.channels_count >= 2 else "ckpt_logic"

        def on(lane: str) -> str:  # the host is one, whatever the devices
            return lane if lane == "host_cpu" else lane + s

        shard = self.mlp_B / self.system_mems
        n_tables = self.placement.tables_on(m) if self.placement is not None else self.T
        return MemSide(m, tables, ckpt_mem, on(engine), on(agent),
                       mlp_lane if m == 0 else f"ckpt_logic{s}{mlp_lane[len('ckpt_logic'):]}",
                       n_tables, shard, m % self.gpus)

    def _check_scratchpad(self) -> None:
        """The near-data logic holds a batch's pooled vectors in its scratchpad until they are
        flushed to the GPUs (the ``ndp`` preset's sizing); spilling them to the memory is not
        modelled, so a batch that does not fit is refused."""
        bags = max(math.ceil(self.B * self.system_gpus * self._transfer_tables(side.index)) for side in self.sides)
        need_B = self.ndp.scratchpad_B(bags, self.dim)
        if not self.ndp.scratchpad_fits(bags, self.dim):
            raise InputError(
                f"devices.ndp.params.scratchpad_KiB: {self.ndp.params.scratchpad_KiB:g} KiB cannot hold a batch's "
                f"pooled vectors ({need_B / 1024:.0f} KiB: {bags} bags × {self.dim} fp32 on one device); "
                "spilling them is not modelled: enlarge the scratchpad or reduce the batch")

    def _declare_unused(self) -> None:
        """Say which role parameters this pipeline does not use, and why (the reach check and the
        refusal of overrides read these reasons, :mod:`cxlsim.systems.reach`)."""
        p = self.pipe
        cpu = self.cpu.params
        if not any(self._on_storage(m) for m in self.memories.values()):
            cpu.skip("major_fault_us", "no table is memory-mapped from storage here")
        if p.embedding_engine == "ndp":
            why = "the embeddings run on the near-data logic (pipeline.embedding_engine: ndp)"
            for key in ("clock_GHz", "line_fill_buffers_count", "lookup_cycles_per_element",
                        "update_cycles_per_element", "per_vector_overhead_cycles", "update_table_order"):
                cpu.skip(key, why)
            if p.persistence == "none" or p.checkpoint_agent != "host_cpu":
                cpu.skip("cache_line_B", "the host neither streams rows nor writes the persistent flags here")
        if p.embedding_engine == "host_cpu" or p.data_movement != "cxl_cache":
            cpu.skip("mmio_write_instructions", "the host configures no CXL device's registers here (it dispatches the "
                     "embedding operator itself, or copies the indices over PCIe)")
        if self.pcie is None:
            cpu.skip("kernel_launch_instructions", "no software data path here (no pcie role): the GPU's kernels are "
                     "launched inside the framework's operators (op_dispatch_*_instructions)")
        if self.replay_host is not None:
            if self.pcie is None and p.embedding_engine == "ndp":
                why = ("the GPU replays a step measured from the replay_host: this host dispatches none of it, and "
                       "it neither runs the embeddings nor calls a software data path here")
                for key in ("software_ipc", "op_dispatch_python_instructions", "op_dispatch_python_no_grad_instructions",
                            "op_dispatch_cpp_instructions", "stream_sync_instructions", "memcpy_call_instructions",
                            "python_element_instructions", "kernel_launch_instructions",
                            "tensor_attribute_instructions", "module_call_instructions", "autograd_node_instructions",
                            "backward_call_instructions", "optimizer_step_instructions",
                            "optimizer_tensor_instructions", "zero_grad_call_instructions"):
                    cpu.skip(key, why)
            rh = self.replay_host.params  # the step model has read what of it the replayed step uses
            for key in rh.unread():
                rh.skip(key, "a replay host contributes only the host software of the step its GPU's cycles were "
                        "measured with")
        if self.pcie is not None:
            pcie = self.pcie.params
            bounces = p.embedding_engine == "ndp"  # a PCIe card: device → host → device
            if not bounces:
                for key in ("bounce_host_copy", "host_copy_bw_GBps"):
                    pcie.skip(key, "no copy of this system bounces through host memory (the host is the embedding engine)")
            elif not pcie.bounce_host_copy:
                pcie.skip("host_copy_bw_GBps", "bounce_host_copy is false: the bounce uses one staging buffer")
        if self.ckpt is not None and p.checkpoint_agent == "ckpt_logic" and p.log_copy_channels == "shared":
            self.ckpt.params.skip("write_outstanding_count", "pipeline.log_copy_channels is shared: one closed "
                                  "loop of read_outstanding_count requests")
        if self.cxl is not None:
            cxl = self.cxl.params
            cxl.skip("dcoh_snoop_ns", "no step of this dataflow snoops a DCOH (flushes push the lines to their home)")
            cxl.skip("mmio_read_ns", "the host only writes device registers (posted MMIO writes); no step reads one")
            cxl.skip("mmio_write_ns", "the system's host issues the register writes (its cpu mmio_write_instructions)")

    # -- helpers -----------------------------------------------------------------------------
    def _round(self, nbytes: float) -> int:
        return int(math.ceil(nbytes / GiB) * GiB)

    def _slot_B(self) -> int:
        return self._round(self.B * self.T * self.workload.params.lookups_per_table * self.row_B)

    def _batch(self, n: int, m: int = 0) -> BatchStreams:
        """Batch ``n``'s streams, or the part of them memory device ``m`` holds."""
        b = self.streams.batch(n)
        if self.mems == 1:
            return b
        key = (n, m)
        if key not in self._views:
            owner, u_owner = self.placement.mem_of(b.lookup_rows), self.placement.mem_of(b.unique_rows)
            for i in range(self.mems):
                self._views[(n, i)] = b.on(owner, u_owner, i)
        return self._views[key]

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
        (``pcie``, or :func:`~cxlsim.systems.activity.cxl_path_key` of the path's endpoints)."""
        self._ledger.add_link(path, nbytes)

    def _serve(self, mem: Memory, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int | tuple[int, int]):
        """:meth:`Memory.serve` (``outstanding``: one limit, or ``(reads, writes)`` pools), charging
        what it moved to the batch being served."""
        res = mem.serve(t_ns, addr_B, size_B, is_write, outstanding)
        tr = self._ledger.traffic(mem.key)
        tr.media_read_B += float(res.media_read_B)
        tr.media_write_B += float(res.media_write_B)
        tr.requested_B += float(np.sum(size_B)) if np.ndim(size_B) else float(size_B) * len(addr_B)
        tr.accesses += len(addr_B)
        return res

    # -- dispatch ----------------------------------------------------------------------------
    def step(self, name: str, batch: int, start_ns: float, ex: Executor) -> OpOutcome:
        """Step ``name`` (``<step>[.<device>[.<device>]]``) of batch ``batch`` starting at ``start_ns``."""
        self._ledger = self.ledgers.setdefault(batch, BatchLedger())
        base, *index = name.split(".")
        return getattr(self, f"_{base}")(batch, start_ns, ex, *(int(i) for i in index))

    def _in_segments(self, t: float, n_items: int, item_B: float, serve, finish) -> OpOutcome:
        """An op over ``n_items`` items of ``item_B`` requested bytes each, served in segments of
        :data:`SEGMENT_B`: ``serve(start, i, j)`` serves items ``i:j`` from ``start`` and returns
        when they are done; ``finish(latest)`` gives the op's end (or its last outcome) from the
        latest of those. Each segment charges the ledger of the batch the op belongs to."""
        ledger = self._ledger
        per = max(1, int(SEGMENT_B // max(1.0, item_B)))

        def segment(start: float, i: int, latest: float) -> OpOutcome:
            self._ledger = ledger
            j = min(n_items, i + per)
            latest = max(latest, serve(start, i, j))
            if j < n_items:
                return OpOutcome(latest, resume=lambda now: segment(now, j, latest))
            end = finish(latest)
            return end if isinstance(end, OpOutcome) else OpOutcome(end)

        return segment(t, 0, t)

    def _begin(self, n, t, ex):
        return OpOutcome(t)

    # -- host configuration ---------------------------------------------------------------------
    def _path(self, src, dst):
        """The CXL path between two endpoints (``"host"``, ``("gpu", g)``, ``("mem", m)``): in a
        reduced run, between their system counterparts (:meth:`_ep`) on the full tree."""
        return self.system_fabric.path(self._ep(src), self._ep(dst))

    def _ep(self, ep):
        """The system endpoint of a simulated one (itself in full detail)."""
        return self.reduction.full(ep) if self.reduction else ep

    def _config(self, n, t, ex, m=0):
        b = self._batch(n, m)
        idx_B = b.n_indices * WIRE_INDEX_B
        if self.pipe.embedding_engine == "host_cpu":
            return OpOutcome(t + self.cpu.op_dispatch_ns("python"))
        if self.pipe.data_movement == "cxl_cache":
            path = self._path("host", ("mem", m))
            self._count_link(cxl_path_key("host", self._ep(("mem", m))), self.cxl.read_cost(idx_B, 0.0, path).size_B)  # index DMA
            return OpOutcome(t + self.cxl.configure_batch_ns(CONFIG_REGISTERS, idx_B, path, self.cpu))
        self._count_link("pcie", self.pcie.memcpy_cost(idx_B, False, self.cpu).size_B)
        # the host copies every device's indices: in a reduced run, this device's in every group
        copies = self.reduction.groups if self.reduction else 1
        return OpOutcome(t + copies * (self.pcie.launch_ns(self.cpu) + self.pcie.memcpy_ns(idx_B, False, self.cpu)))

    # -- GPU -----------------------------------------------------------------------------------
    def _b_fwd(self, n, t, ex, g=0):
        return self._phase("b_fwd", n, t, ex, g)

    def _t_mlp(self, n, t, ex, g=0):
        return self._phase("t_mlp", n, t, ex, g)

    def _b_bwd(self, n, t, ex, g=0):
        return self._phase("b_bwd", n, t, ex, g)

    def _mlp_opt(self, n, t, ex, g=0):
        return self._phase("mlp_opt", n, t, ex, g)

    def _inputs_ready_ns(self, name: str, n: int, ex: Executor) -> float:
        """When op ``(name, n)``'s inputs other than its own GPU's phases were ready (ns): the
        dispatching thread runs ahead of the stream, not ahead of data from elsewhere."""
        ready = 0.0
        for dep in ex.ops[(name, n)].deps:
            key = (dep[0], dep[1])
            rec = ex.record(key)
            if rec is None or dep[0].split(".")[0] in self.phase_ops:
                continue
            ready = max(ready, rec.start_ns if len(dep) > 2 and dep[2] == "start" else rec.end_ns)
        return ready

    def _phase(self, phase: str, n: int, t: float, ex: Executor, g: int) -> OpOutcome:
        """One GPU phase of batch ``n`` on GPU ``g``, its stream free from ``t``: the step model's
        schedule (module docstring), its dispatches and kernels on the trace."""
        name = phase + sfx(g)
        if self.replay_host is not None:
            sch, shift = self._replayed[phase], t
        else:
            host_free = max(self._host_free[g], self._inputs_ready_ns(name, n, ex))
            sch, shift = self.step_model.schedule(self.phase_ops[phase], host_free, t), 0.0
            self._host_free[g] = sch.host_end_ns
            self._ledger.host_dispatch_ns += sch.host_busy_ns
        self._ledger.gpu_kernel_ns += sch.gpu_busy_ns
        trace = ex.trace
        if trace.enabled:
            host_lane = ("replay_host" if self.replay_host is not None else "host_cpu") + ".dispatch" + sfx(g)
            for op, a, b in sch.dispatch_intervals():
                trace.record(host_lane, a + shift, b + shift, op, n, "dispatch")
            for op, a, b in sch.stream_intervals():
                trace.record("gpu" + sfx(g) + ".stream", a + shift, b + shift, op, n, "kernel")
        end = shift + sch.end_ns if self.replay_host is not None else sch.end_ns
        return OpOutcome(max(t, end))

    # -- embedding engine ------------------------------------------------------------------------
    def _lookup(self, n, t, ex, m=0):
        b = self._batch(n, m)
        side = self.sides[m]
        rows = b.unique_rows if self.pipe.lookup_dedup else b.lookup_rows
        out = self._engine_outstanding()
        led = self._ledger
        if self.cache is not None:
            hit, evicted = cache_access(rows, False, *self.cache)
            r_hit = self._serve(self.host_dram, t, self._rows_addr(rows[hit]), self.row_B, False, out)
            r_miss, miss_end = self._host_read(side.tables, t, rows[~hit], out)
            end = max(t, r_hit.done_ns, miss_end, self._write_back(side.tables, t, evicted, out))
            led.cache_lookups += int(hit.size)
            led.cache_hits += int(np.count_nonzero(hit))
            led.cache_writebacks += int(evicted.size)
            led.raw_stall_ns += float(r_miss.raw_stall_ns)
            led.raw_stall_count += int(r_miss.raw_stall_count)
            media_end = end
        else:
            media_end = None
        if self.pipe.embedding_engine == "ndp":
            compute = self.ndp.pool_ns(b.n_indices, self.dim)
            led.logic.pooled_vectors += b.n_indices
        else:
            compute = self.cpu.lookup_compute_ns(b.n_indices, self.dim)
        if media_end is not None:
            return OpOutcome(max(media_end, t + compute))

        def serve(start: float, i: int, j: int) -> float:
            res, end = self._host_read(side.tables, start, rows[i:j], out)
            self._ledger.raw_stall_ns += float(res.raw_stall_ns)
            self._ledger.raw_stall_count += int(res.raw_stall_count)
            return end

        return self._in_segments(t, rows.size, self.row_B, serve, lambda latest: max(latest, t + compute))

    def _correction(self, n, t, ex, m=0):
        if self.pipe.correction == "fused":  # update n−1's pass did the adds (:meth:`_fused_correction_ns`)
            return OpOutcome(t)
        b = self._batch(n, m)
        self._ledger.logic.corrected_vectors += b.n_shared_lookups
        return OpOutcome(t + self.ndp.correction_ns(b.n_shared_lookups, self.dim))

    def _fused_correction_ns(self, n: int, ex: Executor, m: int) -> float:
        """Relaxed lookup, ``correction: fused``: batch ``n``'s update pass, as it computes each
        row's change, also adds it to every vector of batch n+1's bags that holds the row (the
        relaxed lookup already pooled them from the table before update n). The adds run on the
        logic's adder lanes after the update's own (ns of lane time); 0 without a next lookup."""
        if not self.pipe.relaxed_lookup or self.pipe.correction != "fused" or ("lookup" + sfx(m), n + 1) not in ex.ops:
            return 0.0
        shared = self._batch(n + 1, m).n_shared_lookups
        self._ledger.logic.corrected_vectors += shared
        return self.ndp.correction_ns(shared, self.dim)

    def update_rows(self, n: int, m: int = 0) -> np.ndarray:
        """The distinct rows batch ``n``'s update writes on device ``m``, in the order the engine
        visits them (``update_table_order`` of the ndp or host CPU preset)."""
        b = self._batch(n, m)
        engine = self.ndp if self.pipe.embedding_engine == "ndp" else self.cpu
        if engine.params.update_table_order == "reverse":
            return self.streams.layout.tables_reversed(b.unique_rows)
        return b.unique_rows

    def _update(self, n, t, ex, m=0):
        b = self._batch(n, m)
        side = self.sides[m]
        rows = self.update_rows(n, m)
        out = self._engine_outstanding()
        evicted_end = t
        if self.cache is not None:
            hit, evicted = cache_access(rows, True, *self.cache)
            mem = self.host_dram
            evicted_end = self._write_back(side.tables, t, evicted, out)
            self._ledger.cache_writebacks += int(evicted.size)
        else:
            mem = side.tables
        addr = self._rows_addr(rows)
        if self.pipe.embedding_engine == "ndp":
            compute = self.ndp.update_ns(b.n_unique, self.dim, b.n_indices) + self._fused_correction_ns(n, ex, m)
            self._ledger.logic.updated_rows += b.n_unique
            self._ledger.logic.gradient_vectors += b.n_indices
        else:
            compute = self.cpu.update_compute_ns(b.n_unique, self.dim)
        # read each distinct row, add its accumulated gradient, write it back (read, write, ...)
        if self._on_storage(mem):  # the reads fault the pages in; the writes dirty them
            wr = interleave(np.zeros(addr.size, bool), np.ones(addr.size, bool))
            res = self._serve(mem, t, interleave(addr, addr), self.row_B, wr, self.cpu.storage_reads_in_flight())
            return OpOutcome(max(t, res.done_ns + self.cpu.fault_ns(rows.size), evicted_end, t + compute))

        def serve(start: float, i: int, j: int) -> float:
            a = addr[i:j]
            return self._serve(mem, start, interleave(a, a), self.row_B,
                               interleave(np.zeros(a.size, bool), np.ones(a.size, bool)), out).done_ns

        return self._in_segments(t, addr.size, 2 * self.row_B, serve,
                                 lambda latest: max(latest, evicted_end, t + compute))

    # -- data movement -------------------------------------------------------------------------
    def pooled_B_of(self, m: int) -> float:
        """Bytes of pooled vectors (or of their gradients) between device ``m`` and one GPU: one
        fp32 vector per sample and table whose rows ``m`` holds."""
        return self.B * self._transfer_tables(m) * self.dim * FP32_B

    def _transfer_tables(self, m: int) -> float:
        """Pooled vectors per sample device ``m`` sends each GPU (in the full system, when reduced):
        one per table it holds whole; row-sharded, one per table whose bag has a row on it, in
        expectation ``T (1 − (1 − 1/M)^L)`` for bags of ``L`` lookups (rows are scattered over the
        devices by the inputs' bijection; named approximation: lookups independent and uniform
        over the devices; a bag with no row on a device gives no partial sum to send)."""
        tables = self.reduction.tables_per_mem if self.reduction else self.sides[m].tables_count
        M = self.system_mems
        if self.placement is None and self.reduction is None or self.cfg.topology.tables_policy != "row_sharded" or M == 1:
            return float(tables)
        return tables * (1.0 - (1.0 - 1.0 / M) ** self.workload.params.lookups_per_table)

    def _move(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        if self.reduction is not None:
            return self._move_class(nbytes, t, src, dst)
        if self.pipe.data_movement == "cxl_cache":
            path = self._path(src, dst)
            lines = math.ceil(nbytes / self.cxl.line_B)
            self._count_link(cxl_path_key(src, dst), self.cxl.flush_cost(lines, path).size_B)
            return OpOutcome(t + self.cxl.flush_ns(lines, path))
        bounce = self.pipe.embedding_engine == "ndp"  # a PCIe card: device → host → device
        host = self.cpu
        self._count_link("pcie", self.pcie.memcpy_cost(nbytes, bounce, host).size_B)
        return OpOutcome(t + self.pcie.sync_ns(host) + self.pcie.memcpy_ns(nbytes, bounce, host) + self.pcie.launch_ns(host))

    def _move_class(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        """A reduced run's transfer ``src → dst``: the ``groups`` transfers of the system it stands
        for (:meth:`~cxlsim.systems.symmetry.Reduction.represented`), one after another on the
        source's link, each on its own path of the full tree with its trunks loaded by every group's
        traffic (CXL); or, by software, ``groups`` copies per group on the one host that every group
        shares (``groups²`` copies of its time)."""
        key = (src, dst, nbytes)
        if key not in self._transfers:
            red = self.reduction
            if self.pipe.data_movement == "cxl_cache":
                phase = "pooled" if src[0] == "mem" else "grads"
                lines = math.ceil(nbytes / self.cxl.line_B)
                total, counts = 0.0, []
                for a, b in red.represented(src, dst):
                    path = self._sysfab.loaded_path(a, b, phase)
                    total += self.cxl.flush_ns(lines, path)
                    counts.append((cxl_path_key(a, b), self.cxl.flush_cost(lines, path).size_B))
            else:
                bounce = self.pipe.embedding_engine == "ndp"
                host = self.cpu
                one = self.pcie.sync_ns(host) + self.pcie.memcpy_ns(nbytes, bounce, host) + self.pcie.launch_ns(host)
                total = red.groups * red.groups * one
                counts = [("pcie", red.groups * self.pcie.memcpy_cost(nbytes, bounce, host).size_B)]
            self._transfers[key] = (total, counts)
        total, counts = self._transfers[key]
        for path_key, size_B in counts:
            self._count_link(path_key, size_B)
        return OpOutcome(t + total)

    def _pooled(self, n, t, ex, m=0, g=0):
        return self._move(self.pooled_B_of(m), t, ("mem", m), ("gpu", g))

    def _grads(self, n, t, ex, g=0, m=0):
        return self._move(self.pooled_B_of(m), t, ("gpu", g), ("mem", m))

    def transfer_lanes(self, src, dst) -> tuple[str, ...]:
        """The link directions a CXL transfer from ``src`` to ``dst`` holds."""
        if self.fabric is None or self.pipe.data_movement != "cxl_cache":
            return ()
        return self.fabric.lanes(src, dst)

    def ring(self) -> list[tuple[tuple, tuple]]:
        """The all-reduce ring: GPU g sends to GPU g + 1 (mod G)."""
        return [(("gpu", g), ("gpu", (g + 1) % self.gpus)) for g in range(self.gpus)]

    def system_ring(self) -> list[tuple[tuple, tuple]]:
        """The whole system's all-reduce ring (the simulated one in full detail)."""
        return [(("gpu", g), ("gpu", (g + 1) % self.system_gpus)) for g in range(self.system_gpus)]

    def allreduce_step_ns(self, size_B: float) -> float:
        """One ring step: every GPU sends ``size_B`` to its neighbour at once. Over the fabric, a
        link direction that several sends cross serialises them: the step takes the longest path
        latency plus the busiest link's serialisation (CXL.mem line writes, 64 B each); by software,
        each GPU's copy bounces through host memory, the host issuing them one after another. A
        reduced run times the whole system's ring."""
        if size_B in self._ar_step:
            return self._ar_step[size_B]
        if self.pipe.data_movement != "cxl_cache":
            h = self.cpu
            ns = self.system_gpus * (self.pcie.memcpy_ns(size_B, True, h) + self.pcie.launch_ns(h)) + self.pcie.sync_ns(h)
        else:
            fabric = self.system_fabric
            lines = math.ceil(size_B / self.cxl.line_B)
            busy: dict[str, float] = {}
            latency = 0.0
            for src, dst in self.system_ring():
                path = fabric.path(src, dst)
                latency = max(latency, self.cxl.write_line_ns(0.0, path))
                for lane, link in zip(fabric.lanes(src, dst), path.links, strict=True):
                    busy[lane] = busy.get(lane, 0.0) + link.stream_ns(lines, self.cxl.line_B)
            ns = latency + max(busy.values())
        self._ar_step[size_B] = ns
        return ns

    def _allreduce(self, n, t, ex):
        """Ring all-reduce of the MLP gradients over the GPUs: 2 (G − 1) steps of 1/G of them each
        (reduce-scatter, then all-gather), each step's additions streamed by the receiving GPU. A
        reduced run charges the ledger the ring edges leaving its GPUs."""
        G = self.system_gpus
        shard_B = self.mlp_B / G
        steps = 2 * (G - 1)
        add_ns = 3 * shard_B / (self.gpu.params.mem_bw_GBps * self.gpu.params.mem_bw_efficiency_fraction)
        edges = group_ring_edges(self.reduction) if self.reduction else self.ring()
        for src, dst in edges:
            if self.pipe.data_movement == "cxl_cache":
                path = self.system_fabric.path(src, dst)
                self._count_link(cxl_path_key(src, dst), steps * self.cxl.write_cost(shard_B, 0.0, path).size_B)
            else:
                self._count_link("pcie", steps * self.pcie.memcpy_cost(shard_B, True, self.cpu).size_B)
        return OpOutcome(t + steps * self.allreduce_step_ns(shard_B) + (G - 1) * add_ns)

    # -- persistence -----------------------------------------------------------------------------
    def _flag_ns(self, mem: Memory) -> float:
        """A persistent flag: one line written after the data it covers is acknowledged (a fence),
        so it costs one idle write of the flag's line after that point (pure API: the flag is issued
        in the future, beyond the streams already served); its media traffic is charged to the
        batch. The line is the checkpointing logic's ``flag_line_B``, or the host's cache line."""
        line_B = (self.ckpt.params.flag_line_B if self.pipe.checkpoint_agent == "ckpt_logic"
                  else self.cpu.params.cache_line_B)
        m = mem.model
        tr = self._ledger.traffic(mem.key)
        tr.media_write_B += m.units(line_B) * m.unit_B
        if m.params.read_modify_write and line_B % m.unit_B:  # a partial unit is read first
            tr.media_read_B += m.unit_B
        tr.requested_B += line_B
        tr.accesses += 1
        return m.access_cost("write", line_B).time_ns

    def _burst_B(self) -> int:
        """Bytes the checkpoint agent writes to the log or redo record per request."""
        if self.pipe.checkpoint_agent == "ckpt_logic":
            return self.ckpt.params.burst_B
        return HOST_WRITE_B

    def _copy_rows(self, side: MemSide, rows: np.ndarray, dst_base: int, t: float, outstanding: int | tuple[int, int],
                   read_source: bool = True) -> float:
        """Copy rows into a sequential log area: rows are gathered (read) from the data region and
        written packed, in the agent's bursts (:meth:`_burst_B`), each burst after the reads that
        fill it in the stream.

        ``outstanding`` (:meth:`_ckpt_outstanding`): the host's or near-data logic's one closed
        loop, or the checkpointing logic's ``(reads, writes)``: separate pools, as its AXI read and
        write channels. Named approximation (split pools): a write burst is issued when a write
        slot is free, not held until the reads that fill it are back. The media model orders each
        module's commands and books a write's command at its acknowledgement (630 ns after issue on
        the emulated U200 PMEM); held writes would then stall every later read on their module for
        that long (RM1's log on the prototype: 7.6 ms, against 2.4 ms unheld); without that
        ordering, holding them changes the copy by ≈1 % (docs/timing-model.md). The last burst can
        then be acknowledged before the last read returns: the copy ends early by at most one
        burst's write latency.
        Returns the time the last write is acknowledged."""
        if rows.size == 0:
            return t
        burst_B = self._burst_B()
        nbytes = rows.size * self.row_B
        k = int(math.ceil(nbytes / burst_B))
        dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
        if not read_source:
            return self._serve(side.ckpt_mem, t, dst, burst_B, True, outstanding).done_ns
        src = self._rows_addr(rows)
        if side.ckpt_mem is not side.tables:  # two streams: with (reads, writes), each takes its own pool
            r = self._serve(side.tables, t, src, self.row_B, False, outstanding)
            w = self._serve(side.ckpt_mem, t, dst, burst_B, True, outstanding)
            return max(r.done_ns, w.done_ns)
        addr, size, wr = log_copy_stream(src, dst_base, self.row_B, burst_B)
        return self._serve(side.tables, t, addr, size, wr, outstanding).done_ns

    def pull_mlp_ns(self, nbytes: float, m: int = 0) -> float:
        """Time to bring ``nbytes`` of MLP parameters from the GPU to device ``m``'s checkpointing
        side (its source GPU, :attr:`MemSide.source_gpu`)."""
        if nbytes <= 0:
            return 0.0
        if self.pipe.mlp_pull == "cxl_cache":
            lines = math.ceil(nbytes / self.cxl.line_B)
            # GPU memory serves lines at its streaming bandwidth; its load latency (hundreds of ns)
            # is not a GPU-preset parameter and is negligible against megabyte pulls: left out
            gpu_bw = self.gpu.params.mem_bw_GBps * self.gpu.params.mem_bw_efficiency_fraction
            path = self._path(("gpu", self.sides[m].source_gpu), ("mem", m))
            return self.cxl.cache_fill_ns(lines, 0.0, path, self.cxl.line_B / gpu_bw)
        bounce = self.pipe.checkpoint_agent == "ndp"
        return self.pcie.sync_ns(self.cpu) + self.pcie.memcpy_ns(nbytes, bounce, self.cpu)

    def _write_mlp(self, side: MemSide, nbytes: float, base: int, t: float, pull_ns: float,
                   outstanding: int | tuple[int, int], count: bool = True) -> float:
        """Write ``nbytes`` sequentially at ``base`` while they arrive over ``pull_ns``; returns the
        later of the last acknowledgement and the end of the pull. ``count``: charge the pull to
        the ledger (:meth:`_count_pull`; a segmented pull charges it once, whole)."""
        if nbytes <= 0:
            return t
        if count:
            self._count_pull(side, nbytes)
        burst_B = self._burst_B()
        k = int(math.ceil(nbytes / burst_B))
        addr = base + np.arange(k, dtype=np.int64) * burst_B
        w = self._serve(side.ckpt_mem, t, addr, burst_B, True, outstanding)
        return float(max(w.done_ns, t + pull_ns))

    def _count_pull(self, side: MemSide, nbytes: float) -> None:
        """Charge a pull of ``nbytes`` of MLP parameters: the logged bytes, the DMA engine's work,
        the link bytes (as the link's cost model prices one transfer of that size)."""
        # the bytes pulled as pull_mlp_ns times them (counted here: relaxed logging pulls part)
        self._ledger.mlp_log_B += nbytes
        if self.pipe.checkpoint_agent == "ckpt_logic" and self.pipe.mlp_pull == "cxl_cache":
            self._ledger.logic.dma_B += nbytes  # the checkpointing logic pulls them itself
        if self.pipe.mlp_pull == "cxl_cache":
            path = self._path(("gpu", side.source_gpu), ("mem", side.index))
            self._count_link(cxl_path_key(self._ep(("gpu", side.source_gpu)), self._ep(("mem", side.index))),
                             self.cxl.read_cost(nbytes, 0.0, path).size_B)
        else:
            self._count_link("pcie", self.pcie.memcpy_cost(nbytes, self.pipe.checkpoint_agent == "ndp", self.cpu).size_B)

    def _ckpt_outstanding(self) -> int | tuple[int, int]:
        """Requests the persistence agent keeps in flight: the checkpointing logic's separate read
        and write pools (its AXI read and write channels, :attr:`CkptLogicModel.outstanding`), else
        the embedding engine's one closed loop (the host's line-fill buffers, the near-data
        logic's ports), as it serves its own streams."""
        if self.pipe.checkpoint_agent == "ckpt_logic":
            if self.pipe.log_copy_channels == "shared":  # one closed loop, as before the channels split
                return self.ckpt.params.read_outstanding_count
            return self.ckpt.outstanding
        return self._engine_outstanding()

    def _emb_log(self, n, t, ex, m=0):
        """Copy the rows batch ``n`` will update into its log slot (in :data:`SEGMENT_B`
        segments), then set the flag."""
        b = self._batch(n, m)
        side = self.sides[m]
        out = self._ckpt_outstanding()
        rows, base = b.unique_rows, self.emb_log_base[n % 2]
        self._ledger.logic.dma_B += rows.size * self.row_B
        issue_end = t + self.ckpt.copy_issue_ns(rows.size * self.row_B, rows.size)
        return self._in_segments(
            t, rows.size, self.row_B,
            lambda start, i, j: self._copy_rows(side, rows[i:j], base + i * self.row_B, start, out),
            lambda latest: max(latest, issue_end) + self._flag_ns(side.ckpt_mem))

    def _mlp_log(self, n, t, ex, m=0):
        side = self.sides[m]
        shard = side.mlp_B
        out = self._ckpt_outstanding()
        if not self.pipe.relaxed_mlp_log:  # the whole shard, in segments, then the flag
            pull_end = t + self.pull_mlp_ns(shard, m)
            return self._pull_in_segments(side, shard, self.mlp_log_base, t, pull_end - t, out,
                                          lambda latest: max(latest, pull_end) + self._flag_ns(side.ckpt_mem))
        # relaxed: copy only while its source GPU runs interaction + top MLP of batch n (SPEC §3.4)
        window_end = ex.planned_end(("t_mlp" + sfx(side.source_gpu), n))
        prog = side.mlp_log
        if prog.first_batch < 0:
            prog.first_batch = n
        left = shard - prog.done_B
        end = t
        if window_end > t and left > 0:
            rate_ns_per_B = self.pull_mlp_ns(shard, m) / shard
            nbytes = min(left, (window_end - t) / rate_ns_per_B)
            pull = nbytes * rate_ns_per_B
            end = self._write_mlp(side, nbytes, self.mlp_log_base + int(prog.done_B), t, pull, out)
            prog.done_B += nbytes
        if prog.done_B >= shard - 1e-6:
            end += self._flag_ns(side.ckpt_mem)
            prog.complete_span = (prog.first_batch, n)
            prog.done_B, prog.first_batch = 0.0, -1
        gap = n - prog.complete_span[0] if prog.complete_span else n + 1
        self._ledger.mlp_log_gap_batches = max(self._ledger.mlp_log_gap_batches, gap)  # the worst device's
        return OpOutcome(end, label=f"mlp_log{sfx(m)} {n} ({100 * prog.done_B / shard:.0f}%)")

    def _pull_in_segments(self, side: MemSide, nbytes: float, base: int, t: float, pull_ns: float,
                          outstanding, finish) -> OpOutcome:
        """Pull ``nbytes`` of MLP parameters (``pull_ns`` in all) and write them from ``base``, in
        :data:`SEGMENT_B` segments: each segment's bytes stream in at the pull's rate (no new
        latency per segment) and are written as they arrive; ``finish`` as :meth:`_in_segments`."""
        n = int(math.ceil(nbytes))
        rate = pull_ns / nbytes if nbytes > 0 else 0.0
        if nbytes > 0:
            self._count_pull(side, nbytes)

        def serve(start: float, i: int, j: int) -> float:
            k = min(float(j), nbytes) - i
            return max(start + k * rate, self._write_mlp(side, k, base + i, start, k * rate, outstanding, count=False))

        return self._in_segments(t, n, 1.0, serve, finish)

    def _redo_mlp(self, n, t, ex, m=0):
        """``redo_mlp_pull: with_optimizer``: the record's MLP part, pulled as soon as the optimizer
        step has produced the parameters, beside the update (written after the record's rows' space)."""
        b = self._batch(n, m)
        side = self.sides[m]
        pull = self.pull_mlp_ns(side.mlp_B, m)
        mlp_base = self.redo_base + side.redo_cursor + b.n_unique * self.row_B
        return self._pull_in_segments(side, side.mlp_B, mlp_base, t, pull, self._ckpt_outstanding(),
                                      lambda latest: max(latest, t + pull))

    def _redo(self, n, t, ex, m=0):
        b = self._batch(n, m)
        side = self.sides[m]
        out = self._ckpt_outstanding()
        base = self.redo_base + side.redo_cursor
        agent = self.pipe.checkpoint_agent
        # the host already holds the rows it just updated; logic reads them from the data region
        rows_end = self._copy_rows(side, b.unique_rows, base, t, out, read_source=agent != "host_cpu")
        if agent == "ckpt_logic":
            rows_end = max(rows_end, t + self.ckpt.copy_issue_ns(b.n_unique * self.row_B, b.n_unique))
            self._ledger.logic.dma_B += b.n_unique * self.row_B
        record_B = b.n_unique * self.row_B + side.mlp_B
        side.redo_cursor = (side.redo_cursor + self._round(record_B)) % (64 * self._round(record_B))
        if self.pipe.redo_mlp_pull == "with_optimizer":  # its MLP part is under way: commit after both
            key, ledger = ("redo_mlp" + sfx(m), n), self._ledger

            def commit(now: float) -> OpOutcome:
                if ex.finished(key):
                    self._ledger = ledger
                    return OpOutcome(max(now, ex.planned_end(key)) + self._flag_ns(side.ckpt_mem))
                return OpOutcome(max(now, ex.planned_end(key)), resume=commit)  # its current segment's end

            return OpOutcome(rows_end, resume=commit)
        pull = self.pull_mlp_ns(side.mlp_B, m)
        mlp_end = max(t + pull, self._write_mlp(side, side.mlp_B, base + b.n_unique * self.row_B, t, pull, out))
        return OpOutcome(max(rows_end, mlp_end) + self._flag_ns(side.ckpt_mem))
