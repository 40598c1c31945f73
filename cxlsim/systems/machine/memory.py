"""The machine's memory services: media streams served per role with persistent state, the host's
last-level cache and vector cache in front of the tables, the embedding engine's lookup and
update (:class:`MemoryServices`, mixed into :class:`~cxlsim.systems.machine.TrainingMachine`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from cxlsim.arrays import unique as sorted_unique
from cxlsim.devices.cxl_mem.queueing import crossing_over
from cxlsim.devices.memory.media.media import AccessStream, Crossing, StreamResult
from cxlsim.devices.registry import has_capability
from cxlsim.engine.executor import OpOutcome
from cxlsim.kernels.vector_cache import cache_access
from cxlsim.systems.config import DeviceRole
from cxlsim.systems.streams import BatchStreams
from cxlsim.systems.tiering import loop_shares
from cxlsim.units import GiB

#: The host writes log and redo records sequentially in 4 KiB pieces (a page, as the host writes
#: to an SSD); the checkpointing logic writes them in its DMA engine's ``burst_B``.
HOST_WRITE_B = 4096
#: Long media streams (an engine's lookup and update, the checkpointing logic's copies) are served
#: in segments of at most this many requested bytes, each decided when the previous one ends
#: (:class:`~cxlsim.engine.executor.OpOutcome` ``resume``), so streams that overlap in time share
#: the media at that granularity. A modelling resolution, not hardware (named assumption,
#: docs/timing-model.md): the media model serves a stream whole when it is issued, so an unsegmented
#: stream would hold, from its first instant, every bank slot it will use over milliseconds, and a
#: stream that starts a little later would wait for all of it.
SEGMENT_B = 1 << 20


class Memory:
    """Modules of one role serving access streams, with persistent media state.

    Accounting is the machine's: :meth:`TrainingMachine._serve` charges what a stream moved to the
    ledger of the batch being served.
    """

    def __init__(self, role: DeviceRole, model, suffix: str = "") -> None:
        self.role = role.role
        self.key = role.role + suffix  # its ledger key: the role, and the device when several hold it
        self.model = model  # the role's model from the system's device graph
        self.modules = role.count
        self.interleave_B = role.interleave_B
        #: CXL memory devices the role's data is spread over (:attr:`DeviceRole.via_count`), each
        #: with its own media state (its channels, and its link's servers when crossed), and the
        #: bytes placed on one before the next
        self.devices = role.via_count
        self.device_interleave_B = role.via_interleave_B
        self.states = [self.model.new_state(self.modules, self.interleave_B) for _ in range(self.devices)]
        self.state = self.states[0]

    def serve(self, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int | tuple[int, int],
              crossing: Crossing | None = None, stats: np.ndarray | None = None):
        """Serve accesses issued together at ``t_ns`` (in order, at most ``outstanding`` in flight:
        one closed loop, or ``(reads, writes)``, a requester with separate read and write channels;
        ``crossing``: the requester's fabric path to the modules, None when attached).

        Every stream of a step is issued at the step's start: the media model needs issue times
        that never decrease across calls, and steps start in simulated-time order. Only totals are
        kept; ``.done_ns`` of the result is when the stream is done for its requester (reads: data
        returned; writes: acknowledged, durable in the ADR domain; media work may go on,
        docs/design.md#pmem). ``stats``: the media kernel's statistics vector to add to (None: none kept).

        Spread over several devices, an access goes to the device its first byte's interleave chunk
        is on (:func:`spread_over`), at its address within that device, and each device serves its
        part through its own crossing state with its share of ``outstanding`` (named approximation:
        the requester's one loop as one a device, shared by Little's law on equal idle latencies,
        :func:`~cxlsim.systems.tiering.loop_shares`, as between tiers).
        """
        if self.devices == 1 or not len(addr_B):
            stream = AccessStream.of(t_ns, addr_B, size_B, is_write)
            return self.model.serve(stream, self.state, outstanding, self.modules, self.interleave_B,
                                    per_access=False, crossing=crossing, stats=stats)
        device, local = spread_over(np.asarray(addr_B, np.int64), self.devices, self.device_interleave_B)
        parts = [device == k for k in range(self.devices)]
        counts = [int(np.count_nonzero(sel)) for sel in parts]
        lat = [1.0] * self.devices
        shares = (list(zip(*(loop_shares(o, counts, lat) for o in outstanding), strict=True))
                  if isinstance(outstanding, tuple) else loop_shares(outstanding, counts, lat))
        results = [self.model.serve(AccessStream.of(t_ns, local[sel], _pick(size_B, sel), _pick(is_write, sel)),
                                    state, share, self.modules, self.interleave_B, per_access=False,
                                    crossing=crossing, stats=stats)
                   for sel, n, state, share in zip(parts, counts, self.states, shares, strict=True) if n]
        return _combined(results)


def spread_over(addr_B: np.ndarray, devices: int, interleave_B: int) -> tuple[np.ndarray, np.ndarray]:
    """``(device, address within it)`` of each address when consecutive ``interleave_B``-byte chunks
    go to ``devices`` devices in turn (chunk c on device c mod n, as its chunk c div n)."""
    chunk = addr_B // interleave_B
    return chunk % devices, (chunk // devices) * interleave_B + addr_B % interleave_B


def _pick(value, sel: np.ndarray):
    """``value[sel]`` for a per-access array, the value itself for a scalar."""
    return value[sel] if np.ndim(value) else value


def _combined(parts: list[StreamResult]) -> StreamResult:
    """The results of a stream's parts (two tiers', several devices') as one (totals; no per-access
    arrays)."""
    empty = np.zeros(0)
    return StreamResult(empty, empty, empty, max(p.end_ns for p in parts), max(p.done_ns for p in parts),
                        *(sum(getattr(p, f) for p in parts) for f in (
                            "media_read_B", "media_write_B", "rmw_count", "raw_stall_count", "raw_stall_ns",
                            "buffer_hits_count", "requested_B", "energy_J")))


def interleave(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[a0, b0, a1, b1, ...]`` for equal-length arrays."""
    out = np.empty(a.size + b.size, dtype=np.result_type(a, b))
    out[0::2], out[1::2] = a, b
    return out


def log_copy_stream(src_B: np.ndarray, dst_base: int, row_B: int, burst_B: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(addr, size, is_write)`` of copying rows at ``src_B`` (in that order) into a packed log
    from ``dst_base`` in one memory: the reads of burst 0's rows, the write of burst 0, the reads
    of burst 1's rows, ... (``burst_B`` bytes a burst, ``row_B`` a row)."""
    n = src_B.size
    k = int(math.ceil(n * row_B / burst_B))
    dst = dst_base + np.arange(k, dtype=np.int64) * burst_B
    per = max(1, burst_B // row_B)
    if burst_B % row_B == 0 and k == -(-n // per):  # whole rows a burst: place the writes directly
        pos = np.arange(n) + np.arange(n) // per  # read i follows the writes of the bursts before its own
        w_pos = np.minimum((np.arange(k) + 1) * (per + 1) - 1, n + k - 1)
        addr = np.empty(n + k, np.result_type(src_B, dst))
        size = np.empty(n + k, np.int64)
        wr = np.empty(n + k, bool)
        addr[pos], addr[w_pos] = src_B, dst
        size[pos], size[w_pos] = row_B, burst_B
        wr[pos], wr[w_pos] = False, True
        return addr, size, wr
    burst_of = np.arange(n) // per
    key = np.concatenate([burst_of * 2, np.arange(k) * 2 + 1])
    order = np.argsort(key, kind="stable")
    addr = np.concatenate([src_B, dst])[order]
    size = np.concatenate([np.full(n, row_B), np.full(k, burst_B)])[order]
    return addr, size, np.concatenate([np.zeros(n, bool), np.ones(k, bool)])[order]


@dataclass
class MlpLogProgress:
    """Relaxed MLP logging: bytes copied of the log in progress and the batches it spans."""

    done_B: float = 0.0
    first_batch: int = -1
    complete_span: tuple[int, int] | None = None  # (first, last) batch of the latest complete log


@dataclass
class MemSide:
    """One memory device: its modules' state, lanes, logs and the part of each batch it holds."""

    index: int
    tables: Memory
    ckpt_mem: Memory
    engine_lane: str
    agent_lane: str
    mlp_log_lane: str
    tables_count: int  # tables whose rows it holds (pooled vectors per sample)
    mlp_B: float  # its shard of the MLP parameters (logged and checkpointed here)
    source_gpu: int  # the GPU it pulls its MLP shard from
    redo_cursor: int = 0
    mlp_log: MlpLogProgress = field(default_factory=MlpLogProgress)


class MemoryServices:
    """Memory streams of the machine: each served by the media model of the role that holds the data
    (:class:`Memory`), charged to the ledger of the batch being served.

    A part of :class:`~cxlsim.systems.machine.TrainingMachine` (which holds the state it reads);
    its public methods are what the pipeline axes may call (:mod:`cxlsim.systems.machine.services`)."""

    def host_crossings(self) -> dict[tuple[str, str], Crossing]:
        """``{(requester, memory key): Crossing}``: the memories a requester on the host (the
        embedding engine, the checkpoint agent) reaches across the fabric -- each memory device's
        table and log memory, from the host over ``fabric.path("host", ("mem", m))`` with the CXL
        controller's protocol times, staged as the CXL memory devices' timing model stages them
        (:func:`~cxlsim.devices.cxl_mem.queueing.crossing_over`); and every memory role given a CXL
        memory device (a Type-3 expander), over that device's own link, controller and queues
        (:meth:`~cxlsim.devices.cxl_mem.cxl_mem.CxlMem.crossing`). None of them where the
        system has no fabric or the requester is on the memory device. The CXL-MEM's controller
        declares no queue depths: its queues do not bound the host (the host's fill buffers do)."""
        out: dict[tuple[str, str], Crossing] = {}
        on_host = [who for who, impl in (("engine", self.engine), ("agent", self.agent))
                   if impl is not None and impl.lane == "host_cpu"]
        for mem in self.memories.values():  # a role behind a CXL memory device: its own link and queues
            device = self.devices.attached.get(mem.role)
            if device is not None:
                for who in on_host:
                    out[(who, mem.key)] = device.crossing()
        if self.fabric is None or self.cxl is None:
            return out
        for m, side in enumerate(self.sides):
            path = self.fabric.path("host", ("mem", m))
            cp = self.cxl.params
            crossing = crossing_over(path, cp.host_protocol_ns, cp.device_protocol_ns)
            for who in on_host:
                for mem in (side.tables, side.ckpt_mem):
                    out[(who, mem.key)] = crossing
        return out

    def round_GiB(self, nbytes: float) -> int:
        """``nbytes`` rounded up to whole GiB (log areas start on a GiB)."""
        return int(math.ceil(nbytes / GiB) * GiB)

    def batch(self, n: int, m: int = 0) -> BatchStreams:
        """Batch ``n``'s streams, or the part of them memory device ``m`` holds."""
        if self.device_streams:
            return self.device_streams[m].batch(n)
        b = self.streams.batch(n)
        if self.mems == 1:
            return b
        key = (n, m)
        if key not in self._views:
            owner, u_owner = self.placement.mem_of(b.lookup_rows), self.placement.mem_of(b.unique_rows)
            for i in range(self.mems):
                self._views[(n, i)] = b.on(owner, u_owner, i)
        return self._views[key]

    def rows_addr(self, rows: np.ndarray) -> np.ndarray:
        """Addresses of table rows in the data region (int64: row ids may be held in int32)."""
        addr = rows.astype(np.int64)  # a fresh array, scaled in place (no temporaries to fault in)
        addr *= self.row_B
        addr += self.data_base
        return addr

    def on_storage(self, mem: Memory) -> bool:
        """Whether the host engine reaches ``mem`` as storage: a block device (an SSD: its family
        declares the ``block_device`` capability) holding the tables is memory mapped, so a read of
        a row not in memory is a major page fault (named assumption, docs/timing-model.md)."""
        return self.engine.maps_storage and has_capability(mem.model.family, "block_device")

    def _host_read(self, mem: Memory, t: float, rows: np.ndarray, out: int):
        """The host engine's reads of ``rows`` from ``mem``: a memory stream with ``out`` in flight,
        or, from storage, synchronous page faults (one per worker thread in flight) whose handling
        the threads pay on top of the device's time. Returns (result, done_ns)."""
        if not self.on_storage(mem):
            res = self.serve(mem, t, self.rows_addr(rows), self.row_B, False, out, by="engine")
            return res, res.done_ns
        res = self.serve(mem, t, self.rows_addr(rows), self.row_B, False, self.cpu.storage_reads_in_flight())
        return res, res.done_ns + self.cpu.fault_ns(rows.size)

    def _write_back(self, mem: Memory, t: float, rows: np.ndarray, out: int) -> float:
        """Write evicted (dirty) cached rows back to ``mem``; returns when acknowledged."""
        if rows.size == 0:
            return t
        if self.on_storage(mem):
            out = self.cpu.storage_reads_in_flight()
        return self.serve(mem, t, self.rows_addr(rows), self.row_B, True, out, by="engine").done_ns

    def serve(self, mem: Memory, t_ns: float, addr_B: np.ndarray, size_B, is_write, outstanding: int | tuple[int, int],
              by: str = ""):
        """:meth:`Memory.serve` (``outstanding``: one limit, or ``(reads, writes)`` pools), charging
        what it moved to the batch being served. ``by``: the requester (``"engine"``, ``"agent"``):
        where it reaches ``mem`` across the fabric (:attr:`crossings`), each access pays the path.
        Tables placed over two tiers (:attr:`tiering`): a stream to the table memory is split by
        page, each part served by its tier with its share of ``outstanding`` (named approximation:
        the requester's one loop as two, shared by Little's law on the tiers' idle latencies,
        :func:`~cxlsim.systems.tiering.loop_shares`)."""
        if self.tiering is not None and mem.role == self.pipe.tables_on and len(addr_B):
            near = self.tiering.near(addr_B)
            n_near = int(np.count_nonzero(near))
            if 0 < n_near < len(addr_B):
                tiers = ((near, self.near_tables), (~near, mem))
                counts = [int(np.count_nonzero(sel)) for sel, _ in tiers]
                lat = [self._idle_ns(m, by) for _, m in tiers]
                shares = (list(zip(*(loop_shares(o, counts, lat) for o in outstanding), strict=True))
                          if isinstance(outstanding, tuple) else loop_shares(outstanding, counts, lat))
                return _combined([self._serve_one(m, t_ns, addr_B[sel], _pick(size_B, sel), _pick(is_write, sel),
                                                  share, by) for (sel, m), share in zip(tiers, shares, strict=True)])
            if n_near:
                mem = self.near_tables
        return self._serve_one(mem, t_ns, addr_B, size_B, is_write, outstanding, by)

    def _idle_ns(self, mem: Memory, by: str) -> float:
        """A lone random row read of ``mem`` for requester ``by`` (ns): the media's and its path's."""
        crossing = self.crossings.get((by, mem.key))
        return mem.model.read_latency_ns("random") + (crossing.added_ns(self.row_B) if crossing is not None else 0.0)

    def _serve_one(self, mem: Memory, t_ns: float, addr_B: np.ndarray, size_B, is_write,
                   outstanding: int | tuple[int, int], by: str):
        crossing = self.crossings.get((by, mem.key))
        if self._ledger.access is not None:  # statistics: the kernel variant that counts them
            return self._serve_counted(mem, t_ns, addr_B, size_B, is_write, outstanding, crossing)
        res = mem.serve(t_ns, addr_B, size_B, is_write, outstanding, crossing)
        tr = self._ledger.traffic(mem.key)
        tr.media_read_B += float(res.media_read_B)
        tr.media_write_B += float(res.media_write_B)
        tr.requested_B += float(np.sum(size_B)) if np.ndim(size_B) else float(size_B) * len(addr_B)
        tr.accesses += len(addr_B)
        return res

    def _serve_counted(self, mem: Memory, t_ns: float, addr_B: np.ndarray, size_B, is_write,
                       outstanding: int | tuple[int, int], crossing: Crossing | None):
        """:meth:`_serve_one` with statistics: the media model adds what the accesses met to the
        ledger's record of the step being served (:class:`~cxlsim.systems.activity.AccessStats`).
        Same timing and traffic."""
        led = self._ledger
        rec = led.access_stats(mem.key, self._kind)
        res = mem.serve(t_ns, addr_B, size_B, is_write, outstanding, crossing, stats=rec.vector)
        tr = led.traffic(mem.key)
        tr.media_read_B += float(res.media_read_B)
        tr.media_write_B += float(res.media_write_B)
        tr.requested_B += float(res.requested_B)
        tr.accesses += len(addr_B)
        return res

    def in_segments(self, t: float, n_items: int, item_B: float, serve, finish) -> OpOutcome:
        """An op over ``n_items`` items of ``item_B`` requested bytes each, served in segments of
        :data:`SEGMENT_B`: ``serve(start, i, j)`` serves items ``i:j`` from ``start`` and returns
        when they are done; ``finish(latest)`` gives the op's end (or its last outcome) from the
        latest of those. Each segment charges the ledger of the batch the op belongs to."""
        ledger = self._ledger
        kind = self._kind
        per = max(1, int(SEGMENT_B // max(1.0, item_B)))

        def segment(start: float, i: int, latest: float) -> OpOutcome:
            self._ledger = ledger
            self._kind = kind
            j = min(n_items, i + per)
            latest = max(latest, serve(start, i, j))
            if j < n_items:
                return OpOutcome(latest, resume=lambda now: segment(now, j, latest))
            end = finish(latest)
            return end if isinstance(end, OpOutcome) else OpOutcome(end)

        return segment(t, 0, t)

    def _lookup(self, n, t, ex, m=0):
        b = self.batch(n, m)
        side = self.sides[m]
        rows = b.unique_rows if self.pipe.lookup_dedup else b.lookup_rows
        compute = self.engine.lookup_compute_ns(b, self._ledger)
        below, wb, llc_ns = self._through_llc(rows, False, lookup=True)
        return self._read_below(side, t, below, wb, self.engine.outstanding(),
                                lambda latest: max(latest + llc_ns, t + compute))

    def _through_llc(self, rows: np.ndarray, write: bool, lookup: bool = False):
        """The host touches ``rows`` through its last-level cache (:attr:`llc`): ``(rows it must
        read from the memory below, the write-backs (addresses, sizes) the cache evicted or None,
        the time the cores take for the rows that hit)``; without a cache every row goes below.
        Charges the lines and hits to the batch's ledger (``lookup``: also as the lookup's)."""
        if self.llc is None:
            return rows, None, 0.0
        acc = self.llc.access(self.rows_addr(rows), write, rows)
        led = self._ledger
        led.llc_lines += acc.lines
        led.llc_hits += acc.hit_lines
        led.llc_writeback_B += float(acc.wb_size_B.sum())
        if lookup:
            led.llc_lookup_lines += acc.lines
            led.llc_lookup_hits += acc.hit_lines
        return rows[~acc.row_hit], (acc.wb_addr_B, acc.wb_size_B), self.cpu.llc_hit_ns(acc.served_lines)

    def _llc_writeback_to_cache(self, t: float, wb, out: int) -> tuple[float, np.ndarray]:
        """The last-level cache's write-backs into the vector cache (host DRAM) that sits below it:
        their rows are written (write-allocate, dirty) in the vector cache and their lines in host
        DRAM. Returns (when acknowledged, the rows the vector cache evicted dirty)."""
        if wb is None or wb[0].size == 0:
            return t, np.zeros(0, np.int64)
        addr, size = wb
        rows = sorted_unique((addr - self.data_base) // self.row_B)
        _, evicted = cache_access(rows, True, *self.cache)
        return self.serve(self.host_dram, t, addr, size, True, out).done_ns, evicted

    def _write_requests(self, mem: Memory, t: float, addr: np.ndarray, size: np.ndarray, out: int) -> float:
        """Write requests (the last-level cache's write-backs) to ``mem``; returns when acknowledged."""
        if addr.size == 0:
            return t
        if self.on_storage(mem):
            out = self.cpu.storage_reads_in_flight()
        return self.serve(mem, t, addr, size, True, out, by="engine").done_ns

    def _read_below(self, side: MemSide, t: float, rows: np.ndarray, wb, out: int, finish,
                    segmented: bool = True, count_raw: bool = True):
        """The host reads ``rows`` from the memory below its last-level cache and writes back ``wb``
        (None: none): the vector cache (its hits from host DRAM, its misses from the tables, its
        dirty evictions written back to them) where there is one, else the tables, in segments
        (:meth:`in_segments`; not ``segmented``: one stream, its end returned as a number), the
        write-backs spread over the segments. ``finish(latest)`` gives the op's end."""
        led = self._ledger
        if self.cache is not None:
            hit, evicted = cache_access(rows, False, *self.cache)
            r_hit = self.serve(self.host_dram, t, self.rows_addr(rows[hit]), self.row_B, False, out)
            r_miss, miss_end = self._host_read(side.tables, t, rows[~hit], out)
            wb_end, wb_evicted = self._llc_writeback_to_cache(t, wb, out)
            evicted = np.concatenate([evicted, wb_evicted])
            end = max(t, r_hit.done_ns, miss_end, wb_end, self._write_back(side.tables, t, evicted, out))
            if count_raw:
                led.cache_lookups += int(hit.size)
                led.cache_hits += int(np.count_nonzero(hit))
                led.raw_stall_ns += float(r_miss.raw_stall_ns)
                led.raw_stall_count += int(r_miss.raw_stall_count)
            led.cache_writebacks += int(evicted.size)
            end = finish(end)
            return end if not segmented else OpOutcome(end)
        n_wb = 0 if wb is None else wb[0].size

        def serve(start: float, i: int, j: int) -> float:
            end = start
            if j > i:
                res, end = self._host_read(side.tables, start, rows[i:j], out)
                if count_raw:
                    self._ledger.raw_stall_ns += float(res.raw_stall_ns)
                    self._ledger.raw_stall_count += int(res.raw_stall_count)
            if n_wb:  # this segment's share of the write-backs
                k0 = i * n_wb // rows.size if rows.size else 0
                k1 = n_wb if j >= rows.size else j * n_wb // rows.size
                end = max(end, self._write_requests(side.tables, start, wb[0][k0:k1], wb[1][k0:k1], out))
            return end

        if not segmented:
            return finish(serve(t, 0, rows.size))
        return self.in_segments(t, rows.size, self.row_B, serve, finish)

    def update_rows(self, n: int, m: int = 0) -> np.ndarray:
        """The distinct rows batch ``n``'s update writes on device ``m``, in the order the engine
        visits them (``update_table_order`` of the ndp or host CPU preset)."""
        b = self.batch(n, m)
        if self.engine.device.params.update_table_order == "reverse":
            return self.streams.layout.tables_reversed(b.unique_rows)
        return b.unique_rows

    def _update(self, n, t, ex, m=0):
        b = self.batch(n, m)
        side = self.sides[m]
        rows = self.update_rows(n, m)
        out = self.engine.outstanding()
        compute = self.engine.update_compute_ns(b, self._ledger) + self._fused_correction_ns(n, ex, m)
        # read each distinct row, add its accumulated gradient, write it back: through a last-level
        # cache, the rows that miss are read (write-allocate) and the writes stay in it, dirty, until
        # evicted (the write-backs it evicts now go below); without one, read, write, ... to the memory
        below, wb, llc_ns = self._through_llc(rows, True)
        rmw = self.llc is None
        evicted_end = t
        if self.cache is not None:
            hit, evicted = cache_access(below, True, *self.cache)
            mem = self.host_dram
            wb_end, wb_evicted = self._llc_writeback_to_cache(t, wb, out)
            evicted = np.concatenate([evicted, wb_evicted])
            evicted_end = max(wb_end, self._write_back(side.tables, t, evicted, out))
            self._ledger.cache_writebacks += int(evicted.size)
            wb = None
        else:
            mem = side.tables
        addr = self.rows_addr(below)
        n_wb = 0 if wb is None else wb[0].size

        def stream(a: np.ndarray):
            if rmw:
                return interleave(a, a), interleave(np.zeros(a.size, bool), np.ones(a.size, bool))
            return a, False

        if self.on_storage(mem):  # the reads fault the pages in; the writes dirty them
            a, wr = stream(addr)
            res = self.serve(mem, t, a, self.row_B, wr, self.cpu.storage_reads_in_flight(), by="engine") if a.size else None
            done = res.done_ns + self.cpu.fault_ns(below.size) if res is not None else t
            if n_wb:
                done = max(done, self._write_requests(mem, t, wb[0], wb[1], out))
            return OpOutcome(max(t, done + llc_ns, evicted_end, t + compute))

        def serve(start: float, i: int, j: int) -> float:
            end = start
            if j > i:
                a, wr = stream(addr[i:j])
                end = self.serve(mem, start, a, self.row_B, wr, out, by="engine").done_ns
            if n_wb:  # this segment's share of the write-backs
                k0 = i * n_wb // addr.size if addr.size else 0
                k1 = n_wb if j >= addr.size else j * n_wb // addr.size
                end = max(end, self._write_requests(mem, start, wb[0][k0:k1], wb[1][k0:k1], out))
            return end

        return self.in_segments(t, addr.size, 2 * self.row_B if rmw else self.row_B, serve,
                                lambda latest: max(latest + llc_ns, evicted_end, t + compute))
