"""``checkpoint_agent: ndp``: the near-data logic copies the checkpoint on its own ports (a PCIe
card's logic: a software MLP pull to it bounces through host memory)."""

from __future__ import annotations

from cxlsim.axes.checkpoint_agent import CheckpointAgent


class NearDataAgent(CheckpointAgent):
    lane = "ndp"
    bounces = True

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return ["ndp"]
