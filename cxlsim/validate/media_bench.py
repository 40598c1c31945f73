"""The media families' microbenchmark: a LENS/OptaneStudy/MLC-style probe run on ``serve``.

Contract (units: ns, B, GB/s == B/ns). :func:`microbench` ``(model, options)`` characterises one
media preset (DRAM, PMEM, SSD) on ``modules`` interleaved modules (``options["modules"]``, default
1, interleaved every ``INTERLEAVE_B``) and returns a JSON-ready dict (keys documented in
``docs/devices-media.md``):

* ``read_latency_ns`` / ``write_latency_ns`` by pattern: idle 64 B accesses, one module;
* ``read_bw_GBps`` / ``write_bw_GBps`` / ``store_flush_bw_GBps`` by access size (B): aligned
  accesses of ``options["pattern"]`` (``random`` default, or ``sequential``) with the requester's
  outstanding limit of ``options["threads"]`` threads (:func:`outstanding_for`); writes are
  non-temporal stores and include the final buffer drain; store + flush is a read of the access
  (the store's read for ownership) followed by its write-back (clwb);
* ``write_amplification`` by overwritten region (64 B writes rotating over it, one module);
* ``loaded_latency``: a list of ``{offered_GBps, bw_GBps, latency_ns}``: random 64 B reads issued
  at a fixed rate (fractions ``LOAD_FRACTIONS`` of the saturated 64 B read bandwidth) as Intel MLC's
  load generators do; latency is the mean from issue to data of the later half of the stream;
* ``persist_latency_ns`` by size: ``size / 64`` non-temporal 64 B stores from one thread then a
  fence, from the first store to the last acknowledgement (idle modules);
* ``persist_flush_latency_ns`` by size: the same with stores to uncached lines, each a read for
  ownership and its write-back (clwb), then a fence (the store + flush bandwidth's stream);
* ``loaded_latency_ns``: ``loaded_latency``'s latencies keyed by load (percent of the saturated
  64 B read bandwidth: "10" ... "95");
* ``little_bound_GBps`` (read/write, per size): the accesses the modules' controllers hold
  (:meth:`~cxlsim.devices.memory.media.media.MediaModel.controller_limit`) × size / idle random latency (read:
  data; write: acknowledgement); absent when the preset has no controller limit.

Threads: each thread keeps ``THREAD_LINES`` 64 B lines of loads (and of store + flush) in flight
(its L1 fill buffers) and ``STREAM_STORE_LINES`` lines of non-temporal stores, i.e.
``max(1, lines × 64 / size)`` accesses of ``size`` (:func:`thread_slots`); a fraction of an access
(six lines over 256 B accesses: 1.5) is the mean of the rates with the whole counts below and above
it, weighted by the fraction (Little's law is linear in the count in flight); an access larger than
the medium's unit is issued as its units, in address order (a thread's lines in flight cover a few
units of it, not all); without ``threads`` the requester is saturating
(:func:`saturating_outstanding`) and issues whole accesses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from cxlsim.devices.memory.media.media import PATTERNS, AccessStream, MediaModel

BW_SIZES_B = (64, 128, 256, 512, 1024, 4096)
WA_REGIONS_B = (4096, 8192, 16384, 32768, 65536)
PERSIST_SIZES_B = (64, 256, 1024, 4096)
#: offered load of the loaded-latency sweep, as fractions of the saturated 64 B read bandwidth
LOAD_FRACTIONS = (0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 0.95)
LOADED_ACCESSES = 8192
LATENCY_SAMPLES = 64
LINE_B = 64  # a CPU cache line: the size of one load, store or flush
#: 64 B lines one thread keeps in flight: its L1D fill buffers. Source: Intel 64 and IA-32
#: Architectures Optimization Reference Manual, Skylake microarchitecture: 12 fill buffers
#: (Cascade Lake, OptaneStudy's platform, and Coffee Lake use that core; cpu/i5-9600k says the same).
THREAD_LINES = 12
#: 64 B lines one thread keeps in flight with non-temporal (streaming) stores, each until the memory
#: controller accepts it (its acknowledgement, the ADR domain). Named assumption, calibrated: one
#: thread's ntstores on six DDR4 channels reach 4.31 GB/s ([yang-fast20], OptaneStudy's
#: 04-bandwidth_thcount_dram.csv, H) = 4.31 B/ns × 90 ns / 64 B = 6.06 lines at the 90 ns
#: acknowledgement, not the 12 of its fill buffers (8.5 GB/s); the sources give no cause. Every
#: other ntstore point is a prediction (six Optane DIMMs, one thread: 6 × 64 / 90 = 4.27 GB/s
#: against 4.13 measured). Threads issue ntstores only in this microbenchmark: the systems' host
#: stores are cached stores (``line_fill_buffers_count``).
STREAM_STORE_LINES = 6
#: Interleaving of several modules: OptaneStudy's six DIMMs are interleaved at 4 KiB
#: ([yang-fast20]); the systems' default too.
INTERLEAVE_B = 4096
BW_OUTSTANDING = 1024  # a saturating requester on presets without a controller limit
BW_MIN_ACCESSES = 16384
BW_MIN_BYTES = 1 << 20
WA_CHUNK_B = 64
REGION_LIMIT_B = 1 << 30  # random accesses are spread over at most 1 GiB per module


def thread_slots(threads: int, size_B: int, lines: int = THREAD_LINES) -> float:
    """Accesses of ``size_B`` that ``threads`` threads keep in flight with ``lines`` lines each:
    ``threads × max(1, lines × 64 / size)``, fractional when an access's lines do not divide them
    (six lines cover one and a half 256 B accesses)."""
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return int(threads) * max(1.0, lines * LINE_B / int(size_B))


def outstanding_for(threads: int | None, size_B: int, model: MediaModel, modules: int,
                    lines: int = THREAD_LINES, kind: str = "read") -> int:
    """Whole accesses of ``size_B`` in flight from ``threads`` threads (``lines`` lines each, a
    fraction rounded up: :func:`thread_slots`); ``None``: a saturating requester
    (:func:`saturating_outstanding` for ``kind``)."""
    if threads is None:
        return saturating_outstanding(model, modules, kind)
    return math.ceil(thread_slots(threads, size_B, lines) - 1e-9)


def saturating_outstanding(model: MediaModel, modules: int, kind: str = "read") -> int:
    """What a saturating requester keeps in flight: all its modules' controllers hold (``kind``
    ``read``, ``write``, or ``store_flush``: half reads, half writes), or ``BW_OUTSTANDING`` when
    the preset has no controller limit (no contention either way)."""
    if model.controller_outstanding <= 0:
        return BW_OUTSTANDING
    r, w = model.controller_limit(False, modules), model.controller_limit(True, modules)
    if kind == "write":
        return w
    if kind == "store_flush" and model.write_queue_count > 0:
        return 2 * min(r, w)  # the loop offers half of it as writes
    return r


def microbench(model: MediaModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Characterise ``model`` (module docstring); options: ``threads`` (None), ``modules`` (1),
    ``pattern`` ("random"), ``seed`` (0)."""
    rng = np.random.default_rng(int(options.get("seed") or 0))
    threads = options.get("threads")
    modules = int(options.get("modules") or 1)
    pattern = options.get("pattern") or "random"
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}; got {pattern!r}")
    region = int(min(model.params.capacity_GB * 1e9, REGION_LIMIT_B)) * modules

    def bw(kind: str) -> dict[str, float]:
        return {str(s): bandwidth(model, kind, s, region, rng, threads, modules, pattern) for s in BW_SIZES_B}

    out: dict[str, Any] = {
        "threads": threads,
        "pattern": pattern,
        "read_latency_ns": {pat: _latency(model, False, pat, region, rng) for pat in PATTERNS},
        "write_latency_ns": {pat: _latency(model, True, pat, region, rng) for pat in PATTERNS},
        "read_bw_GBps": bw("read"),
        "write_bw_GBps": bw("write"),
        "store_flush_bw_GBps": bw("store_flush"),
        "write_amplification": {str(r): write_amplification(model, r) for r in WA_REGIONS_B},
        "loaded_latency": loaded_latency(model, region, rng, modules),
        "persist_latency_ns": {str(s): persist_latency_ns(model, s, modules) for s in PERSIST_SIZES_B},
        "persist_flush_latency_ns": {str(s): persist_flush_latency_ns(model, s, modules) for s in PERSIST_SIZES_B},
    }
    # the same loaded-latency curve keyed by load (percent of the saturated 64 B read bandwidth)
    out["loaded_latency_ns"] = {f"{round(f * 100)}": r["latency_ns"] for f, r in zip(LOAD_FRACTIONS, out["loaded_latency"],
                                                                                     strict=True)}
    if model.controller_outstanding > 0:
        out["little_bound_GBps"] = {
            op: {str(s): little_bound_GBps(model, op, s, modules) for s in BW_SIZES_B} for op in ("read", "write")}
    return out


def little_bound_GBps(model: MediaModel, op: str, size_B: int, modules: int = 1) -> float:
    """Little's law: the modules' controllers hold ``controller_limit`` accesses of ``size_B`` of the
    kind, each for at least its idle random latency (read: data back; write: acknowledgement)."""
    p = model.params
    lat = p.read_latency_random_ns if op == "read" else p.write_latency_ns
    return model.controller_limit(op == "write", modules) * size_B / lat


def _latency(model: MediaModel, write: bool, pattern: str, region: int, rng: np.random.Generator) -> float:
    """Mean latency of 64 B accesses issued far apart (idle module); sequential excludes the first."""
    gap = 10 * (model.params.read_latency_random_ns + model.params.write_latency_ns
                + model.occ_write_ns + model.occ_read_ns + model.cmd_read_ns + model.cmd_write_ns)
    n = LATENCY_SAMPLES
    if pattern == "sequential":
        addr = np.arange(n, dtype=np.int64) * WA_CHUNK_B
    else:
        addr = rng.integers(0, min(region, REGION_LIMIT_B) // model.unit_B, n) * model.unit_B
    r = model.serve(AccessStream.of(np.arange(n) * gap, addr, WA_CHUNK_B, write), model.new_state(), 1)
    lat = (r.ack_ns if write else r.complete_ns) - r.start_ns
    return float(lat[1:].mean() if pattern == "sequential" else lat.mean())


def _addresses(rng: np.random.Generator, region: int, size_B: int, n: int, pattern: str) -> np.ndarray:
    if pattern == "sequential":
        return np.arange(n, dtype=np.int64) * size_B
    return _distinct(rng, region // size_B, n) * size_B


def bandwidth(model: MediaModel, kind: str, size_B: int, region: int, rng: np.random.Generator,
              threads: int | None = None, modules: int = 1, pattern: str = "random") -> float:
    """GB/s of aligned ``size_B`` accesses of ``kind`` (``read``, ``write``: non-temporal store,
    ``store_flush``: read for ownership then write-back of the same bytes) from ``threads``
    threads; writes include the final drain."""
    n = max(BW_MIN_ACCESSES, BW_MIN_BYTES // size_B)
    addr = _addresses(rng, region, size_B, n, pattern)
    piece = size_B
    if threads is not None and size_B > model.unit_B:  # a thread issues its lines, a unit at a time
        piece = model.unit_B
        addr = (addr[:, None] + np.arange(0, size_B, piece)[None, :]).ravel()
    if kind == "store_flush":
        addr = np.repeat(addr, 2)
        is_write = np.tile(np.array([False, True]), addr.shape[0] // 2)
    else:
        is_write = kind == "write"
    stream = AccessStream.of(0.0, addr, piece, is_write)

    def rate(out: int) -> float:
        state = model.new_state(modules, INTERLEAVE_B)
        r = model.serve(stream, state, out, modules, INTERLEAVE_B, per_access=False)
        end = model.drain(state, r.end_ns).end_ns if kind != "read" else r.end_ns
        return float(n * size_B / end)

    if threads is None:
        return rate(saturating_outstanding(model, modules, kind))
    # ntstores: a thread's streaming-store lines; loads and store + flush: its fill buffers
    slots = thread_slots(threads, piece, STREAM_STORE_LINES if kind == "write" else THREAD_LINES)
    low = math.floor(slots + 1e-9)
    if slots - low < 1e-9:
        return rate(low)
    # a fraction of an access in flight (six lines over 256 B accesses): the threads hold the
    # accesses below and above it in turn; Little's law is linear in the count in flight
    f = slots - low
    return (1 - f) * rate(low) + f * rate(low + 1)


def loaded_latency(model: MediaModel, region: int, rng: np.random.Generator, modules: int = 1) -> list[dict[str, float]]:
    """Latency vs offered bandwidth of random 64 B reads (module docstring)."""
    peak = bandwidth(model, "read", LINE_B, region, rng, None, modules)
    out = []
    n = LOADED_ACCESSES
    cap = saturating_outstanding(model, modules)
    for f in LOAD_FRACTIONS:
        offered = f * peak
        addr = _distinct(rng, region // LINE_B, n) * LINE_B
        issue = np.arange(n) * (LINE_B / offered)
        r = model.serve(AccessStream.of(issue, addr, LINE_B, False), model.new_state(modules, INTERLEAVE_B),
                        cap, modules, INTERLEAVE_B)
        lat = (r.complete_ns - issue)[n // 2:]
        out.append({"offered_GBps": float(offered), "bw_GBps": float(n * LINE_B / r.end_ns),
                     "latency_ns": float(lat.mean())})
    return out


def persist_latency_ns(model: MediaModel, size_B: int, modules: int = 1) -> float:
    """``size_B / 64`` non-temporal 64 B stores from one thread (``STREAM_STORE_LINES`` in
    flight), then a fence: ns from the first store to the last acknowledgement, on idle modules."""
    lines = max(1, -(-int(size_B) // LINE_B))
    addr = np.arange(lines, dtype=np.int64) * LINE_B
    r = model.serve(AccessStream.of(0.0, addr, LINE_B, True), model.new_state(modules, INTERLEAVE_B),
                    STREAM_STORE_LINES, modules, INTERLEAVE_B)
    return float(r.done_ns)


def persist_flush_latency_ns(model: MediaModel, size_B: int, modules: int = 1) -> float:
    """``size_B / 64`` stores to lines not in the cache, each written back (clwb), then a fence, from
    one thread: each store reads its line first (read for ownership) and its write-back follows,
    ``THREAD_LINES`` accesses in flight (the store + flush bandwidth's stream); ns from the first
    store to the last acknowledgement, on idle modules."""
    lines = max(1, -(-int(size_B) // LINE_B))
    addr = np.repeat(np.arange(lines, dtype=np.int64) * LINE_B, 2)
    is_write = np.tile(np.array([False, True]), lines)
    r = model.serve(AccessStream.of(0.0, addr, LINE_B, is_write), model.new_state(modules, INTERLEAVE_B),
                    THREAD_LINES, modules, INTERLEAVE_B)
    return float(r.done_ns)


def _distinct(rng: np.random.Generator, population: int, n: int) -> np.ndarray:
    """``n`` distinct integers below ``population`` in random order."""
    if n > population:
        raise ValueError(f"cannot draw {n} distinct of {population}")
    picked = np.unique(rng.integers(0, population, 2 * n + 16))
    while picked.shape[0] < n:
        picked = np.unique(np.concatenate([picked, rng.integers(0, population, n)]))
    return rng.permutation(picked)[:n].astype(np.int64)


def write_amplification(model: MediaModel, region_B: int) -> float:
    """Media bytes written / bytes written by 64 B writes rotating over ``region_B`` bytes.

    The region holds ``region_B / unit`` units of ``unit / 64`` chunks; round k writes chunk k of
    every unit, in address order, so each byte is written once. The final buffer drain counts.
    """
    unit = model.unit_B
    lines = max(1, region_B // unit)
    chunks = max(1, unit // WA_CHUNK_B)
    addr = (np.arange(chunks)[:, None] * WA_CHUNK_B + np.arange(lines)[None, :] * unit).ravel().astype(np.int64)
    state = model.new_state()
    r = model.serve(AccessStream.of(0.0, addr, WA_CHUNK_B, True), state, saturating_outstanding(model, 1, "write"))
    d = model.drain(state, r.end_ns)
    return float((r.media_write_B + d.media_write_B) / (addr.shape[0] * WA_CHUNK_B))
