"""How long each dataflow step takes on one system's devices (the :class:`~.dataflow.Machine`).

One machine serves every system: the pipeline's axes (:mod:`cxlsim.systems.axes`) choose the
engine (near-data logic or host CPU), the mover (CXL.cache flushes or the software path over PCIe),
the persistence scheme and its agent; their implementations time their own steps. Memory
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
- the GPU phases are the PyTorch eager step: the ops the host dispatches
  (:mod:`cxlsim.workloads.dlrm_ops`) priced and placed on a CUDA stream (:mod:`cxlsim.devices.gpu_step`). Each GPU has one dispatching host thread that runs ahead of
  its stream: a phase's dispatch starts when that thread is free and the phase's inputs other than
  the same GPU's earlier phases are ready (pooled vectors, the all-reduce); its kernels start no
  earlier than the GPU is free. A GPU that *replays* a step measured elsewhere (the platform gives a
  ``replay_host`` role: the prototype's Vortex replays RTX 3090 cycles measured from an i5-9600K)
  takes each phase's span as that host and GPU ran it alone, and its own host dispatches nothing.
  The dispatching thread is not charged against the host's embedding work (one core of several).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cxlsim.arrays import unique as sorted_unique
from cxlsim.devices.gpu_step import StepModel
from cxlsim.devices.media import AccessStream
from cxlsim.engine.executor import Executor, OpOutcome
from cxlsim.kernels.vector_cache import cache_access
from cxlsim.systems import axes
from cxlsim.systems.activity import BatchLedger
from cxlsim.systems.config import DeviceRole
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.host_llc import HostLlc
from cxlsim.systems.scale import partial_sums_per_sample
from cxlsim.systems.streams import BatchStreams, StreamSet
from cxlsim.systems.symmetry import Reduction, SystemFabric, group_ring_edges
from cxlsim.systems.topology import Fabric, Placement
from cxlsim.systems.vector_cache_start import starting_cache
from cxlsim.units import FP32_B, GiB
from cxlsim.workloads.dlrm_ops import DlrmStep, StepShapes

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
    per = max(1, burst_B // row_B)
    if burst_B % row_B == 0 and k == -(-n // per):  # whole rows a burst: place the writes directly
        pos = np.arange(n) + np.arange(n) // per  # read i follows the writes of the bursts before its own
        w_pos = np.minimum((np.arange(k) + 1) * (per + 1) - 1, n + k - 1)
        addr = np.empty(n + k, np.result_type(src_B, dst))
        size = np.empty(n + k, np.int64)
        wr = np.empty(n + k, bool)
        addr[pos], addr[w_pos] = src_B, dst
        size[pos], size[w_pos] = row_B, burst_B
        wr[pos], wr[w_pos] = False, True
        return addr, size, wr
    burst_of = np.arange(n) // per
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
    """Durations of dataflow steps for a system's devices on ``streams`` (module docstring).

    The engine-facing shell: each pipeline axis's implementation (:mod:`cxlsim.systems.axes`) is
    built once here and its step functions bound in :attr:`steps`; the shell serves memory
    streams, keeps the ledgers and runs the GPU phases, and branches on no pipeline setting.
    """

    def __init__(self, devices: DeviceGraph, streams: StreamSet, gpus: int = 1, mems: int = 1,
                 fabric: Fabric | None = None, placement: Placement | None = None,
                 reduction: Reduction | None = None, system_fabric: Fabric | None = None,
                 device_streams: list | None = None) -> None:
        cfg = self.cfg = devices.config
        self.devices = devices
        p = self.pipe = cfg.pipeline
        self.streams = streams
        w = self.workload = streams.workload
        self.gpus, self.mems = gpus, mems  # the devices simulated (a reduced run: the representative group's)
        self.fabric, self.placement = fabric, placement
        #: symmetry reduction (:mod:`cxlsim.systems.symmetry`): None in full detail
        self.reduction = reduction
        #: a reduced run's memory devices serve these (the system device each stands for), not their
        #: part of the group's own samples (:mod:`cxlsim.systems.device_streams`)
        self.device_streams = device_streams
        self.system_gpus = reduction.gpus if reduction else gpus
        self.system_mems = reduction.mems if reduction else mems
        #: the whole system's switch tree (paths, energy); the simulated one in full detail
        self.system_fabric = system_fabric if reduction else fabric
        self._sysfab = (SystemFabric(system_fabric, self.system_gpus, self.system_mems)
                        if reduction and system_fabric is not None else None)
        self._transfers: dict[tuple, tuple[float, list[tuple[str, float]]]] = {}
        self._ar_step: dict[float, float] = {}
        self._trunk_ns: dict[tuple[str, str, str], float] = {}  # (phase, node, direction) -> a transfer's time
        self._allreduce_ns = 0.0
        self.B = w.params.batch_size // gpus  # per GPU (the streams hold every GPU's samples)
        self.T = w.params.tables
        self.dim = w.params.dim
        self.row_B = w.row_B
        self.mlp_params = w.mlp_param_count  # bottom + interaction + top (docs/workloads.md)
        self.mlp_B = self.mlp_params * w.mlp_param_B  # as the checkpoint pulls and logs them (mlp_param_width)
        self.mlp_grad_B = self.mlp_params * FP32_B  # the gradients all-reduced: training is fp32 (docs/workloads.md)
        self.pooled_B = self.B * self.T * self.dim * FP32_B

        self.gpu = devices["gpu"]
        self.cpu = devices["host_cpu"]
        self.pcie = devices.get("pcie")
        #: the host whose dispatch a replaying GPU's phases were measured with (None: this system's host dispatches)
        self.replay_host = devices.get("replay_host")
        self.step_model = StepModel(self.gpu, self.replay_host or self.cpu, self.pcie)
        self.shapes = StepShapes.from_workload(w, batch=self.B)
        self.phase_ops = DlrmStep(self.step_model).step_ops(self.shapes)
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

        # the pipeline's axes, each built once (persistence last: it may ask the others)
        self.engine = axes.of(p, "embedding_engine")(self)
        self.mover = axes.of(p, "data_movement")(self)
        persistence_cls = axes.of(p, "persistence")
        self.agent = axes.of(p, "checkpoint_agent")(self) if persistence_cls.persists else None
        self.puller = axes.of(p, "mlp_pull")(self) if persistence_cls.persists else None
        self.correction = axes.of(p, "correction")(self) if p.relaxed_lookup else None
        #: the logic pulls MLP parameters itself (its DMA engine's bytes)
        self._pull_dma = self.agent is not None and self.agent.dma_engine and self.puller.by_device

        self.cache = None
        self.memories: dict[str, Memory] = {}  # every memory the machine serves, by ledger key
        self._checkpoint_role = persistence_cls.checkpoint_role(p)
        self.sides = [self._side(m) for m in range(mems)]
        side = self.sides[0]
        self.tables, self.ckpt_mem = side.tables, side.ckpt_mem  # the first device's, by their plain names
        if p.vector_cache_GB > 0:
            self.host_dram = Memory(cfg.role("host_dram"), devices["host_dram"])
            self.memories[self.host_dram.role] = self.host_dram
            self.cache = starting_cache(p.vector_cache_start, streams, int(p.vector_cache_GB * 1e9 // self.row_B),
                                        self.engine.device.params.update_table_order == "reverse")
        self.engine_lane = side.engine_lane
        self.mover_lane = self.mover.lane
        self.agent_lane = side.agent_lane
        self.mlp_log_lane = side.mlp_log_lane

        data_end = p.table_region_offset_B + streams.layout.total_B
        self.data_base = p.table_region_offset_B
        #: the log region: from the next GiB boundary after the data region when it shares the
        #: table memory, else from address 0 of the checkpoint memory
        self.log_base = (data_end // GiB + 1) * GiB if self.ckpt_mem is self.tables else 0
        #: the host's last-level cache in front of its table memory, where the host runs the embeddings
        #: and its CPU preset has one (:mod:`cxlsim.systems.host_llc`); None otherwise
        self.llc = (HostLlc(self.cpu, self.data_base, self.row_B, data_end)
                    if self.engine.device is self.cpu and self.cpu.llc_lines > 0 else None)
        self.mlp_log = side.mlp_log
        self._views: dict[tuple[int, int], BatchStreams] = {}
        #: what each batch did (:mod:`cxlsim.systems.activity`), filled as its ops run
        self.ledgers: dict[int, BatchLedger] = {}
        self._ledger = BatchLedger()
        self.persistence = persistence_cls(self)
        self.engine.check_batch()
        self._declare_unused()
        #: step name → its timing function ``(batch, start_ns, ex, *device)``, bound once
        self.steps: dict[str, Callable[..., OpOutcome]] = {
            "begin": self._begin, "config": self._config, "b_fwd": self._b_fwd, "t_mlp": self._t_mlp,
            "b_bwd": self._b_bwd, "mlp_opt": self._mlp_opt, "lookup": self._lookup, "update": self._update,
            "pooled": self._pooled, "grads": self._grads, "allreduce": self._allreduce,
        }
        if self.correction is not None:
            self.steps["correction"] = self.correction.step
        self.steps.update(self.persistence.steps())
        self._fused_correction_ns = (self.correction.fused_ns if self.correction is not None
                                     else lambda n, ex, m: 0.0)

    @property
    def implementations(self) -> tuple:
        """The axis implementations this machine runs (those its pipeline uses)."""
        return tuple(i for i in (self.engine, self.mover, self.agent, self.puller, self.correction, self.persistence)
                     if i is not None)

    def _side(self, m: int) -> MemSide:
        cfg, p, d = self.cfg, self.pipe, self.devices
        s = sfx(m)
        tables = Memory(cfg.role(p.tables_on), d[p.tables_on], s)
        ckpt_mem = tables
        if self._checkpoint_role is not None and self._checkpoint_role != p.tables_on:
            ckpt_mem = Memory(cfg.role(self._checkpoint_role), d[self._checkpoint_role], s)
        for mem in (tables, ckpt_mem):
            self.memories[mem.key] = mem
        engine = self.engine.lane
        agent = self.agent.lane if self.agent is not None else self.engine.lane
        ckpt = d.get("ckpt_logic")
        mlp_lane = "ckpt_logic.mlp" if ckpt is not None and ckpt.params.channels_count >= 2 else "ckpt_logic"

        def on(lane: str) -> str:  # the host is one, whatever the devices
            return lane if lane == "host_cpu" else lane + s

        shard = self.mlp_B / self.system_mems
        n_tables = self.placement.tables_on(m) if self.placement is not None else self.T
        return MemSide(m, tables, ckpt_mem, on(engine), on(agent),
                       mlp_lane if m == 0 else f"ckpt_logic{s}{mlp_lane[len('ckpt_logic'):]}",
                       n_tables, shard, m % self.gpus)

    def _declare_unused(self) -> None:
        """Say which role parameters this pipeline does not use, and why (the reach check and the
        refusal of overrides read these reasons, :mod:`cxlsim.systems.reach`): the machine's own,
        then each axis implementation's ``declare_unused``."""
        cpu = self.cpu.params
        if not any(self.on_storage(m) for m in self.memories.values()):
            cpu.skip("major_fault_us", "no table is memory-mapped from storage here")
        for impl in self.implementations:
            impl.declare_unused()
        if self.agent is None:
            cpu.skip("streaming_store_lines_count", "no checkpoint records are written here")
        if self.llc is None:
            why = ("no last-level cache in front of tables here: the host runs no embedding operator, or its "
                   "llc_capacity_B is 0")
            for key in ("llc_capacity_B", "llc_ways_count", "llc_hit_latency_ns", "llc_hit_bw_GBps"):
                cpu.skip(key, why)
        if self.pcie is None:
            cpu.skip("kernel_launch_instructions", "no software data path here (no pcie role): the GPU's kernels are "
                     "launched inside the framework's operators (op_dispatch_*_instructions)")
        if self.replay_host is not None:
            if self.pcie is None and self.engine.on_device:
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
        if self.pcie is None or not (self.engine.bounces or (self.agent is not None and self.agent.bounces)
                                     or self.system_gpus > 1):
            self.pipe.skip("bounce", "no software copy of this system bounces through host memory")
        if self.pcie is not None:
            pcie = self.pcie.params
            if self.pipe.bounce != "chunked":
                pcie.skip("bounce_chunk_B", "pipeline.bounce is serial: each leg copies whole")
            if not self.engine.bounces:
                for key in ("bounce_host_copy", "host_copy_bw_GBps"):
                    pcie.skip(key, "no copy of this system bounces through host memory (the host is the embedding engine)")
            elif not pcie.bounce_host_copy:
                pcie.skip("host_copy_bw_GBps", "bounce_host_copy is false: the bounce uses one staging buffer")
        if self.cxl is not None:
            cxl = self.cxl.params
            cxl.skip("dcoh_snoop_ns", "no step of this dataflow snoops a DCOH (flushes push the lines to their home)")
            cxl.skip("mmio_read_ns", "the host only writes device registers (posted MMIO writes); no step reads one")
            cxl.skip("mmio_write_ns", "the system's host issues the register writes (its cpu mmio_write_instructions)")

    # -- helpers -----------------------------------------------------------------------------
    def round_GiB(self, nbytes: float) -> int:
        """``nbytes`` rounded up to whole GiB (log areas start on a GiB)."""
        return int(math.ceil(nbytes / GiB) * GiB)

    def batch(self, n: int, m: int = 0) -> BatchStreams:
        """Batch ``n``'s streams, or the part of them memory device ``m`` holds."""
        if self.device_streams:
            return self.device_streams[m].batch(n)
        b = self.streams.batch(n)
        if self.mems == 1:
            return b
        key = (n, m)
        if key not in self._views:
            owner, u_owner = self.placement.mem_of(b.lookup_rows), self.placement.mem_of(b.unique_rows)
            for i in range(self.mems):
                self._views[(n, i)] = b.on(owner, u_owner, i)
        return self._views[key]

    def rows_addr(self, rows: np.ndarray) -> np.ndarray:
        """Addresses of table rows in the data region (int64: row ids may be held in int32)."""
        return self.data_base + rows.astype(np.int64, copy=False) * self.row_B

    def on_storage(self, mem: Memory) -> bool:
        """Whether the host engine reaches ``mem`` as storage: an SSD holding the tables is memory
        mapped, so a read of a row not in memory is a major page fault (named assumption,
        docs/timing-model.md)."""
        return self.engine.maps_storage and mem.model.family == "ssd"

    def _host_read(self, mem: Memory, t: float, rows: np.ndarray, out: int):
        """The host engine's reads of ``rows`` from ``mem``: a memory stream with ``out`` in flight,
        or, from storage, synchronous page faults (one per worker thread in flight) whose handling
        the threads pay on top of the device's time. Returns (result, done_ns)."""
        if not self.on_storage(mem):
            res = self.serve(mem, t, self.rows_addr(rows), self.row_B, False, out)
            return res, res.done_ns
        res = self.serve(mem, t, self.rows_addr(rows), self.row_B, False, self.cpu.storage_reads_in_flight())
        return res, res.done_ns + self.cpu.fault_ns(rows.size)

    def _write_back(self, mem: Memory, t: float, rows: np.ndarray, out: int) -> float:
        """Write evicted (dirty) cached rows back to ``mem``; returns when acknowledged."""
        if rows.size == 0:
            return t
        if self.on_storage(mem):
            out = self.cpu.storage_reads_in_flight()
        return self.serve(mem, t, self.rows_addr(rows), self.row_B, True, out).done_ns

    def copy_ns(self, nbytes: float, route: str) -> float:
        """A software copy of ``nbytes`` over the ``pcie`` role by this system's host, ns: direct in
        a direction (``"h2d"``, ``"d2h"``), or bounced through host memory (``"d2h2d"``) with its
        legs in sequence or overlapped chunk by chunk (``pipeline.bounce``;
        :meth:`~cxlsim.devices.pcie.PcieLink.memcpy_ns`)."""
        chunk_B = self.pcie.params.bounce_chunk_B if route == "d2h2d" and self.pipe.bounce == "chunked" else 0
        return self.pcie.memcpy_ns(nbytes, route, self.cpu, chunk_B)

    def count_link(self, path: str, nbytes: float) -> None:
        """Accounting, no timing effect: ``nbytes`` on link ``path`` in the batch being served
        (``pcie``, or :func:`~cxlsim.systems.activity.cxl_path_key` of the path's endpoints)."""
        self._ledger.add_link(path, nbytes)

    @property
    def ledger(self) -> BatchLedger:
        """The ledger of the batch being served."""
        return self._ledger

    def serve(self, mem: Memory, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int | tuple[int, int]):
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
        return self.steps[base](batch, start_ns, ex, *(int(i) for i in index))

    def in_segments(self, t: float, n_items: int, item_B: float, serve, finish) -> OpOutcome:
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

    def restore_ledger(self, ledger: BatchLedger) -> None:
        """Charge what follows to ``ledger`` (a step resumed after other batches' steps ran)."""
        self._ledger = ledger

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
        """The host hands batch ``n``'s indices to device ``m``'s engine: the engine's own
        dispatch, or the mover's hand-over."""
        return self.engine.config(n, t, m)

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
        b = self.batch(n, m)
        side = self.sides[m]
        rows = b.unique_rows if self.pipe.lookup_dedup else b.lookup_rows
        compute = self.engine.lookup_compute_ns(b, self._ledger)
        below, wb, llc_ns = self._through_llc(rows, False, lookup=True)
        return self._read_below(side, t, below, wb, self.engine.outstanding(),
                                lambda latest: max(latest + llc_ns, t + compute))

    def _through_llc(self, rows: np.ndarray, write: bool, lookup: bool = False):
        """The host touches ``rows`` through its last-level cache (:attr:`llc`): ``(rows it must
        read from the memory below, the write-backs (addresses, sizes) the cache evicted or None,
        the time the cores take for the rows that hit)``; without a cache every row goes below.
        Charges the lines and hits to the batch's ledger (``lookup``: also as the lookup's)."""
        if self.llc is None:
            return rows, None, 0.0
        acc = self.llc.access(self.rows_addr(rows), write, rows)
        led = self._ledger
        led.llc_lines += acc.lines
        led.llc_hits += acc.hit_lines
        led.llc_writeback_B += float(acc.wb_size_B.sum())
        if lookup:
            led.llc_lookup_lines += acc.lines
            led.llc_lookup_hits += acc.hit_lines
        return rows[~acc.row_hit], (acc.wb_addr_B, acc.wb_size_B), self.cpu.llc_hit_ns(acc.served_lines)

    def _llc_writeback_to_cache(self, t: float, wb, out: int) -> tuple[float, np.ndarray]:
        """The last-level cache's write-backs into the vector cache (host DRAM) that sits below it:
        their rows are written (write-allocate, dirty) in the vector cache and their lines in host
        DRAM. Returns (when acknowledged, the rows the vector cache evicted dirty)."""
        if wb is None or wb[0].size == 0:
            return t, np.zeros(0, np.int64)
        addr, size = wb
        rows = sorted_unique((addr - self.data_base) // self.row_B)
        _, evicted = cache_access(rows, True, *self.cache)
        return self.serve(self.host_dram, t, addr, size, True, out).done_ns, evicted

    def _write_requests(self, mem: Memory, t: float, addr: np.ndarray, size: np.ndarray, out: int) -> float:
        """Write requests (the last-level cache's write-backs) to ``mem``; returns when acknowledged."""
        if addr.size == 0:
            return t
        if self.on_storage(mem):
            out = self.cpu.storage_reads_in_flight()
        return self.serve(mem, t, addr, size, True, out).done_ns

    def _read_below(self, side: MemSide, t: float, rows: np.ndarray, wb, out: int, finish,
                    segmented: bool = True, count_raw: bool = True):
        """The host reads ``rows`` from the memory below its last-level cache and writes back ``wb``
        (None: none): the vector cache (its hits from host DRAM, its misses from the tables, its
        dirty evictions written back to them) where there is one, else the tables, in segments
        (:meth:`in_segments`; not ``segmented``: one stream, its end returned as a number), the
        write-backs spread over the segments. ``finish(latest)`` gives the op's end."""
        led = self._ledger
        if self.cache is not None:
            hit, evicted = cache_access(rows, False, *self.cache)
            r_hit = self.serve(self.host_dram, t, self.rows_addr(rows[hit]), self.row_B, False, out)
            r_miss, miss_end = self._host_read(side.tables, t, rows[~hit], out)
            wb_end, wb_evicted = self._llc_writeback_to_cache(t, wb, out)
            evicted = np.concatenate([evicted, wb_evicted])
            end = max(t, r_hit.done_ns, miss_end, wb_end, self._write_back(side.tables, t, evicted, out))
            if count_raw:
                led.cache_lookups += int(hit.size)
                led.cache_hits += int(np.count_nonzero(hit))
                led.raw_stall_ns += float(r_miss.raw_stall_ns)
                led.raw_stall_count += int(r_miss.raw_stall_count)
            led.cache_writebacks += int(evicted.size)
            end = finish(end)
            return end if not segmented else OpOutcome(end)
        n_wb = 0 if wb is None else wb[0].size

        def serve(start: float, i: int, j: int) -> float:
            end = start
            if j > i:
                res, end = self._host_read(side.tables, start, rows[i:j], out)
                if count_raw:
                    self._ledger.raw_stall_ns += float(res.raw_stall_ns)
                    self._ledger.raw_stall_count += int(res.raw_stall_count)
            if n_wb:  # this segment's share of the write-backs
                k0 = i * n_wb // rows.size if rows.size else 0
                k1 = n_wb if j >= rows.size else j * n_wb // rows.size
                end = max(end, self._write_requests(side.tables, start, wb[0][k0:k1], wb[1][k0:k1], out))
            return end

        if not segmented:
            return finish(serve(t, 0, rows.size))
        return self.in_segments(t, rows.size, self.row_B, serve, finish)

    def update_rows(self, n: int, m: int = 0) -> np.ndarray:
        """The distinct rows batch ``n``'s update writes on device ``m``, in the order the engine
        visits them (``update_table_order`` of the ndp or host CPU preset)."""
        b = self.batch(n, m)
        if self.engine.device.params.update_table_order == "reverse":
            return self.streams.layout.tables_reversed(b.unique_rows)
        return b.unique_rows

    def _update(self, n, t, ex, m=0):
        b = self.batch(n, m)
        side = self.sides[m]
        rows = self.update_rows(n, m)
        out = self.engine.outstanding()
        compute = self.engine.update_compute_ns(b, self._ledger) + self._fused_correction_ns(n, ex, m)
        # read each distinct row, add its accumulated gradient, write it back: through a last-level
        # cache, the rows that miss are read (write-allocate) and the writes stay in it, dirty, until
        # evicted (the write-backs it evicts now go below); without one, read, write, ... to the memory
        below, wb, llc_ns = self._through_llc(rows, True)
        rmw = self.llc is None
        evicted_end = t
        if self.cache is not None:
            hit, evicted = cache_access(below, True, *self.cache)
            mem = self.host_dram
            wb_end, wb_evicted = self._llc_writeback_to_cache(t, wb, out)
            evicted = np.concatenate([evicted, wb_evicted])
            evicted_end = max(wb_end, self._write_back(side.tables, t, evicted, out))
            self._ledger.cache_writebacks += int(evicted.size)
            wb = None
        else:
            mem = side.tables
        addr = self.rows_addr(below)
        n_wb = 0 if wb is None else wb[0].size

        def stream(a: np.ndarray):
            if rmw:
                return interleave(a, a), interleave(np.zeros(a.size, bool), np.ones(a.size, bool))
            return a, False

        if self.on_storage(mem):  # the reads fault the pages in; the writes dirty them
            a, wr = stream(addr)
            res = self.serve(mem, t, a, self.row_B, wr, self.cpu.storage_reads_in_flight()) if a.size else None
            done = res.done_ns + self.cpu.fault_ns(below.size) if res is not None else t
            if n_wb:
                done = max(done, self._write_requests(mem, t, wb[0], wb[1], out))
            return OpOutcome(max(t, done + llc_ns, evicted_end, t + compute))

        def serve(start: float, i: int, j: int) -> float:
            end = start
            if j > i:
                a, wr = stream(addr[i:j])
                end = self.serve(mem, start, a, self.row_B, wr, out).done_ns
            if n_wb:  # this segment's share of the write-backs
                k0 = i * n_wb // addr.size if addr.size else 0
                k1 = n_wb if j >= addr.size else j * n_wb // addr.size
                end = max(end, self._write_requests(mem, start, wb[0][k0:k1], wb[1][k0:k1], out))
            return end

        return self.in_segments(t, addr.size, 2 * self.row_B if rmw else self.row_B, serve,
                                lambda latest: max(latest + llc_ns, evicted_end, t + compute))

    # -- data movement -------------------------------------------------------------------------
    def pooled_B_of(self, m: int) -> float:
        """Bytes of pooled vectors (or of their gradients) between device ``m`` and one GPU: one
        fp32 vector per sample and table whose rows ``m`` holds."""
        return self.B * self._transfer_tables(m) * self.dim * FP32_B

    def _transfer_tables(self, m: int) -> float:
        """Pooled vectors per sample device ``m`` sends each GPU (in the full system, when reduced):
        one per table it holds whole; row-sharded, one per table whose bag has a row on it, in
        expectation ``T (1 − E[(1 − 1/M)^K])`` over the bag's draws ``K`` (``(1 − 1/M)^L`` for fixed
        bags of ``L``; :meth:`~cxlsim.workloads.catalog.Workload.bag_draws_pmf`), rows scattered
        over the devices by the inputs' bijection; named approximation: draws independent and
        uniform over the devices; a bag with no row on a device gives no partial sum to send. A
        bag's de-duplication drops only rows it already has, so it leaves the event unchanged."""
        tables = self.reduction.tables_per_mem if self.reduction else self.sides[m].tables_count
        M = self.system_mems
        if self.placement is None and self.reduction is None:
            return float(tables)
        return partial_sums_per_sample(self.workload, tables, M, self.cfg.topology.tables_policy)

    def _move(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        if self.reduction is not None:
            return self._move_class(nbytes, t, src, dst)
        return self.mover.move(nbytes, t, src, dst)

    def _move_class(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        """A reduced run's transfer ``src → dst``: the ``groups`` transfers of the system it stands
        for (:meth:`~cxlsim.systems.symmetry.Reduction.represented`), as the mover times them
        (:meth:`~cxlsim.axes.data_movement.DataMover.move_class`), computed once per transfer."""
        key = (src, dst, nbytes)
        if key not in self._transfers:
            self._transfers[key] = self.mover.move_class(nbytes, src, dst)
        total, counts = self._transfers[key]
        for path_key, size_B in counts:
            self.count_link(path_key, size_B)
        return OpOutcome(t + total)

    def _pooled(self, n, t, ex, m=0, g=0):
        return self._move(self.pooled_B_of(m), t, ("mem", m), ("gpu", g))

    def _grads(self, n, t, ex, g=0, m=0):
        return self._move(self.pooled_B_of(m), t, ("gpu", g), ("mem", m))

    def transfer_lanes(self, src, dst) -> tuple[str, ...]:
        """The link directions a transfer from ``src`` to ``dst`` holds (none off the fabric)."""
        return self.mover.transfer_lanes(src, dst)

    def allreduce_lanes(self, lanes_of) -> tuple[str, ...]:
        """The link directions the all-reduce holds: its ring's; a reduced run's ring is the whole
        system's, which crosses every GPU's link both ways, so it holds its group's GPU links (the
        all-reduce then waits, as in full detail, for the transfers on them to drain)."""
        lanes = {lane for a, b in self.ring() for lane in lanes_of(a, b)}
        if self.reduction is not None and self.fabric is not None and self.mover.over_fabric:
            for g in range(self.gpus):
                own = f"link.dev{self.fabric.leaf[('gpu', g)]}."
                lanes |= {lane for m in range(self.mems) for a, b in ((("gpu", g), ("mem", m)), (("mem", m), ("gpu", g)))
                          for lane in lanes_of(a, b) if lane.startswith(own)}
        return tuple(sorted(lanes))

    def ring(self) -> list[tuple[tuple, tuple]]:
        """The all-reduce ring: GPU g sends to GPU g + 1 (mod G)."""
        return [(("gpu", g), ("gpu", (g + 1) % self.gpus)) for g in range(self.gpus)]

    def system_ring(self) -> list[tuple[tuple, tuple]]:
        """The whole system's all-reduce ring (the simulated one in full detail)."""
        return [(("gpu", g), ("gpu", (g + 1) % self.system_gpus)) for g in range(self.system_gpus)]

    def allreduce_step_ns(self, size_B: float) -> float:
        """One ring step: every GPU sends ``size_B`` to its neighbour at once, as the mover times
        it (:meth:`~cxlsim.axes.data_movement.DataMover.ring_step_ns`), computed once per size."""
        if size_B not in self._ar_step:
            self._ar_step[size_B] = self.mover.ring_step_ns(size_B)
        return self._ar_step[size_B]

    def _allreduce(self, n, t, ex):
        """Ring all-reduce of the MLP gradients over the GPUs: 2 (G − 1) steps of 1/G of them each
        (reduce-scatter, then all-gather), each step's additions streamed by the receiving GPU. A
        reduced run charges the ledger the ring edges leaving its GPUs."""
        G = self.system_gpus
        shard_B = self.mlp_grad_B / G
        steps = 2 * (G - 1)
        add_ns = 3 * shard_B / (self.gpu.params.mem_bw_GBps * self.gpu.params.mem_bw_efficiency_fraction)
        edges = group_ring_edges(self.reduction) if self.reduction else self.ring()
        for src, dst in edges:
            self.mover.count_ring_edge(src, dst, steps, shard_B)
        self._allreduce_ns = steps * self.allreduce_step_ns(shard_B) + (G - 1) * add_ns
        return OpOutcome(t + self._allreduce_ns)

    def trunk_busy_ns(self) -> dict[str, float]:
        """A reduced run's trunks, which it does not simulate, busy per batch as full detail counts
        them (a lane is busy while an op holds it): each phase's ``n_ℓ`` transfers for their whole
        time (:meth:`~cxlsim.systems.symmetry.SystemFabric.counts`), and the all-reduce for its
        whole time on every trunk its ring crosses. Empty in full detail."""
        if self.reduction is None or self._sysfab is None or not self.mover.over_fabric:
            return {}
        busy: dict[str, float] = {}
        for phase in ("pooled", "grads"):
            seen = [ns for (ph, _, _), ns in self._trunk_ns.items() if ph == phase]
            if not seen:
                continue
            for (node, direction), n in self._sysfab.counts(phase).items():
                ns = self._trunk_ns.get((phase, node, direction), sum(seen) / len(seen))
                if n:
                    busy[f"link.{node}.{direction}"] = busy.get(f"link.{node}.{direction}", 0.0) + n * ns
        ring = {lane for a, b in self.system_ring() for lane in self.system_fabric.lanes(a, b)
                if not lane.startswith("link.dev")}
        for lane in ring:
            busy[lane] = busy.get(lane, 0.0) + self._allreduce_ns
        return busy

    # -- checkpoint services (for the persistence schemes) ---------------------------------------
    def flag_ns(self, mem: Memory) -> float:
        """A persistent flag: one line written after the data it covers is acknowledged (a fence),
        so it costs one idle write of the flag's line after that point (pure API: the flag is issued
        in the future, beyond the streams already served); its media traffic is charged to the
        batch. The line is the checkpoint agent's (:meth:`CheckpointAgent.flag_line_B`)."""
        line_B = self.agent.flag_line_B()
        m = mem.model
        tr = self._ledger.traffic(mem.key)
        tr.media_write_B += m.units(line_B) * m.unit_B
        if m.params.read_modify_write and line_B % m.unit_B:  # a partial unit is read first
            tr.media_read_B += m.unit_B
        tr.requested_B += line_B
        tr.accesses += 1
        return m.access_cost("write", line_B).time_ns

    def copy_rows(self, side: MemSide, rows: np.ndarray, dst_base: int, t: float, outstanding: int | tuple[int, int],
                  read_source: bool = True) -> float:
        """Copy rows into a sequential log area: rows are gathered (read) from the data region and
        written packed, in the agent's bursts (:meth:`CheckpointAgent.burst_B`), each burst after
        the reads that fill it in the stream.

        ``outstanding`` (:meth:`ckpt_outstanding`): the host's or near-data logic's one closed
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
        burst_B = self.agent.burst_B()
        nbytes = rows.size * self.row_B
        k = int(math.ceil(nbytes / burst_B))
        dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
        if not read_source:  # the host holds the rows it just updated: in its last-level cache, if it has one
            end = self.serve(side.ckpt_mem, t, dst, burst_B, True, outstanding).done_ns
            if self.llc is not None:
                end = max(end, self.reread_rows(side, t, rows))
            return end
        src = self.rows_addr(rows)
        if side.ckpt_mem is not side.tables:  # two streams: with (reads, writes), each takes its own pool
            r = self.serve(side.tables, t, src, self.row_B, False, outstanding)
            w = self.serve(side.ckpt_mem, t, dst, burst_B, True, outstanding)
            return max(r.done_ns, w.done_ns)
        addr, size, wr = log_copy_stream(src, dst_base, self.row_B, burst_B)
        return self.serve(side.tables, t, addr, size, wr, outstanding).done_ns

    def reread_rows(self, side: MemSide, t: float, rows: np.ndarray) -> float:
        """The host reads rows it just updated (a checkpoint agent on the host copying them into a
        record): through its last-level cache, the lines still there at its cost, the others from the
        memory below (:meth:`_read_below`). Returns when the last is read."""
        below, wb, llc_ns = self._through_llc(rows, False)
        return self._read_below(side, t, below, wb, self.engine.outstanding(), lambda latest: latest + llc_ns,
                                segmented=False, count_raw=False)

    def pull_mlp_ns(self, nbytes: float, m: int = 0) -> float:
        """Time to bring ``nbytes`` of MLP parameters from the GPU to device ``m``'s checkpointing
        side (its source GPU, :attr:`MemSide.source_gpu`), as the MLP pull times it."""
        if nbytes <= 0:
            return 0.0
        return self.puller.pull_ns(nbytes, m)

    def write_mlp(self, side: MemSide, nbytes: float, base: int, t: float, pull_ns: float,
                  outstanding: int | tuple[int, int], count: bool = True) -> float:
        """Write ``nbytes`` sequentially at ``base`` while they arrive over ``pull_ns``; returns the
        later of the last acknowledgement and the end of the pull. ``count``: charge the pull to
        the ledger (:meth:`count_pull`; a segmented pull charges it once, whole)."""
        if nbytes <= 0:
            return t
        if count:
            self.count_pull(side, nbytes)
        burst_B = self.agent.burst_B()
        k = int(math.ceil(nbytes / burst_B))
        addr = base + np.arange(k, dtype=np.int64) * burst_B
        w = self.serve(side.ckpt_mem, t, addr, burst_B, True, outstanding)
        return float(max(w.done_ns, t + pull_ns))

    def count_pull(self, side: MemSide, nbytes: float) -> None:
        """Charge a pull of ``nbytes`` of MLP parameters: the logged bytes, the DMA engine's work,
        the link bytes (as the link's cost model prices one transfer of that size)."""
        # the bytes pulled as pull_mlp_ns times them (counted here: relaxed logging pulls part)
        self._ledger.mlp_log_B += nbytes
        if self._pull_dma:
            self._ledger.logic.dma_B += nbytes  # the checkpointing logic pulls them itself
        self.puller.count(side, nbytes)

    def ckpt_outstanding(self) -> int | tuple[int, int]:
        """Requests the checkpoint agent keeps in flight (:meth:`CheckpointAgent.outstanding`)."""
        return self.agent.outstanding()

    def pull_in_segments(self, side: MemSide, nbytes: float, base: int, t: float, pull_ns: float,
                         outstanding, finish) -> OpOutcome:
        """Pull ``nbytes`` of MLP parameters (``pull_ns`` in all) and write them from ``base``, in
        :data:`SEGMENT_B` segments: each segment's bytes stream in at the pull's rate (no new
        latency per segment) and are written as they arrive; ``finish`` as :meth:`in_segments`."""
        n = int(math.ceil(nbytes))
        rate = pull_ns / nbytes if nbytes > 0 else 0.0
        if nbytes > 0:
            self.count_pull(side, nbytes)

        def serve(start: float, i: int, j: int) -> float:
            k = min(float(j), nbytes) - i
            return max(start + k * rate, self.write_mlp(side, k, base + i, start, k * rate, outstanding, count=False))

        return self.in_segments(t, n, 1.0, serve, finish)
