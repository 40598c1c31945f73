"""The path a CXL message crosses: links in order and the switches between them (no family).

A :class:`FabricPath` is composed from models, never from preset names::

    from cxlsim.devices import build_device
    from cxlsim.devices.fabric.cxl_path import FabricPath
    link, switch = build_device("cxl_link/cxl3-x16"), build_device("cxl_switch/cxl3-x16")
    direct = FabricPath([link])                 # direct attach: one link, no switch
    one_switch = FabricPath([link] * 2, switch)  # device - switch - host: two links, one hop

Contract (units: time ns, data B, rate B/ns == GB/s, energy J; pure, no state):

* ``links``: the links in the order a message crosses them; ``hops = len(links) - 1`` switches of
  the model ``switch`` sit between consecutive links (a path with a hop needs a switch).
* One-way latency ``latency_ns`` = Σ link ``latency_ns`` + the switch's ``path_latency_ns(hops)`` (hops ×
  its ``hop_latency_ns``).
* Cut-through: a message serialises once, at the slowest link of the path:
  ``transfer_ns(payload_B)`` = max over links of their ``transfer_ns``; ``message_ns`` = latency +
  transfer. In a long stream, one message occupies the bottleneck link's ``per_message_ns`` (the
  max over links) and ``stream_ns(n_msgs, payload_B)`` = the max of the links' packed streams.
  ``raw_bw_GBps`` = min over links.
* Bound (op ``"message"``): ``bound_ns("message", payload_B)`` = latency + payload / min raw
  bandwidth ≤ ``message_ns`` ≤ ``bound_factor("message")`` × it, with the factor
  ``max(1 + max link overhead / latency, 1 / min(link efficiency × slot share))`` (see
  :meth:`~cxlsim.devices.fabric.cxl_link.CxlLink.message_factor`).
* Energy of bytes on the path (:meth:`energy_J`): Σ over links of (that link's wire bytes × its
  pJ/bit) + each switch's ``forward_pJ_per_bit`` × the bits it forwards (those of the link
  entering it). Costs (``message_cost``, ``stream_cost``) report that energy and, as ``size_B``,
  the wire bytes on one link (the largest over the path's links, whose flit formats may differ).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from cxlsim.devices.base import Cost, DeviceModel, check_non_negative


@runtime_checkable
class PathLink(Protocol):
    """What a path reads of each of its links (units: ns, B, GB/s; a CXL link,
    :class:`~cxlsim.devices.fabric.cxl_link.CxlLink`, is one): its one-way ``latency_ns``,
    ``raw_bw_GBps``, ``efficiency`` and ``slot_fraction`` (shares of the raw bandwidth), the time a
    message serialises (``transfer_ns``), occupies the link in a stream (``per_message_ns``) and a
    stream takes (``stream_ns``), the fixed part of a transfer (``transfer_overhead_ns``), wire bytes
    (``wire_B``, ``stream_wire_B``) and their energy (``energy_J``)."""

    latency_ns: float
    raw_bw_GBps: float
    efficiency: float
    slot_fraction: float

    def transfer_ns(self, payload_B: float) -> float: ...
    def per_message_ns(self, payload_B: float) -> float: ...
    def stream_ns(self, n_msgs: int, payload_B: float) -> float: ...
    def transfer_overhead_ns(self) -> float: ...
    def wire_B(self, payload_B: float) -> int: ...
    def stream_wire_B(self, n_msgs: int, payload_B: float) -> int: ...
    def energy_J(self, wire_B: float) -> float: ...


@runtime_checkable
class PathSwitch(Protocol):
    """What a path reads of its switch model: the latency of ``hops`` traversals
    (``path_latency_ns``, ns) and the energy of forwarding ``wire_B`` bytes (``forward_energy_J``, J)."""

    def path_latency_ns(self, hops: int) -> float: ...
    def forward_energy_J(self, wire_B: float) -> float: ...


class FabricPath(DeviceModel):
    """Links crossed in order and the switch model of the ``len(links) - 1`` switches between them."""

    BOUNDED_OPS = ("message",)

    def __init__(self, links: Sequence[PathLink], switch: PathSwitch | None = None) -> None:
        self.links: tuple[PathLink, ...] = tuple(links)
        if not self.links:
            raise ValueError("a fabric path needs at least one link")
        self.hops: int = len(self.links) - 1
        if self.hops and switch is None:
            raise ValueError(f"a path of {len(self.links)} links has {self.hops} switch(es): give their switch model")
        self.switch = switch
        switch_ns = switch.path_latency_ns(self.hops) if switch is not None else 0.0  # the switch's own rule
        #: One-way unloaded latency without serialisation, ns.
        self.latency_ns: float = sum(lk.latency_ns for lk in self.links) + switch_ns
        self.raw_bw_GBps: float = min(lk.raw_bw_GBps for lk in self.links)

    def __repr__(self) -> str:
        return f"FabricPath({len(self.links)} links, {self.hops} hops, {self.latency_ns:g} ns)"

    # -- timing -----------------------------------------------------------------------------
    def transfer_ns(self, payload_B: float) -> float:
        """Serialisation of one lone message at the slowest link, ns (cut-through)."""
        return max(lk.transfer_ns(payload_B) for lk in self.links)

    def message_ns(self, payload_B: float) -> float:
        """Unloaded one-way time of one message: latency + serialisation, ns."""
        return self.latency_ns + self.transfer_ns(payload_B)

    def per_message_ns(self, payload_B: float) -> float:
        """Occupancy of one message inside a long stream on the bottleneck link, ns."""
        return max(lk.per_message_ns(payload_B) for lk in self.links)

    def stream_ns(self, n_msgs: int, payload_B: float) -> float:
        """Serialisation of ``n_msgs`` back-to-back messages at the bottleneck link, ns."""
        return max(lk.stream_ns(n_msgs, payload_B) for lk in self.links)

    def _bound_message(self, payload_B: float) -> float:
        """Analytic bound of :meth:`message_ns`: latency + payload / min raw bandwidth, ns."""
        return self.latency_ns + payload_B / self.raw_bw_GBps

    def _bound_factor(self, op: str) -> float:
        if self.latency_ns <= 0:
            return math.inf
        overhead = max(lk.transfer_overhead_ns() for lk in self.links)
        per_byte = max(1 / (lk.efficiency * lk.slot_fraction) for lk in self.links)
        return max(1 + overhead / self.latency_ns, per_byte)

    # -- bytes and energy --------------------------------------------------------------------
    def link_wire_B(self, n_msgs: int, payload_B: float) -> list[int]:
        """Wire bytes of ``n_msgs`` back-to-back messages (one lone message if 1) on each link."""
        check_non_negative(n_msgs=n_msgs)
        if n_msgs == 1:
            return [lk.wire_B(payload_B) for lk in self.links]
        return [lk.stream_wire_B(n_msgs, payload_B) for lk in self.links]

    def energy_J(self, link_wire_B: Sequence[float]) -> float:
        """Dynamic energy (J) of ``link_wire_B[i]`` wire bytes on link ``i``: each link's pJ/bit,
        and each switch's forwarding of the bytes of the link entering it."""
        if len(link_wire_B) != len(self.links):
            raise ValueError(f"expected wire bytes for {len(self.links)} links, got {len(link_wire_B)}")
        e = sum(lk.energy_J(w) for lk, w in zip(self.links, link_wire_B, strict=True))
        if self.switch is not None:
            e += sum(self.switch.forward_energy_J(w) for w in link_wire_B[: self.hops])
        return e

    def cost(self, time_ns: float, link_wire_B: Sequence[float]) -> Cost:
        """A :class:`Cost` of ``time_ns`` moving ``link_wire_B`` (per link): the largest per-link
        wire bytes and the path energy."""
        return Cost(time_ns, float(max(link_wire_B)), self.energy_J(link_wire_B))

    def message_cost(self, payload_B: float) -> Cost:
        """One lone message: :meth:`message_ns`, wire bytes per link, path energy."""
        return self.cost(self.message_ns(payload_B), self.link_wire_B(1, payload_B))

    def stream_cost(self, n_msgs: int, payload_B: float) -> Cost:
        """``n_msgs`` back-to-back messages: latency + bottleneck serialisation, wire bytes per
        link, path energy."""
        return self.cost(self.latency_ns + self.stream_ns(n_msgs, payload_B), self.link_wire_B(n_msgs, payload_B))
