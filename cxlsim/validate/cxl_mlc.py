"""MLC-style probes of a CXL memory device (:mod:`cxlsim.devices.cxl_mem.cxl_mem`): a small discrete-event
queueing simulation of 64 B CXL.mem requests (no family; no numba; off every system's hot path).

Contract (units: time ns, data B, bandwidth GB/s == B/ns). :func:`simulate` runs requesters against
one :class:`Fabric` and returns what they achieved; the probes (:func:`idle_latency_ns`,
:func:`loaded_latency`, :func:`bandwidth`) are thin drivers of it. A request crosses, in order:

1. **host credits** -- the host root port's outstanding CXL.mem requests, ``host_credits_count`` per
   host port, held from issue to completion (a request without one waits, FIFO);
2. **the link's request direction** (host -> device): a FIFO server whose service is the message's
   slots (header slot + data slots: :meth:`CxlLink.per_message_ns`): a read request is a header
   (M2S Req), a write carries its header and 64 B of data (M2S RwD); then the link's one-way latency.
   Through a switch: host-port link, the switch core's ``hop_latency_ns``, then the **switch's egress
   port** to the device link, arbitrated round robin between host ports (one queue per host port);
3. **the device controller's queues** -- M2S Req and M2S RwD are separate message classes with their
   own credits (CXL 2.0 §3.3), so reads and writes hold entries of separate queues
   (``device_read_queue_count``, ``device_write_queue_count``) from arrival at the device until
   they are done with it (a read: its data sent; a posted write: written by the media, its
   completion having left when the channel took the line); a request that
   finds its queue full waits (link-layer back-pressure);
4. the controller's protocol time, then **the media**: ``media_count`` channels, each a FIFO server
   holding a line for its bus time (``access unit / bandwidth``; a line of the unit the channel
   fetched last moves only its 64 B), the rest of the media's idle latency being pipeline delay;
5. **the link's response direction** (device -> host): read data (header + 64 B) or a write's
   completion (header only), with its own FIFO server, so reads' data and writes' data use opposite
   directions (**full duplex**); with ``duplex=False`` both directions share one server (a test's
   ablation: the mix bandwidth then cannot exceed one direction);
6. the host's protocol time; the credit returns.

Latency under load and the bandwidth ceiling emerge from the queues (Little's law on the credits
and queue entries); nothing is a closed formula. Requesters: ``threads`` closed loops of
``lines_per_thread`` outstanding lines each (MLC's bandwidth threads), an open-loop injector at an
offered rate with Poisson arrivals (MLC's ``--loaded_latency`` traffic of many threads; it stalls when no credit is free, so it never
runs ahead of the device), and a dependent pointer chase (one read at a time) whose mean latency
is the loaded latency.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cxlsim.devices.fabric.interface import cache_ops

LINE_B = 64
#: Lines each bandwidth thread keeps in flight (as :mod:`cxlsim.validate.media_bench`'s requesters:
#: a core's line-fill buffers).
LINES_PER_THREAD = 12
#: Requests a probe runs (after :data:`WARMUP_FRACTION` of them, measured); the peak-bandwidth
#: probes run :data:`PEAK_REQUESTS` (the write queues of a mix take longer to settle).
REQUESTS = 4000
PEAK_REQUESTS = 8000
WARMUP_FRACTION = 0.2
MIXES = {"1:0": (1, 0), "3:1": (3, 1), "2:1": (2, 1), "1:1": (1, 1), "0:1": (0, 1)}
THREADS = (1, 2, 4, 8, 16, 32)
STRIDES_B = (64, 128, 256, 4096)


@dataclass
class Fabric:
    """What the simulation needs of a CXL memory device, in its own units (ns, B).

    ``up_ns`` / ``down_ns``: per-message service of the request / response direction for a header
    (``hdr``) or a header with a 64 B line (``data``); ``link_ns`` one way per link;
    ``hop_ns``: the switch core one way (switched only); ``media``: per channel bus time and total
    idle latency per op and pattern."""

    up_hdr_ns: float
    up_data_ns: float
    down_hdr_ns: float
    down_data_ns: float
    link_ns: float
    host_protocol_ns: float
    device_protocol_ns: float
    media_bus_ns: dict[str, float]  # "read" / "write": a line's channel occupancy
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
    duplex: bool = True
    arbitrate: bool = True  # False: every host port has a private path to every device (no contention)


class _Port:
    """A server (one link direction, a switch egress, a media channel): jobs wait per source and
    are served round robin between sources (FIFO with one source)."""

    __slots__ = ("queues", "busy", "rr", "sim")

    def __init__(self, sim: _Sim, sources: int = 1) -> None:
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
class _Req:
    write: bool
    addr_B: int
    port: int
    issue_ns: float
    kind: str  # "bw", "inject", "probe"
    device: int = 0
    done_ns: float = math.nan


@dataclass
class Result:
    """What a simulation achieved: bandwidth of the measured window, latencies by requester kind."""

    bw_GBps: float
    read_GBps: float
    write_GBps: float
    latency_ns: dict[str, float] = field(default_factory=dict)
    window_ns: float = 0.0


class _Sim:
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
        self.media = [[_Port(self) for _ in range(f.media_count)] for _ in range(f.devices)]
        self.last_unit = [[-1] * f.media_count for _ in range(f.devices)]
        self.done: list[_Req] = []

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
    def issue(self, t: float, r: _Req) -> None:
        r.issue_ns = t
        r.device = (r.addr_B // self.f.media_interleave_B) % self.f.devices
        self.credits[r.port].take(t, lambda t2: self._up(t2, r))

    def _up(self, t: float, r: _Req) -> None:
        f = self.f
        service = f.up_data_ns if r.write else f.up_hdr_ns
        if not f.switched:
            self.dev_up[0][r.device].put(t, 0, service, lambda t2: self.at(t2 + f.link_ns, self._device, r))
            return
        path = r.port if not f.arbitrate else 0

        def to_switch(t2: float) -> None:
            self.at(t2 + f.link_ns + f.hop_ns, lambda t3, _: self.dev_up[path][r.device].put(
                t3, r.port, service, lambda t4: self.at(t4 + f.link_ns, self._device, r)), None)

        self.host_up[r.port].put(t, 0, service, to_switch)

    def _device(self, t: float, r: _Req) -> None:
        pool = self.wq[r.device] if r.write else self.rq[r.device]
        pool.take(t, lambda t2: self.at(t2 + self.f.device_protocol_ns, self._media, r))

    def _media(self, t: float, r: _Req) -> None:
        f = self.f
        op = "write" if r.write else "read"
        unit = r.addr_B // max(f.media_interleave_B, LINE_B)
        ch = self.draw(f.media_count) if self.pattern == "random" else unit % f.media_count
        bus = f.media_bus_ns[op]
        rest = max(0.0, f.media_latency_ns[(op, self.pattern)] - bus)
        media_unit = r.addr_B // f.media_unit_B
        if self.last_unit[r.device][ch] == media_unit:  # the unit just fetched: only the line moves
            bus *= LINE_B / f.media_unit_B
        self.last_unit[r.device][ch] = media_unit
        if r.write:  # posted: the completion leaves once the channel took the line; the entry is
            # held until the media wrote it (its idle write latency)
            def accepted(t2: float) -> None:
                self._respond(t2, r)
                self.at(t2 + rest, lambda t3, _: self.wq[r.device].give(t3), None)
            self.media[r.device][ch].put(t, 0, bus, accepted)
        else:
            self.media[r.device][ch].put(t, 0, bus, lambda t2: self.at(t2 + rest, self._respond, r))

    def _respond(self, t: float, r: _Req) -> None:
        f = self.f
        service = f.down_hdr_ns if r.write else f.down_data_ns
        path = r.port if (f.switched and not f.arbitrate) else 0

        def sent(t2: float) -> None:
            if not r.write:
                self.rq[r.device].give(t2)
            if not f.switched:
                self.at(t2 + f.link_ns + f.host_protocol_ns, self._complete, r)
                return
            self.at(t2 + f.link_ns + f.hop_ns, lambda t3, _: self.host_down[r.port].put(
                t3, 0, service, lambda t4: self.at(t4 + f.link_ns + f.host_protocol_ns, self._complete, r)), None)

        self.dev_down[path][r.device].put(t, 0, service, sent)

    def _complete(self, t: float, r: _Req) -> None:
        r.done_ns = t
        self.credits[r.port].give(t)
        self.done.append(r)
        cb = self.on_done.get(r.kind)
        if cb is not None:
            cb(t, r)

    on_done: dict[str, Callable[[float, _Req], None]]


def _pattern_of(mix: tuple[int, int]) -> list[bool]:
    r, w = mix
    return [False] * r + [True] * w


def simulate(f: Fabric, *, threads: int = 0, lines_per_thread: int = LINES_PER_THREAD,
             mix: tuple[int, int] = (1, 0), pattern: str = "random", stride_B: int = LINE_B,
             inject_GBps: float = 0.0, probe: bool = False, ports: Sequence[int] | None = None,
             requests: int = REQUESTS, seed: int = 1) -> Result:
    """Run the requesters named by the arguments (module docstring) until ``requests`` have
    completed; measure the window after the warm-up. ``ports``: the host port of each thread
    (default: threads spread round robin over the host ports)."""
    sim = _Sim(f, pattern, seed)
    sim.on_done = {}
    kinds = _pattern_of(mix)
    region_B = 1 << 36
    counters = {"n": 0}

    def addr(stream: int, i: int) -> int:
        if pattern == "random":
            return sim.draw(region_B // LINE_B) * LINE_B
        return stream * ((1 << 30) + f.media_interleave_B) + i * stride_B  # streams start on different channels

    port_of = list(ports) if ports is not None else [k % f.host_ports for k in range(threads)]
    issued = [0] * max(threads, 1)

    thread_of: dict[int, int] = {}

    def bw_done(t: float, r: _Req) -> None:
        k = thread_of.pop(id(r), None)
        if k is not None:
            start_bw(t, k)

    def start_bw(t: float, k: int) -> None:
        i = issued[k]
        issued[k] += 1
        write = kinds[(i + k) % len(kinds)]
        r = _Req(write, addr(k, i), port_of[k], t, "bw")
        thread_of[id(r)] = k
        sim.issue(t, r)

    if threads:
        sim.on_done["bw"] = bw_done
        for k in range(threads):
            for _ in range(lines_per_thread):
                start_bw(0.0, k)

    if inject_GBps > 0:
        mean_gap = LINE_B / inject_GBps
        gaps = sim.rng.exponential(mean_gap, size=requests)  # Poisson arrivals (many threads)
        gaps *= mean_gap / gaps.mean()  # exactly the offered rate on average
        state = {"next": 0.0, "stalled": False, "i": 0}

        def inject(t: float, _: Any) -> None:
            state["i"] += 1
            port = state["i"] % f.host_ports
            r = _Req(False, addr(1000, state["i"]), port, t, "inject")
            credits = sim.credits[port]
            if credits.free > 0:
                sim.issue(t, r)
                state["next"] = max(state["next"] + gaps[state["i"] % len(gaps)], t)
                sim.at(state["next"], inject, None)
            else:  # no credit: the injector stalls until one returns (it never runs ahead)
                def go(t2: float) -> None:
                    credits.free += 1  # give back the one take() below will consume
                    sim.issue(t2, r)
                    state["next"] = max(state["next"] + gaps[state["i"] % len(gaps)], t2)
                    sim.at(state["next"], inject, None)
                credits.waiting.append(go)

        sim.at(0.0, inject, None)

    if probe:
        def chase(t: float, _: Any) -> None:
            counters["n"] += 1
            sim.issue(t, _Req(False, addr(2000, counters["n"] * 97), 0, t, "probe"))

        sim.on_done["probe"] = lambda t, r: sim.at(t, chase, None)
        sim.at(0.0, chase, None)
        if not threads and inject_GBps <= 0:
            requests = min(requests, 200)

    sim.run(requests)
    done = sim.done
    skip = int(len(done) * WARMUP_FRACTION)
    window = done[skip:]
    t0 = done[skip - 1].done_ns if skip else 0.0
    t1 = done[-1].done_ns
    span = max(t1 - t0, 1e-9)
    moving = [r for r in window if r.kind != "probe"]
    rd = sum(LINE_B for r in moving if not r.write) / span
    wr = sum(LINE_B for r in moving if r.write) / span
    lat: dict[str, float] = {}
    for kind in ("bw", "inject", "probe"):
        xs = [r.done_ns - r.issue_ns for r in window if r.kind == kind]
        if xs:
            lat[kind] = float(np.mean(xs))
    return Result(float(rd + wr), float(rd), float(wr), lat, float(span))


# -- the probes --------------------------------------------------------------------------------
def idle_latency_ns(f: Fabric, pattern: str = "random") -> float:
    """A dependent pointer chase alone: one read at a time, mean latency (ns)."""
    return simulate(f, probe=True, pattern=pattern).latency_ns["probe"]


def peak_bw_GBps(f: Fabric, mix: tuple[int, int] = (1, 0), threads: int = 32, pattern: str = "random",
                 stride_B: int = LINE_B, ports: Sequence[int] | None = None, requests: int = PEAK_REQUESTS) -> Result:
    """Saturating closed-loop threads (MLC's peak injection bandwidth)."""
    return simulate(f, threads=threads, mix=mix, pattern=pattern, stride_B=stride_B, ports=ports, requests=requests)


def loaded_latency(f: Fabric, peak_GBps: float, fractions: Sequence[float] = (
        0.05, 0.2, 0.4, 0.6, 0.75, 0.85, 0.92, 0.97, 1.02, 1.1)) -> list[dict[str, float]]:
    """The pointer chase's latency under reads injected at increasing offered rates (fractions of
    ``peak_GBps``, up to and past saturation), as MLC ``--loaded_latency`` reports it."""
    rows = []
    for frac in fractions:
        offered = frac * peak_GBps
        res = simulate(f, inject_GBps=offered, probe=True)
        rows.append({"offered_GBps": float(offered), "achieved_GBps": float(res.bw_GBps),
                     "latency_ns": float(res.latency_ns.get("probe", math.nan))})
    return rows


# -- the cxl_mem kind's view and microbenchmark (moved here from the model: models only read) --
def fabric_of(dev: Any, duplex: bool = True, arbitrate: bool = True, **changes: Any) -> Fabric:
    """The queueing model's view (:class:`Fabric`) of CXL memory device ``dev`` (a
    :class:`~cxlsim.devices.cxl_mem.interface.CxlMemory`); ``changes`` replace its fields (ablations: ``host_credits=10**6``, ...)."""
    p, m, lk, cp = dev.params, dev.media_preset.params, dev.link, dev.controller.params
    line = LINE_B
    unit = max(line, m["access_unit_B"])
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
        duplex=duplex, arbitrate=arbitrate,
    )
    for k, val in changes.items():
        setattr(f, k, val)
    return f


# -- the microbenchmark -----------------------------------------------------------------------
def cache_ops_hook(dev: Any) -> dict[str, Any]:
    """The Type-2 device-initiated CXL.cache operations (RdCurr, RdShared, ...) over the device's
    path (:func:`cxlsim.devices.fabric.cxl_cache_ops.cache_ops`: ``{op: {"bw_GBps", "latency_ns"}}``)."""
    return cache_ops(dev.controller, dev.path)


def microbench(dev: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """MLC-style probes of a ``cxl_mem`` device (this module's queueing model): idle latency, loaded latency,
    bandwidth by read:write mix, by threads, sequential vs random, by stride; switched devices:
    the two-stream contention probe; Type-2: ``cache_ops``."""
    f = fabric_of(dev)
    mixes = {k: peak_bw_GBps(f, mix).bw_GBps for k, mix in MIXES.items()}
    peak = Result(mixes["1:0"], mixes["1:0"], 0.0)
    quick = REQUESTS
    out: dict[str, Any] = {
        "idle_latency_ns": idle_latency_ns(f),
        "idle_latency_sequential_ns": idle_latency_ns(f, "sequential"),
        "read_line_ns": dev.read_line_ns(),
        "load_adder_over_media_ns": idle_latency_ns(f) - dev.media_preset.params["read_latency_random_ns"],
        "loaded_latency": loaded_latency(f, peak.bw_GBps),
        "bw_by_mix_GBps": mixes,
        "bw_by_threads_GBps": {str(n): peak_bw_GBps(f, threads=n, requests=quick).bw_GBps for n in THREADS},
        "bw_by_pattern_GBps": {pat: peak_bw_GBps(f, pattern=pat, requests=quick).bw_GBps
                               for pat in ("random", "sequential")},
        "bw_by_stride_GBps": {str(s): peak_bw_GBps(f, pattern="sequential", stride_B=s, requests=quick).bw_GBps
                              for s in STRIDES_B},
        "link_raw_bw_GBps": dev.link.raw_bw_GBps,
    }
    if dev.host_ports > 1:
        # two streams, one on each host port, competing for one device's link (the pool's contention)
        one = fabric_of(dev, devices=1)
        ports = [k % 2 for k in range(32)]
        out["two_streams_one_device_GBps"] = {
            "read_each": peak_bw_GBps(one, ports=ports).bw_GBps / 2,
            "write_each": peak_bw_GBps(one, (0, 1), ports=ports).bw_GBps / 2,
        }
    if dev.params["device_type"] == "2":
        out["cache_ops"] = cache_ops_hook(dev)
    return out
