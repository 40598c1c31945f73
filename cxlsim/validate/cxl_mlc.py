"""MLC-style probes of a CXL memory device: the load generators and the measurement, driving the
device's own timing model (:mod:`cxlsim.devices.cxl_mem.queueing`; this module defines no timing
mechanism of its own).

Contract (units: time ns, data B, bandwidth GB/s == B/ns). :func:`simulate` runs requesters against
one :class:`~cxlsim.devices.cxl_mem.queueing.Fabric` and returns what they achieved; the probes
(:func:`idle_latency_ns`, :func:`loaded_latency`, :func:`bandwidth`) are thin drivers of it.
Requesters: ``threads`` closed loops of ``lines_per_thread`` outstanding lines each (MLC's bandwidth
threads), an open-loop injector at an offered rate with Poisson arrivals (MLC's
``--loaded_latency`` traffic of many threads; it stalls when no credit is free, so it never runs
ahead of the device), and a dependent pointer chase (one read at a time; ``random``: a line
anywhere, ``sequential``: one media channel's lines in order) whose mean latency is the loaded
latency. The measured window starts after :data:`WARMUP_FRACTION` of the requests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cxlsim.devices.cxl_mem.queueing import LINE_B, Fabric, FabricSim, Request, fabric_of
from cxlsim.devices.fabric.interface import cache_ops

__all__ = ["LINE_B", "Fabric", "fabric_of", "simulate", "idle_latency_ns", "peak_bw_GBps", "loaded_latency",
           "microbench", "Result"]

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
class Result:
    """What a simulation achieved: bandwidth of the measured window, latencies by requester kind."""

    bw_GBps: float
    read_GBps: float
    write_GBps: float
    latency_ns: dict[str, float] = field(default_factory=dict)
    window_ns: float = 0.0



def _pattern_of(mix: tuple[int, int]) -> list[bool]:
    r, w = mix
    return [False] * r + [True] * w


def simulate(f: Fabric, *, threads: int = 0, lines_per_thread: int = LINES_PER_THREAD,
             mix: tuple[int, int] = (1, 0), pattern: str = "random", stride_B: int = LINE_B,
             inject_GBps: float = 0.0, probe: bool = False, ports: Sequence[int] | None = None,
             requests: int = REQUESTS, seed: int = 1, host_outstanding: int = 0) -> Result:
    """Run the requesters named by the arguments (module docstring) until ``requests`` have
    completed; measure the window after the warm-up. ``ports``: the host port of each thread
    (default: threads spread round robin over the host ports). ``host_outstanding``: the misses the
    injecting host keeps in flight (:func:`host_outstanding_of`; 0: the root ports' credits)."""
    sim = FabricSim(f, pattern, seed)
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

    def bw_done(t: float, r: Request) -> None:
        k = thread_of.pop(id(r), None)
        if k is not None:
            start_bw(t, k)

    def start_bw(t: float, k: int) -> None:
        i = issued[k]
        issued[k] += 1
        write = kinds[(i + k) % len(kinds)]
        r = Request(write, addr(k, i), port_of[k], t, "bw")
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
        # the host's outstanding misses: the injector stalls when all are in flight (it never runs
        # ahead of them); without a host, the root port's credits are the limit
        cap = host_outstanding if host_outstanding else f.host_credits * f.host_ports
        state: dict[str, Any] = {"next": 0.0, "i": 0, "in_flight": 0, "stalled": None}

        def send(t: float, r: Request) -> None:
            state["in_flight"] += 1
            sim.issue(t, r)  # a request beyond the port's credits waits for one (FIFO)
            state["next"] = max(state["next"] + gaps[state["i"] % len(gaps)], t)
            sim.at(state["next"], inject, None)

        def inject(t: float, _: Any) -> None:
            state["i"] += 1
            r = Request(False, addr(1000, state["i"]), state["i"] % f.host_ports, t, "inject")
            if state["in_flight"] < cap:
                send(t, r)
            else:
                state["stalled"] = r

        def injected(t: float, r: Request) -> None:
            state["in_flight"] -= 1
            stalled, state["stalled"] = state["stalled"], None
            if stalled is not None:
                stalled.issue_ns = t
                send(t, stalled)

        sim.on_done["inject"] = injected
        sim.at(0.0, inject, None)

    if probe:
        # sequential: the next line of one media channel (its interleave's chunks in order, the
        # other channels' and devices' chunks skipped), so every read after the first is the
        # media's sequential read; random: a line anywhere
        il = f.media_interleave_B
        chunk_lines, skip_B = il // LINE_B, il * f.media_count * f.devices

        def chase(t: float, _: Any) -> None:
            counters["n"] += 1
            n = counters["n"]
            a = addr(0, 0) if pattern == "random" else (n // chunk_lines) * skip_B + (n % chunk_lines) * LINE_B
            sim.issue(t, Request(False, a, 0, t, "probe"))

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


def host_outstanding_of(host: Any) -> int:
    """The misses a host keeps in flight towards memory: every core's L1D fill buffers
    (``cores_count`` × ``line_fill_buffers_count`` of a ``cpu`` preset; named approximation: the L2's
    prefetches are not counted, so this is a floor)."""
    p = host.params
    return int(p["cores_count"]) * int(p["line_fill_buffers_count"])


def loaded_latency(f: Fabric, peak_GBps: float, fractions: Sequence[float] = (
        0.05, 0.2, 0.4, 0.6, 0.75, 0.85, 0.92, 0.97, 1.02, 1.1), host_outstanding: int = 0) -> list[dict[str, float]]:
    """The pointer chase's latency under reads injected at increasing offered rates (fractions of
    ``peak_GBps``, up to and past saturation), as MLC ``--loaded_latency`` reports it. Past
    saturation the latency follows from what the host keeps outstanding (``host_outstanding``:
    Little's law on the host's misses, waiting for the root port's credits), not from the credits."""
    rows = []
    for frac in fractions:
        offered = frac * peak_GBps
        res = simulate(f, inject_GBps=offered, probe=True, host_outstanding=host_outstanding)
        rows.append({"offered_GBps": float(offered), "achieved_GBps": float(res.bw_GBps),
                     "latency_ns": float(res.latency_ns.get("probe", math.nan))})
    return rows


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
    host = options.get("host")
    outstanding = host_outstanding_of(host) if host is not None else 0
    mixes = {k: peak_bw_GBps(f, mix).bw_GBps for k, mix in MIXES.items()}
    peak = Result(mixes["1:0"], mixes["1:0"], 0.0)
    quick = REQUESTS
    out: dict[str, Any] = {
        "idle_latency_ns": idle_latency_ns(f),
        "idle_latency_sequential_ns": idle_latency_ns(f, "sequential"),
        "read_line_ns": dev.read_line_ns(),
        "load_adder_over_media_ns": idle_latency_ns(f) - dev.media_preset.params["read_latency_random_ns"],
        "loaded_latency": loaded_latency(f, peak.bw_GBps, host_outstanding=outstanding),
        "host_outstanding_count": outstanding or f.host_credits * f.host_ports,
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
