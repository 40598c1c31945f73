"""CXL-MEM checkpointing logic (family ``ckpt_logic``), as built on the FPGA of the paper's prototype
(docs/design.md#hardware, #host-cpu-and-near-data-logic): a DMA engine copying data region -> log
region and pulling MLP parameters from the GPU, two counters and two persistent flags.

Contract (times ns, bytes ``*_B``; the API of :mod:`cxlsim.devices.base`):

* :meth:`CkptLogicModel.copy_issue_ns` ``(size_B, n_segments=1)`` -- the engine-side issue limit
  of a copy in ``n_segments`` contiguous segments (e.g. one per embedding row): descriptor setup
  per segment + one datapath beat per ``datapath_B``; the read and write sides stream
  concurrently, so each beat counts once. With ``descriptor_prefetch`` the descriptor of the next
  segment is set up while the current one streams: each segment takes the longer of its beats and
  its setup, plus one setup to fill the pipeline. Bound (op ``"copy_issue"``): ``size /
  datapath_B + segments × descriptor cycles`` (with prefetch the larger of the two); ``bound_factor``
  = ``1 + 1 / descriptor_cycles_count`` (with prefetch ``2 + 1 / descriptor_cycles_count``), or
  ``1 + datapath_B`` without descriptor cycles, for segments of at least one byte.
* :meth:`CkptLogicModel.copy_concurrency_ns` ``(size_B, read_ns, write_ns, n_segments=1)`` -- the
  Little's-law limit of its requests in flight: reads (one per segment, at most a burst each)
  ``read_outstanding_count`` at a time against ``read_ns``, packed log writes (bursts)
  ``write_outstanding_count`` at a time against ``write_ns``; the two channels run concurrently
  (AXI4's read and write channels are independent), so the limit is the slower. The media time
  comes from the memory model (which the system serves with these two limits as separate pools,
  :meth:`CkptLogicModel.outstanding`) and the system takes the maximum.
* :class:`LogCounters`: the two counters and two persistent flags; a flag is one persisted line
  (:attr:`CkptLogicModel.flag_write_B`).
* Energy: ``copy_cost``, :meth:`CkptLogicModel.dma_energy_J` ``(size_B)`` (``dma_pJ_per_B``; media
  and links charged by their own models) and ``static_energy_J(wall_ns, count=1)`` (``static_W``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from cxlsim.config.bounds import MAX_OUTSTANDING_REQUESTS
from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import Cost, PoweredModel, Usage, powered_energy
from cxlsim.devices.base import check_non_negative as _check
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import PJ

SCHEMA = Schema(
    "ckpt_logic",
    (
        Param("clock_MHz", float, "logic clock", minimum=0, exclusive_minimum=True),
        Param("datapath_B", int, "DMA datapath width (bytes per cycle)", minimum=1),
        Param("burst_B", int, "largest DMA request (burst) size", minimum=1),
        Param("descriptor_cycles_count", int, "cycles to set up one contiguous segment (descriptor)", minimum=0),
        Param("descriptor_prefetch", bool, "the next segment's descriptor is set up while the current one "
              "streams (its own pipeline stage), so a segment costs the longer of its beats and its setup",
              default=False),
        Param("read_outstanding_count", int, "max outstanding DMA read requests (AXI read channel)", minimum=1,
              maximum=MAX_OUTSTANDING_REQUESTS),
        Param("write_outstanding_count", int, "max outstanding DMA write requests (AXI write channel)", minimum=1,
              maximum=MAX_OUTSTANDING_REQUESTS),
        Param("channels_count", int, "DMA channels copying concurrently (the relaxed MLP log takes its own "
              "when >= 2, so it can use every GPU window)", default=1, minimum=1),
        Param("flag_line_B", int, "bytes of one persistent flag write (a persisted line)", default=64, minimum=1),
        Param("counter_bits", int, "width of each of the two counters (rows logged, MLP bytes logged)", default=64, minimum=1,
              descriptive="a counter wide enough never to wrap within a run changes no timing or energy"),
        Param("dma_pJ_per_B", float, "dynamic energy of the DMA logic per byte copied (media and link energy excluded)", minimum=0),
        Param("static_W", float, "static power of the checkpointing logic", minimum=0),
    ),
    checks=(lambda v: ("datapath_B", "must be <= burst_B") if v["datapath_B"] > v["burst_B"] else None,
),
)



@dataclass(frozen=True)
class LogCounters:
    """The checkpointing logic's two counters and the two persistent flags of the current log."""

    rows_logged: int = 0
    mlp_logged_B: int = 0
    embedding_flag: bool = False
    mlp_flag: bool = False

    def log_rows(self, n: int) -> LogCounters:
        return replace(self, rows_logged=self.rows_logged + n)

    def log_mlp_B(self, n_B: int) -> LogCounters:
        return replace(self, mlp_logged_B=self.mlp_logged_B + n_B)

    def set_flags(self, embedding: bool | None = None, mlp: bool | None = None) -> LogCounters:
        return replace(
            self,
            embedding_flag=self.embedding_flag if embedding is None else embedding,
            mlp_flag=self.mlp_flag if mlp is None else mlp,
        )


class CkptLogicModel(PoweredModel):
    """Pure model of the checkpointing logic's DMA engine (see the module docstring)."""

    BOUNDED_OPS = ("copy_issue",)
    STATIC_POWER_PARAM = "static_W"

    def __init__(self, params: ParamSet) -> None:
        self.params = params
        self.cycle_ns = 1e3 / params.clock_MHz

    @property
    def flag_write_B(self) -> int:
        """Bytes written to persist one flag (one line)."""
        return self.params.flag_line_B

    def requests(self, size_B: float, n_segments: int = 1) -> int:
        """DMA requests for ``size_B`` bytes in ``n_segments`` equal contiguous pieces (bursts per piece)."""
        if size_B <= 0:
            return 0
        n_segments = max(1, int(n_segments))
        return n_segments * math.ceil(size_B / n_segments / self.params.burst_B)

    def copy_issue_ns(self, size_B: float, n_segments: int = 1) -> float:
        """Engine-side issue time (ns) of copying ``size_B`` bytes in ``n_segments`` contiguous
        segments: descriptor setup per segment + one datapath beat per ``datapath_B``."""
        _check(n_segments=n_segments)
        if size_B <= 0:
            return 0.0
        per_segment = math.ceil(size_B / max(1, n_segments) / self.params.datapath_B)
        d = self.params.descriptor_cycles_count
        if self.params.descriptor_prefetch:
            return (n_segments * max(per_segment, d) + d) * self.cycle_ns
        return n_segments * (per_segment + d) * self.cycle_ns

    def _bound_copy_issue(self, size_B: float, n_segments: int = 1) -> float:
        """Bound of :meth:`copy_issue_ns`: bytes / datapath + descriptor cycles, at the clock (ns)."""
        if size_B <= 0:
            return 0.0
        beats, setup = size_B / self.params.datapath_B, n_segments * self.params.descriptor_cycles_count
        return (max(beats, setup) if self.params.descriptor_prefetch else beats + setup) * self.cycle_ns

    def _bound_factor(self, op: str) -> float:
        d = self.params.descriptor_cycles_count
        if d == 0:
            return 1 + self.params.datapath_B
        return (2 + 1 / d) if self.params.descriptor_prefetch else 1 + 1 / d

    @property
    def outstanding(self) -> tuple[int, int]:
        """``(reads, writes)`` the engine keeps in flight: separate pools, one per AXI channel."""
        return self.params.read_outstanding_count, self.params.write_outstanding_count

    def copy_concurrency_ns(self, size_B: float, read_ns: float, write_ns: float, n_segments: int = 1) -> float:
        """Little's-law limit (ns) of copying ``size_B`` bytes in ``n_segments`` segments into a
        packed log: the reads (:meth:`requests`) ``read_outstanding_count`` in flight, each taking
        ``read_ns``, beside the log writes (whole bursts) ``write_outstanding_count`` in flight,
        each taking ``write_ns`` (from the memory/link models); the slower channel."""
        reads = math.ceil(self.requests(size_B, n_segments) / self.params.read_outstanding_count) * read_ns
        writes = math.ceil(self.requests(size_B) / self.params.write_outstanding_count) * write_ns
        return max(reads, writes)

    def dma_energy_J(self, size_B: float) -> float:
        """Dynamic energy (J) of the DMA logic copying ``size_B`` bytes (media and links excluded)."""
        return size_B * self.params.dma_pJ_per_B * PJ

    def copy_cost(self, size_B: float, n_segments: int = 1) -> Cost:
        """Issue time, bytes copied and dynamic energy (J) of the DMA logic for one copy."""
        return Cost(self.copy_issue_ns(size_B, n_segments), float(size_B), self.dma_energy_J(size_B))

    def dynamic_energy_J(self, use: Usage) -> float:
        """DMA energy of ``use.moved_B`` copied bytes (J)."""
        return self.dma_energy_J(use.moved_B)


def microbench(model: CkptLogicModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """DMA issue time and rate per segment size (64 B ... 4 KiB), and the flag write size."""
    out: dict[str, Any] = {}
    total = 1 << 20
    for size in (64, 128, 256, 1024, 4096):
        segs = total // size
        t = model.copy_issue_ns(total, segs)
        out[f"copy_{size}B_segments"] = {"issue_ns_per_MiB": t, "issue_GBps": total / t}
    out["flag_write_bytes"] = model.flag_write_B
    out["read_outstanding_count"], out["write_outstanding_count"] = model.outstanding
    return out


FAMILY = register(
    DeviceFamily(
        name="ckpt_logic",
        doc="CXL-MEM checkpointing logic: DMA engine (issue and outstanding limits), two counters, persistent flags",
        schema=SCHEMA,
        build=CkptLogicModel,
        kind="logic",
        energy=powered_energy,
        microbench=microbench,
    )
)
