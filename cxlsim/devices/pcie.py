"""PCIe link and the CUDA-like software data path (family ``pcie``).

The conventional systems (``ssd``, ``pmem``, ``pcie``, ``dram``) move data by software: the host waits
for a device (stream synchronisation), copies (a memcpy call that programs a DMA), and launches the
next kernel. This family charges those per-call overheads and the DMA transfer over a PCIe link.

Contract (units: time ns, data B, rate B/ns == GB/s, energy J):

* ``raw_bw_GBps`` = lanes × GT/s × 128/130 / 8 per direction (PCIe 4.0 x16: 31.5 GB/s);
  ``effective_bw_GBps`` = raw × ``link_efficiency_fraction`` (TLP/DLLP overheads and DMA engine
  behaviour, calibrated to measured host↔device copies).
* ``dma_ns(bytes)`` = ``dma_latency_ns`` + bytes / effective bandwidth (one DMA transfer, no call).
* ``memcpy_ns(bytes, bounce_through_host)``: a direct copy is one memcpy call (overhead + DMA).
  A bounce (device → host DRAM, then host DRAM → device, as software without peer-to-peer DMA
  does) is two sequential memcpy calls, plus a CPU copy between staging buffers at
  ``host_copy_bw_GBps`` when ``bounce_host_copy`` is set.
* ``launch_ns()`` and ``sync_ns()``: kernel launch and stream synchronisation overheads.
* Bounds: ``memcpy_bound_ns`` = legs × (DMA latency + bytes / raw bandwidth), without software
  overheads; every detailed time is ≥ its bound.
* Energy: ``energy_pJ_per_bit`` per transferred bit per leg; ``idle_power_W`` while the link is up.

Simpy: :class:`PcieComponent` has one server per direction (``pcie.<name>.h2d`` / ``.d2h``) and a
host-CPU lane for call overheads; a memcpy holds its direction for the transfer time.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from cxlsim.config.params import Param, Schema
from cxlsim.devices.base import BandwidthServer, Cost, check_non_negative
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.engine.component import Component, Simulation
from cxlsim.units import PJ, US, KiB, MiB

DIRECTIONS = ("h2d", "d2h")

SCHEMA = Schema(
    "pcie",
    (
        Param("lanes_count", int, "lanes per direction", minimum=1, maximum=32),
        Param("rate_GTps", float, "per-lane signalling rate (PCIe 4.0: 16)", minimum=0, maximum=256, exclusive_minimum=True),
        Param("encoding_data_bits", int, "line-encoding data bits per block (128b/130b)", default=128, minimum=1),
        Param("encoding_block_bits", int, "line-encoding block bits", default=130, minimum=1),
        Param("link_efficiency_fraction", float, "measured DMA copy bandwidth / raw bandwidth", minimum=0, maximum=1, exclusive_minimum=True),
        Param("dma_latency_ns", float, "latency of one DMA transfer before data streams (descriptor, first read round trip)", minimum=0),
        Param("memcpy_overhead_us", float, "software cost of one memcpy call (cudaMemcpy-like)", minimum=0),
        Param("launch_us", float, "software cost of one kernel launch", minimum=0),
        Param("sync_us", float, "software cost of one stream synchronisation", minimum=0),
        Param("bounce_host_copy", bool, "a bounce also copies between two host staging buffers on the CPU", default=False),
        Param("host_copy_bw_GBps", float, "CPU memcpy bandwidth between host buffers", minimum=0, exclusive_minimum=True),
        Param("energy_pJ_per_bit", float, "dynamic energy per transferred bit (both PHYs + controllers)", minimum=0),
        Param("idle_power_W", float, "link power while up and idle", minimum=0),
    ),
    checks=(lambda v: ("encoding_data_bits", "must be <= encoding_block_bits") if v["encoding_data_bits"] > v["encoding_block_bits"] else None,),
)


class PcieLink:
    """Pure timing model of a PCIe link plus the software data path's per-call overheads."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = p = params
        self.raw_bw_GBps: float = p["lanes_count"] * p["rate_GTps"] * p["encoding_data_bits"] / p["encoding_block_bits"] / 8.0
        self.effective_bw_GBps: float = self.raw_bw_GBps * p["link_efficiency_fraction"]
        self.latency_ns: float = p["dma_latency_ns"]

    def dma_ns(self, nbytes: float) -> float:
        """One DMA transfer of ``nbytes`` (no software call), ns."""
        check_non_negative(nbytes=nbytes)
        return self.latency_ns + nbytes / self.effective_bw_GBps

    def launch_ns(self) -> float:
        """One kernel launch, ns."""
        return self.params["launch_us"] * US

    def sync_ns(self) -> float:
        """One stream synchronisation, ns."""
        return self.params["sync_us"] * US

    def legs(self, bounce_through_host: bool) -> int:
        return 2 if bounce_through_host else 1

    def memcpy_ns(self, nbytes: float, bounce_through_host: bool = False) -> float:
        """A software copy of ``nbytes``: one memcpy call, or two plus an optional CPU copy for a
        bounce through host memory, ns."""
        one = self.params["memcpy_overhead_us"] * US + self.dma_ns(nbytes)
        if not bounce_through_host:
            return one
        host = nbytes / self.params["host_copy_bw_GBps"] if self.params["bounce_host_copy"] else 0.0
        return 2 * one + host

    def memcpy_bound_ns(self, nbytes: float, bounce_through_host: bool = False) -> float:
        """Analytic bound: per leg, DMA latency + bytes / raw bandwidth (no software overheads)."""
        return self.legs(bounce_through_host) * (self.latency_ns + nbytes / self.raw_bw_GBps)

    def bound_factor(self, bounce_through_host: bool = False) -> float:
        """Stated factor: ``memcpy_ns <= bound_factor × memcpy_bound_ns`` for every size."""
        p = self.params
        small = (p["memcpy_overhead_us"] * US + self.latency_ns) / self.latency_ns if self.latency_ns > 0 else float("inf")
        large = 1 / p["link_efficiency_fraction"]
        if bounce_through_host and p["bounce_host_copy"]:
            large += self.raw_bw_GBps / p["host_copy_bw_GBps"] / 2
        return max(small, large)

    def memcpy(self, nbytes: float, bounce_through_host: bool = False) -> Cost:
        """:meth:`memcpy_ns` with bytes moved over the link and their energy."""
        moved = self.legs(bounce_through_host) * nbytes
        return Cost(self.memcpy_ns(nbytes, bounce_through_host), moved, moved * 8 * self.params["energy_pJ_per_bit"] * PJ)


class PcieComponent(Component):
    """Simpy PCIe link: a server per direction and a host-CPU lane for software overheads."""

    def __init__(self, sim: Simulation, name: str, link: PcieLink) -> None:
        super().__init__(sim, name)
        self.link = link
        self.dirs = {d: BandwidthServer(sim, f"{name}.{d}", 1, lane=f"pcie.{name}.{d}") for d in DIRECTIONS}
        self.host = BandwidthServer(sim, f"{name}.host", 1, lane=f"pcie.{name}.host")

    def memcpy(self, nbytes: float, direction: str, label: str = "memcpy", batch: int = -1) -> Generator[Any, Any, float]:
        """Process: a memcpy call (host lane) then its DMA (direction lane); returns completion (ns)."""
        yield from self.host.serve(self.link.params["memcpy_overhead_us"] * US, label, batch)
        yield self.env.timeout(self.link.latency_ns)
        yield from self.dirs[direction].serve(nbytes / self.link.effective_bw_GBps, label, batch)
        return float(self.env.now)

    def bounce(self, nbytes: float, label: str = "bounce", batch: int = -1) -> Generator[Any, Any, float]:
        """Process: device → host, optional CPU copy, host → device; returns completion (ns)."""
        yield from self.memcpy(nbytes, "d2h", label, batch)
        if self.link.params["bounce_host_copy"]:
            yield from self.host.serve(nbytes / self.link.params["host_copy_bw_GBps"], label, batch)
        return (yield from self.memcpy(nbytes, "h2d", label, batch))


SIZES_B = (64, 4 * KiB, 64 * KiB, 1 * MiB, 64 * MiB)


def microbench(link: PcieLink, options: Mapping[str, Any]) -> dict[str, Any]:
    """Latency and bandwidth per direction by simulated copies; memcpy time vs size, direct and
    bounced; launch and sync overheads."""
    lat, bw = {}, {}
    names = {"h2d": "down", "d2h": "up"}
    for d in DIRECTIONS:
        for size, store in ((0, lat), (64 * MiB, bw)):
            sim = Simulation(seed=0, trace=False)
            comp = PcieComponent(sim, "probe", link)
            out: dict[str, float] = {}

            def go(comp=comp, out=out, size=size, d=d):
                out["t"] = yield from comp.memcpy(size, d)

            sim.env.process(go())
            sim.run()
            store[names[d]] = out["t"] if size == 0 else size / out["t"]
    return {
        "latency_ns": lat,
        "bw_GBps": bw,
        "raw_bw_GBps": link.raw_bw_GBps,
        "dma_bw_GBps": link.effective_bw_GBps,
        "memcpy_us": {_size(s): link.memcpy_ns(s) / US for s in SIZES_B},
        "memcpy_bounce_us": {_size(s): link.memcpy_ns(s, True) / US for s in SIZES_B},
        "launch_us": link.launch_ns() / US,
        "sync_us": link.sync_ns() / US,
    }


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
        microbench=microbench,
    )
)
