"""``checkpoint_agent: host_cpu``: the host writes the checkpoint (it already holds the rows it
just updated, in pages; flags in its cache lines)."""

from __future__ import annotations

from cxlsim.axes.checkpoint_agent import CheckpointAgent
from cxlsim.devices.registry import has_capability


class HostAgent(CheckpointAgent):
    lane = "host_cpu"
    reads_source = False
    uses_host_lines = True

    def outstanding(self) -> int | tuple[int, int]:
        """Its loads as the embedding engine's loop. Its record writes to memory are non-temporal
        stores of 4 KiB pieces (assumption: as PMDK's pmem_memcpy copies large blocks), each core
        holding ``streaming_store_lines_count`` lines, so a piece takes 64 of them
        (:meth:`~cxlsim.devices.compute.cpu.CpuModel.stream_writes_in_flight`); to storage they are block
        writes in the engine's one loop."""
        engine = self.m.engine.outstanding()
        if any(has_capability(side.ckpt_mem.model.family, "block_device") for side in self.m.sides):
            return engine
        return engine, self.m.cpu.stream_writes_in_flight(self.burst_B())

    def declare_unused(self) -> None:
        """The host's streaming-store lines apply to its record writes to memory, not to storage."""
        if any(has_capability(side.ckpt_mem.model.family, "block_device") for side in self.m.sides):
            self.m.cpu.params.skip("streaming_store_lines_count", "the host writes its records to storage (block "
                                   "writes, not non-temporal stores)")
