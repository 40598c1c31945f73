"""CXL link (family ``cxl_link``): one point-to-point CXL link, per-direction bandwidth and latency.

Contract (units: time ns, data B, rate B/ns == GB/s, energy J; the API of
:mod:`cxlsim.devices.base`):

* ``raw_bw_GBps`` = lanes × GT/s × encoding / 8, per direction (line encoding removed, flit framing
  not: PCIe 5.0 x16 with 128b/130b gives 63.0 GB/s; PCIe 6.0 x16 in flit mode gives 128 GB/s).
* Messages travel in flits of ``flit_B`` bytes that carry ``slots_per_flit_count`` slots of
  ``slot_B`` bytes (68 B flit: 2 B protocol id + 4 × 16 B slots + 2 B CRC; 256 B flit: 15 × 16 B
  slot space + 2 B header + 8 B CRC + 6 B FEC). A message of ``payload_B`` needs
  ``header_slots_count`` header slots plus ``ceil(payload_B / slot_B)`` data slots; sent alone it
  occupies ``ceil(slots / slots_per_flit)`` flits; in a back-to-back stream, messages share flits
  and only their slots count (:meth:`CxlLink.stream_ns`, the serialisation of a stream;
  :meth:`CxlLink.per_message_ns`, one message's share of it).
* ``link_efficiency_fraction`` is the share of flits available to protocol messages (the rest goes to
  link-layer control: credit/ack flits, retries). Serialising a flit takes
  ``flit_B / raw_bw / link_efficiency`` ns.
* ``latency_ns`` (one way, unloaded) = port latency + interconnect latency. A message arrives at
  ``latency_ns + transfer_ns(payload_B)``: its last flit must be received whole (CRC/FEC) before it
  is consumed; in latency-optimised mode (CXL 3.0 128 B half-flits) at half-flit granularity.
* Costs: ``message_cost(payload_B)`` (one lone message) and ``stream_cost(n_msgs, payload_B)``
  (back-to-back messages: latency + packed serialisation); ``size_B`` is the bytes on the wire.
* Analytic bound (op ``"message"``): ``bound_ns("message", payload_B) = latency_ns + payload_B /
  raw_bw`` ≤ ``message_ns(payload_B)`` ≤ ``bound_factor("message")`` × it, the factor from the
  parameters (:meth:`CxlLink.message_factor`).
* Energy: ``energy_J(wire_B)``, ``energy_pJ_per_bit`` per bit on the wire (flit bits, both PHYs and
  controllers of the link); ``static_energy_J(wall_ns, count=1)``, ``idle_power_W`` while the link
  is up. Contention on a direction is the executor's: a saturated direction is a long stream.
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
from cxlsim.units import PJ, KiB, MiB

DIRECTIONS = ("up", "down")


def _check_link(v: dict[str, Any]) -> tuple[str, str] | None:
    if v["encoding_data_bits"] > v["encoding_block_bits"]:
        return "encoding_data_bits", "must be <= encoding_block_bits"
    if v["slot_B"] * v["slots_per_flit_count"] > v["flit_B"]:
        return "slots_per_flit_count", "slots_per_flit_count × slot_B exceeds flit_B"
    if v["header_slots_count"] > v["slots_per_flit_count"]:
        return "header_slots_count", "a message header must fit in one flit"
    if v["latency_optimized_flit"] and v["slots_per_flit_count"] < 2:
        return "latency_optimized_flit", "half-flit mode needs at least 2 slots per flit"
    return None


SCHEMA = Schema(
    "cxl_link",
    (
        Param("lanes_count", int, "lanes per direction (x16 = 16)", minimum=1, maximum=32),
        Param("rate_GTps", float, "per-lane signalling rate (PCIe 5.0: 32, PCIe 6.0: 64)", minimum=0, maximum=512, exclusive_minimum=True),
        Param("encoding_data_bits", int, "line-encoding data bits per block (128 for 128b/130b; 1 in PCIe 6.0 flit mode)", minimum=1),
        Param("encoding_block_bits", int, "line-encoding block bits (130 for 128b/130b; 1 in flit mode)", minimum=1),
        Param("flit_B", int, "flit size on the wire (68 for CXL 1.1/2.0, 256 for CXL 3.0)", minimum=1, maximum=4096),
        Param("slot_B", int, "slot size inside a flit", default=16, minimum=1, maximum=256),
        Param("slots_per_flit_count", int, "slots per flit (4 in a 68 B flit, 15 in a 256 B flit)", minimum=1, maximum=256),
        Param("header_slots_count", int, "slots one message header occupies", default=1, minimum=0, maximum=16),
        Param("link_efficiency_fraction", float, "share of flits available to protocol messages (rest: link-layer control, retry)", minimum=0, maximum=1, exclusive_minimum=True),
        Param("port_latency_ns", float, "one-way latency through the two ports of the link (PHY + link layer)", minimum=0),
        Param("interconnect_latency_ns", float, "one-way wire/interconnect latency", minimum=0),
        Param("latency_optimized_flit", bool, "CXL 3.0 latency-optimised flit: consume 128 B halves as they arrive", default=False),
        Param("energy_pJ_per_bit", float, "dynamic energy per bit on the wire, end to end (both PHYs + controllers)", minimum=0),
        Param("idle_power_W", float, "power of the link while up and idle (both ends)", minimum=0),
    ),
    checks=(_check_link,),
)


class CxlLink(PoweredModel):
    """Pure model of one CXL link; scalars in, floats out (units in the names)."""

    BOUNDED_OPS = ("message",)
    STATIC_POWER_PARAM = "idle_power_W"

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        p = params
        self.raw_bw_GBps: float = p["lanes_count"] * p["rate_GTps"] * p["encoding_data_bits"] / p["encoding_block_bits"] / 8.0
        self.flit_B: int = p["flit_B"]
        self.slot_B: int = p["slot_B"]
        self.slots_per_flit: int = p["slots_per_flit_count"]
        self.header_slots: int = p["header_slots_count"]
        self.efficiency: float = p["link_efficiency_fraction"]
        #: Serialisation time of one flit, including the link-layer share (ns).
        self.flit_ns: float = self.flit_B / self.raw_bw_GBps / self.efficiency
        #: Share of a flit's bytes that are slot space (64/68, 240/256).
        self.slot_fraction: float = self.slot_B * self.slots_per_flit / self.flit_B
        self.effective_bw_GBps: float = self.raw_bw_GBps * self.slot_fraction * self.efficiency
        self.latency_ns: float = p["port_latency_ns"] + p["interconnect_latency_ns"]
        self.latency_optimized: bool = p["latency_optimized_flit"]

    # -- flit arithmetic -------------------------------------------------------------------
    def slots(self, payload_B: float) -> int:
        """Slots one message of ``payload_B`` data bytes needs (header slots included)."""
        check_non_negative(payload_B=payload_B)
        return self.header_slots + math.ceil(payload_B / self.slot_B)

    def flits(self, payload_B: float) -> int:
        """Flits one message of ``payload_B`` bytes occupies when sent alone (at least 1)."""
        return max(1, math.ceil(self.slots(payload_B) / self.slots_per_flit))

    def wire_B(self, payload_B: float) -> int:
        """Bytes on the wire for one lone message (whole flits)."""
        return self.flits(payload_B) * self.flit_B

    # -- timing ----------------------------------------------------------------------------
    def transfer_ns(self, payload_B: float) -> float:
        """Serialisation time of one lone message at flit (or half-flit) granularity, ns."""
        if self.latency_optimized:
            halves = max(1, math.ceil(2 * self.slots(payload_B) / self.slots_per_flit))
            return halves * self.flit_ns / 2
        return self.flits(payload_B) * self.flit_ns

    def message_ns(self, payload_B: float) -> float:
        """Unloaded one-way time of one message: latency + serialisation, ns."""
        return self.latency_ns + self.transfer_ns(payload_B)

    def _bound_message(self, payload_B: float) -> float:
        """Analytic bound of :meth:`message_ns`: latency + payload / raw bandwidth, ns."""
        return self.latency_ns + payload_B / self.raw_bw_GBps

    def transfer_overhead_ns(self) -> float:
        """Most serialisation time a lone message takes beyond ``payload / (raw × efficiency ×
        slot share)``: one flit plus the header and a partly filled slot, ns."""
        return self.flit_ns * (1 + (self.header_slots + 1) / self.slots_per_flit)

    def message_factor(self, latency_ns: float) -> float:
        """Bound factor of a message over this link's serialisation with one-way latency
        ``latency_ns``: ``max(1 + overhead / latency, 1 / (efficiency × slot share))`` (the
        serialisation is at most overhead + payload / (raw × efficiency × slot share)); inf for a
        latency-free link."""
        per_byte = 1 / (self.efficiency * self.slot_fraction)
        if latency_ns <= 0:
            return math.inf
        return max(1 + self.transfer_overhead_ns() / latency_ns, per_byte)

    def _bound_factor(self, op: str) -> float:
        return self.message_factor(self.latency_ns)

    def stream_slots(self, n_msgs: int, payload_B: float) -> int:
        """Slots of ``n_msgs`` back-to-back messages of ``payload_B`` each."""
        return n_msgs * self.slots(payload_B)

    def stream_flits(self, n_msgs: int, payload_B: float) -> int:
        """Flits of ``n_msgs`` back-to-back messages packed into shared flits."""
        if n_msgs <= 0:
            return 0
        return math.ceil(self.stream_slots(n_msgs, payload_B) / self.slots_per_flit)

    def stream_ns(self, n_msgs: int, payload_B: float) -> float:
        """Serialisation time of ``n_msgs`` back-to-back messages sharing flits, ns."""
        return self.stream_flits(n_msgs, payload_B) * self.flit_ns

    def per_message_ns(self, payload_B: float) -> float:
        """Steady-state link occupancy of one message inside a long stream, ns."""
        return self.slots(payload_B) / self.slots_per_flit * self.flit_ns

    def achieved_bw_GBps(self, payload_B: float, stream: bool = True) -> float:
        """Data bandwidth for messages of ``payload_B`` (streamed or lone), GB/s."""
        if payload_B <= 0:
            return 0.0
        t = self.per_message_ns(payload_B) if stream else self.transfer_ns(payload_B)
        return payload_B / t

    # -- energy ----------------------------------------------------------------------------
    def stream_wire_B(self, n_msgs: int, payload_B: float) -> int:
        """Bytes on the wire of ``n_msgs`` back-to-back messages (shared flits)."""
        return self.stream_flits(n_msgs, payload_B) * self.flit_B

    def energy_J(self, wire_B: float) -> float:
        """Dynamic energy of ``wire_B`` bytes on the wire, J."""
        return bit_energy_J(wire_B, self.params["energy_pJ_per_bit"])

    def dynamic_energy_J(self, use: Usage) -> float:
        """pJ/bit of ``use.moved_B`` wire bytes (J)."""
        return self.energy_J(use.moved_B)

    def message_cost(self, payload_B: float) -> Cost:
        """One lone message: time (ns), wire bytes, dynamic energy (J)."""
        wire = self.wire_B(payload_B)
        return Cost(self.message_ns(payload_B), wire, self.energy_J(wire))

    def stream_cost(self, n_msgs: int, payload_B: float) -> Cost:
        """``n_msgs`` back-to-back messages: latency + serialisation, wire bytes, energy."""
        wire = self.stream_wire_B(n_msgs, payload_B)
        return Cost(self.latency_ns + self.stream_ns(n_msgs, payload_B), wire, self.energy_J(wire))


# -- microbenchmark --------------------------------------------------------------------------
PAYLOAD_SIZES_B = (8, 16, 32, 64, 128, 256, 512, 1024, 4096)


def microbench(link: CxlLink, options: Mapping[str, Any]) -> dict[str, Any]:
    """Idle 64 B latency and saturated bandwidth per direction (a direction carrying a long stream
    of 4 KiB messages: 1 MiB back to back), flit packing and costs per payload size."""
    total_B, size = 1 * MiB, 4 * KiB
    n = int(total_B // size)
    lat = dict.fromkeys(DIRECTIONS, link.message_ns(64))  # the directions are identical and independent
    bw = dict.fromkeys(DIRECTIONS, total_B / link.stream_ns(n, size))
    return {
        "latency_ns": lat,
        "bw_GBps": bw,
        "raw_bw_GBps": link.raw_bw_GBps,
        "effective_bw_GBps": link.effective_bw_GBps,
        "flits_per_message": {f"{s}B": link.flits(s) for s in PAYLOAD_SIZES_B},
        "lone_message_efficiency": {f"{s}B": s / link.wire_B(s) for s in PAYLOAD_SIZES_B},
        "stream_bw_GBps": {f"{s}B": link.achieved_bw_GBps(s) for s in PAYLOAD_SIZES_B},
        "message_ns": {f"{s}B": link.message_ns(s) for s in PAYLOAD_SIZES_B},
        "energy_pJ_per_payload_bit_64B_stream": link.stream_cost(1024, 64).energy_J / (1024 * 64 * 8) / PJ,
    }


FAMILY = register(
    DeviceFamily(
        name="cxl_link",
        doc="one CXL link: lanes × rate, flit packing, per-direction bandwidth, port latency, pJ/bit",
        schema=SCHEMA,
        build=CxlLink,
        kind="link",
        energy=powered_energy,
        microbench=microbench,
    )
)
