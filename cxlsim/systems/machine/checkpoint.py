"""The machine's checkpoint services for the persistence schemes: flags, row copies into logs,
MLP pulls and their writes (:class:`CheckpointServices`)."""

from __future__ import annotations

import math

import numpy as np

from cxlsim.engine.executor import OpOutcome
from cxlsim.systems.machine.memory import Memory, MemSide, log_copy_stream


class CheckpointServices:
    """What a persistence scheme asks of the machine to write its logs and records.

    A part of :class:`~cxlsim.systems.machine.TrainingMachine` (which holds the state it reads);
    its public methods are what the pipeline axes may call (:mod:`cxlsim.systems.machine.services`)."""

    def flag_ns(self, mem: Memory) -> float:
        """A persistent flag: one line written after the data it covers is acknowledged (a fence),
        so it costs one idle write of the flag's line after that point (pure API: the flag is issued
        in the future, beyond the streams already served); its media traffic is charged to the
        batch. The line is the checkpoint agent's (:meth:`CheckpointAgent.flag_line_B`)."""
        line_B = self.agent.flag_line_B()
        m = mem.model
        tr = self._ledger.traffic(mem.key)
        tr.media_write_B += m.units(line_B) * m.unit_B
        if m.params.read_modify_write and line_B % m.unit_B:  # a partial unit is read first
            tr.media_read_B += m.unit_B
        tr.requested_B += line_B
        tr.accesses += 1
        return m.access_cost("write", line_B).time_ns

    def copy_rows(self, side: MemSide, rows: np.ndarray, dst_base: int, t: float, outstanding: int | tuple[int, int],
                  read_source: bool = True) -> float:
        """Copy rows into a sequential log area: rows are gathered (read) from the data region and
        written packed, in the agent's bursts (:meth:`CheckpointAgent.burst_B`), each burst after
        the reads that fill it in the stream.

        ``outstanding`` (:meth:`ckpt_outstanding`): the host's or near-data logic's one closed
        loop, or the checkpointing logic's ``(reads, writes)``: separate pools, as its AXI read and
        write channels. Named approximation (split pools): a write burst is issued when a write
        slot is free, not held until the reads that fill it are back. The media model orders each
        module's commands and books a write's command at its acknowledgement (630 ns after issue on
        the emulated U200 PMEM); held writes would then stall every later read on their module for
        that long (RM1's log on the prototype: 7.6 ms, against 2.4 ms unheld); without that
        ordering, holding them changes the copy by ≈1 % (docs/timing-model.md). The last burst can
        then be acknowledged before the last read returns: the copy ends early by at most one
        burst's write latency.
        Returns the time the last write is acknowledged."""
        if rows.size == 0:
            return t
        burst_B = self.agent.burst_B()
        nbytes = rows.size * self.row_B
        k = int(math.ceil(nbytes / burst_B))
        dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
        if not read_source:  # the host holds the rows it just updated: in its last-level cache, if it has one
            end = self.serve(side.ckpt_mem, t, dst, burst_B, True, outstanding, by="agent").done_ns
            if self.llc is not None:
                end = max(end, self.reread_rows(side, t, rows))
            return end
        src = self.rows_addr(rows)
        if side.ckpt_mem is not side.tables:  # two streams: with (reads, writes), each takes its own pool
            r = self.serve(side.tables, t, src, self.row_B, False, outstanding, by="agent")
            w = self.serve(side.ckpt_mem, t, dst, burst_B, True, outstanding, by="agent")
            return max(r.done_ns, w.done_ns)
        addr, size, wr = log_copy_stream(src, dst_base, self.row_B, burst_B)
        return self.serve(side.tables, t, addr, size, wr, outstanding, by="agent").done_ns

    def reread_rows(self, side: MemSide, t: float, rows: np.ndarray) -> float:
        """The host reads rows it just updated (a checkpoint agent on the host copying them into a
        record): through its last-level cache, the lines still there at its cost, the others from the
        memory below (:meth:`_read_below`). Returns when the last is read."""
        below, wb, llc_ns = self._through_llc(rows, False)
        return self._read_below(side, t, below, wb, self.engine.outstanding(), lambda latest: latest + llc_ns,
                                segmented=False, count_raw=False)

    def pull_mlp_ns(self, nbytes: float, m: int = 0) -> float:
        """Time to bring ``nbytes`` of MLP parameters from the GPU to device ``m``'s checkpointing
        side (its source GPU, :attr:`MemSide.source_gpu`), as the MLP pull times it."""
        if nbytes <= 0:
            return 0.0
        return self.puller.pull_ns(nbytes, m)

    def write_mlp(self, side: MemSide, nbytes: float, base: int, t: float, pull_ns: float,
                  outstanding: int | tuple[int, int], count: bool = True) -> float:
        """Write ``nbytes`` sequentially at ``base`` while they arrive over ``pull_ns``; returns the
        later of the last acknowledgement and the end of the pull. ``count``: charge the pull to
        the ledger (:meth:`count_pull`; a segmented pull charges it once, whole)."""
        if nbytes <= 0:
            return t
        if count:
            self.count_pull(side, nbytes)
        burst_B = self.agent.burst_B()
        k = int(math.ceil(nbytes / burst_B))
        addr = base + np.arange(k, dtype=np.int64) * burst_B
        w = self.serve(side.ckpt_mem, t, addr, burst_B, True, outstanding, by="agent")
        return float(max(w.done_ns, t + pull_ns))

    def count_pull(self, side: MemSide, nbytes: float) -> None:
        """Charge a pull of ``nbytes`` of MLP parameters: the logged bytes, the DMA engine's work,
        the link bytes (as the link's cost model prices one transfer of that size)."""
        # the bytes pulled as pull_mlp_ns times them (counted here: relaxed logging pulls part)
        self._ledger.mlp_log_B += nbytes
        if self._pull_dma:
            self._ledger.logic.dma_B += nbytes  # the checkpointing logic pulls them itself
        self.puller.count(side, nbytes)

    def ckpt_outstanding(self) -> int | tuple[int, int]:
        """Requests the checkpoint agent keeps in flight (:meth:`CheckpointAgent.outstanding`)."""
        return self.agent.outstanding()

    def pull_in_segments(self, side: MemSide, nbytes: float, base: int, t: float, pull_ns: float,
                         outstanding, finish) -> OpOutcome:
        """Pull ``nbytes`` of MLP parameters (``pull_ns`` in all) and write them from ``base``, in
        :data:`SEGMENT_B` segments: each segment's bytes stream in at the pull's rate (no new
        latency per segment) and are written as they arrive; ``finish`` as :meth:`in_segments`."""
        n = int(math.ceil(nbytes))
        rate = pull_ns / nbytes if nbytes > 0 else 0.0
        if nbytes > 0:
            self.count_pull(side, nbytes)

        def serve(start: float, i: int, j: int) -> float:
            k = min(float(j), nbytes) - i
            return max(start + k * rate, self.write_mlp(side, k, base + i, start, k * rate, outstanding, count=False))

        return self.in_segments(t, n, 1.0, serve, finish)
