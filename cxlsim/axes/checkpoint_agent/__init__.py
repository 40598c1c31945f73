"""The ``checkpoint_agent`` axis: who copies rows and MLP parameters into a checkpoint.

Contract: an implementation is built once per machine (only for a persisting pipeline),
``cls(machine)``, and gives

- ``lane``: the lane of the steps it runs (``<lane>.<device>``);
- ``dma_engine``: it is a DMA engine of its own (it issues copies at its own rate,
  :meth:`copy_issue_end`, and counts the bytes it moves, :meth:`count_dma`);
- ``reads_source``: it reads the rows it records from the data region (the host already holds
  the rows it just updated); ``bounces``: a software MLP pull to it bounces through host memory;
  ``uses_host_lines``: it writes the persistent flags in host cache lines;
- :meth:`burst_B`: bytes per write request; :meth:`flag_line_B`: bytes of a flag line;
- :meth:`outstanding`: requests in flight: one closed loop or ``(reads, writes)`` pools;
- :meth:`declare_unused`; ``roles(pipeline)`` (class level): the device roles it needs.
"""

from __future__ import annotations

from cxlsim.systems.machine import HOST_WRITE_B


class CheckpointAgent:
    """Base of the checkpoint agents (module docstring); defaults: the engine's own loop, host
    pages and host cache lines."""

    lane = ""
    dma_engine = False
    reads_source = True
    bounces = False
    uses_host_lines = False

    def __init__(self, machine) -> None:
        self.m = machine

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return []

    def burst_B(self) -> int:
        """The host writes log and redo records sequentially in 4 KiB pieces (a page)."""
        return HOST_WRITE_B

    def flag_line_B(self) -> int:
        return self.m.cpu.params.cache_line_B

    def outstanding(self) -> int | tuple[int, int]:
        """The embedding engine's one closed loop, as it serves its own streams."""
        return self.m.engine.outstanding()

    def copy_issue_end(self, t: float, nbytes: float, rows: int) -> float:
        """When it has issued a copy of ``rows`` rows (``nbytes``) started at ``t``."""
        return t

    def count_dma(self, ledger, nbytes: float) -> None:
        """Charge ``nbytes`` copied by its DMA engine (none by default)."""

    def declare_unused(self) -> None:
        """Skip the role parameters this agent does not read: the host's streaming-store lines
        (only the host writes its records with non-temporal stores)."""
        self.m.cpu.params.skip("streaming_store_lines_count", "the host writes no checkpoint records here (its "
                               "non-temporal stores are the host checkpoint agent's)")
