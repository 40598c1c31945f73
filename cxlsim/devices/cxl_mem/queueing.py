"""The CXL memory device's timing model: a discrete-event queueing model of 64 B CXL.mem requests
over a host port, its link, an optional switch and the device's controller, serving them on the
device's media model (usable without simpy; the media model's numba kernel loads when a
:class:`FabricSim` is first built, not when this module is).

Contract (units: time ns, data B, bandwidth GB/s == B/ns). :class:`Fabric` is what the model needs
of a device, in its own units; :func:`fabric_of` builds it from a
:class:`~cxlsim.devices.cxl_mem.cxl_mem.CxlMem` (the composite's link, controller, media and switch
models; the media model itself, built on first use); :class:`FabricSim` runs requests through it
(a requester calls :meth:`FabricSim.issue` and reads ``done_ns`` from the completion callbacks of
:attr:`FabricSim.on_done`). Load generators and
measurements (MLC's threads, injector and pointer chase) are not here: they live in
:mod:`cxlsim.validate.cxl_mlc`, which drives this model. A request crosses, in order:

1. **host credits** -- the host root port's outstanding CXL.mem requests, ``host_credits_count`` per
   host port, held from issue to completion (a request without one waits, FIFO);
2. **the link's request direction** (host -> device): a FIFO server whose service is the message's
   slots (header slot + data slots: :meth:`CxlLink.per_message_ns`): a read request is a header
   (M2S Req), a write carries its header and 64 B of data (M2S RwD); then the link's one-way latency.
   Through a switch: host-port link, the switch core's ``hop_latency_ns``, then the **switch's egress
   port** to the device link, arbitrated round robin between host ports (one queue per host port);
3. **the device controller's queues** -- M2S Req and M2S RwD are separate message classes with their
   own credits (CXL 2.0 Section 3.3), so reads and writes hold entries of separate queues
   (``device_read_queue_count``, ``device_write_queue_count``) from arrival at the device until
   they are done with it (a read: its data sent; a posted write: written by the media, its
   completion having left when the channel took the line); a request that finds its queue full
   waits (link-layer back-pressure);
4. the controller's protocol time, then **the media**: the device's media model
   (:class:`~cxlsim.devices.memory.media.media.MediaModel`, ``media_count`` channels interleaved
   at ``media_interleave_B``: banks, buses, write queues -- the same model, state and kernel the
   systems serve a crossing's accesses on), one request at a time as it reaches the media (events
   come in time order, so its issue times never decrease): a read's data is ready at its
   ``complete_ns``; a write's completion leaves at its acknowledgement (``ack_ns``) and its queue
   entry is held until the media took it (``complete_ns``);
5. **the link's response direction** (device -> host): read data (header + 64 B) or a write's
   completion (header only), with its own FIFO server, so reads' data and writes' data use opposite
   directions (**full duplex**); with ``duplex=False`` both directions share one server (an
   ablation: the mix bandwidth then cannot exceed one direction);
6. the host's protocol time; the credit returns.

Latency under load and the bandwidth ceiling emerge from the queues (Little's law on the credits
and queue entries); nothing is a closed formula. The one closed form is the unloaded line read,
:func:`idle_read_ns`: the sum of the stages a lone read crosses, which the event model reproduces
for a request that finds every server free (tests hold the two equal). It is the device's idle
latency everywhere: :meth:`CxlMem.read_line_ns` and the microbenchmark's ``idle_latency_ns``.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cxlsim.devices.fabric.interface import FabricPath
from cxlsim.devices.memory.interface import AccessStream, Crossing

LINE_B = 64


@dataclass
class Fabric:
    """What the simulation needs of a CXL memory device, in its own units (ns, B).

    ``up_ns`` / ``down_ns``: per-message service of the request / response direction for a header
    (``hdr``) or a header with a 64 B line (``data``); ``link_ns`` one way per link;
    ``hop_ns``: the switch core one way (switched only); ``media_model``: a callable that returns
    the media model of one channel (:meth:`CxlMem.media_model`: built on first use), which serves
    every request's media stage (a device's fabric always has one, :func:`fabric_of`; without one,
    a bare per-line stage such as the bulk form's tests build, each channel is a FIFO server
    holding a line for ``media_bus_ns`` and the rest of ``media_latency_ns`` a delay); ``media_bus_ns`` / ``media_latency_ns``: the media preset's line
    bus time (``access unit / bandwidth``) and idle latency per op and pattern, for closed forms
    (:func:`idle_read_ns`; the event model asks the media model)."""

    up_hdr_ns: float
    up_data_ns: float
    down_hdr_ns: float
    down_data_ns: float
    link_ns: float
    host_protocol_ns: float
    device_protocol_ns: float
    media_bus_ns: dict[str, float]  # "read" / "write": a unit's bus time on one channel (closed forms)
    media_latency_ns: dict[tuple[str, str], float]  # (op, pattern) -> idle latency incl. bus
    media_count: int
    media_interleave_B: int
    media_unit_B: int
    host_credits: int
    read_queue: int
    write_queue: int
    host_ports: int = 1
    devices: int = 1
    switched: bool = False
    hop_ns: float = 0.0
    #: a lone message's serialisation beyond the servers' occupancies (ns; a pure delay, no server
    #: held): a message alone on an idle link waits for its whole flit (``transfer_ns``), while in a
    #: stream it occupies only its slots (``per_message_ns``); cut-through, the path serialises it
    #: once: ``path.transfer_ns - Σ per-link occupancies``, floored at 0
    up_hdr_extra_ns: float = 0.0
    up_data_extra_ns: float = 0.0
    down_hdr_extra_ns: float = 0.0
    down_data_extra_ns: float = 0.0
    duplex: bool = True
    arbitrate: bool = True  # False: every host port has a private path to every device (no contention)
    media_model: Callable[[], Any] | None = None  # () -> the media model of one channel


class _Port:
    """A server (one link direction, a switch egress, a bare channel): jobs wait per source and
    are served round robin between sources (FIFO with one source)."""

    __slots__ = ("queues", "busy", "rr", "sim")

    def __init__(self, sim: FabricSim, sources: int = 1) -> None:
        self.sim = sim
        self.queues = [deque() for _ in range(sources)]
        self.busy = False
        self.rr = 0

    def put(self, t: float, src: int, service: float, then: Callable[[float], None]) -> None:
        if not self.busy:
            self._start(t, service, then)
        else:
            self.queues[src].append((service, then))

    def _start(self, t: float, service: float, then: Callable[[float], None]) -> None:
        self.busy = True
        self.sim.at(t + service, self._done, then)

    def _done(self, t: float, then: Callable[[float], None]) -> None:
        self.busy = False
        n = len(self.queues)
        for k in range(n):
            q = self.queues[(self.rr + k) % n]
            if q:
                self.rr = (self.rr + k + 1) % n
                service, nxt = q.popleft()
                self._start(t, service, nxt)
                break
        then(t)


class _Pool:
    """Counted entries (credits, queue slots) with a FIFO of waiters."""

    __slots__ = ("free", "waiting")

    def __init__(self, n: int) -> None:
        self.free = n
        self.waiting: deque = deque()

    def take(self, t: float, then: Callable[[float], None]) -> None:
        if self.free > 0:
            self.free -= 1
            then(t)
        else:
            self.waiting.append(then)

    def give(self, t: float) -> None:
        if self.waiting:
            self.waiting.popleft()(t)
        else:
            self.free += 1


@dataclass
class Request:
    write: bool
    addr_B: int
    port: int
    issue_ns: float
    kind: str  # "bw", "inject", "probe"
    device: int = 0
    done_ns: float = math.nan


class FabricSim:
    """The event loop over :class:`Fabric` ``f``; ``pattern`` names the load's address pattern
    (the media model tells sequential from random by the addresses themselves); ``seed`` seeds
    :meth:`draw`."""

    def __init__(self, f: Fabric, pattern: str, seed: int = 1) -> None:
        self.f, self.pattern = f, pattern
        self.t = 0.0
        self.heap: list = []
        self.seq = 0
        self.rng = np.random.default_rng(seed)
        self._draws = self.rng.integers(0, 1 << 62, size=1 << 14).tolist()  # drawn in bulk (speed)
        self._next = 0
        self.credits = [_Pool(f.host_credits) for _ in range(f.host_ports)]
        paths = f.host_ports if (f.switched and not f.arbitrate) else 1
        # host-port links (one per host port), device links (per device; per host port and device
        # when the switch does not arbitrate); a half-duplex link serves both directions on one port
        self.host_up = [_Port(self) for _ in range(f.host_ports)]
        self.host_down = [p if not f.duplex else _Port(self) for p in self.host_up]
        self.dev_up = [[_Port(self, f.host_ports) for _ in range(f.devices)] for _ in range(paths)]
        self.dev_down = [[p if not f.duplex else _Port(self, 1) for p in row] for row in self.dev_up]
        self.rq = [_Pool(f.read_queue) for _ in range(f.devices)]
        self.wq = [_Pool(f.write_queue) for _ in range(f.devices)]
        # each device's media: the media model's state of its channels, served one line at a time
        self.media = f.media_model() if f.media_model is not None else None
        if self.media is None:  # a bare per-line stage: a FIFO server per channel
            self.channels = [[_Port(self) for _ in range(f.media_count)] for _ in range(f.devices)]
            self.last_unit = [[-1] * f.media_count for _ in range(f.devices)]
        else:
            self.media_states = [self.media.new_state(f.media_count, f.media_interleave_B) for _ in range(f.devices)]
        self._line = [np.zeros(1), np.zeros(1, np.int64), np.full(1, LINE_B, np.int64), np.zeros(1, np.bool_)]
        self._one = AccessStream.of(*self._line)  # read-only views of ``_line``, refilled per request
        self.done: list[Request] = []

    def draw(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        self._next += 1
        if self._next >= len(self._draws):
            self._draws = self.rng.integers(0, 1 << 62, size=1 << 14).tolist()
            self._next = 0
        return self._draws[self._next] % n

    def at(self, t: float, fn: Callable, arg: Any) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, fn, arg))

    def run(self, until_done: int) -> None:
        while self.heap and len(self.done) < until_done:
            t, _, fn, arg = heapq.heappop(self.heap)
            self.t = t
            fn(t, arg)

    # -- a request's path --------------------------------------------------------------------
    def issue(self, t: float, r: Request) -> None:
        r.issue_ns = t
        r.device = (r.addr_B // self.f.media_interleave_B) % self.f.devices
        self.credits[r.port].take(t, lambda t2: self._up(t2, r))

    def _up(self, t: float, r: Request) -> None:
        f = self.f
        service = f.up_data_ns if r.write else f.up_hdr_ns
        lone = f.up_data_extra_ns if r.write else f.up_hdr_extra_ns
        if not f.switched:
            self.dev_up[0][r.device].put(t, 0, service, lambda t2: self.at(t2 + f.link_ns + lone, self._device, r))
            return
        path = r.port if not f.arbitrate else 0

        def to_switch(t2: float) -> None:
            self.at(t2 + f.link_ns + f.hop_ns, lambda t3, _: self.dev_up[path][r.device].put(
                t3, r.port, service, lambda t4: self.at(t4 + f.link_ns + lone, self._device, r)), None)

        self.host_up[r.port].put(t, 0, service, to_switch)

    def _device(self, t: float, r: Request) -> None:
        pool = self.wq[r.device] if r.write else self.rq[r.device]
        pool.take(t, lambda t2: self.at(t2 + self.f.device_protocol_ns, self._media, r))

    def _media(self, t: float, r: Request) -> None:
        """The line on its device's media model from ``t``: a read's data at its completion; a
        posted write's completion leaves at its acknowledgement, its queue entry held until the
        media took it."""
        f = self.f
        if self.media is None:
            self._channel(t, r)
            return
        il = f.media_interleave_B
        chunk = r.addr_B // il  # the device's own address space: its chunks of the interleave
        issue, addr, _, write = self._line
        issue[0], addr[0], write[0] = t, (chunk // f.devices) * il + r.addr_B % il, r.write
        res = self.media.serve(self._one, self.media_states[r.device], 1, f.media_count, il)
        done = float(res.complete_ns[0])
        if r.write:
            self.at(float(res.ack_ns[0]), self._respond, r)
            self.at(done, lambda t2, _: self.wq[r.device].give(t2), None)
        else:
            self.at(done, self._respond, r)

    def _channel(self, t: float, r: Request) -> None:
        """A fabric without a media model: the line holds its channel's FIFO server for its bus
        time (a line of the unit the channel fetched last moves only its 64 B); the rest of the
        idle latency is delay. A posted write's completion leaves once the channel took the line,
        its queue entry held for the rest."""
        f = self.f
        op = "write" if r.write else "read"
        unit = r.addr_B // max(f.media_interleave_B, LINE_B)
        ch = self.draw(f.media_count) if self.pattern == "random" else unit % f.media_count
        bus = f.media_bus_ns[op]
        rest = max(0.0, f.media_latency_ns[(op, self.pattern)] - bus)
        media_unit = r.addr_B // f.media_unit_B
        if self.last_unit[r.device][ch] == media_unit:
            bus *= LINE_B / f.media_unit_B
        self.last_unit[r.device][ch] = media_unit
        if r.write:
            def accepted(t2: float) -> None:
                self._respond(t2, r)
                self.at(t2 + rest, lambda t3, _: self.wq[r.device].give(t3), None)
            self.channels[r.device][ch].put(t, 0, bus, accepted)
        else:
            self.channels[r.device][ch].put(t, 0, bus, lambda t2: self.at(t2 + rest, self._respond, r))

    def _respond(self, t: float, r: Request) -> None:
        f = self.f
        service = f.down_hdr_ns if r.write else f.down_data_ns
        lone = f.down_hdr_extra_ns if r.write else f.down_data_extra_ns
        path = r.port if (f.switched and not f.arbitrate) else 0

        def sent(t2: float) -> None:
            if not r.write:
                self.rq[r.device].give(t2)
            if not f.switched:
                self.at(t2 + f.link_ns + lone + f.host_protocol_ns, self._complete, r)
                return
            self.at(t2 + f.link_ns + f.hop_ns, lambda t3, _: self.host_down[r.port].put(
                t3, 0, service, lambda t4: self.at(t4 + f.link_ns + lone + f.host_protocol_ns, self._complete, r)), None)

        self.dev_down[path][r.device].put(t, 0, service, sent)

    def _complete(self, t: float, r: Request) -> None:
        r.done_ns = t
        self.credits[r.port].give(t)
        self.done.append(r)
        cb = self.on_done.get(r.kind)
        if cb is not None:
            cb(t, r)

    on_done: dict[str, Callable[[float, Request], None]]


def idle_read_ns(f: Fabric, pattern: str = "random") -> float:
    """Unloaded latency of one 64 B CXL.mem read (ns): every stage of the module docstring for a
    request that finds every server free -- request message and link (and, switched, the host-port
    link, the switch core and the egress), the device's protocol time, the media's idle latency
    for ``pattern`` (at least one line's bus time), the data message back the same way, the host's
    protocol time."""
    bus = f.media_bus_ns["read"]
    media = bus + max(0.0, f.media_latency_ns[("read", pattern)] - bus)
    up = f.up_hdr_ns + f.link_ns + f.up_hdr_extra_ns
    down = f.down_data_ns + f.link_ns + f.down_data_extra_ns
    if f.switched:
        up += f.hop_ns + f.up_hdr_ns + f.link_ns
        down += f.hop_ns + f.down_data_ns + f.link_ns
    return up + f.device_protocol_ns + media + down + f.host_protocol_ns


def fabric_of(dev: Any, duplex: bool = True, arbitrate: bool = True, **changes: Any) -> Fabric:
    """The queueing model's view (:class:`Fabric`) of CXL memory device ``dev`` (a
    :class:`~cxlsim.devices.cxl_mem.interface.CxlMemory`); ``changes`` replace its fields (ablations: ``host_credits=10**6``, ...)."""
    p, m, lk, cp = dev.params, dev.media_preset.params, dev.link, dev.controller.params
    line = LINE_B
    unit = max(line, m["access_unit_B"])
    crossed = len(dev.path.links)

    def lone(payload_B: int) -> float:  # serialised once on the path, beyond the servers' slots
        return max(0.0, dev.path.transfer_ns(payload_B) - crossed * lk.per_message_ns(payload_B))

    f = Fabric(
        up_hdr_ns=lk.per_message_ns(0), up_data_ns=lk.per_message_ns(line),
        down_hdr_ns=lk.per_message_ns(0), down_data_ns=lk.per_message_ns(line),
        link_ns=lk.latency_ns,
        host_protocol_ns=cp["host_protocol_ns"], device_protocol_ns=cp["device_protocol_ns"],
        media_bus_ns={"read": unit / m["read_bw_GBps"], "write": unit / m["write_bw_GBps"]},
        media_latency_ns={("read", "random"): m["read_latency_random_ns"],
                          ("read", "sequential"): m["read_latency_sequential_ns"],
                          ("write", "random"): m["write_latency_ns"], ("write", "sequential"): m["write_latency_ns"]},
        media_count=dev.media_count, media_interleave_B=p["media_interleave_B"], media_unit_B=unit,
        host_credits=p["host_credits_count"], read_queue=p["device_read_queue_count"],
        write_queue=p["device_write_queue_count"], host_ports=dev.host_ports, devices=dev.devices,
        switched=dev.switch is not None, hop_ns=dev.switch.hop_latency_ns if dev.switch is not None else 0.0,
        duplex=duplex, arbitrate=arbitrate, media_model=dev.media_model,
        up_hdr_extra_ns=lone(0), up_data_extra_ns=lone(line), down_hdr_extra_ns=lone(0), down_data_extra_ns=lone(line),
    )
    for k, val in changes.items():
        setattr(f, k, val)
    return f


def crossing_over(path: FabricPath, host_protocol_ns: float, device_protocol_ns: float, read_queue_count: int = 0,
                  write_queue_count: int = 0) -> Crossing:
    """The media model's view (:class:`~cxlsim.devices.memory.interface.Crossing`) of a host
    requester reaching a device's media over ``path``: the stages of this module in issue order.
    The first link's request and response directions are the crossing's servers (each line's slots,
    ``per_message_ns``, at the path's bottleneck); every further link adds its slots as delay
    (store and forward), with the links' and switch's latencies; a lone message's whole flit is
    serialised once (``transfer_ns`` beyond the slots). With the media's idle read latency, a lone
    64 B read takes :func:`idle_read_ns` of the same parts (a test holds them equal)."""
    n = len(path.links)

    def one_way(payload_B: int) -> float:
        slots = path.per_message_ns(payload_B)
        return path.latency_ns + (n - 1) * slots + max(0.0, path.transfer_ns(payload_B) - n * slots)

    return Crossing(request_ns=one_way(0), request_write_ns=one_way(LINE_B), device_ns=device_protocol_ns,
                    response_ns=one_way(LINE_B) + host_protocol_ns, response_write_ns=one_way(0) + host_protocol_ns,
                    up_hdr_ns=path.per_message_ns(0), up_data_ns=path.per_message_ns(LINE_B),
                    down_hdr_ns=path.per_message_ns(0), down_data_ns=path.per_message_ns(LINE_B),
                    read_queue_count=read_queue_count, write_queue_count=write_queue_count)
