"""``mlp_pull: cxl_cache``: the checkpointing logic reads the MLP parameters from GPU memory over
CXL.cache, with a non-allocating read (:data:`MLP_PULL_OP`).

Which op (docs/devices-fabric.md, "CXL.cache operations and coherence tracking"): the paper's
checkpointing logic sends CXL.cache requests for the parameters' address range and *stores what
arrives in the log region* (its CXL DMA engine and counters), then sets the MLP log's persistent
flag; nothing reads the lines from the CXL-MEM's cache afterwards, and the GPU overwrites every one
of them at its next optimizer step. A copy into PMEM is a snapshot read of the current value:
RdCurr, which changes no line's state and allocates nothing in the home's (the CXL-GPU's DCOH)
coherence tracking. An allocating read (RdShared) would gain nothing and cost twice: the tracking
cap (one allocation per ``coherence_alloc_interval_ns``) and, at the GPU's next parameter write, a
snoop-invalidate of every line the CXL-MEM holds.
"""

from __future__ import annotations

import math

from cxlsim.axes.data_movement.cxl_cache import FABRIC_ROLES
from cxlsim.axes.mlp_pull import MlpPull
from cxlsim.devices.fabric.cxl_cache_ops import OPS
from cxlsim.systems.activity import cxl_path_key

#: The CXL.cache op of the pull (module docstring): a non-allocating read.
MLP_PULL_OP = "RdCurr"


class CxlCachePull(MlpPull):
    by_device = True
    over_cxl_cache = True

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return list(FABRIC_ROLES)

    def pull_ns(self, nbytes: float, m: int) -> float:
        mc = self.m
        lines = math.ceil(nbytes / mc.cxl.line_B)
        # GPU memory serves lines at its streaming bandwidth; its load latency (hundreds of ns)
        # is not a GPU-preset parameter and is negligible against megabyte pulls: left out
        gpu_bw = mc.gpu.params.mem_bw_GBps * mc.gpu.params.mem_bw_efficiency_fraction
        path = mc.path(("gpu", mc.sides[m].source_gpu), ("mem", m))
        return mc.cxl.cache_fill_ns(lines, 0.0, path, mc.cxl.line_B / gpu_bw, MLP_PULL_OP)

    def count(self, side, nbytes: float) -> None:
        mc = self.m
        path = mc.path(("gpu", side.source_gpu), ("mem", side.index))
        mc.count_link(cxl_path_key(mc.endpoint(("gpu", side.source_gpu)), mc.endpoint(("mem", side.index))),
                      mc.cxl.read_cost(nbytes, 0.0, path).size_B)

    def declare_unused(self) -> None:
        if not OPS[MLP_PULL_OP].allocating:
            self.m.cxl.params.skip("coherence_alloc_interval_ns", "no step allocates a coherence-tracking entry "
                                   "(flushed lines stay tracked; the MLP pull is a non-allocating RdCurr)")
