"""How long each dataflow step takes on one system's devices (the :class:`~.dataflow.Machine`).

One machine serves every system: the pipeline's axes (:mod:`cxlsim.systems.axes`) choose the
engine (near-data logic or host CPU), the mover (CXL.cache flushes or the software path over PCIe),
the persistence scheme and its agent; their implementations time their own steps. Memory
steps are served access by access by the media model of the role that holds the data, with state
carried across steps and batches (write-combining buffers, pending writes: read-after-write is
decided per access from the real index streams). Links are exclusive lanes in the op graph.

Several devices (docs/design.md#scale-out, :mod:`cxlsim.systems.topology`): the machine holds one
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
  (:mod:`cxlsim.workloads.dlrm_ops`) priced and placed on a CUDA stream (:mod:`cxlsim.devices.compute.gpu_step`). Each GPU has one dispatching host thread that runs ahead of
  its stream: a phase's dispatch starts when that thread is free and the phase's inputs other than
  the same GPU's earlier phases are ready (pooled vectors, the all-reduce); its kernels start no
  earlier than the GPU is free. A GPU that *replays* a step measured elsewhere (the platform gives a
  ``replay_host`` role: the prototype's Vortex replays RTX 3090 cycles measured from an i5-9600K)
  takes each phase's span as that host and GPU ran it alone, and its own host dispatches nothing.
  The dispatching thread is not charged against the host's embedding work (one core of several).


The machine is split by concern: :mod:`.memory` (media streams, caches, the engine's lookup and
update), :mod:`.transfers` (configuration, pooled vectors, gradients, all-reduce, copies, and the
fabric's contention beside its reduced-run twin), :mod:`.gpu` (the GPU phases), :mod:`.checkpoint`
(what persistence schemes ask of it); :mod:`.core` composes them. The axes see it through the
narrow interfaces of :mod:`.services`.
"""

from cxlsim.systems.machine.core import TrainingMachine
from cxlsim.systems.machine.memory import HOST_WRITE_B, SEGMENT_B, Memory, MemSide, log_copy_stream
from cxlsim.systems.machine.transfers import CONFIG_REGISTERS

__all__ = ["CONFIG_REGISTERS", "HOST_WRITE_B", "SEGMENT_B", "MemSide", "Memory", "TrainingMachine", "log_copy_stream"]
