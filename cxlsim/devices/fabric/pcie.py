"""PCIe link and the CUDA-like software data path (family ``pcie``).

The conventional systems (``ssd``, ``pmem``, ``pcie``, ``dram``) move data by software: the host waits
for a device (stream synchronisation), copies (a memcpy call that programs a DMA), and launches the
next kernel. The link's own properties (lanes, rate, encoding, DMA efficiency and latency, energy)
are this family's; the per-call costs are **host software**: they belong to the host CPU that runs
them (:class:`~cxlsim.devices.compute.cpu.CpuModel`: instruction counts at its clock and IPC), which the
caller passes as ``host=``.

Contract (units: time ns, data B, rate B/ns == GB/s, energy J; the API of
:mod:`cxlsim.devices.base`):

* ``raw_bw_GBps`` = lanes × GT/s × 128/130 / 8 per direction (PCIe 4.0 x16: 31.5 GB/s; 3.0 x16:
  15.75 GB/s). A DMA has a **direction** (:data:`DIRECTIONS`): ``"h2d"`` host → device (the
  device's engine reads host memory: non-posted reads) or ``"d2h"`` device → host (posted
  writes); ``dma_bw_GBps[direction]`` = raw × ``h2d_efficiency_fraction`` or
  ``d2h_efficiency_fraction`` (TLP/DLLP overheads and the DMA engine's behaviour in that
  direction, measured per direction where a source gives it).
* ``dma_ns(size_B, direction)`` = ``dma_latency_ns`` + size / the direction's bandwidth (one DMA
  transfer, no call).
* ``memcpy_ns(size_B, route, host, chunk_B=0)``, ``route`` one of :data:`ROUTES`: a direct copy
  (``"h2d"``, ``"d2h"``) is one memcpy call (the host's ``memcpy_call_ns()``) + one DMA in that
  direction. A bounce (``"d2h2d"``: device → host DRAM, then host DRAM → device, as software
  without peer-to-peer DMA does) is two sequential memcpy calls, its first leg a ``d2h`` DMA and
  its second an ``h2d`` DMA, each at its direction's bandwidth, plus a CPU copy between staging
  buffers at ``host_copy_bw_GBps`` when ``bounce_host_copy`` is set. Both legs are priced on this
  link (named approximation: a system has one ``pcie`` role; on the prototype's ``pcie`` system
  it is the card's link, so the GPU's leg is priced at the card link's bandwidth in its
  direction). With ``chunk_B > 0`` (a system's ``pipeline.bounce: chunked``, chunks of the
  preset's ``bounce_chunk_B``) the legs overlap chunk by chunk, as a two-buffer software
  pipeline: ``k`` equal chunks, each leg a call + a DMA of one chunk, take the first chunk's legs
  in sequence and then ``k − 1`` times the slowest leg.
  ``memcpy_cost`` adds the bytes moved over the link (per leg) and their energy.
* ``launch_ns(host)`` and ``sync_ns(host)``: the host's kernel-launch and stream
  synchronisation calls (``host.launch_call_ns()``, ``host.sync_call_ns()``). Every call of the
  software path needs ``host`` (a link has no software of its own).
* Bounds (ops ``"dma"``, ``"memcpy"``): per leg, the call cost it cannot avoid + DMA latency +
  size / raw bandwidth; ``bound_factor`` = ``1 / min(h2d, d2h efficiency)`` (+ raw / (2 × host
  copy bandwidth) when a bounce also copies on the CPU), whatever the host and direction.
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
from cxlsim.units import GB, MB, US, KiB, MiB

SCHEMA = Schema(
    "pcie",
    (
        Param("lanes_count", int, "lanes per direction", minimum=1, maximum=32),
        Param("rate_GTps", float, "per-lane signalling rate (PCIe 4.0: 16)", minimum=0, maximum=256, exclusive_minimum=True),
        Param("encoding_data_bits", int, "line-encoding data bits per block (128b/130b)", default=128, minimum=1),
        Param("encoding_block_bits", int, "line-encoding block bits", default=130, minimum=1),
        Param("h2d_efficiency_fraction", float, "measured host → device DMA bandwidth / raw bandwidth (the device's "
              "engine reads host memory)", minimum=0, maximum=1, exclusive_minimum=True),
        Param("d2h_efficiency_fraction", float, "measured device → host DMA bandwidth / raw bandwidth (the device's "
              "engine writes host memory)", minimum=0, maximum=1, exclusive_minimum=True),
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


#: DMA directions: host → device, device → host.
DIRECTIONS = ("h2d", "d2h")
#: Copy routes of the software path: direct in a direction, or a bounce through host memory
#: (device → host, then host → device).
ROUTES = (*DIRECTIONS, "d2h2d")
#: The microbenchmark's names of the directions (as the CXL links': ``down`` = host → device).
BENCH_DIRECTIONS = {"down": "h2d", "up": "d2h"}

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
        #: DMA bandwidth per direction (:data:`DIRECTIONS`), GB/s
        self.dma_bw_GBps: dict[str, float] = {d: self.raw_bw_GBps * p[f"{d}_efficiency_fraction"] for d in DIRECTIONS}
        self.latency_ns: float = p["dma_latency_ns"]

    def call_ns(self, call: str, host: Any = None) -> float:
        """Host time (ns) of one software-path call (``"memcpy"``, ``"launch"`` or ``"sync"``): the
        ``host`` model's (:class:`~cxlsim.devices.compute.cpu.CpuModel`)."""
        if host is None:
            raise ValueError(f"the software path's {call} call runs on a host: pass host= (a cpu model)")
        return getattr(host, _CALLS[call])()

    def dma_ns(self, size_B: float, direction: str) -> float:
        """One DMA transfer of ``size_B`` bytes in ``direction`` (``"h2d"``, ``"d2h"``; no software
        call), ns."""
        check_non_negative(size_B=size_B)
        return self.latency_ns + size_B / self._bw(direction)

    def _bw(self, direction: str) -> float:
        if direction not in self.dma_bw_GBps:
            raise ValueError(f"DMA direction {direction!r}: one of {', '.join(DIRECTIONS)}")
        return self.dma_bw_GBps[direction]

    def launch_ns(self, host: Any = None) -> float:
        """One kernel launch call on ``host``, ns."""
        return self.call_ns("launch", host)

    def sync_ns(self, host: Any = None) -> float:
        """One stream synchronisation call on ``host`` (beyond waiting for the device), ns."""
        return self.call_ns("sync", host)

    @staticmethod
    def route_legs(route: str) -> tuple[str, ...]:
        """The DMA directions of a copy's legs, in order: one for a direct copy, ``("d2h", "h2d")``
        for a bounce through host memory."""
        if route not in ROUTES:
            raise ValueError(f"copy route {route!r}: one of {', '.join(ROUTES)}")
        return ("d2h", "h2d") if route == "d2h2d" else (route,)

    def legs(self, route: str) -> int:
        """Legs of a copy over the link: 2 for a bounce, else 1."""
        return len(self.route_legs(route))

    def memcpy_ns(self, size_B: float, route: str, host: Any = None, chunk_B: float = 0) -> float:
        """A software copy of ``size_B`` bytes by ``route`` (:data:`ROUTES`): one memcpy call on
        ``host`` + one DMA in the route's direction, or, for a bounce, two (``d2h`` then ``h2d``)
        plus an optional CPU copy, in sequence, or, with ``chunk_B > 0``, overlapped chunk by chunk
        (module docstring), ns."""
        legs = self.route_legs(route)
        call = self.call_ns("memcpy", host)
        if len(legs) == 1:
            return call + self.dma_ns(size_B, legs[0])
        copy_bw = self.params["host_copy_bw_GBps"] if self.params["bounce_host_copy"] else 0.0
        k = math.ceil(size_B / chunk_B) if chunk_B > 0 else 1
        if k <= 1:
            return sum(call + self.dma_ns(size_B, d) for d in legs) + (size_B / copy_bw if copy_bw else 0.0)
        c = size_B / k
        stages = [call + self.dma_ns(c, d) for d in legs] + ([c / copy_bw] if copy_bw else [])
        return sum(stages) + (k - 1) * max(stages)

    def _bound_dma(self, size_B: float, direction: str = "h2d") -> float:
        """Bound of :meth:`dma_ns`: DMA latency + size / raw bandwidth (either direction)."""
        return self.latency_ns + size_B / self.raw_bw_GBps

    def _bound_memcpy(self, size_B: float, route: str, host: Any = None, chunk_B: float = 0) -> float:
        """Bound of :meth:`memcpy_ns`: per leg, the memcpy call (software the copy cannot avoid) +
        DMA latency + size / raw bandwidth; a chunked bounce, the same two-leg pipeline over chunks at
        raw bandwidth."""
        legs = self.legs(route)
        k = math.ceil(size_B / chunk_B) if legs == 2 and chunk_B > 0 else 1
        if k <= 1:
            return legs * (self.call_ns("memcpy", host) + self._bound_dma(size_B))
        c = size_B / k
        leg = self.call_ns("memcpy", host) + self._bound_dma(c)
        p = self.params
        stages = [leg, leg] + ([c / p["host_copy_bw_GBps"]] if p["bounce_host_copy"] else [])
        return sum(stages) + (k - 1) * max(stages)

    def _bound_factor(self, op: str) -> float:
        """``1 / min(h2d, d2h efficiency)`` (dma; memcpy direct), + raw / (2 × host copy bandwidth)
        for a memcpy whose bounce also copies on the CPU; independent of the host."""
        p = self.params
        factor = 1 / min(p["h2d_efficiency_fraction"], p["d2h_efficiency_fraction"])
        if op == "memcpy" and p["bounce_host_copy"]:
            factor += self.raw_bw_GBps / p["host_copy_bw_GBps"] / 2
        return factor

    def energy_J(self, moved_B: float) -> float:
        """Dynamic energy of ``moved_B`` bytes over the link (count each leg), J."""
        return bit_energy_J(moved_B, self.params["energy_pJ_per_bit"])

    def dynamic_energy_J(self, use: Usage) -> float:
        """pJ/bit of ``use.moved_B`` bytes moved (J)."""
        return self.energy_J(use.moved_B)

    def memcpy_cost(self, size_B: float, route: str, host: Any = None) -> Cost:
        """:meth:`memcpy_ns` with the bytes moved over the link (per leg) and their energy."""
        moved = self.legs(route) * size_B
        return Cost(self.memcpy_ns(size_B, route, host), moved, self.energy_J(moved))


#: Transfer sizes of the microbenchmark's tables: binary (KiB, MiB) and decimal (MB, GB, as CUDA's
#: bandwidthTest names its sizes) points.
_MB, _GB = int(MB), int(GB)
SIZES_B = (64, 4 * KiB, 40 * KiB, 64 * KiB, _MB, MiB, 10 * _MB, 64 * MiB, 100 * _MB, 256 * MiB, _GB)


def microbench(link: PcieLink, options: Mapping[str, Any]) -> dict[str, Any]:
    """Per direction (``down`` = host → device, ``up`` = device → host): the DMA engine alone --
    its bandwidth and its bandwidth vs transfer size (``dma_bw_by_size_GBps``, ``dma_us``) -- and,
    on ``options["host"]`` (a cpu model), the software path: latency (a 0 B copy) and bandwidth
    (one 64 MiB copy), a direct copy's time and bandwidth vs size (``memcpy_us``,
    ``memcpy_bw_by_size_GBps``), a bounce's time (``memcpy_bounce_us``: d2h then h2d), launch and
    sync calls. Without a host, ``latency_ns`` and ``bw_GBps`` are the DMA's."""
    host = options.get("host")
    big = 64 * MiB
    dirs = BENCH_DIRECTIONS
    out: dict[str, Any] = {
        "raw_bw_GBps": link.raw_bw_GBps,
        "dma_bw_GBps": {k: link.dma_bw_GBps[d] for k, d in dirs.items()},
        "dma_bw_by_size_GBps": {k: {_size(s): s / link.dma_ns(s, d) for s in SIZES_B} for k, d in dirs.items()},
        "dma_us": {k: {_size(s): link.dma_ns(s, d) / US for s in SIZES_B} for k, d in dirs.items()},
    }
    if host is None:
        out["latency_ns"] = {k: link.dma_ns(0, d) for k, d in dirs.items()}
        out["bw_GBps"] = {k: big / link.dma_ns(big, d) for k, d in dirs.items()}
        out["software_path"] = "costs of the host that runs it (options['host'])"
        return out
    out["latency_ns"] = {k: link.memcpy_ns(0, d, host) for k, d in dirs.items()}
    out["bw_GBps"] = {k: big / link.memcpy_ns(big, d, host) for k, d in dirs.items()}
    out["memcpy_us"] = {k: {_size(s): link.memcpy_ns(s, d, host) / US for s in SIZES_B} for k, d in dirs.items()}
    out["memcpy_bw_by_size_GBps"] = {k: {_size(s): s / link.memcpy_ns(s, d, host) for s in SIZES_B}
                                     for k, d in dirs.items()}
    out["memcpy_bounce_us"] = {_size(s): link.memcpy_ns(s, "d2h2d", host) / US for s in SIZES_B}
    out["launch_us"] = link.launch_ns(host) / US
    out["sync_us"] = link.sync_ns(host) / US
    return out


def _size(n: int) -> str:
    """``n`` bytes as a label: decimal (``1MB``, ``1GB``) where a whole number of MB, else binary
    (``4KiB``, ``64MiB``), else bytes."""
    for unit, f in (("GB", _GB), ("MB", _MB)):
        if n >= f and n % f == 0:
            return f"{n // f}{unit}"
    for unit, f in (("MiB", MiB), ("KiB", KiB)):
        if n >= f and n % f == 0:
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
