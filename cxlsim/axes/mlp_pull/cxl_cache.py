"""``mlp_pull: cxl_cache``: the device fills lines from GPU memory over CXL.cache."""

from __future__ import annotations

import math

from cxlsim.axes.data_movement.cxl_cache import FABRIC_ROLES
from cxlsim.axes.mlp_pull import MlpPull
from cxlsim.systems.activity import cxl_path_key
from cxlsim.systems.axes import register


@register("mlp_pull", "cxl_cache")
class CxlCachePull(MlpPull):
    by_device = True

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return list(FABRIC_ROLES)

    def pull_ns(self, nbytes: float, m: int) -> float:
        mc = self.m
        lines = math.ceil(nbytes / mc.cxl.line_B)
        # GPU memory serves lines at its streaming bandwidth; its load latency (hundreds of ns)
        # is not a GPU-preset parameter and is negligible against megabyte pulls: left out
        gpu_bw = mc.gpu.params.mem_bw_GBps * mc.gpu.params.mem_bw_efficiency_fraction
        path = mc._path(("gpu", mc.sides[m].source_gpu), ("mem", m))
        return mc.cxl.cache_fill_ns(lines, 0.0, path, mc.cxl.line_B / gpu_bw)

    def count(self, side, nbytes: float) -> None:
        mc = self.m
        path = mc._path(("gpu", side.source_gpu), ("mem", side.index))
        mc.count_link(cxl_path_key(mc._ep(("gpu", side.source_gpu)), mc._ep(("mem", side.index))),
                      mc.cxl.read_cost(nbytes, 0.0, path).size_B)
