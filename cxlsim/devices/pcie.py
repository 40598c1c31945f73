"""PCIe link and the CUDA-like software data path (family ``pcie``).

The conventional systems (``ssd``, ``pmem``, ``pcie``, ``dram``) move data by software: the host waits
for a device (stream synchronisation), copies (a memcpy call that programs a DMA), and launches the
next kernel. The link's own properties (lanes, rate, encoding, DMA efficiency and latency, energy)
are this family's; the per-call costs are **host software**: they belong to the host CPU that runs
them (:class:`~cxlsim.devices.cpu.CpuModel`: instruction counts at its clock and IPC), which the
caller passes as ``host=``.

Contract (units: time ns, data B, rate B/ns == GB/s, energy J; the API of
:mod:`cxlsim.devices.base`):

* ``raw_bw_GBps`` = lanes × GT/s × 128/130 / 8 per direction (PCIe 4.0 x16: 31.5 GB/s; 3.0 x16:
  15.75 GB/s); ``effective_bw_GBps`` = raw × ``link_efficiency_fraction`` (TLP/DLLP overheads and
  DMA engine behaviour).
* ``dma_ns(size_B)`` = ``dma_latency_ns`` + size / effective bandwidth (one DMA transfer, no call).
* ``memcpy_ns(size_B, bounce_through_host=False, host)``: a direct copy is one memcpy call
  (the host's ``memcpy_call_ns()``) + one DMA. A bounce (device → host DRAM, then host DRAM →
  device, as software without peer-to-peer DMA does) is two sequential memcpy calls, plus a CPU
  copy between staging buffers at ``host_copy_bw_GBps`` when ``bounce_host_copy`` is set. With
  ``chunk_B > 0`` (a system's ``pipeline.bounce: chunked``, chunks of the preset's
  ``bounce_chunk_B``) the legs overlap chunk by chunk, as a two-buffer software pipeline: ``k``
  equal chunks, each leg a call + a DMA of one chunk, take the first chunk's legs in sequence and
  then ``k − 1`` times the slowest leg.
  ``memcpy_cost`` adds the bytes moved over the link (per leg) and their energy.
* ``launch_ns(host)`` and ``sync_ns(host)``: the host's kernel-launch and stream
  synchronisation calls (``host.launch_call_ns()``, ``host.sync_call_ns()``). Every call of the
  software path needs ``host`` (a link has no software of its own).
* Bounds (ops ``"dma"``, ``"memcpy"``): per leg, the call cost it cannot avoid + DMA latency +
  size / raw bandwidth; ``bound_factor`` = ``1 / link_efficiency_fraction`` (+ raw / (2 × host copy
  bandwidth) when a bounce also copies on the CPU), whatever the host.
* Energy: ``energy_J(moved_B)``, ``energy_pJ_per_bit`` per transferred bit per leg;
  ``static_energy_J(wall_ns, count=1)``, ``idle_power_W`` while the link is up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cxlsim.config.params import Param, Schema
from cxlsim.devices.base import (
    Cost,
    PoweredModel,
    Usage,
    bit_energy_J,
    check_non_negative,
    powered_energy,
)
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import US, KiB, MiB

SCHEMA = Schema(
    "pcie",
    (
        Param("lanes_count", int, "lanes per direction", minimum=1, maximum=32),
        Param("rate_GTps", float, "per-lane signalling rate (PCIe 4.0: 16)", minimum=0, maximum=256, exclusive_minimum=True),
        Param("encoding_data_bits", int, "line-encoding data bits per block (128b/130b)", default=128, minimum=1),
        Param("encoding_block_bits", int, "line-encoding block bits", default=130, minimum=1),
        Param("link_efficiency_fraction", float, "measured DMA copy bandwidth / raw bandwidth", minimum=0, maximum=1, exclusive_minimum=True),
        Param("dma_latency_ns", float, "latency of one DMA transfer before data streams (descriptor, first read round trip)", minimum=0),
        Param("bounce_host_copy", bool, "a bounce also copies between two host staging buffers on the CPU", default=False),
        Param("host_copy_bw_GBps", float, "CPU memcpy bandwidth between host buffers", minimum=0, exclusive_minimum=True),
        Param("bounce_chunk_B", int, "staging-buffer chunk of a chunked bounce (pipeline.bounce: chunked): the legs "
              "overlap chunk by chunk", default=4 * MiB, minimum=4096),
        Param("energy_pJ_per_bit", float, "dynamic energy per transferred bit (both PHYs + controllers)", minimum=0),
        Param("idle_power_W", float, "link power while up and idle", minimum=0),
    ),
    checks=(lambda v: ("encoding_data_bits", "must be <= encoding_block_bits") if v["encoding_data_bits"] > v["encoding_block_bits"] else None,),
)


#: Host calls of the software path and the host model's method that times each.
_CALLS = {"memcpy": "memcpy_call_ns", "launch": "launch_call_ns", "sync": "sync_call_ns"}


class PcieLink(PoweredModel):
    """Pure model of a PCIe link; the software data path's calls cost what the ``host`` passed
    to each method says (see the module docstring)."""

    BOUNDED_OPS = ("dma", "memcpy")
    STATIC_POWER_PARAM = "idle_power_W"

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = p = params
        self.raw_bw_GBps: float = p["lanes_count"] * p["rate_GTps"] * p["encoding_data_bits"] / p["encoding_block_bits"] / 8.0
        self.effective_bw_GBps: float = self.raw_bw_GBps * p["link_efficiency_fraction"]
        self.latency_ns: float = p["dma_latency_ns"]

    def call_ns(self, call: str, host: Any = None) -> float:
        """Host time (ns) of one software-path call (``"memcpy"``, ``"launch"`` or ``"sync"``): the
        ``host`` model's (:class:`~cxlsim.devices.cpu.CpuModel`)."""
        if host is None:
            raise ValueError(f"the software path's {call} call runs on a host: pass host= (a cpu model)")
        return getattr(host, _CALLS[call])()

    def dma_ns(self, size_B: float) -> float:
        """One DMA transfer of ``size_B`` bytes (no software call), ns."""
        check_non_negative(size_B=size_B)
        return self.latency_ns + size_B / self.effective_bw_GBps

    def launch_ns(self, host: Any = None) -> float:
        """One kernel launch call on ``host``, ns."""
        return self.call_ns("launch", host)

    def sync_ns(self, host: Any = None) -> float:
        """One stream synchronisation call on ``host`` (beyond waiting for the device), ns."""
        return self.call_ns("sync", host)

    def legs(self, bounce_through_host: bool) -> int:
        return 2 if bounce_through_host else 1

    def memcpy_ns(self, size_B: float, bounce_through_host: bool = False, host: Any = None, chunk_B: float = 0) -> float:
        """A software copy of ``size_B`` bytes: one memcpy call on ``host`` + one DMA, or two plus
        an optional CPU copy for a bounce through host memory, in sequence, or, with ``chunk_B >
        0``, overlapped chunk by chunk (module docstring), ns."""
        one = self.call_ns("memcpy", host) + self.dma_ns(size_B)
        if not bounce_through_host:
            return one
        copy_bw = self.params["host_copy_bw_GBps"] if self.params["bounce_host_copy"] else 0.0
        k = math.ceil(size_B / chunk_B) if chunk_B > 0 else 1
        if k <= 1:
            return 2 * one + (size_B / copy_bw if copy_bw else 0.0)
        c = size_B / k
        leg = self.call_ns("memcpy", host) + self.dma_ns(c)
        stages = [leg, leg] + ([c / copy_bw] if copy_bw else [])
        return sum(stages) + (k - 1) * max(stages)

    def _bound_dma(self, size_B: float) -> float:
        """Bound of :meth:`dma_ns`: DMA latency + size / raw bandwidth."""
        return self.latency_ns + size_B / self.raw_bw_GBps

    def _bound_memcpy(self, size_B: float, bounce_through_host: bool = False, host: Any = None, chunk_B: float = 0) -> float:
        """Bound of :meth:`memcpy_ns`: per leg, the memcpy call (software the copy cannot avoid) +
        DMA latency + size / raw bandwidth; a chunked bounce, the same two-leg pipeline over chunks at
        raw bandwidth."""
        k = math.ceil(size_B / chunk_B) if bounce_through_host and chunk_B > 0 else 1
        if k <= 1:
            return self.legs(bounce_through_host) * (self.call_ns("memcpy", host) + self._bound_dma(size_B))
        c = size_B / k
        leg = self.call_ns("memcpy", host) + self._bound_dma(c)
        p = self.params
        stages = [leg, leg] + ([c / p["host_copy_bw_GBps"]] if p["bounce_host_copy"] else [])
        return sum(stages) + (k - 1) * max(stages)

    def _bound_factor(self, op: str) -> float:
        """``1 / link_efficiency_fraction`` (dma; memcpy direct), + raw / (2 × host copy bandwidth)
        for a memcpy whose bounce also copies on the CPU; independent of the host."""
        p = self.params
        factor = 1 / p["link_efficiency_fraction"]
        if op == "memcpy" and p["bounce_host_copy"]:
            factor += self.raw_bw_GBps / p["host_copy_bw_GBps"] / 2
        return factor

    def energy_J(self, moved_B: float) -> float:
        """Dynamic energy of ``moved_B`` bytes over the link (count each leg), J."""
        return bit_energy_J(moved_B, self.params["energy_pJ_per_bit"])

    def dynamic_energy_J(self, use: Usage) -> float:
        """pJ/bit of ``use.moved_B`` bytes moved (J)."""
        return self.energy_J(use.moved_B)

    def memcpy_cost(self, size_B: float, bounce_through_host: bool = False, host: Any = None) -> Cost:
        """:meth:`memcpy_ns` with the bytes moved over the link (per leg) and their energy."""
        moved = self.legs(bounce_through_host) * size_B
        return Cost(self.memcpy_ns(size_B, bounce_through_host, host), moved, self.energy_J(moved))


SIZES_B = (64, 4 * KiB, 64 * KiB, 1 * MiB, 64 * MiB)


def microbench(link: PcieLink, options: Mapping[str, Any]) -> dict[str, Any]:
    """Latency (a 0 B copy) and bandwidth (one 64 MiB copy) per direction (the directions are
    identical and independent); memcpy time vs size, direct and bounced; launch and sync calls.
    The software path runs on ``options["host"]`` (a cpu model); without one the link alone is
    reported (DMA only)."""
    host = options.get("host")
    big = 64 * MiB
    out: dict[str, Any] = {"raw_bw_GBps": link.raw_bw_GBps, "dma_bw_GBps": link.effective_bw_GBps}
    if host is None:
        out["latency_ns"] = dict.fromkeys(("down", "up"), link.dma_ns(0))
        out["bw_GBps"] = dict.fromkeys(("down", "up"), big / link.dma_ns(big))
        out["dma_us"] = {_size(s): link.dma_ns(s) / US for s in SIZES_B}
        out["software_path"] = "costs of the host that runs it (options['host'])"
        return out
    out["latency_ns"] = dict.fromkeys(("down", "up"), link.memcpy_ns(0, host=host))
    out["bw_GBps"] = dict.fromkeys(("down", "up"), big / link.memcpy_ns(big, host=host))
    out["memcpy_us"] = {_size(s): link.memcpy_ns(s, host=host) / US for s in SIZES_B}
    out["memcpy_bounce_us"] = {_size(s): link.memcpy_ns(s, True, host) / US for s in SIZES_B}
    out["launch_us"] = link.launch_ns(host) / US
    out["sync_us"] = link.sync_ns(host) / US
    return out


def _size(n: int) -> str:
    for unit, f in (("MiB", MiB), ("KiB", KiB)):
        if n >= f:
            return f"{n // f}{unit}"
    return f"{n}B"


FAMILY = register(
    DeviceFamily(
        name="pcie",
        doc="PCIe link plus the software data path: memcpy, launch and synchronisation overheads",
        schema=SCHEMA,
        build=PcieLink,
        kind="link",
        energy=powered_energy,
        microbench=microbench,
    )
)
