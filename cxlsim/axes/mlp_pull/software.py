"""``mlp_pull: software``: the host copies the parameters over PCIe (after a stream sync): GPU →
host (``d2h``) for a host agent, GPU → host → card (``d2h2d``) for a card's."""

from __future__ import annotations

from cxlsim.axes.mlp_pull import MlpPull


class SoftwarePull(MlpPull):
    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return ["pcie"]

    def route(self) -> str:
        return "d2h2d" if self.m.agent.bounces else "d2h"

    def pull_ns(self, nbytes: float, m: int) -> float:
        mc = self.m
        return mc.pcie.sync_ns(mc.cpu) + mc.copy_ns(nbytes, self.route())

    def count(self, side, nbytes: float) -> None:
        mc = self.m
        mc.count_link("pcie", mc.pcie.memcpy_cost(nbytes, self.route(), mc.cpu).size_B)
