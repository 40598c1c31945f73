"""The machine's shell: builds the devices' roles, the pipeline's axes and the memory sides once, keeps
the ledgers and dispatches each dataflow step to the part that times it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cxlsim.devices.compute.gpu_step import StepModel
from cxlsim.engine.executor import Executor, OpOutcome
from cxlsim.engine.trace import Traffic
from cxlsim.systems import axes
from cxlsim.systems.activity import BatchLedger
from cxlsim.systems.dataflow import sfx
from cxlsim.systems.graph import DeviceGraph
from cxlsim.systems.host_llc import HostLlc
from cxlsim.systems.machine.checkpoint import CheckpointServices
from cxlsim.systems.machine.gpu import GpuPhases
from cxlsim.systems.machine.memory import Memory, MemoryServices, MemSide
from cxlsim.systems.machine.transfers import TransferServices
from cxlsim.systems.streams import BatchStreams, StreamSet
from cxlsim.systems.symmetry import Reduction, SystemFabric
from cxlsim.systems.tiering import Tiering
from cxlsim.systems.topology import Fabric, Placement
from cxlsim.systems.vector_cache_start import starting_cache
from cxlsim.units import FP32_B, GiB
from cxlsim.workloads.dlrm_ops import DlrmStep, StepShapes


class TrainingMachine(MemoryServices, TransferServices, GpuPhases, CheckpointServices):
    """Durations of dataflow steps for a system's devices on ``streams`` (module docstring).

    The engine-facing shell: each pipeline axis's implementation (:mod:`cxlsim.systems.axes`) is
    built once here and its step functions bound in :attr:`steps`; the shell serves memory
    streams, keeps the ledgers and runs the GPU phases, and branches on no pipeline setting.
    """

    def __init__(self, devices: DeviceGraph, streams: StreamSet, gpus: int = 1, mems: int = 1,
                 fabric: Fabric | None = None, placement: Placement | None = None,
                 reduction: Reduction | None = None, system_fabric: Fabric | None = None,
                 device_streams: list | None = None, run_batches: int | None = None, stats: bool = False) -> None:
        cfg = self.cfg = devices.config
        #: whether the ledgers collect statistics (:class:`~cxlsim.systems.activity.AccessStats`, link
        #: transfer counts): each media stream then runs the kernel variant that counts them
        self.collect_stats = stats
        self._kind = ""  # the step whose accesses are being served (statistics are kept by it)
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
            # from the batches this run simulates at most (``run_batches``, default the stream set's):
            # never from a longer set an earlier run in this process left (the state would depend on it)
            self.cache = starting_cache(p.vector_cache_start, streams, int(p.vector_cache_GB * 1e9 // self.row_B),
                                        self.engine.device.params.update_table_order == "reverse",
                                        streams.n if run_batches is None else run_batches)
        #: tables placed over host DRAM and the table memory (None: all on the table memory)
        self.tiering = None
        if p.table_placement != "single":
            self.near_tables = Memory(cfg.role("host_dram"), devices["host_dram"])
            self.memories[self.near_tables.key] = self.near_tables
            self.tiering = Tiering(p, p.table_region_offset_B, self.row_B, streams)
        #: the host-side requesters' fabric paths to the memory devices' memories (MemoryServices.host_crossings)
        self.crossings = self.host_crossings()
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
        if not any(self.on_storage(side.tables) for side in self.sides):  # a checkpoint on storage is written, not mapped
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
        bounces = self.pcie is not None and (self.engine.bounces or (self.agent is not None and self.agent.bounces)
                                             or self.system_gpus > 1)
        if not bounces:  # and pipeline.bounce stays unread: a --set or a file's value of it changes nothing
            self.pipe.skip("bounce", "no software copy of this system bounces through host memory")
        if self.pcie is not None:
            pcie = self.pcie.params
            if not bounces:
                pcie.skip("bounce_chunk_B", "no software copy of this system bounces through host memory")
            elif self.pipe.bounce != "chunked":
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

    @property
    def ledger(self) -> BatchLedger:
        """The ledger of the batch being served."""
        return self._ledger

    def step(self, name: str, batch: int, start_ns: float, ex: Executor) -> OpOutcome:
        """Step ``name`` (``<step>[.<device>[.<device>]]``) of batch ``batch`` starting at ``start_ns``."""
        base, *index = name.split(".")
        if self.collect_stats:
            led = self._ledger = self.ledgers.get(batch) or self.ledgers.setdefault(batch, BatchLedger.collecting())
            self._kind = base
            return _with_kind(self._step(led, base, batch, start_ns, ex, index), base, self)
        led = self._ledger = self.ledgers.setdefault(batch, BatchLedger())
        return self._step(led, base, batch, start_ns, ex, index)

    def _step(self, led: BatchLedger, base: str, batch: int, start_ns: float, ex: Executor, index: list[str]) -> OpOutcome:
        if not ex.trace.enabled:
            return self.steps[base](batch, start_ns, ex, *(int(i) for i in index))
        before = led.tally()
        outcome = self.steps[base](batch, start_ns, ex, *(int(i) for i in index))
        return _with_traffic(outcome, led.charged_since(before, Traffic()), led)

    def restore_ledger(self, ledger: BatchLedger) -> None:
        """Charge what follows to ``ledger`` (a step resumed after other batches' steps ran)."""
        self._ledger = ledger

    def _begin(self, n, t, ex):
        return OpOutcome(t)


def _with_kind(outcome: OpOutcome, kind: str, machine: TrainingMachine) -> OpOutcome:
    """``outcome`` whose later segments serve their accesses as step ``kind``'s (statistics)."""
    if outcome.resume is None:
        return outcome
    inner = outcome.resume

    def resume(t: float) -> OpOutcome:
        machine._kind = kind
        return _with_kind(inner(t), kind, machine)

    return replace(outcome, resume=resume)


def _with_traffic(outcome: OpOutcome, traffic: Traffic, led: BatchLedger) -> OpOutcome:
    """``outcome`` carrying ``traffic`` (what its op charged to its batch's ledger ``led``), each
    later segment adding what it charges (the trace's bytes and rows; no timing effect)."""
    if outcome.resume is None:
        return replace(outcome, traffic=traffic)
    inner = outcome.resume

    def resume(t: float) -> OpOutcome:
        before = led.tally()
        nxt = inner(t)
        return _with_traffic(nxt, led.charged_since(before, traffic), led)

    return replace(outcome, traffic=traffic, resume=resume)
