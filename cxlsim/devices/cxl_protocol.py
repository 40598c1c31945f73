"""CXL sub-protocols of one device's controller (family ``cxl_protocol``): CXL.mem, CXL.cache with
its DCOH, and CXL.io.

A preset describes one CXL controller (ASIC or FPGA) and names the link and switch it talks over
(``link_preset_name``, ``switch_preset_name``; the fabric is homogeneous: every link of a path is of
that preset). ``hops`` arguments count switches on the path (0 = direct attach; TrainingCXL's host,
CXL-GPU and CXL-MEM share one switch, so the default is 1).

Contract (units: time ns, data B, energy J; every ``*_ns`` returns a float):

CXL.mem (host or peer load/store to device memory; 64 B lines)
  one line = host protocol + request (header-only message over the path) + device protocol
  + ``media_ns`` + response (data message) for reads; writes send the data with the request
  and get a header-only completion. Protocol latencies are charged once per transaction at each end.
  ``read_stream_ns(n_lines, ...)`` pipelines lines: first-line latency + (n - 1) × interval, where
  the interval is the largest of: the response line's link occupancy, ``media_interval_ns``, and
  the first-line latency / ``max_outstanding_count`` (Little's law on the request trackers).
  Bound: path latencies + media + size / bandwidth, the bandwidth being the smallest of the raw
  link rate, the tracker limit on the bound latency and the media rate.

CXL.cache + DCOH (a device caches lines of another's memory; state in
  :class:`~cxlsim.devices.cxl_dcoh.DcohState`)
  per line: ``dcoh_lookup_ns`` (directory lookup), ``dcoh_state_change_ns`` (transition),
  ``dcoh_snoop_ns`` (serving a snoop), ``dcoh_occupancy_ns`` (pipeline issue interval).
  ``flush_ns(n) = first-line latency + (n - 1) × max(DCOH occupancy, line transfer, tracker limit)``;
  first-line latency = lookup + state change + device protocol + path(64 B) + home's device protocol.
  This is the automatic data movement of SPEC §1.2 (pooled embeddings to the GPU, gradients back)
  and the checkpointing logic's pull of MLP parameters (:meth:`CxlProtocol.cache_fill_ns`).

CXL.io
  MMIO register write (posted) and read (round trip); the per-batch configuration writes
  ``n_registers`` scalar registers and moves the batch's sparse indices either by a DMA descriptor
  (``index_transfer_policy: dma``, default: 3 register writes, then the device reads the index
  buffer from host memory in ``dma_chunk_B`` messages) or by one MMIO write per ``mmio_write_B``
  (``mmio``; megabytes of indices make this impractical, which is why DMA is the default).

Simpy: :class:`DcohComponent` adds contention: a bulk flush holds the DCOH pipeline for
n × occupancy and the link direction for the packed line stream at the same time.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from typing import Any

import numpy as np

from cxlsim.config.catalog import load_preset
from cxlsim.config.params import Param, Schema
from cxlsim.devices.base import BandwidthServer, Cost, check_non_negative
from cxlsim.devices.cxl_dcoh import DcohState, Transitions
from cxlsim.devices.cxl_link import CxlLink, LinkComponent
from cxlsim.devices.cxl_switch import CxlSwitch
from cxlsim.devices.registry import DeviceFamily, build_device, register
from cxlsim.engine.component import Component, Simulation

#: Stated factor: a CXL.mem, cache-fill or flush time is within this factor of its analytic bound
#: for media_ns <= 1000 and hops <= 3 (tests check it over those ranges).
BOUND_FACTOR = 3.0

SCHEMA = Schema(
    "cxl_protocol",
    (
        Param("link_preset_name", str, "cxl_link preset of every link on the device's paths"),
        Param("switch_preset_name", str, "cxl_switch preset of every switch on the device's paths"),
        Param("line_B", int, "coherence / CXL.mem access granularity", default=64, minimum=1, maximum=4096),
        Param("host_protocol_ns", float, "requester-side protocol processing per transaction", minimum=0),
        Param("device_protocol_ns", float, "device-side protocol processing per transaction", minimum=0),
        Param("max_outstanding_count", int, "request trackers: outstanding line requests of one stream", minimum=1),
        Param("dcoh_lookup_ns", float, "DCOH directory lookup per line", minimum=0),
        Param("dcoh_state_change_ns", float, "DCOH state transition per line", minimum=0),
        Param("dcoh_snoop_ns", float, "DCOH service of one snoop (beyond lookup)", minimum=0),
        Param("dcoh_occupancy_ns", float, "DCOH pipeline issue interval per line in a bulk operation", minimum=0, exclusive_minimum=True),
        Param("mmio_write_ns", float, "host-side issue cost of one posted MMIO (uncached) register write", minimum=0),
        Param("mmio_read_ns", float, "device register read service + root-complex handling of one MMIO read", minimum=0),
        Param("mmio_write_B", int, "bytes carried by one MMIO write", default=8, minimum=1, maximum=64),
        Param("index_transfer_policy", str, "how per-batch sparse indices reach the device", default="dma", choices=("dma", "mmio")),
        Param("descriptor_registers_count", int, "MMIO writes of a DMA descriptor (address, length, doorbell)", default=3, minimum=1),
        Param("dma_setup_ns", float, "device DMA engine start after the doorbell", minimum=0),
        Param("dma_chunk_B", int, "payload of one DMA read completion over CXL.io", default=256, minimum=1, maximum=4096),
        Param("host_memory_ns", float, "host DRAM access serving a device DMA read", minimum=0),
    ),
)


class CxlProtocol:
    """Pure timing model of CXL.mem, CXL.cache/DCOH and CXL.io for one device controller."""

    def __init__(self, params: Mapping[str, Any], link: CxlLink | None = None, switch: CxlSwitch | None = None) -> None:
        self.params = p = params
        self.link: CxlLink = link if link is not None else build_device(p["link_preset_name"])
        if switch is None:
            switch = CxlSwitch(load_preset(p["switch_preset_name"]).params, link=self.link)
        self.switch: CxlSwitch = switch
        self.line_B: int = p["line_B"]
        self.proto_ns: float = p["host_protocol_ns"] + p["device_protocol_ns"]

    # -- paths -----------------------------------------------------------------------------
    def path_ns(self, payload_B: float, hops: int = 1) -> float:
        """One lone message over ``hops`` switches, unloaded, ns."""
        return self.switch.path_ns(payload_B, hops)

    def _bound(self, size_B: float, media_ns: float, hops: int, media_interval_ns: float = 0.0, fixed_ns: float | None = None, occupancy_ns: float = 0.0) -> float:
        """latency + size / bandwidth. The latency is the fixed part of one line (protocol or DCOH
        processing ``fixed_ns``, link and switch latencies both ways, media) without serialisation;
        the bandwidth is the smallest of the raw link rate, the tracker-limited rate (Little's law
        on that latency) and the media rate."""
        fixed = self.proto_ns if fixed_ns is None else fixed_ns
        latency = fixed + self.switch.path_bound_ns(0, hops) + media_ns + self.switch.path_bound_ns(0, hops)
        n = max(1, math.ceil(size_B / self.line_B))
        per_line = max(latency / self.params["max_outstanding_count"], media_interval_ns, occupancy_ns)
        return latency + max(size_B / self.link.raw_bw_GBps, (n - 1) * per_line)

    def _interval(self, first_ns: float, line_ns: float, media_interval_ns: float) -> float:
        return max(line_ns, media_interval_ns, first_ns / self.params["max_outstanding_count"])

    def _n_lines(self, size_B: float) -> int:
        check_non_negative(size_B=size_B)
        return max(1, math.ceil(size_B / self.line_B))

    def _energy(self, wire_B: float, hops: int) -> float:
        return self.switch.forward_energy_J(wire_B, hops)

    # -- CXL.mem ---------------------------------------------------------------------------
    def read_line_ns(self, media_ns: float, hops: int = 1) -> float:
        """Unloaded latency of one CXL.mem line read (M2S Req → S2M DRS), ns."""
        return self.proto_ns + self.path_ns(0, hops) + media_ns + self.path_ns(self.line_B, hops)

    def write_line_ns(self, media_ns: float, hops: int = 1) -> float:
        """Unloaded latency of one CXL.mem line write (M2S RwD → S2M NDR), ns."""
        return self.proto_ns + self.path_ns(self.line_B, hops) + media_ns + self.path_ns(0, hops)

    def read_stream_ns(self, n_lines: int, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """``n_lines`` pipelined line reads, ns (0 for none)."""
        if n_lines <= 0:
            return 0.0
        first = self.read_line_ns(media_ns, hops)
        return first + (n_lines - 1) * self._interval(first, self.link.per_message_ns(self.line_B), media_interval_ns)

    def write_stream_ns(self, n_lines: int, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """``n_lines`` pipelined line writes, ns (0 for none)."""
        if n_lines <= 0:
            return 0.0
        first = self.write_line_ns(media_ns, hops)
        return first + (n_lines - 1) * self._interval(first, self.link.per_message_ns(self.line_B), media_interval_ns)

    def read_ns(self, size_B: float, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """Read ``size_B`` bytes (as ceil(size / line) pipelined line reads), ns."""
        return self.read_stream_ns(self._n_lines(size_B), media_ns, hops, media_interval_ns)

    def write_ns(self, size_B: float, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """Write ``size_B`` bytes (as ceil(size / line) pipelined line writes), ns."""
        return self.write_stream_ns(self._n_lines(size_B), media_ns, hops, media_interval_ns)

    def read_bound_ns(self, size_B: float, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """Analytic bound of :meth:`read_ns`: path latencies + media + size / bandwidth, the
        bandwidth being min(raw link, trackers / latency, media rate)."""
        return self._bound(size_B, media_ns, hops, media_interval_ns)

    def write_bound_ns(self, size_B: float, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """Analytic bound of :meth:`write_ns` (as :meth:`read_bound_ns`)."""
        return self._bound(size_B, media_ns, hops, media_interval_ns)

    def read_cost(self, size_B: float, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> Cost:
        """:meth:`read_ns` with wire bytes (both directions, per link) and fabric energy."""
        n = self._n_lines(size_B)
        wire = (self.link.stream_flits(n, 0) + self.link.stream_flits(n, self.line_B)) * self.link.flit_B
        return Cost(self.read_stream_ns(n, media_ns, hops, media_interval_ns), wire, self._energy(wire, hops))

    def write_cost(self, size_B: float, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> Cost:
        """:meth:`write_ns` with wire bytes and fabric energy."""
        n = self._n_lines(size_B)
        wire = (self.link.stream_flits(n, 0) + self.link.stream_flits(n, self.line_B)) * self.link.flit_B
        return Cost(self.write_stream_ns(n, media_ns, hops, media_interval_ns), wire, self._energy(wire, hops))

    # -- CXL.cache + DCOH ------------------------------------------------------------------
    def line_transfer_ns(self) -> float:
        """Link occupancy of one 64 B data message inside a stream, ns."""
        return self.link.per_message_ns(self.line_B)

    def flush_first_ns(self, hops: int = 1) -> float:
        """One dirty line from DCOH lookup to arrival at its home, ns."""
        p = self.params
        return p["dcoh_lookup_ns"] + p["dcoh_state_change_ns"] + 2 * p["device_protocol_ns"] + self.path_ns(self.line_B, hops)

    def flush_interval_ns(self, hops: int = 1) -> float:
        """Steady-state interval between flushed lines, ns.

        The largest of the DCOH pipeline occupancy, the line's link occupancy and the tracker
        limit (a writeback holds a tracker until the home's completion returns).
        """
        hold = self.flush_first_ns(hops) + self.path_ns(0, hops)
        return max(self.params["dcoh_occupancy_ns"], self.line_transfer_ns(), hold / self.params["max_outstanding_count"])

    def flush_ns(self, n_lines: int, hops: int = 1) -> float:
        """Bulk flush of ``n_lines`` dirty lines to their home, pipelined, ns (0 for none)."""
        if n_lines <= 0:
            return 0.0
        return self.flush_first_ns(hops) + (n_lines - 1) * self.flush_interval_ns(hops)

    def flush_bound_ns(self, n_lines: int, hops: int = 1) -> float:
        """Analytic bound of :meth:`flush_ns`: first-line latency without serialisation + n lines /
        bandwidth, the bandwidth being min(raw link, DCOH pipeline, trackers / round trip)."""
        if n_lines <= 0:
            return 0.0
        p = self.params
        latency = p["dcoh_lookup_ns"] + p["dcoh_state_change_ns"] + 2 * p["device_protocol_ns"] + self.switch.path_bound_ns(0, hops)
        hold = latency + self.switch.path_bound_ns(0, hops)
        per_line = max(p["dcoh_occupancy_ns"], hold / p["max_outstanding_count"])
        return latency + max(n_lines * self.line_B / self.link.raw_bw_GBps, (n_lines - 1) * per_line)

    def flush_cost(self, n_lines: int, hops: int = 1) -> Cost:
        """:meth:`flush_ns` with wire bytes (data direction, per link) and fabric energy."""
        wire = self.link.stream_flits(n_lines, self.line_B) * self.link.flit_B
        return Cost(self.flush_ns(n_lines, hops), wire, self._energy(wire, hops))

    def flush(self, state: DcohState, lines=None, hops: int = 1, keep: bool = True) -> tuple[Cost, Transitions]:
        """Flush the dirty lines among ``lines`` of ``state`` (mutated): clean lines cost a DCOH
        lookup slot each, dirty lines a pipelined writeback."""
        t = state.flush(lines, keep)
        clean = t.lines - t.dirty
        cost = self.flush_cost(t.dirty, hops)
        scan = clean * self.params["dcoh_occupancy_ns"]
        if t.dirty == 0 and t.lines > 0:
            scan += self.params["dcoh_lookup_ns"]
        return Cost(cost.time_ns + scan, cost.bytes, cost.energy_J), t

    def snoop_ns(self, dirty: bool, hops: int = 1) -> float:
        """A home snoops one line at this DCOH and gets the answer (with data if dirty), ns."""
        p = self.params
        back = self.path_ns(self.line_B if dirty else 0, hops)
        return self.proto_ns + self.path_ns(0, hops) + p["dcoh_lookup_ns"] + p["dcoh_snoop_ns"] + p["dcoh_state_change_ns"] + back

    def cache_fill_ns(self, n_lines: int, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """This device reads ``n_lines`` lines of another device's memory over CXL.cache
        (request → home DCOH lookup + media → data → local state change), pipelined, ns."""
        if n_lines <= 0:
            return 0.0
        p = self.params
        first = 2 * p["device_protocol_ns"] + self.path_ns(0, hops) + p["dcoh_lookup_ns"] + media_ns + self.path_ns(self.line_B, hops) + p["dcoh_state_change_ns"]
        interval = max(self._interval(first, self.line_transfer_ns(), media_interval_ns), p["dcoh_occupancy_ns"])
        return first + (n_lines - 1) * interval

    def cache_fill_bound_ns(self, n_lines: int, media_ns: float, hops: int = 1, media_interval_ns: float = 0.0) -> float:
        """Analytic bound of :meth:`cache_fill_ns` (as :meth:`read_bound_ns`, plus the DCOH pipeline)."""
        if n_lines <= 0:
            return 0.0
        p = self.params
        fixed = 2 * p["device_protocol_ns"] + p["dcoh_lookup_ns"] + p["dcoh_state_change_ns"]
        return self._bound(n_lines * self.line_B, media_ns, hops, media_interval_ns, fixed, p["dcoh_occupancy_ns"])

    # -- CXL.io ----------------------------------------------------------------------------
    def mmio_write_ns(self, hops: int = 1) -> float:
        """One posted MMIO register write, from issue to arrival at the device, ns."""
        p = self.params
        return self.proto_ns + p["mmio_write_ns"] + self.path_ns(p["mmio_write_B"], hops)

    def mmio_read_ns(self, hops: int = 1) -> float:
        """One MMIO register read round trip, ns."""
        p = self.params
        return self.proto_ns + self.path_ns(0, hops) + p["mmio_read_ns"] + self.path_ns(p["mmio_write_B"], hops)

    def configure_batch_ns(self, n_registers: int, index_bytes: float, hops: int = 1) -> float:
        """Per-batch configuration: ``n_registers`` scalar MMIO writes plus the batch's
        ``index_bytes`` of sparse indices (by DMA descriptor or by MMIO writes; see the policy), ns."""
        p = self.params
        if p["index_transfer_policy"] == "mmio":
            writes = n_registers + math.ceil(index_bytes / p["mmio_write_B"])
            return writes * p["mmio_write_ns"] + self.proto_ns + self.path_ns(p["mmio_write_B"], hops)
        writes = n_registers + p["descriptor_registers_count"]
        t = writes * p["mmio_write_ns"] + self.proto_ns + self.path_ns(p["mmio_write_B"], hops)
        if index_bytes <= 0:
            return t
        chunks = math.ceil(index_bytes / p["dma_chunk_B"])
        first = p["dma_setup_ns"] + self.path_ns(0, hops) + p["host_memory_ns"] + self.path_ns(p["dma_chunk_B"], hops)
        return t + first + (chunks - 1) * self.link.per_message_ns(p["dma_chunk_B"])

    def configure_batch_bound_ns(self, n_registers: int, index_bytes: float, hops: int = 1) -> float:
        """Analytic bound of :meth:`configure_batch_ns`: one path latency + indices / raw bandwidth."""
        return self.switch.path_bound_ns(index_bytes, hops)


class DcohComponent(Component):
    """Simpy DCOH: a pipeline server (lane ``dcoh.<name>``) plus a link direction for bulk flushes."""

    def __init__(self, sim: Simulation, name: str, protocol: CxlProtocol, link: LinkComponent) -> None:
        super().__init__(sim, name)
        self.protocol = protocol
        self.link = link
        self.pipeline = BandwidthServer(sim, f"{name}.pipeline", 1, lane=f"dcoh.{name}")

    def elaborate(self) -> None:
        self.flushed = self.stat("flushed_lines_count", "count", "dirty lines flushed to their home")

    def flush(self, n_lines: int, direction: str = "up", hops: int = 1, label: str = "flush", batch: int = -1) -> Generator[Any, Any, float]:
        """Process: flush ``n_lines`` dirty lines; returns the time the last one reaches its home.

        DCOH pipeline and link direction are held concurrently; uncontended, the result equals
        :meth:`CxlProtocol.flush_ns`.
        """
        if n_lines <= 0:
            return float(self.env.now)
        pr = self.protocol
        occ = n_lines * pr.params["dcoh_occupancy_ns"]
        wire = pr.link.stream_ns(n_lines, pr.line_B)
        tail = max(0.0, pr.flush_ns(n_lines, hops) - max(occ, wire))
        a = self.env.process(self.pipeline.serve(occ, label, batch))
        b = self.env.process(self.link.dirs[direction].serve(wire, label, batch))
        yield a & b
        self.flushed.add(n_lines)
        yield self.env.timeout(tail)
        return float(self.env.now)


# -- microbenchmark --------------------------------------------------------------------------
FLUSH_LINES = (1, 64, 1024, 16384)


def microbench(pr: CxlProtocol, options: Mapping[str, Any]) -> dict[str, Any]:
    """CXL.mem load/store latency and stream bandwidth, DCOH flush of N lines (by simulation),
    snoop, MMIO and per-batch configuration costs. Media time is 0 (fabric only) unless stated."""
    media = 0.0
    n_stream = 1 << 16
    lat = {"read": pr.read_line_ns(media), "write": pr.write_line_ns(media)}
    bw = {
        "read": n_stream * pr.line_B / pr.read_stream_ns(n_stream, media),
        "write": n_stream * pr.line_B / pr.write_stream_ns(n_stream, media),
    }
    flush_sim = {}
    for n in FLUSH_LINES:
        sim = Simulation(seed=0, trace=False)
        lc = LinkComponent(sim, "link", pr.link)
        dc = DcohComponent(sim, "dcoh", pr, lc)
        out: dict[str, float] = {}

        def go(dc=dc, out=out, n=n):
            out["t"] = yield from dc.flush(n)

        sim.env.process(go())
        sim.run()
        flush_sim[str(n)] = out["t"]
    state = DcohState(4096)
    state.write(np.arange(0, 4096, 2))
    mixed, t = pr.flush(state)
    return {
        "latency_ns": lat,
        "bw_GBps": bw,
        "read_line_ns_by_hops": {str(h): pr.read_line_ns(media, h) for h in (0, 1, 2, 3)},
        "read_line_ns_media_100ns_direct": pr.read_line_ns(100.0, 0),
        "load_adder_over_media_direct_ns": pr.read_line_ns(0.0, 0),
        "flush_ns": {str(n): pr.flush_ns(n) for n in FLUSH_LINES},
        "flush_ns_simulated": flush_sim,
        "flush_bw_GBps_16384_lines": 16384 * pr.line_B / pr.flush_ns(16384),
        "flush_4096_lines_half_dirty_ns": mixed.time_ns,
        "flush_energy_nJ_per_line": pr.flush_cost(1024).energy_J / 1024 / 1e-9,
        "snoop_ns": {"clean": pr.snoop_ns(False), "dirty": pr.snoop_ns(True)},
        "cache_fill_ns_1024_lines_media_300ns": pr.cache_fill_ns(1024, 300.0),
        "mmio_ns": {"write": pr.mmio_write_ns(), "read": pr.mmio_read_ns()},
        "configure_batch_us_10reg_64KiB": pr.configure_batch_ns(10, 65536) / 1e3,
    }


FAMILY = register(
    DeviceFamily(
        name="cxl_protocol",
        doc="one CXL device controller: CXL.mem, CXL.cache + DCOH (MESI, flush), CXL.io (MMIO)",
        schema=SCHEMA,
        build=CxlProtocol,
        microbench=microbench,
    )
)
