"""Device-initiated CXL.cache operations of a Type-2 device: latency and streaming bandwidth per op.

A Type-2 device reads and writes lines homed elsewhere (host memory, or a peer device's memory)
with five D2H requests. Each is timed from its stages, the costs of one
:class:`~cxlsim.devices.fabric.cxl_protocol.CxlProtocol` preset and the crossings of a
:class:`~cxlsim.devices.fabric.cxl_path.FabricPath`::

    from cxlsim.devices import build_device
    from cxlsim.devices.fabric.cxl_cache_ops import cache_ops
    from cxlsim.devices.fabric.cxl_path import FabricPath
    proto = build_device("cxl_protocol/agilex7")
    cache_ops(proto, FabricPath([build_device("cxl_link/cxl2-x16")]))["RdShared"]  # {"bw_GBps", "latency_ns"}

Ops (:data:`OPS`)

==========  ===========  ==========  =============  =====================================================
op          data         allocates   memory writes  what it is
==========  ===========  ==========  =============  =====================================================
RdCurr      home → dev   no          0              read the current value; no state anywhere changes
RdShared    home → dev   yes         0              read into the device cache (S): the home tracks it
RdOwn       home → dev   yes         0              read for ownership into the device cache (E/M)
ItoMWr      dev → home   no          1              push a full line into the home (not kept)
WOWrInvF    dev → home   no          2              weakly-ordered full-line write + invalidate; the home
                                                    commits it as two memory writes
==========  ===========  ==========  =============  =====================================================

Latency (one op, unloaded; ``req`` = ``one_way_ns(path, 0)``, a header-only message; ``data`` =
``one_way_ns(path, line_B)`` (:func:`~cxlsim.devices.fabric.cxl_bulk.one_way_ns`: the CXL memory
model's crossing); ``home`` = the home's request pipeline, ``host_protocol_ns`` for host
memory; ``memory`` = the home's memory access, ``host_memory_ns`` by default):

* read: ``device_protocol_ns`` (device request pipeline) + req + home + memory + data +
  ``device_completion_ns``;
* allocating read: the read + ``dcoh_state_change_ns`` (the device-cache fill) and, when the
  device cache is full (``evict=True``, the default: a stream beyond the device cache, as C2 Sight
  measures), first the victim's eviction: device pipeline + req + home + req (its GO) + completion;
* write: device pipeline + req + home + req (GO/write-pull) + completion + data.

Streaming interval per line: the largest of the stage limits

* the data message's occupancy of the path's bottleneck link (``path.per_message_ns(line_B)``;
  a request or GO header rides in the same flit's header slot);
* ``dcoh_occupancy_ns``, the device's request pipeline (every op);
* ``coherence_alloc_interval_ns``, the home's coherence tracking (snoop filter / home DCOH):
  one entry allocated per interval, allocating ops only;
* memory writes × ``home_write_interval_ns``, the home's write path (writes);
* ``memory_interval_ns`` (the home memory's rate per line; reads; 0 = not binding);
* the op latency / ``max_outstanding_count`` (Little's law on the device's request trackers).

``bw_GBps = line_B / interval``. A stream of a read op (:func:`op_stream_ns`, the MLP pull's) is a
bulk read of the CXL memory model (:func:`~cxlsim.devices.fabric.cxl_bulk.bulk_transfer_ns`): the
same stages, the trackers' limit in waves of ``max_outstanding_count`` lines. :func:`device_cache_hit_ns` is the preset's device-cache hit
(``device_cache_hit_ns``). Units: ns, B, GB/s (== B/ns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cxlsim.devices.fabric.cxl_bulk import bulk_transfer_ns, one_way_ns

if TYPE_CHECKING:
    from cxlsim.devices.fabric.cxl_path import FabricPath


@dataclass(frozen=True)
class CacheOp:
    """One device-initiated CXL.cache request (module docstring)."""

    name: str
    read: bool  # data travels home → device
    allocating: bool  # the home's coherence tracking allocates an entry; the device cache fills
    memory_writes: int  # line writes the home commits per line (writes)


OPS: dict[str, CacheOp] = {
    "RdCurr": CacheOp("RdCurr", read=True, allocating=False, memory_writes=0),
    "RdShared": CacheOp("RdShared", read=True, allocating=True, memory_writes=0),
    "RdOwn": CacheOp("RdOwn", read=True, allocating=True, memory_writes=0),
    "ItoMWr": CacheOp("ItoMWr", read=False, allocating=False, memory_writes=1),
    "WOWrInvF": CacheOp("WOWrInvF", read=False, allocating=False, memory_writes=2),
}


def _op(op: str | CacheOp) -> CacheOp:
    if isinstance(op, CacheOp):
        return op
    if op not in OPS:
        raise ValueError(f"unknown CXL.cache op {op!r} (known: {', '.join(OPS)})")
    return OPS[op]


def evict_ns(pr: Any, path: FabricPath, home_ns: float | None = None) -> float:
    """One victim eviction (CleanEvict: request, GO back) through both pipelines, ns."""
    p = pr.params
    home = p["host_protocol_ns"] if home_ns is None else home_ns
    return p["device_protocol_ns"] + one_way_ns(path, 0) + home + one_way_ns(path, 0) + p["device_completion_ns"]


def op_latency_ns(pr: Any, op: str | CacheOp, path: FabricPath, memory_ns: float | None = None,
                  home_ns: float | None = None, evict: bool = True) -> float:
    """Unloaded latency of one ``op`` line over ``path``, ns. ``memory_ns``: the home memory's
    access (default the preset's ``host_memory_ns``); ``home_ns``: the home's request pipeline
    (default ``host_protocol_ns``, a host home); ``evict``: an allocating op first evicts a victim
    (the device cache is full)."""
    o, p = _op(op), pr.params
    home = p["host_protocol_ns"] if home_ns is None else home_ns
    req = one_way_ns(path, 0)
    data = one_way_ns(path, pr.line_B)
    dev, done = p["device_protocol_ns"], p["device_completion_ns"]
    if not o.read:
        return dev + req + home + req + done + data
    memory = p["host_memory_ns"] if memory_ns is None else memory_ns
    t = dev + req + home + memory + data + done
    if o.allocating:
        t += p["dcoh_state_change_ns"] + (evict_ns(pr, path, home) if evict else 0.0)
    return t


def op_interval_ns(pr: Any, op: str | CacheOp, path: FabricPath, latency_ns: float,
                   memory_interval_ns: float = 0.0) -> float:
    """Steady-state interval between lines of a stream of ``op`` (the largest stage limit), ns."""
    o, p = _op(op), pr.params
    limits = [path.per_message_ns(pr.line_B), p["dcoh_occupancy_ns"], latency_ns / p["max_outstanding_count"]]
    if o.allocating:
        limits.append(p["coherence_alloc_interval_ns"])
    if o.read:
        limits.append(memory_interval_ns)
    else:
        limits.append(o.memory_writes * p["home_write_interval_ns"])
    return max(limits)


def op_stream_ns(pr: Any, op: str | CacheOp, n_lines: int, path: FabricPath, memory_ns: float | None = None,
                 memory_interval_ns: float = 0.0, home_ns: float | None = None, evict: bool = True) -> float:
    """``n_lines`` pipelined ``op`` lines, ns (0 for none). A read op is a bulk read of the CXL
    memory model (:func:`~cxlsim.devices.fabric.cxl_bulk.bulk_transfer_ns`: the device's pipeline
    (and, allocating, the fill and the victim's eviction) before the request, the home's pipeline
    and memory, the completion; the largest of the device's pipeline, the home's tracking
    (allocating) and the memory's interval as the per-line stage); a write op is its first line +
    (n − 1) × :func:`op_interval_ns`."""
    if n_lines <= 0:
        return 0.0
    o, p = _op(op), pr.params
    if not o.read:
        first = op_latency_ns(pr, o, path, memory_ns, home_ns, evict)
        return first + (n_lines - 1) * op_interval_ns(pr, o, path, first, memory_interval_ns)
    home = p["host_protocol_ns"] if home_ns is None else home_ns
    memory = p["host_memory_ns"] if memory_ns is None else memory_ns
    request = p["device_protocol_ns"]
    stage = max(p["dcoh_occupancy_ns"], memory_interval_ns)
    if o.allocating:
        request += p["dcoh_state_change_ns"] + (evict_ns(pr, path, home) if evict else 0.0)
        stage = max(stage, p["coherence_alloc_interval_ns"])
    return bulk_transfer_ns(path, n_lines * pr.line_B, "read", outstanding=p["max_outstanding_count"],
                            request_ns=request, far_ns=home + memory, complete_ns=p["device_completion_ns"],
                            interval_ns=stage, line_B=pr.line_B)


def device_cache_hit_ns(pr: Any) -> float:
    """A device request that hits the device's own cache, ns."""
    return float(pr.params["device_cache_hit_ns"])


def cache_ops(protocol: Any, path: FabricPath, memory_ns: float | None = None, memory_interval_ns: float = 0.0,
              evict: bool = True) -> dict[str, dict[str, float]]:
    """Every op of :data:`OPS`: ``{"bw_GBps", "latency_ns"}`` of a long stream of it over ``path``
    to a host home (memory ``memory_ns``, default the preset's ``host_memory_ns``)."""
    out = {}
    for name, o in OPS.items():
        lat = op_latency_ns(protocol, o, path, memory_ns, None, evict)
        out[name] = {"bw_GBps": protocol.line_B / op_interval_ns(protocol, o, path, lat, memory_interval_ns),
                     "latency_ns": lat}
    return out
