"""Bulk transfers over a CXL path: the CXL memory model's stages in closed form for a stream of
line messages (no family; pure functions).

The CXL memory device's event model (:mod:`cxlsim.devices.cxl_mem.queueing`) moves 64 B line
messages through a requester's credits, one FIFO server per link direction (a message holds it
for its slots, :meth:`~cxlsim.devices.fabric.cxl_link.CxlLink.per_message_ns`), the links' and the
switch's latencies, the switch's egress port (arbitrated round robin between the requesters that
converge on it), the far end's per-line stages and the response direction's servers. A bulk
transfer is ``ceil(nbytes / line_B)`` such lines issued at once; :func:`bulk_transfer_ns` is the
time it takes, derived from the same parameters, and a test holds it to the event model within
2 % (``tests/devices/test_cxl_bulk.py``: 64 B to 1 MiB, 1 to 4 requesters, both directions,
every shipped link, switch and ``cxl_mem`` preset).

Contract (units: time ns, data B; a :class:`~cxlsim.devices.fabric.cxl_path.FabricPath` ``path``
from the requester to the far end, in the order the request crosses it):

* **One way** (:func:`one_way_ns`): a message of ``payload_B`` crosses every link's server for
  its slots (store and forward on slots), the path's latency (links and switch hops), and, a
  lone flit being serialised whole once (cut-through), the path's ``transfer_ns`` beyond the
  slots: ``latency + max(Σ per_message_ns, transfer_ns)``. A lone 64 B read through a device's
  path is :func:`~cxlsim.devices.cxl_mem.queueing.idle_read_ns`'s fabric part.
* **Directions.** ``"write"``: each line's data travels with its request (a DCOH flush, a CXL.mem
  write), a header-only completion comes back; ``"read"``: a header-only request, the data back
  (a CXL.cache read, a CXL.mem read). Per line the requester spends ``request_ns`` before its
  message leaves and ``complete_ns`` once the response is back; the far end ``far_ns`` between the
  request's arrival and its response (protocol, memory).
* **The first line** (``L``): write: ``request_ns + one_way(line) + far_ns`` (the data taken by the
  far end), plus ``one_way(0) + complete_ns`` if ``acknowledged``; read: ``request_ns + one_way(0)
  + far_ns + one_way(line) + complete_ns``.
* **A requester's interval** ``I``: the largest of its links' data-direction servers (the shared
  link's taken ``sharers`` times), ``interval_ns`` (the slowest other per-line stage: a DCOH's
  pipeline, the far end's memory rate), and Little's law on its ``outstanding`` lines, each held
  for the round trip ``R = request_ns + one_way(request) + far_ns + one_way(response) +
  complete_ns``: ``R / outstanding``.
* **Sharers.** ``sharers`` equal transfers start together from requesters of their own (their own
  credits and links) and converge on one link, ``shared_link`` (an index into ``path.links``;
  default the last: the far end's link, behind the switch's egress), whose server serves them in
  turn. The last line of the last requester is done at ``L + max((sharers × n − 1) × b, (sharers −
  1) × b + (n − 1) × I)``, ``b`` the shared link's per-line occupancy: the shared server busy
  throughout, or each requester at its own interval once the others' first lines have passed.
* ``bulk_transfer_ns(path, 0, ...)`` is 0. The link energy of the transfer is its wire bytes'
  (``path.link_wire_B`` / ``CxlProtocol.*_cost``), unchanged by the timing.
"""

from __future__ import annotations

import math

from cxlsim.devices.fabric.cxl_path import FabricPath

LINE_B = 64
DIRECTIONS = ("read", "write")


def one_way_ns(path: FabricPath, payload_B: float) -> float:
    """One message of ``payload_B`` data bytes over ``path`` in the event model: the path's latency,
    every link's slots (store and forward), the whole lone flit beyond them once (ns)."""
    slots = sum(lk.per_message_ns(payload_B) for lk in path.links)
    return path.latency_ns + max(slots, path.transfer_ns(payload_B))


def first_line_ns(path: FabricPath, direction: str, *, request_ns: float = 0.0, far_ns: float = 0.0,
                  complete_ns: float = 0.0, line_B: int = LINE_B, acknowledged: bool = False) -> float:
    """The first (a lone) line of a bulk transfer, ns (module docstring, ``L``)."""
    if direction == "write":
        t = request_ns + one_way_ns(path, line_B) + far_ns
        return t + one_way_ns(path, 0) + complete_ns if acknowledged else t
    if direction == "read":
        return request_ns + one_way_ns(path, 0) + far_ns + one_way_ns(path, line_B) + complete_ns
    raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")


def round_trip_ns(path: FabricPath, direction: str, *, request_ns: float = 0.0, far_ns: float = 0.0,
                  complete_ns: float = 0.0, line_B: int = LINE_B) -> float:
    """How long one line holds its requester's credit: request, far end, response, ns."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return request_ns + one_way_ns(path, line_B) + far_ns + one_way_ns(path, 0) + complete_ns


def bulk_transfer_ns(path: FabricPath, nbytes: float, direction: str, sharers: int = 1, *, outstanding: int,
                     request_ns: float = 0.0, far_ns: float = 0.0, complete_ns: float = 0.0,
                     interval_ns: float = 0.0, line_B: int = LINE_B, acknowledged: bool = False,
                     shared_link: int = -1) -> float:
    """Time of a bulk transfer of ``nbytes`` (``ceil(nbytes / line_B)`` lines) over ``path`` in
    ``direction`` while ``sharers`` equal transfers converge on ``shared_link``, ns: the module
    docstring's closed form of the CXL memory model's stages (0 for no bytes)."""
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    if outstanding < 1 or sharers < 1:
        raise ValueError(f"outstanding and sharers must be >= 1, got {outstanding}, {sharers}")
    n = math.ceil(nbytes / line_B)
    if n == 0:
        return 0.0
    kw = {"request_ns": request_ns, "far_ns": far_ns, "complete_ns": complete_ns, "line_B": line_B}
    first = first_line_ns(path, direction, acknowledged=acknowledged, **kw)
    rtt = round_trip_ns(path, direction, **kw)
    servers = [lk.per_message_ns(line_B) for lk in path.links]
    shared = max(servers.pop(shared_link), interval_ns)  # where the sharers converge: their link and far end
    interval = max(max(servers, default=0.0), sharers * shared)
    waves, place = divmod(n - 1, outstanding)
    return first + max((sharers * n - 1) * shared, (sharers - 1) * shared
                       + max((n - 1) * interval, waves * rtt + place * interval))
