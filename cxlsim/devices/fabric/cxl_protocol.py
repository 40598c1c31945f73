"""CXL sub-protocols of one device's controller (family ``cxl_protocol``): CXL.mem, CXL.cache with
its DCOH, and CXL.io.

A preset describes one CXL controller (ASIC or FPGA): protocol processing, DCOH and CXL.io costs,
and nothing about the fabric. Every timing method takes the
:class:`~cxlsim.devices.fabric.cxl_path.FabricPath` its messages cross (the system builds it from its link
and switch roles; a study composes one, e.g. ``FabricPath([link] * 2, switch)`` for one switch
between two links)::

    proto = build_device("cxl_protocol/fpga")
    path = FabricPath([build_device("cxl_link/cxl3-x16")] * 2, build_device("cxl_switch/cxl3-x16"))
    proto.flush_ns(4096, path), proto.read_ns(4096, 300.0, path)

Contract (units: time ns, data B, energy J; every ``*_ns`` returns a float; the API of
:mod:`cxlsim.devices.base`). ``path(N)`` below is ``path.message_ns(N)``, one lone message of N
payload bytes over the path; ``L`` is ``path.latency_ns``.

CXL.mem (host or peer load/store to device memory; 64 B lines)
  one line = host protocol + request (header-only message over the path) + device protocol
  + ``media_ns`` + response (data message) for reads; writes send the data with the request
  and get a header-only completion. Protocol latencies are charged once per transaction at each end.
  ``read_stream_ns``/``write_stream_ns(n_lines, media_ns, path, ...)`` are bulk transfers of the CXL
  memory model (:func:`~cxlsim.devices.fabric.cxl_bulk.bulk_transfer_ns`: each line one message per
  direction through the links' servers, ``max_outstanding_count`` lines in flight, each held for its
  round trip, the media's ``media_interval_ns`` between lines; a write done when acknowledged). ``read_ns``/``write_ns(size_B, media_ns, path, ...)``:
  ceil(size / line) lines. Bound (ops ``"read"``, ``"write"``): path latencies + media + size /
  bandwidth, the bandwidth being the smallest of the raw link rate, the tracker limit on the bound
  latency and the media rate. ``read_cost``/``write_cost``: ``size_B`` = wire bytes per link (both
  directions), energy = the path's (links and switches).

CXL.cache + DCOH (a device caches lines of another's memory; state in
  :class:`~cxlsim.devices.fabric.cxl_dcoh.DcohState`)
  per line: ``dcoh_lookup_ns`` (directory lookup), ``dcoh_state_change_ns`` (transition),
  ``dcoh_snoop_ns`` (serving a snoop), ``dcoh_occupancy_ns`` (pipeline issue interval).
  ``flush_ns(n, path)`` is a bulk write of the CXL memory model (``bulk_transfer_ns``): the first
  line's lookup + state change + device protocol + the crossing of 64 B + the home's device protocol,
  then the DCOH's occupancy, the line's link occupancy and the trackers (each held for the line's
  round trip: its completion returns) bounding the stream. ``flush_lines_cost(transitions, path)`` charges what a
  :meth:`DcohState.flush <cxlsim.devices.fabric.cxl_dcoh.DcohState.flush>` returned: its dirty lines
  flushed, one pipeline slot per clean line scanned. This is the automatic data movement of
  docs/design.md#data-movement (pooled embeddings to the GPU, gradients back) and, with
  :meth:`CxlProtocol.cache_fill_ns`, the checkpointing logic's pull of MLP parameters. Bounded ops
  ``"flush"``, ``"cache_fill"``. ``dcoh_occupancy_ns`` is the device side of every op (its request
  pipeline); the home's coherence tracking (``coherence_alloc_interval_ns``) caps allocating reads
  only. ``cache_fill_ns(n, media_ns, path, media_interval_ns, op="RdCurr")`` is a stream of one
  device-initiated CXL.cache op (:mod:`cxlsim.devices.fabric.cxl_cache_ops`: RdCurr, RdShared,
  RdOwn, ItoMWr, WOWrInvF, their stages and limits) to a peer device's memory, whose pipeline is
  :meth:`CxlProtocol.cache_fill_home_ns`.

CXL.io
  MMIO register write (posted) and read (round trip); the per-batch configuration
  ``configure_batch_ns(n_registers, index_B, path, host=None)`` writes ``n_registers`` scalar registers and
  moves the batch's sparse indices either by a DMA descriptor (``index_transfer_policy: dma``,
  default: 3 register writes, then the device reads the index buffer from host memory in
  ``dma_chunk_B`` messages, a bulk read: ``bulk_transfer_ns``) or by one MMIO write per ``mmio_write_B`` (``mmio``; megabytes of
  indices make this impractical, which is why DMA is the default). Bounded op
  ``"configure_batch"``: the same latencies without serialisation + bytes / raw bandwidth.

Bound factor: ``bound_factor(op)`` = :data:`BOUND_FACTOR` for every op, stated for
``media_ns <= 1000`` and paths of at most 4 links of the shipped link presets (tests check it
over those ranges).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from cxlsim.config.params import Param, Schema
from cxlsim.devices.base import Cost, DeviceModel, check_non_negative
from cxlsim.devices.fabric import cxl_cache_ops as cache_ops
from cxlsim.devices.fabric.cxl_bulk import (
    bulk_transfer_ns,
    first_line_ns,
    one_way_ns,
    round_trip_ns,
)
from cxlsim.devices.fabric.cxl_dcoh import DcohState, Transitions
from cxlsim.devices.fabric.cxl_path import FabricPath
from cxlsim.devices.registry import DeviceFamily, register

#: Stated factor: every bounded op is within this factor of its analytic bound for media_ns <= 1000
#: and paths of at most 4 links of the shipped link presets.
BOUND_FACTOR = 3.0

SCHEMA = Schema(
    "cxl_protocol",
    (
        Param("line_B", int, "coherence / CXL.mem access granularity", default=64, minimum=1, maximum=4096),
        Param("host_protocol_ns", float, "requester-side protocol processing per transaction", minimum=0),
        Param("device_protocol_ns", float, "device-side protocol processing per transaction", minimum=0),
        Param("max_outstanding_count", int, "request trackers: outstanding line requests of one stream", minimum=1),
        Param("dcoh_lookup_ns", float, "DCOH directory lookup per line", minimum=0),
        Param("dcoh_state_change_ns", float, "DCOH state transition per line", minimum=0),
        Param("dcoh_snoop_ns", float, "DCOH service of one snoop (beyond lookup)", minimum=0),
        Param("dcoh_occupancy_ns", float, "the device's CXL.cache request pipeline (DCOH): issue interval per line of "
              "every op (flush, read, write)", minimum=0, exclusive_minimum=True),
        Param("coherence_alloc_interval_ns", float, "the home's coherence tracking (snoop filter / home DCOH): one "
              "entry allocated per interval; caps allocating reads (RdShared, RdOwn) only", minimum=0,
              exclusive_minimum=True),
        Param("device_completion_ns", float, "the device's handling of a returning response or data (tracker "
              "release, delivery) per transaction", minimum=0),
        Param("home_write_interval_ns", float, "the home's write path: interval per line write it commits (a "
              "WOWrInvF commits two)", minimum=0),
        Param("device_cache_hit_ns", float, "a device request that hits the device's own cache", minimum=0),
        Param("mmio_write_ns", float, "host-side issue cost of one posted MMIO (uncached) register write when no host "
              "model is passed (a system passes its host: cpu mmio_write_instructions)", minimum=0),
        Param("mmio_read_ns", float, "device register read service + root-complex handling of one MMIO read", minimum=0),
        Param("mmio_write_B", int, "bytes carried by one MMIO write", default=8, minimum=1, maximum=64),
        Param("index_transfer_policy", str, "how per-batch sparse indices reach the device", default="dma", choices=("dma", "mmio")),
        Param("descriptor_registers_count", int, "MMIO writes of a DMA descriptor (address, length, doorbell)", default=3, minimum=1),
        Param("dma_setup_ns", float, "device DMA engine start after the doorbell", minimum=0),
        Param("dma_chunk_B", int, "payload of one DMA read completion over CXL.io", default=256, minimum=1, maximum=4096),
        Param("host_memory_ns", float, "host DRAM access serving a device DMA read", minimum=0),
    ),
)


class CxlProtocol(DeviceModel):
    """Pure model of CXL.mem, CXL.cache/DCOH and CXL.io for one device controller."""

    BOUNDED_OPS = ("read", "write", "flush", "cache_fill", "configure_batch")

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = p = params
        self.line_B: int = p["line_B"]
        self.proto_ns: float = p["host_protocol_ns"] + p["device_protocol_ns"]

    def _bound_factor(self, op: str) -> float:
        return BOUND_FACTOR

    # -- helpers -----------------------------------------------------------------------------
    def _bound(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0,
               fixed_ns: float | None = None, occupancy_ns: float = 0.0) -> float:
        """latency + the longest of: size at the raw link rate, the lines after the first at the
        media's or the pipeline's interval, and the trackers' waves (the (k·outstanding + 1)-th line
        leaves no earlier than k round trips: Little's law only once the trackers are full). The
        latency is the fixed part of one line (protocol or DCOH processing ``fixed_ns``, path
        latencies both ways, media) without serialisation."""
        fixed = self.proto_ns if fixed_ns is None else fixed_ns
        hop = path.bound_ns("message", 0)
        latency = fixed + hop + media_ns + hop
        n = max(1, math.ceil(size_B / self.line_B))
        waves = (n - 1) // self.params["max_outstanding_count"]
        return latency + max(size_B / path.raw_bw_GBps, (n - 1) * max(media_interval_ns, occupancy_ns),
                             waves * latency)

    def _interval(self, first_ns: float, line_ns: float, media_interval_ns: float) -> float:
        return max(line_ns, media_interval_ns, first_ns / self.params["max_outstanding_count"])

    def _n_lines(self, size_B: float) -> int:
        check_non_negative(size_B=size_B)
        return max(1, math.ceil(size_B / self.line_B))

    def _line_streams_cost(self, time_ns: float, n_lines: int, path: FabricPath) -> Cost:
        """Cost of ``n_lines`` header-only messages one way and ``n_lines`` data lines the other."""
        wire = [lk.stream_wire_B(n_lines, 0) + lk.stream_wire_B(n_lines, self.line_B) for lk in path.links]
        return path.cost(time_ns, wire)

    # -- CXL.mem ---------------------------------------------------------------------------
    def read_line_ns(self, media_ns: float, path: FabricPath) -> float:
        """Unloaded latency of one CXL.mem line read (M2S Req → S2M DRS), ns: the first line of
        :meth:`read_stream_ns`."""
        return self.proto_ns + one_way_ns(path, 0) + media_ns + one_way_ns(path, self.line_B)

    def write_line_ns(self, media_ns: float, path: FabricPath) -> float:
        """Unloaded latency of one CXL.mem line write (M2S RwD → S2M NDR), ns: the first line of
        :meth:`write_stream_ns`."""
        return self.proto_ns + one_way_ns(path, self.line_B) + media_ns + one_way_ns(path, 0)

    def _mem_stream_ns(self, direction: str, n_lines: int, media_ns: float, path: FabricPath,
                       media_interval_ns: float, sharers: int = 1, shared_link: int = -1) -> float:
        """CXL.mem lines as a bulk transfer of the CXL memory model
        (:func:`~cxlsim.devices.fabric.cxl_bulk.bulk_transfer_ns`): the requester's protocol time,
        the device's protocol and ``media_ns``, the media's ``media_interval_ns`` between lines."""
        p = self.params
        return bulk_transfer_ns(path, n_lines * self.line_B, direction, sharers, outstanding=p["max_outstanding_count"],
                                request_ns=p["host_protocol_ns"], far_ns=p["device_protocol_ns"] + media_ns,
                                interval_ns=media_interval_ns, line_B=self.line_B, acknowledged=True,
                                shared_link=shared_link)

    def read_stream_ns(self, n_lines: int, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float:
        """``n_lines`` pipelined line reads, ns (0 for none)."""
        return self._mem_stream_ns("read", n_lines, media_ns, path, media_interval_ns)

    def write_stream_ns(self, n_lines: int, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0,
                        sharers: int = 1, shared_link: int = -1) -> float:
        """``n_lines`` pipelined line writes, each acknowledged, ns (0 for none); ``sharers`` equal
        streams converging on ``path.links[shared_link]``
        (:func:`~cxlsim.devices.fabric.cxl_bulk.bulk_transfer_ns`)."""
        return self._mem_stream_ns("write", n_lines, media_ns, path, media_interval_ns, sharers, shared_link)

    def read_ns(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float:
        """Read ``size_B`` bytes (as ceil(size / line) pipelined line reads), ns."""
        return self.read_stream_ns(self._n_lines(size_B), media_ns, path, media_interval_ns)

    def write_ns(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float:
        """Write ``size_B`` bytes (as ceil(size / line) pipelined line writes), ns."""
        return self.write_stream_ns(self._n_lines(size_B), media_ns, path, media_interval_ns)

    def _bound_read(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float:
        """Bound of :meth:`read_ns`: path latencies + media + size / bandwidth, the bandwidth
        being min(raw link, trackers / latency, media rate)."""
        return self._bound(size_B, media_ns, path, media_interval_ns)

    def _bound_write(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float:
        """Bound of :meth:`write_ns` (as for reads)."""
        return self._bound(size_B, media_ns, path, media_interval_ns)

    def read_cost(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> Cost:
        """:meth:`read_ns` with wire bytes (both directions, per link) and the path's energy."""
        n = self._n_lines(size_B)
        return self._line_streams_cost(self.read_stream_ns(n, media_ns, path, media_interval_ns), n, path)

    def write_cost(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> Cost:
        """:meth:`write_ns` with wire bytes (both directions, per link) and the path's energy."""
        n = self._n_lines(size_B)
        return self._line_streams_cost(self.write_stream_ns(n, media_ns, path, media_interval_ns), n, path)

    # -- CXL.cache + DCOH ------------------------------------------------------------------
    def line_transfer_ns(self, path: FabricPath) -> float:
        """Occupancy of one 64 B data message inside a stream on the path's bottleneck link, ns."""
        return path.per_message_ns(self.line_B)

    def _flush_stages(self) -> dict[str, float]:
        """A flushed line's stages beyond the path: the DCOH's lookup, state change and protocol
        before it leaves, the home's protocol on arrival (ns)."""
        p = self.params
        return {"request_ns": p["dcoh_lookup_ns"] + p["dcoh_state_change_ns"] + p["device_protocol_ns"],
                "far_ns": p["device_protocol_ns"]}

    def flush_first_ns(self, path: FabricPath) -> float:
        """One dirty line from DCOH lookup to arrival at its home, ns."""
        return first_line_ns(path, "write", line_B=self.line_B, **self._flush_stages())

    def flush_interval_ns(self, path: FabricPath) -> float:
        """Steady-state interval between flushed lines of a long flush, ns.

        The largest of the DCOH pipeline occupancy, the line's link occupancy and the tracker
        limit (a writeback holds a tracker until the home's completion returns).
        """
        hold = round_trip_ns(path, "write", line_B=self.line_B, **self._flush_stages())
        return max(self.params["dcoh_occupancy_ns"], self.line_transfer_ns(path), hold / self.params["max_outstanding_count"])

    def flush_ns(self, n_lines: int, path: FabricPath, sharers: int = 1) -> float:
        """Bulk flush of ``n_lines`` dirty lines to their home, ns (0 for none): a bulk write of
        the CXL memory model (:func:`~cxlsim.devices.fabric.cxl_bulk.bulk_transfer_ns`), done when
        the last line is at its home; the DCOH's pipeline is its per-line stage, the trackers its
        outstanding lines; ``sharers`` equal flushes converge on the path's last link."""
        if n_lines <= 0:
            return 0.0
        return bulk_transfer_ns(path, n_lines * self.line_B, "write", sharers,
                                outstanding=self.params["max_outstanding_count"],
                                interval_ns=self.params["dcoh_occupancy_ns"], line_B=self.line_B,
                                **self._flush_stages())

    def _bound_flush(self, n_lines: int, path: FabricPath) -> float:
        """Bound of :meth:`flush_ns`: first-line latency without serialisation + the longest of n
        lines at the raw link rate, the lines after the first at the DCOH pipeline's interval, and
        the trackers' waves of round trips."""
        if n_lines <= 0:
            return 0.0
        p = self.params
        hop = path.bound_ns("message", 0)
        latency = p["dcoh_lookup_ns"] + p["dcoh_state_change_ns"] + 2 * p["device_protocol_ns"] + hop
        hold = latency + hop
        waves = (n_lines - 1) // p["max_outstanding_count"]  # Little's law once the trackers are full
        return latency + max(n_lines * self.line_B / path.raw_bw_GBps, (n_lines - 1) * p["dcoh_occupancy_ns"],
                             waves * hold)

    def flush_cost(self, n_lines: int, path: FabricPath) -> Cost:
        """:meth:`flush_ns` with wire bytes (data direction, per link) and the path's energy."""
        wire = [lk.stream_wire_B(n_lines, self.line_B) for lk in path.links]
        return path.cost(self.flush_ns(n_lines, path), wire)

    def flush_lines_cost(self, transitions: Transitions, path: FabricPath) -> Cost:
        """Cost of a :meth:`DcohState.flush <cxlsim.devices.fabric.cxl_dcoh.DcohState.flush>` that
        returned ``transitions``: its dirty lines flushed (pipelined writebacks), plus one DCOH
        pipeline slot per clean line scanned (a lookup when none was dirty)."""
        t = transitions
        clean = t.lines - t.dirty
        cost = self.flush_cost(t.dirty, path)
        scan = clean * self.params["dcoh_occupancy_ns"]
        if t.dirty == 0 and t.lines > 0:
            scan += self.params["dcoh_lookup_ns"]
        return Cost(cost.time_ns + scan, cost.size_B, cost.energy_J)

    def snoop_ns(self, dirty: bool, path: FabricPath) -> float:
        """A home snoops one line at this DCOH and gets the answer (with data if dirty), ns."""
        p = self.params
        back = path.message_ns(self.line_B if dirty else 0)
        return self.proto_ns + path.message_ns(0) + p["dcoh_lookup_ns"] + p["dcoh_snoop_ns"] + p["dcoh_state_change_ns"] + back

    def cache_fill_home_ns(self) -> float:
        """The home's request pipeline when the home is a peer device (its controller's protocol
        processing and a lookup in its DCOH), ns."""
        return self.params["device_protocol_ns"] + self.params["dcoh_lookup_ns"]

    def cache_fill_ns(self, n_lines: int, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0,
                      op: str = "RdCurr") -> float:
        """This device reads ``n_lines`` lines of a peer device's memory over CXL.cache with ``op``
        (:mod:`cxlsim.devices.fabric.cxl_cache_ops`; the home's pipeline :meth:`cache_fill_home_ns`, its
        media ``media_ns`` per line and ``media_interval_ns`` between lines), pipelined, ns."""
        return cache_ops.op_stream_ns(self, op, n_lines, path, media_ns, media_interval_ns, self.cache_fill_home_ns())

    def _bound_cache_fill(self, n_lines: int, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0,
                          op: str = "RdCurr") -> float:
        """Bound of :meth:`cache_fill_ns` (as the read bound: the op's pipelines without the
        crossings' serialisation, plus the device pipeline and, allocating, the home's tracking and
        the victim's pipelines)."""
        if n_lines <= 0:
            return 0.0
        p, o = self.params, cache_ops.OPS[op]
        fixed = p["device_protocol_ns"] + self.cache_fill_home_ns() + p["device_completion_ns"]
        occupancy = p["dcoh_occupancy_ns"]
        if o.allocating:
            fixed += p["dcoh_state_change_ns"] + p["device_protocol_ns"] + self.cache_fill_home_ns() + p["device_completion_ns"]
            occupancy = max(occupancy, p["coherence_alloc_interval_ns"])
        return self._bound(n_lines * self.line_B, media_ns, path, media_interval_ns, fixed, occupancy)

    # -- CXL.io ----------------------------------------------------------------------------
    def mmio_write_ns(self, path: FabricPath) -> float:
        """One posted MMIO register write, from issue to arrival at the device, ns."""
        p = self.params
        return self.proto_ns + p["mmio_write_ns"] + path.message_ns(p["mmio_write_B"])

    def mmio_read_ns(self, path: FabricPath) -> float:
        """One MMIO register read round trip, ns."""
        p = self.params
        return self.proto_ns + path.message_ns(0) + p["mmio_read_ns"] + path.message_ns(p["mmio_write_B"])

    def _register_writes(self, n_registers: int, index_B: float) -> int:
        p = self.params
        if p["index_transfer_policy"] == "mmio":
            return n_registers + math.ceil(index_B / p["mmio_write_B"])
        return n_registers + p["descriptor_registers_count"]

    def _issue_ns(self, host: Any) -> float:
        """Host time to issue one register write: the ``host`` model's (its driver's instructions
        and the uncached store, :meth:`~cxlsim.devices.compute.cpu.CpuModel.mmio_write_ns`), else the
        preset's ``mmio_write_ns`` (a standalone protocol: no host model)."""
        return host.mmio_write_ns() if host is not None else self.params["mmio_write_ns"]

    def configure_batch_ns(self, n_registers: int, index_B: float, path: FabricPath, host: Any = None) -> float:
        """Per-batch configuration: ``n_registers`` scalar MMIO writes plus the batch's
        ``index_B`` bytes of sparse indices (by DMA descriptor or by MMIO writes; see the policy),
        each write issued by ``host`` (see :meth:`_issue_ns`), ns."""
        p = self.params
        check_non_negative(n_registers=n_registers, index_B=index_B)
        t = self._register_writes(n_registers, index_B) * self._issue_ns(host) + self.proto_ns + path.message_ns(p["mmio_write_B"])
        if p["index_transfer_policy"] == "mmio" or index_B <= 0:
            return t
        # the device's DMA engine reads the indices from host memory: a bulk read of dma_chunk_B messages
        return t + p["dma_setup_ns"] + bulk_transfer_ns(path, index_B, "read", outstanding=p["max_outstanding_count"],
                                                        far_ns=p["host_memory_ns"], line_B=p["dma_chunk_B"])

    def _bound_configure_batch(self, n_registers: int, index_B: float, path: FabricPath, host: Any = None) -> float:
        """Bound of :meth:`configure_batch_ns`: the same register writes and latencies without
        serialisation, plus the payload / raw bandwidth."""
        p = self.params
        t = (self._register_writes(n_registers, index_B) * self._issue_ns(host) + self.proto_ns
             + path.bound_ns("message", p["mmio_write_B"]))
        if p["index_transfer_policy"] == "mmio" or index_B <= 0:
            return t
        return t + p["dma_setup_ns"] + path.latency_ns + p["host_memory_ns"] + path.bound_ns("message", index_B)


# -- microbenchmark --------------------------------------------------------------------------
FLUSH_LINES = (1, 64, 1024, 16384)
HOPS = (0, 1, 2, 3)


def microbench(pr: CxlProtocol, options: Mapping[str, Any]) -> dict[str, Any]:
    """CXL.mem load/store latency and stream bandwidth, DCOH flush of N lines, snoop, MMIO and
    per-batch configuration costs over paths of ``options["link"]`` links and
    ``options["switch"]`` switches (models, required); one switch unless a key says otherwise.
    Media time is 0 (fabric only) unless stated."""
    link, switch = options.get("link"), options.get("switch")
    if link is None or switch is None:
        raise ValueError("the cxl_protocol microbenchmark needs options['link'] and options['switch'] (models)")
    paths = {h: FabricPath([link] * (h + 1), switch) for h in HOPS}
    path = paths[1]
    media = 0.0
    n_stream = 1 << 16
    lat = {"read": pr.read_line_ns(media, path), "write": pr.write_line_ns(media, path)}
    bw = {
        "read": n_stream * pr.line_B / pr.read_stream_ns(n_stream, media, path),
        "write": n_stream * pr.line_B / pr.write_stream_ns(n_stream, media, path),
    }
    state = DcohState(4096)
    state.write(np.arange(0, 4096, 2))
    mixed = pr.flush_lines_cost(state.flush(), path)
    return {
        "latency_ns": lat,
        "bw_GBps": bw,
        "read_line_ns_by_hops": {str(h): pr.read_line_ns(media, paths[h]) for h in HOPS},
        "read_line_ns_media_100ns_direct": pr.read_line_ns(100.0, paths[0]),
        "load_adder_over_media_direct_ns": pr.read_line_ns(0.0, paths[0]),
        "flush_ns": {str(n): pr.flush_ns(n, path) for n in FLUSH_LINES},
        "flush_bw_GBps_16384_lines": 16384 * pr.line_B / pr.flush_ns(16384, path),
        "flush_4096_lines_half_dirty_ns": mixed.time_ns,
        "flush_energy_nJ_per_line": pr.flush_cost(1024, path).energy_J / 1024 / 1e-9,
        "snoop_ns": {"clean": pr.snoop_ns(False, path), "dirty": pr.snoop_ns(True, path)},
        "cache_fill_ns_1024_lines_media_300ns": pr.cache_fill_ns(1024, 300.0, path),
        # the device-initiated CXL.cache ops to host memory over one direct link (as C2 Sight)
        "cache_ops": cache_ops.cache_ops(pr, paths[0]),
        "device_cache_hit_ns": cache_ops.device_cache_hit_ns(pr),
        "mmio_ns": {"write": pr.mmio_write_ns(path), "read": pr.mmio_read_ns(path)},
        "configure_batch_us_10reg_64KiB": pr.configure_batch_ns(10, 65536, path) / 1e3,
    }


FAMILY = register(
    DeviceFamily(
        name="cxl_protocol",
        doc="one CXL device controller: CXL.mem, CXL.cache + DCOH (MESI, flush), CXL.io (MMIO)",
        schema=SCHEMA,
        build=CxlProtocol,
        kind="protocol",
        energy=None,
        microbench=microbench,
    )
)
