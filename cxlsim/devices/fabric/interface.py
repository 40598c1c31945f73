"""What a family of the fabric kinds must provide (``link``, ``switch``, ``protocol``).

Derived from what the system layer calls (``systems/topology.py``, ``systems/machine.py``,
``systems/symmetry.py``, ``energy/model.py``, the data-movement and MLP-pull axes): the fabric's
CXL links and switches are composed into :class:`FabricPath` objects (the one composition every
user of the fabric builds, re-exported here with the protocols it reads of its parts,
:class:`PathLink` and :class:`PathSwitch`); a protocol controller times reads, writes, flushes,
cache fills and batch configuration over such a path; a host link (PCIe) times the software
path's copies and calls; every link and switch is priced through its family's energy hook.
:func:`cache_ops` (the Type-2 device-initiated CXL.cache operations over a controller and a path)
is the other composite the fabric offers other kinds.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from cxlsim.devices.base import Cost
from cxlsim.devices.fabric.cxl_cache_ops import cache_ops
from cxlsim.devices.fabric.cxl_path import FabricPath, PathLink, PathSwitch

__all__ = ["CxlLinkModel", "FabricPath", "HostLink", "Link", "PathLink", "PathSwitch", "ProtocolController",
           "Switch", "cache_ops"]


@runtime_checkable
class Link(Protocol):
    """Any link (kind ``link``: a CXL link, a PCIe link, an accelerator pod's interconnect).

    Contract: (units: ns, B, W, J) ``params`` holds its parameters; ``static_energy_J(wall_ns,
    count)`` ≥ 0, linear in ``wall_ns``, is the idle power of ``count`` links (or of the links of
    ``count`` chips); the family's energy hook prices a :class:`~cxlsim.devices.base.Usage` whose
    ``moved_B`` are the bytes the link carried. What else a link offers is the protocol of its role:
    :class:`CxlLinkModel` (a fabric link a path is built from) or :class:`HostLink` (PCIe).
    """

    params: Any

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...


@runtime_checkable
class CxlLinkModel(PathLink, Link, Protocol):
    """A link a :class:`FabricPath` is built from (the CXL links of a topology).

    Contract: :class:`PathLink` (``latency_ns``, ``transfer_ns``, ``per_message_ns``,
    ``stream_ns``, wire bytes and their energy) plus ``message_ns(payload_B)`` = latency + transfer
    of one lone message (ns, ≥ 0, non-decreasing in ``payload_B``) with ``BOUNDED_OPS`` holding
    ``"message"``: ``bound_ns("message", payload_B) <= message_ns(payload_B)``; ``message_cost``
    -> :class:`~cxlsim.devices.base.Cost` (time, wire bytes, energy).
    """

    BOUNDED_OPS: ClassVar[tuple[str, ...]]

    def message_ns(self, payload_B: float) -> float: ...
    def message_cost(self, payload_B: float) -> Cost: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...


@runtime_checkable
class HostLink(Link, Protocol):
    """The host's link to a device over the software path (PCIe; kind ``link``).

    Contract: (ns, B) ``dma_ns(size_B, direction)`` (``"h2d"``/``"d2h"``) ≥ 0, non-decreasing in
    ``size_B``, bounded below by ``bound_ns("dma", size_B, direction)``; ``memcpy_ns(size_B, route,
    host, chunk_B)`` a copy with its host calls (``host``: a host CPU model, or None for none);
    ``launch_ns(host)`` / ``sync_ns(host)`` a kernel launch and a synchronisation;
    ``memcpy_cost`` -> :class:`~cxlsim.devices.base.Cost` (time, bytes copied, energy).
    """

    BOUNDED_OPS: ClassVar[tuple[str, ...]]

    def dma_ns(self, size_B: float, direction: str) -> float: ...
    def memcpy_ns(self, size_B: float, route: str, host: Any = None, chunk_B: float = 0) -> float: ...
    def memcpy_cost(self, size_B: float, route: str, host: Any = None) -> Cost: ...
    def launch_ns(self, host: Any = None) -> float: ...
    def sync_ns(self, host: Any = None) -> float: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...


@runtime_checkable
class Switch(PathSwitch, Protocol):
    """A switch between links (kind ``switch``).

    Contract: :class:`PathSwitch` (``path_latency_ns(hops)``: ns, 0 at 0 hops, non-decreasing in
    ``hops``; ``forward_energy_J(wire_B)`` ≥ 0) plus ``tree(levels, fanout)``, the switch tree a
    topology lays out of this switch model (its ``hops``, ``path_links``, ``n_switches``), and
    ``static_energy_J(wall_ns, count)`` ≥ 0 (idle power of ``count`` switches).
    """

    params: Any

    def tree(self, levels: int, fanout: int) -> Any: ...
    def static_energy_J(self, wall_ns: float, count: int = 1) -> float: ...


@runtime_checkable
class ProtocolController(Protocol):
    """A device-side protocol controller (kind ``protocol``: a CXL Type-2 controller).

    Contract: (units: ns, B, J; every time takes the :class:`FabricPath` its messages cross and,
    where the media is read or written, the media's time ``media_ns``) ``read_line_ns`` /
    ``write_line_ns(media_ns, path)``: one line; ``read_ns`` / ``write_ns(size_B, media_ns, path)``
    ≥ 0, non-decreasing in ``size_B``, each bounded below by ``bound_ns(op, *same args)``
    (``BOUNDED_OPS`` lists ``read``, ``write``, ``flush``, ``cache_fill``, ``configure_batch``);
    ``read_cost`` / ``write_cost`` -> :class:`~cxlsim.devices.base.Cost`; ``flush_ns(n_lines,
    path)`` / ``flush_cost``: write back ``n_lines`` dirty lines; ``cache_fill_ns(n_lines, media_ns,
    path)``: device-initiated fills; ``configure_batch_ns(n_registers, index_B, path, host)``: the
    host's per-batch set-up of the device; ``mmio_write_ns(path)``.
    """

    params: Any
    BOUNDED_OPS: ClassVar[tuple[str, ...]]

    def read_line_ns(self, media_ns: float, path: FabricPath) -> float: ...
    def write_line_ns(self, media_ns: float, path: FabricPath) -> float: ...
    def read_ns(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float: ...
    def write_ns(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> float: ...
    def read_cost(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> Cost: ...
    def write_cost(self, size_B: float, media_ns: float, path: FabricPath, media_interval_ns: float = 0.0) -> Cost: ...
    def flush_ns(self, n_lines: int, path: FabricPath) -> float: ...
    def flush_cost(self, n_lines: int, path: FabricPath) -> Cost: ...
    def cache_fill_ns(self, n_lines: int, media_ns: float, path: FabricPath, *args: Any, **kwargs: Any) -> float: ...
    def configure_batch_ns(self, n_registers: int, index_B: float, path: FabricPath, host: Any = None) -> float: ...
    def mmio_write_ns(self, path: FabricPath) -> float: ...
    def bound_ns(self, op: str, *args: Any) -> float: ...
