"""``checkpoint_agent: ckpt_logic``: the CXL-MEM's checkpointing logic (a DMA engine with AXI read
and write channels, counters and persistent flags; docs/design.md#host-cpu-and-near-data-logic)."""

from __future__ import annotations

from cxlsim.axes.checkpoint_agent import CheckpointAgent


class CkptLogic(CheckpointAgent):
    """The ``ckpt_logic`` role: its burst, flag line and request pools."""

    lane = "ckpt_logic"
    dma_engine = True
    KEYS = ("log_copy_channels",)

    @property
    def bounces(self) -> bool:
        """A software MLP pull to it bounces through host memory when it sits on a PCIe card: the
        logic is on the same device as the near-data engine, so it bounces when that engine does
        (``pcie``: GPU → host → card, as ``configs/pcie.yaml`` describes; on a CXL-MEM the MLP is
        pulled over CXL.cache and no software copy is made)."""
        return self.m.engine.bounces

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return ["ckpt_logic"]

    def burst_B(self) -> int:
        return self.m.ckpt.params.burst_B

    def flag_line_B(self) -> int:
        return self.m.ckpt.params.flag_line_B

    def outstanding(self) -> int | tuple[int, int]:
        """Separate read and write pools (its AXI read and write channels,
        :attr:`CkptLogicModel.outstanding`), or one closed loop with ``log_copy_channels: shared``."""
        if self.m.pipe.log_copy_channels == "shared":  # one closed loop, as before the channels split
            return self.m.ckpt.params.read_outstanding_count
        return self.m.ckpt.outstanding

    def copy_issue_end(self, t: float, nbytes: float, rows: int) -> float:
        return t + self.m.ckpt.copy_issue_ns(nbytes, rows)

    def count_dma(self, ledger, nbytes: float) -> None:
        ledger.logic.dma_B += nbytes

    def declare_unused(self) -> None:
        super().declare_unused()
        if self.m.ckpt is not None and self.m.pipe.log_copy_channels == "shared":
            self.m.ckpt.params.skip("write_outstanding_count", "pipeline.log_copy_channels is shared: one closed "
                                    "loop of read_outstanding_count requests")
