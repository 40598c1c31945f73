"""``checkpoint_agent: host_cpu``: the host writes the checkpoint (it already holds the rows it
just updated, in pages; flags in its cache lines)."""

from __future__ import annotations

from cxlsim.axes.checkpoint_agent import CheckpointAgent
from cxlsim.systems.axes import register


@register("checkpoint_agent", "host_cpu")
class HostAgent(CheckpointAgent):
    lane = "host_cpu"
    reads_source = False
    uses_host_lines = True
