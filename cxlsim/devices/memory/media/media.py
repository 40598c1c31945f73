"""One media mechanism shared by the DRAM, PMEM and SSD families.

Contract (units: time ns, data B, bandwidth GB/s == B/ns, energy J; the API of
:mod:`cxlsim.devices.base`). A :class:`MediaModel` is a pure model of ONE module (one DIMM, one
SSD) built from a family's preset; several modules are interleaved by address. It offers:

* ``read_latency_ns(pattern)`` / ``write_latency_ns(pattern)``: idle latencies, pattern
  ``"sequential"`` or ``"random"`` (a write's latency is its acknowledgement: ADR domain / SSD ack);
* ``read_ns(n_accesses, size_B, modules=1)`` / ``write_ns(...)``: the detailed time (by the
  kernel) of ``n_accesses`` aligned accesses of ``size_B`` to distinct units, all issued at 0 with
  unlimited outstanding, consecutive accesses on consecutive modules (interleaved at the access's
  whole units); reads until the last data is back, writes until the last media write completed,
  write-combining buffer drain included;
* ``bound_ns(op, n_accesses, size_B, modules=1)`` for op ``"read"`` / ``"write"``: their analytic
  bound (``latency + media bytes / bandwidth`` less the one unit occupancy that the idle read
  latency already contains), and ``bound_factor(op)``;
* ``access_cost(op, size_B) -> Cost``: one idle aligned access (time, media bytes, dynamic energy);
* ``serve(stream, state, outstanding, modules=1, interleave_B=4096) -> StreamResult``: the detailed
  model (numba kernel in :mod:`cxlsim.devices.memory.media.media_kernel`), stateful across calls through a
  :class:`MediaState` (bank/queue timelines, write-combining buffer, per-unit pending-until);
  ``outstanding`` is one closed loop's limit, or a ``(reads, writes)`` pair: a requester with
  separate read and write channels (AXI4), each kind with a loop of its own; with a pair,
  ``write_after_reads=True`` holds each write until the reads before it (since the previous write)
  have returned their data (a copy's write carries what its reads fetched);
* ``drain(state, at_ns) -> DrainResult``: write every buffered unit back to the media;
* energy: ``traffic_energy_J(media_read_B, media_write_B, requested_B)`` (media bits read and
  written at ``read/write_media_pJ_per_bit``, requested bits at ``io_pJ_per_bit``; the one place
  media energy is computed: ``StreamResult.energy_J``, ``DrainResult.energy_J`` and
  ``access_cost`` use it) and ``static_energy_J(wall_ns, count=1)`` (``background_W`` per module).

Streams are in issue order: ``issue_ns`` never decreases within a stream nor from one ``serve`` call
to the next on the same state. Durability: a write is durable at its ``ack_ns`` (ADR domain); a write
with ``start_ns <= t < ack_ns`` is in flight at ``t`` and may be torn at 64 B granularity.
:mod:`cxlsim.validate.media_bench` characterises a preset by running ``serve`` on generated streams. The numba
kernel is imported when the first model is built, not when this module is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cxlsim.arrays import unique as sorted_unique
from cxlsim.config.params import Param, ParamSet, Schema, check_le
from cxlsim.devices.base import (
    Cost,
    DeviceModel,
    Energy,
    Usage,
    check_non_negative,
    static_energy_J,
)
from cxlsim.devices.memory.media import media_index as X
from cxlsim.units import PJ

PATTERNS = ("sequential", "random")
OPS = ("read", "write")
BITS_PER_B = 8
#: The parameters the media energy hook (:func:`energy`) reads, and no other: a preset that
#: ``emulates:`` another is priced with the emulated preset's values of these
#: (``energy.emulated_media: as_emulated``, :mod:`cxlsim.energy.model`).
ENERGY_PARAMS = ("read_media_pJ_per_bit", "write_media_pJ_per_bit", "io_pJ_per_bit", "background_W")
TORN_GRANULE_B = 64  # in-flight writes may tear at this granularity (docs/design.md#crash-and-recovery)
INITIAL_TABLE_SLOTS = 1 << 12  # pending table starts this big (and shrinks no further); rebuilds resize it
#: Most inserts a pending-table rebuild makes room for at once (larger streams grow it again).
MAX_GROW_ROOM = 1 << 21
#: Earlier pending tables kept for reuse by size (a system's calls alternate between a few sizes).
MAX_SPARE_TABLES = 2


@dataclass(frozen=True)
class Crossing:
    """A requester's path to the modules across a fabric: a host reading a CXL memory device's media
    (units ns; the stages of :mod:`cxlsim.devices.cxl_mem.queueing`, staged in issue order).

    An access of n bytes is ceil(n / 64) line messages each way. In order: the link's **request
    server** (each line's header, ``up_hdr_ns``, or header and data, ``up_data_ns``), the pure delay
    ``request_ns`` (a write: ``request_write_ns``: link and switch latencies, a lone message's flit),
    an entry of the device controller's **read or write queue** (``read_queue_count`` /
    ``write_queue_count``, 0 = unbounded), its protocol time ``device_ns``, the media, the
    **response server** (``down_data_ns`` a read's line, ``down_hdr_ns`` a write's completion) and
    the delay ``response_ns`` (``response_write_ns``) back to the requester. A read's queue entry is
    held until its data is sent, a write's until the media wrote it. The requester's slot is held
    for all of it, so a closed loop's bandwidth falls by Little's law as the path lengthens, and the
    link and the queues bound it as they do the probes'."""

    request_ns: float
    response_ns: float
    request_write_ns: float | None = None
    response_write_ns: float | None = None
    device_ns: float = 0.0
    up_hdr_ns: float = 0.0
    up_data_ns: float = 0.0
    down_hdr_ns: float = 0.0
    down_data_ns: float = 0.0
    read_queue_count: int = 0
    write_queue_count: int = 0

    def __post_init__(self) -> None:
        check_non_negative(request_ns=self.request_ns, response_ns=self.response_ns, device_ns=self.device_ns,
                           up_hdr_ns=self.up_hdr_ns, up_data_ns=self.up_data_ns, down_hdr_ns=self.down_hdr_ns,
                           down_data_ns=self.down_data_ns, read_queue_count=self.read_queue_count,
                           write_queue_count=self.write_queue_count)
        for key in ("request_write_ns", "response_write_ns"):
            if getattr(self, key) is None:
                object.__setattr__(self, key, getattr(self, key.replace("_write", "")))
            check_non_negative(**{key: getattr(self, key)})

    def set_params(self, fp: np.ndarray) -> None:
        """Write the crossing's times into the kernel's float parameters ``fp``."""
        fp[X.F_PATH_REQ], fp[X.F_PATH_REQ_W], fp[X.F_PATH_DEV] = self.request_ns, self.request_write_ns, self.device_ns
        fp[X.F_PATH_RESP], fp[X.F_PATH_RESP_W] = self.response_ns, self.response_write_ns
        fp[X.F_UP_HDR], fp[X.F_UP_DATA], fp[X.F_DN_HDR], fp[X.F_DN_DATA] = (
            self.up_hdr_ns, self.up_data_ns, self.down_hdr_ns, self.down_data_ns)

    def added_ns(self, size_B: int, write: bool = False) -> float:
        """What the path adds to one lone access of ``size_B`` bytes (ns): its messages' slots each
        way, the delays and the device's protocol time."""
        lines = -(-int(size_B) // X.PATH_LINE_B)
        if write:
            return (lines * (self.up_data_ns + self.down_hdr_ns) + self.request_write_ns + self.device_ns
                    + self.response_write_ns)
        return lines * (self.up_hdr_ns + self.down_data_ns) + self.request_ns + self.device_ns + self.response_ns

    def queue_entries(self, stream: AccessStream) -> tuple[int, int]:
        """The read and write queues' entries in accesses of ``stream``: the device queues 64 B
        requests, so an access of n lines holds n entries; the kernel holds one slot an access, so
        a queue of c entries is c ÷ the stream's mean lines a read (a write), rounded, at least 1 (exact for
        a stream of one access size, such as rows). A count of 0 (unbounded) gives 1: the kernel
        then keeps, and never reads, a queue of that size."""
        out = []
        for count, kind in ((self.read_queue_count, False), (self.write_queue_count, True)):
            sizes = stream.size_B[stream.is_write == kind]
            lines = float(np.mean(-(-sizes // X.PATH_LINE_B))) if count and sizes.size else 1.0
            out.append(max(1, round(count / lines)) if count else 1)
        return out[0], out[1]


def media_params(unit_B: int) -> tuple[Param, ...]:
    """Parameters every media family declares (defaults describe a plain device without buffer)."""
    return (
        Param("capacity_GB", float, "capacity of one module", minimum=0, exclusive_minimum=True),
        Param("access_unit_B", int, "internal access unit: media work is done in whole units", default=unit_B, minimum=1),
        Param("read_latency_sequential_ns", float, "idle read latency, sequential", minimum=0, exclusive_minimum=True),
        Param("read_latency_random_ns", float, "idle read latency, random", minimum=0, exclusive_minimum=True),
        Param("write_latency_ns", float, "idle write latency to acknowledgement (persistence domain)", minimum=0),
        Param("read_bw_GBps", float, "sustained media read bandwidth of one module", minimum=0, exclusive_minimum=True),
        Param("write_bw_GBps", float, "sustained media write bandwidth of one module", minimum=0, exclusive_minimum=True),
        Param("parallel_units_count", int, "banks / parallel units per module; each holds a unit for count×unit/bw "
              "(or bank_read_occupancy_ns)", minimum=1),
        Param("bank_read_occupancy_ns", float, "time a unit read holds its bank (DRAM: tRC, activate to the next "
              "activate); the module's read and write bandwidths then limit its data bus instead (one unit per "
              "unit/bw, for reads and writes alike); 0 = a bank holds a unit read for count×unit/read bandwidth "
              "and there is no bus limit of its own", default=0.0, minimum=0),
        Param("wcb_entries", int, "write-combining buffer entries (units) per module, LRU; 0 = none", default=0, minimum=0),
        Param("read_modify_write", bool, "a write covering part of a unit that misses the buffer reads the unit first", default=False),
        Param("wcb_merge_ns", float, "time to merge a write into its buffered unit", default=0.0, minimum=0),
        Param("wcb_read_latency_ns", float, "latency of a read served from the write-combining buffer", default=0.0, minimum=0),
        Param("write_queue_entries", int, "write queue per module: write accesses with media work in flight before acks "
              "stall, or with read_priority the unit writes posted and not yet started", default=64, minimum=1),
        Param("read_priority", bool, "media writes are posted to the write queue and start only on an idle bank or "
              "when the queue is full (write drain); reads go ahead of them", default=False),
        Param("write_forwarding", bool, "the controller forwards pending write data: reads never wait for writes", default=False),
        Param("read_IOPS", float, "command-processing limit on read accesses per second; 0 = none", default=0.0, minimum=0),
        Param("write_IOPS", float, "command-processing limit on write accesses per second; 0 = none", default=0.0, minimum=0),
        Param("controller_outstanding_count", int, "requests one module's controller holds in flight: the stream's "
              "outstanding limit is at most this × modules, so bandwidth ≤ count × access size / latency "
              "(Little's law); 0 = no limit of its own", default=0, minimum=0),
        Param("controller_write_outstanding_count", int, "writes one controller's write-pending queue holds, shared "
              "by the modules_per_controller modules behind it: a write pool is at most this × controllers and "
              "its writes wait and contend per controller; 0 = writes are held like reads "
              "(controller_outstanding_count per module, one count for both kinds)", default=0, minimum=0),
        Param("modules_per_controller", int, "modules (channels) behind one controller, sharing its write-pending "
              "queue (with controller_write_outstanding_count)", default=1, minimum=1),
        Param("host_queue_entries", int, "requests per module that wait in the host controller's queues beyond "
              "those the module holds (more wait in the cores and contend for nothing)", default=64, minimum=1),
        Param("read_contention_ratio", float, "relative growth of a unit read's bank occupancy per request waiting "
              "beyond controller_outstanding_count, per request the controller holds", default=0.0, minimum=0),
        Param("write_contention_ratio", float, "as read_contention_ratio for a unit write's bank occupancy",
              default=0.0, minimum=0),
        Param("wear_level_interval_count", int, "media unit writes per module between wear-levelling stalls; 0 = off", default=0, minimum=0),
        Param("wear_level_stall_ns", float, "wear-levelling stall of all banks of a module", default=0.0, minimum=0),
        Param("read_media_pJ_per_bit", float, "dynamic energy per media bit read", minimum=0),
        Param("write_media_pJ_per_bit", float, "dynamic energy per media bit written", minimum=0),
        Param("io_pJ_per_bit", float, "interface energy per requested bit transferred", default=0.0, minimum=0),
        Param("background_W", float, "background (idle) power of one module", minimum=0),
    )


def _check_occupancy(values: dict[str, Any]) -> tuple[str, str] | None:
    """The idle sequential read latency must contain one unit's bank occupancy and command time."""
    occ = values["bank_read_occupancy_ns"] or values["parallel_units_count"] * values["access_unit_B"] / values["read_bw_GBps"]
    cmd = 1e9 / values["read_IOPS"] if values["read_IOPS"] > 0 else 0.0
    if occ + cmd > values["read_latency_sequential_ns"]:
        return ("parallel_units_count",
                f"one unit's occupancy + command time ({occ + cmd:.1f} ns) exceeds read_latency_sequential_ns; "
                "lower parallel_units_count (or bank_read_occupancy_ns)")
    return None


def media_schema(family: str, unit_B: int, extra: tuple[Param, ...] = ()) -> Schema:
    """The schema of a media family: the shared parameters plus ``extra``."""
    return Schema(
        family,
        media_params(unit_B) + extra,
        checks=(check_le("read_latency_sequential_ns", "read_latency_random_ns"), _check_occupancy),
    )


@dataclass(frozen=True)
class AccessStream:
    """Accesses in issue order: earliest issue (ns), byte address, size (B), write flag."""

    issue_ns: np.ndarray
    addr_B: np.ndarray
    size_B: np.ndarray
    is_write: np.ndarray

    @classmethod
    def of(cls, issue_ns: Any, addr_B: Any, size_B: Any, is_write: Any) -> AccessStream:
        """Build from array-likes; scalars broadcast to the length of ``addr_B``. Each array is a
        read-only view (of the input, or of a broadcast copy): the kernel only reads them, and one
        array type per argument compiles it once (numba types read-only arrays apart from writable
        ones: mixed calls compiled the media kernel twice more, about 10 s of CPU each)."""
        addr = np.atleast_1d(np.asarray(addr_B, dtype=np.int64))
        n = addr.shape[0]

        def read_only(a: np.ndarray) -> np.ndarray:
            view = np.ascontiguousarray(a).view()
            view.setflags(write=False)
            return view

        def column(x: Any, dtype: type) -> np.ndarray:
            a = np.asarray(x, dtype=dtype)
            if a.ndim == 0:  # a scalar: filled at once (a broadcast view would be copied to contiguous anyway)
                return read_only(np.full(n, a, dtype))
            return read_only(a if a.shape == (n,) else np.broadcast_to(a, (n,)))

        return cls(column(issue_ns, np.float64), read_only(addr), column(size_B, np.int64), column(is_write, np.bool_))

    def __len__(self) -> int:
        return int(self.addr_B.shape[0])


@dataclass(frozen=True)
class StreamResult:
    """Outcome of :meth:`MediaModel.serve`.

    Per access: ``start_ns`` (issued, after the closed-loop limit), ``ack_ns`` (reads: data back;
    writes: acknowledged, durable) and ``complete_ns`` (reads: data back; writes: data in place in
    the module, i.e. merged into the buffer or written to the media); empty when served with
    ``per_access=False``. Totals over the stream: ``end_ns`` (latest completion or
    acknowledgement), ``done_ns`` (latest ``ack_ns``: when the stream is done for its requester),
    both -inf for an empty stream, and the counts below; ``requested_B`` is the bytes the stream
    asked for and ``energy_J`` the dynamic energy of its traffic
    (:meth:`MediaModel.traffic_energy_J` of media bytes read, written and requested bytes).
    """

    start_ns: np.ndarray
    complete_ns: np.ndarray
    ack_ns: np.ndarray
    end_ns: float
    done_ns: float
    media_read_B: float
    media_write_B: float
    rmw_count: int
    raw_stall_count: int
    raw_stall_ns: float
    buffer_hits_count: int
    requested_B: float
    energy_J: float


@dataclass(frozen=True)
class DrainResult:
    """Write-back of the write-combining buffers: end time (ns), media bytes, dynamic energy (J)."""

    end_ns: float
    media_write_B: float
    energy_J: float


def _kernel():
    """The numba kernel module, imported on first use (a media model being built), so that the
    families register and their presets load without numba."""
    from cxlsim.devices.memory.media import media_kernel

    return media_kernel


class MediaState:
    """Mutable state of ``modules`` interleaved modules, carried across ``serve`` calls."""

    def __init__(self, modules: int, interleave_B: int, banks: int, wcb_entries: int, queue: int,
                 read_priority: bool = False) -> None:
        K = _kernel()
        self.modules = modules
        self.interleave_B = interleave_B
        self.bank_free = np.full((modules, banks), X.NO_TIME)
        self.cmd_free = np.full(modules, X.NO_TIME)
        self.last_line = np.full(modules, -2, np.int64)
        self.wq_ring = np.full((modules, queue), X.NO_TIME)
        self.wq_head = np.zeros(modules, np.int64)
        self.wcb_tag = np.full((modules, max(wcb_entries, 1)), X.EMPTY, np.int64)
        self.wcb_filt = K.wcb_filter(self.wcb_tag)
        self.wcb_stamp = np.zeros((modules, max(wcb_entries, 1)), np.int64)
        self.wcb_prev, self.wcb_next, self.wcb_lru = K.lru_state(self.wcb_tag, self.wcb_stamp)
        self.stamp = np.zeros(1, np.int64)
        self.keys, self.times = K.new_table(INITIAL_TABLE_SLOTS)
        self._spares: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # earlier tables by size, for reuse
        self.used = np.zeros(1, np.int64)
        self.wear_count = np.zeros(modules, np.int64)
        # posted media writes (read priority): a FIFO ring per bank, ``queue`` per module at most
        posted = queue if read_priority else 1
        self.pq_g = np.zeros((modules, banks, posted), np.int64)
        self.pq_s = np.zeros((modules, banks, posted), np.int64)
        self.pq_r = np.zeros((modules, banks, posted))
        self.pq_head = np.zeros((modules, banks), np.int64)
        self.pq_len = np.zeros((modules, banks), np.int64)
        self.pq_n = np.zeros(modules, np.int64)
        self.pq_hr = np.full((modules, banks), np.inf)  # each ring's oldest write's ready time (inf: empty)
        self.horizon_ns = -math.inf  # latest issue time seen
        self.served_since_scan = 0  # accesses served since the pending table was last scanned
        #: a crossing requester's link: request and response servers' free times, their latest
        #: arrivals and their recent idle gaps (``media_index.LINK_STATE``)
        self.link_free, self.link_at = X.link_state()

    def copy(self) -> MediaState:
        K = _kernel()
        other = object.__new__(MediaState)
        for k, v in self.__dict__.items():
            other.__dict__[k] = v.copy() if isinstance(v, np.ndarray) else v
        other.keys, other.times = K.new_table(self.keys.shape[0])  # keep key and time side by side
        other._spares = {}
        other.keys[:], other.times[:] = self.keys, self.times
        return other

    def pending_until_ns(self, unit_index: int) -> float:
        """Pending-until time of global unit ``unit_index`` (-inf if none)."""
        return float(_kernel().pend_lookup(self.keys, self.times, np.int64(unit_index)))

    def posted_writes(self, module: int, bank: int) -> list[list]:
        """Bank ``bank`` of ``module``'s posted writes ``[unit, ready ns]``, oldest first."""
        cap = self.pq_g.shape[2]
        ks = [(self.pq_head[module, bank] + j) % cap for j in range(self.pq_len[module, bank])]
        return [[int(self.pq_g[module, bank, k]), float(self.pq_r[module, bank, k])] for k in ks]

    def buffered_units(self, module: int = 0) -> list[int]:
        """Units in ``module``'s write-combining buffer, least recently used first."""
        tags, stamps = self.wcb_tag[module], self.wcb_stamp[module]
        return [int(tags[e]) for e in np.argsort(stamps, kind="stable") if tags[e] != X.EMPTY]

    def _rebuild(self, now: float, room: int) -> None:
        """Drop entries dead at ``now``; size the table so that ``room`` more inserts fit under the
        kernel's load limit. It shrinks (a small table stays in cache) only to a quarter or less
        of its size, so that streams of similar size in turn do not shrink and regrow it. One pass
        moves the live entries out (few: the kernel's stream mostly leaves dead ones) and empties
        the table; they then go back into it (or into one of the new size)."""
        K = _kernel()
        used = max(int(self.used[0]), 1)
        gk, gt = np.empty(used, np.int64), np.empty(used)
        live = K.pend_gather(self.keys, self.times, float(now), gk, gt)
        cap = INITIAL_TABLE_SLOTS
        while (live + room) > cap * X.MAX_LOAD_FRACTION:
            cap *= 2
        if 4 * cap > self.keys.shape[0]:
            cap = max(cap, self.keys.shape[0])
        spare = False  # the live entries go into a kept table of another size (emptied first)
        if cap != self.keys.shape[0]:
            old = (self.keys, self.times)
            kept = self._spares.pop(cap, None)
            spare = kept is not None
            self.keys, self.times = kept or K.new_table(cap)  # a new table is empty already
            self._spares[old[0].shape[0]] = old  # reused by a later rebuild to that size
            while len(self._spares) > MAX_SPARE_TABLES:
                del self._spares[min(self._spares)]
        K.pend_refill(self.keys, self.times, self.used, gk, gt, live, float(now), spare)
        K.reslot_posted(self.keys, self.pq_g, self.pq_s, self.pq_head, self.pq_len)


class MediaModel(DeviceModel):
    """Pure model of one media module (see the module docstring for the contract)."""

    BOUNDED_OPS = OPS

    def __init__(self, family: str, params: ParamSet) -> None:
        self.family = family
        self.params = params
        p = params
        self._K = _kernel()
        self.unit_B = int(p.access_unit_B)
        self.banks = int(p.parallel_units_count)
        self.occ_read_ns = p.bank_read_occupancy_ns or self.banks * self.unit_B / p.read_bw_GBps
        self.occ_write_ns = self.banks * self.unit_B / p.write_bw_GBps
        # a data bus of its own when a bank's read occupancy is given (it no longer sets the rate)
        bus = p.bank_read_occupancy_ns > 0
        self.bus_read_ns = self.unit_B / p.read_bw_GBps if bus else 0.0
        self.bus_write_ns = self.unit_B / p.write_bw_GBps if bus else 0.0
        self.cmd_read_ns = 1e9 / p.read_IOPS if p.read_IOPS > 0 else 0.0
        self.cmd_write_ns = 1e9 / p.write_IOPS if p.write_IOPS > 0 else 0.0
        self.d_seq_ns = p.read_latency_sequential_ns - self.occ_read_ns - self.cmd_read_ns
        self.d_rand_ns = p.read_latency_random_ns - self.occ_read_ns - self.cmd_read_ns
        fp = np.zeros(X.N_FP)
        fp[X.F_OCC_R], fp[X.F_OCC_W] = self.occ_read_ns, self.occ_write_ns
        fp[X.F_D_SEQ], fp[X.F_D_RAND] = self.d_seq_ns, self.d_rand_ns
        fp[X.F_LAT_W] = p.write_latency_ns
        fp[X.F_MERGE], fp[X.F_WCB_READ] = p.wcb_merge_ns, p.wcb_read_latency_ns
        fp[X.F_CMD_R], fp[X.F_CMD_W] = self.cmd_read_ns, self.cmd_write_ns
        fp[X.F_WEAR_STALL] = p.wear_level_stall_ns
        fp[X.F_BUS_R], fp[X.F_BUS_W] = self.bus_read_ns, self.bus_write_ns
        self._fp = fp
        #: the energy coefficients (pJ/bit: media read, media write, interface), read once per call
        self._pj_per_bit = (p.read_media_pJ_per_bit, p.write_media_pJ_per_bit, p.io_pJ_per_bit)
        self._read_priority, self._wear_on = bool(p.read_priority), p.wear_level_interval_count > 0
        self._ips: dict[tuple[int, int, int, int], np.ndarray] = {}  # :meth:`_ip`'s vectors
        self.controller_outstanding = int(p.controller_outstanding_count)
        self.write_queue_count, self.modules_per_controller = 0, 1
        if self.controller_outstanding > 0:
            self.host_queue = int(p.host_queue_entries)
            self.contention = (float(p.read_contention_ratio), float(p.write_contention_ratio))
            self.write_queue_count = int(p.controller_write_outstanding_count)
            if self.write_queue_count > 0:
                self.modules_per_controller = int(p.modules_per_controller)
            else:
                p.skip("modules_per_controller", "controller_write_outstanding_count is 0 (writes are held per "
                       "module like reads)")
        else:
            for name in ("host_queue_entries", "read_contention_ratio", "write_contention_ratio",
                         "controller_write_outstanding_count", "modules_per_controller"):
                p.skip(name, "controller_outstanding_count is 0 (no controller limit, hence no waiting requests)")
            self.host_queue, self.contention = 0, (0.0, 0.0)

    def __repr__(self) -> str:
        return f"MediaModel({self.family}, unit={self.unit_B} B, banks={self.banks})"

    # --- idle latencies -----------------------------------------------------------------------
    def read_latency_ns(self, pattern: str = "random") -> float:
        """Idle read latency (ns) of one access of at most one unit."""
        _check(pattern, PATTERNS, "pattern")
        p = self.params
        return p.read_latency_sequential_ns if pattern == "sequential" else p.read_latency_random_ns

    def write_latency_ns(self, pattern: str = "random") -> float:
        """Idle write latency (ns) to acknowledgement; the same for both patterns."""
        _check(pattern, PATTERNS, "pattern")
        return self.params.write_latency_ns

    def units(self, size_B: int) -> int:
        """Internal units touched by an aligned access of ``size_B`` bytes."""
        return max(1, -(-int(size_B) // self.unit_B))

    # --- n idle accesses: detailed time and its bound -------------------------------------------
    def read_ns(self, n_accesses: int, size_B: int, modules: int = 1) -> float:
        """Detailed time (ns, by the kernel) of ``n_accesses`` aligned reads of ``size_B`` bytes to
        distinct units, issued at 0 with unlimited outstanding: access ``i`` covers the ``units``
        units from ``i × units`` on, modules interleaved at that granularity (consecutive accesses
        on consecutive modules). Until the last data is back; 0 for none."""
        return self._idle_run(False, n_accesses, size_B, modules)

    def write_ns(self, n_accesses: int, size_B: int, modules: int = 1) -> float:
        """As :meth:`read_ns` for writes: until the last media write has completed, the
        write-combining buffers drained (from the last write's completion); 0 for none."""
        return self._idle_run(True, n_accesses, size_B, modules)

    def _idle_run(self, write: bool, n_accesses: int, size_B: int, modules: int) -> float:
        check_non_negative(n_accesses=n_accesses)
        if size_B < 1:
            raise ValueError(f"size_B must be >= 1, got {size_B!r}")
        n = int(n_accesses)
        if n == 0:
            return 0.0
        step = self.units(size_B) * self.unit_B
        state = self.new_state(modules, self.unit_B)
        stream = AccessStream.of(0.0, np.arange(n, dtype=np.int64) * step, int(size_B), write)
        r = self.serve(stream, state, n, modules, self.unit_B, per_access=False)
        return self.drain(state, r.end_ns).end_ns if write else r.end_ns

    def _bound_read(self, n_accesses: int, size_B: int, modules: int = 1) -> float:
        return self._bound(False, n_accesses, size_B, modules)

    def _bound_write(self, n_accesses: int, size_B: int, modules: int = 1) -> float:
        return self._bound(True, n_accesses, size_B, modules)

    def _bound(self, write: bool, n_accesses: int, size_B: int, modules: int) -> float:
        """Lower bound (ns) of ``n_accesses`` aligned accesses to distinct units issued at 0
        (0 for none).

        read:  ``d + max(cmd + occ, cmd + media_B / (bw·modules), n/modules·cmd + occ)`` with
               ``d = sequential latency − occ − cmd`` (so one unit gives the idle latency);
        write: ``write latency + max(media_B / (bw·modules), n/modules·cmd)`` (the command term
               only without a write-combining buffer); with ``read_priority`` the media work
               overlaps the acknowledgement (a posted write takes its bus when the controller
               holds it), so the larger of the two.
        """
        if n_accesses <= 0:
            return 0.0
        media = n_accesses * self.units(size_B) * self.unit_B
        p = self.params
        if not write:
            cmd, occ = self.cmd_read_ns, self.occ_read_ns
            return self.d_seq_ns + max(cmd + occ, cmd + media / (p.read_bw_GBps * modules),
                                       n_accesses / modules * cmd + occ)
        cmd = self.cmd_write_ns if p.wcb_entries == 0 else 0.0
        work = max(media / (p.write_bw_GBps * modules), n_accesses / modules * cmd)
        if p.read_priority:  # a posted write holds the bus from when the controller holds it: beside its ack
            return max(p.write_latency_ns, work)
        return p.write_latency_ns + work

    def _bound_factor(self, op: str) -> float:
        """Stated for every ``n_accesses >= 1``, ``size_B >= 1`` and ``modules >= 1`` of
        :meth:`read_ns` / :meth:`write_ns`, without wear levelling (its stalls come on top).

        read: ``4 × random / sequential read latency`` — the first read of a module is random
        while the bound charges a sequential one; a bank may serve one unit more than its share,
        and a module's command processor and banks may add up rather than overlap (× 2 each);
        write: ``2 × max(first, 1 + occ_read / occ_write)`` — ``first`` is one write's
        acknowledgement, read-modify-write fill (random read + merge, when partial writes
        read-modify-write), command and media write over the write latency the bound charges;
        the second term is the fills' share of bank time in a long run; × 2 as for reads.
        Infinite when the write latency is 0.
        """
        p = self.params
        if op == "read":
            return 4.0 * p.read_latency_random_ns / p.read_latency_sequential_ns
        if p.write_latency_ns <= 0:
            return math.inf
        fill = p.read_latency_random_ns + p.wcb_merge_ns if p.read_modify_write else 0.0
        first = (p.write_latency_ns + fill + self.cmd_write_ns + self.occ_write_ns) / p.write_latency_ns
        rmw_share = 1.0 + self.occ_read_ns / self.occ_write_ns if p.read_modify_write else 1.0
        return 2.0 * max(first, rmw_share)

    def occupancy_ns(self, stream: AccessStream, modules: int = 1, interleave_B: int = 4096) -> float:
        """Lower bound (ns) of :meth:`serve` on idle modules until the stream is done for its
        requester (its ``done_ns`` from a first issue at 0), whatever the outstanding limit: the
        largest of

        * the busiest bank's media reads × ``occ_read`` — a read of a unit no earlier access of
          the stream wrote goes to the media (units written before may be buffered or forwarded);
        * the busiest command processor's reads × the read command time;
        * per module, (its media reads × ``occ_read`` + its media writes beyond what may still be
          in flight × ``occ_write``) / banks — an access's acknowledgement waits for room in the
          write queue (with read priority, for an empty queue when the access alone posts more
          than it holds), so all writes but a full queue, one started per bank and a full
          write-combining buffer have their media work done (with a buffer, only distinct units
          reach the media);
        * without a buffer or forwarding, the longest chain of one unit's media writes that one
          of its reads waits for (each ``occ_write``, after a random read if partial and
          read-modify-written).

        0 for an empty stream."""
        n = len(stream)
        if n == 0:
            return 0.0
        unit, banks, p = self.unit_B, self.banks, self.params
        addr, size = stream.addr_B, stream.size_B
        first, last = addr // unit, (addr + size - 1) // unit
        span = first[:, None] + np.arange(int(np.max(last - first)) + 1)
        inside = span <= last[:, None]
        g = span[inside]  # (access, unit) pairs in stream order
        access = np.broadcast_to(np.arange(n)[:, None], span.shape)[inside]
        wr = stream.is_write[access]
        chunk = g * unit // interleave_B
        module = chunk % modules
        local = (chunk // modules) * (interleave_B // unit) + (g * unit % interleave_B) // unit
        # a read goes to the media unless an earlier access wrote its unit
        media_read = ~wr
        if wr.any():
            written_units, first_write = np.unique(g[wr], return_index=True)
            first_write = np.nonzero(wr)[0][first_write]  # pair index of each unit's first write
            pos = np.minimum(np.searchsorted(written_units, g), written_units.size - 1)
            found = written_units[pos] == g
            media_read &= ~(found & (np.arange(g.size) > first_write[pos]))
        reads_per_bank = np.bincount((module * banks + local % banks)[media_read], minlength=modules * banks)
        bound = float(reads_per_bank.max()) * self.occ_read_ns
        if self.cmd_read_ns > 0:
            commands = sorted_unique(access[media_read] * modules + module[media_read]) % modules
            bound = max(bound, float(np.bincount(commands, minlength=modules).max()) * self.cmd_read_ns)
        # in flight at the last acknowledgement: a full write queue (of accesses of up to k units
        # each, or of posted units: an access posting more than the queue holds waits only for an
        # empty queue), a write started on every bank, a full buffer
        k = int(np.max((last - first + 1)[stream.is_write])) if stream.is_write.any() else 1
        queue = max(p.write_queue_entries, k) if p.read_priority else p.write_queue_entries * k
        slack = queue + banks + p.wcb_entries
        if p.wcb_entries > 0:  # merged writes: only distinct units reach the media
            written = np.bincount(sorted_unique(g[wr] * modules + module[wr]) % modules, minlength=modules)
        else:
            written = np.bincount(module[wr], minlength=modules)
        media_writes = np.maximum(written - slack, 0)
        if p.wcb_entries == 0 and not p.write_forwarding and wr.any() and (~wr).any():
            # a read waits for the unit's pending media write, and writes of one unit follow one
            # another: k writes of a unit before one of its reads put k write occupancies before it
            last_read = np.zeros(int(g.max()) + 1, np.int64) - 1
            np.maximum.at(last_read, g[~wr], np.nonzero(~wr)[0])
            chained = wr & (np.arange(g.size) < last_read[g])
            if chained.any():
                link = np.full(g.size, self.occ_write_ns)
                if p.read_modify_write:  # a partial write first reads the unit (random read)
                    a0 = addr[access]
                    covered = np.minimum(a0 + size[access], (g + 1) * unit) - np.maximum(a0, g * unit)
                    link[covered < unit] += p.read_latency_random_ns - self.cmd_read_ns
                bound = max(bound, float(np.bincount(g[chained], weights=link[chained]).max()))
        reads_per_module = reads_per_bank.reshape(modules, banks).sum(axis=1)
        per_module = (reads_per_module * self.occ_read_ns + media_writes * self.occ_write_ns) / banks
        return max(bound, float(per_module.max()))

    # --- one idle access, energy ----------------------------------------------------------------
    def access_cost(self, op: str, size_B: int) -> Cost:
        """One idle aligned access on one module.

        read: time to data (first unit random, later units sequential, striped over the banks);
        write: time to acknowledgement; size_B: media bytes it eventually causes (write-through
        accounting: its units written, plus a unit read when a partial write needs RMW); energy:
        :meth:`traffic_energy_J` of those media bytes and the ``size_B`` requested.
        """
        _check(op, OPS, "op")
        k = self.units(size_B)
        p = self.params
        if op == "read":
            # unit j starts at max(j bus slots, its bank's previous unit done): the later of the
            # chains j x bus and (j mod banks) x bus + (j div banks) x occupancy (bus 0: no bus)
            j = np.arange(k)
            s = np.maximum(j * self.bus_read_ns, (j % self.banks) * self.bus_read_ns + (j // self.banks) * self.occ_read_ns)
            t = max(p.read_latency_random_ns, self.cmd_read_ns + float(s[1:].max()) + self.occ_read_ns
                    + self.d_seq_ns) if k > 1 else p.read_latency_random_ns
            media = k * self.unit_B
            return Cost(t, media, self.traffic_energy_J(media, 0.0, size_B))
        media_w = k * self.unit_B
        media_r = self.unit_B if (p.read_modify_write and size_B % self.unit_B) else 0
        return Cost(p.write_latency_ns, media_w + media_r, self.traffic_energy_J(media_r, media_w, size_B))

    def traffic_energy_J(self, media_read_B: float, media_write_B: float, requested_B: float) -> float:
        """Dynamic energy (J) of media traffic: media bits read and written (whole internal units,
        ``read/write_media_pJ_per_bit``) plus the requested bits through the interface
        (``io_pJ_per_bit``)."""
        read_pJ, write_pJ, io_pJ = self._pj_per_bit
        return (media_read_B * BITS_PER_B * read_pJ * PJ
                + media_write_B * BITS_PER_B * write_pJ * PJ
                + requested_B * BITS_PER_B * io_pJ * PJ)

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        """Background energy (J) of ``count`` modules over ``wall_ns`` (``background_W`` each)."""
        return static_energy_J(self.params.background_W, wall_ns, count)

    # --- detailed model -----------------------------------------------------------------------
    def new_state(self, modules: int = 1, interleave_B: int = 4096) -> MediaState:
        """Fresh state of ``modules`` modules interleaved every ``interleave_B`` bytes."""
        if modules < 1:
            raise ValueError("modules must be >= 1")
        if interleave_B < self.unit_B or interleave_B % self.unit_B:
            raise ValueError(f"interleave_B ({interleave_B}) must be a multiple of the {self.unit_B} B unit")
        p = self.params
        return MediaState(modules, interleave_B, self.banks, p.wcb_entries, p.write_queue_entries, p.read_priority)

    def _wear(self, state: MediaState) -> np.ndarray | None:
        """The kernels' wear counters, or None when wear levelling is off (they are then compiled
        without it)."""
        return state.wear_count if self._wear_on else None

    def _ip(self, state: MediaState, outstanding: int, write_outstanding: int = 0) -> np.ndarray:
        """The kernel's integer parameters (a fresh copy of a vector built once per geometry and
        limit: building one costs more Python than a short stream's kernel call)."""
        key = (state.modules, state.interleave_B, int(outstanding), int(write_outstanding))
        ip = self._ips.get(key)
        if ip is None:
            ip = self._ips[key] = self._build_ip(state, outstanding, write_outstanding)
        return ip.copy()

    def _build_ip(self, state: MediaState, outstanding: int, write_outstanding: int) -> np.ndarray:
        p = self.params
        ip = np.zeros(X.N_IP, np.int64)
        ip[X.I_UNIT], ip[X.I_BANKS] = self.unit_B, self.banks
        ip[X.I_MODULES], ip[X.I_INTERLEAVE] = state.modules, state.interleave_B
        ip[X.I_WCB], ip[X.I_RMW] = p.wcb_entries, int(p.read_modify_write)
        ip[X.I_FORWARD] = int(p.write_forwarding)
        ip[X.I_READ_PRIORITY] = int(p.read_priority)
        ip[X.I_POW2], ip[X.I_CHUNK_SH], ip[X.I_MOD_SH], ip[X.I_UNIT_SH] = self._K.pow2_geometry(
            self.unit_B, state.interleave_B, state.modules, self.banks)
        ip[X.I_WEAR_INTERVAL], ip[X.I_OUTSTANDING] = p.wear_level_interval_count, outstanding
        ip[X.I_WRITE_OUTSTANDING] = write_outstanding
        return ip

    def controller_limit(self, write: bool, modules: int = 1) -> int:
        """Accesses of one kind the controllers of ``modules`` modules hold in flight: reads (and
        writes without a write-pending queue of their own) ``controller_outstanding_count`` per
        module; writes ``controller_write_outstanding_count`` per controller (0: no limit)."""
        if self.controller_outstanding <= 0:
            return 0
        units, c, _ = self._queue(write, modules)
        return c * units

    def _queue(self, write: bool, modules: int) -> tuple[int, int, float]:
        """(units holding the kind's requests, count each holds, requests each lets wait): modules
        for reads, controllers for writes with a write-pending queue of their own."""
        if write and self.write_queue_count > 0:
            units = -(-modules // self.modules_per_controller)
            return units, self.write_queue_count, self.host_queue * modules / units
        return modules, self.controller_outstanding, float(self.host_queue)

    def _waiting(self, write: bool, offered: float, modules: int) -> tuple[float, float]:
        """(requests waiting per unit beyond its count, relative to the count; admitted) for
        ``offered`` requests of one kind (:meth:`_queue`)."""
        units, c, q = self._queue(write, modules)
        return max(0.0, (min(offered / units, q) - c) / c), min(offered, c * units)

    def _grown(self, rel_read: float, rel_write: float) -> np.ndarray:
        """The float parameters with the units' occupancies grown by the contention ratios."""
        if rel_read <= 0 and rel_write <= 0:
            return self._fp
        fp = self._fp.copy()
        fp[X.F_OCC_R] *= 1.0 + self.contention[0] * rel_read
        fp[X.F_OCC_W] *= 1.0 + self.contention[1] * rel_write
        return fp

    def loaded(self, outstanding: int | tuple[int, int], modules: int = 1,
               write_fraction: float | None = None) -> tuple[np.ndarray, Any]:
        """The kernel's float parameters and outstanding limit for a requester offering
        ``outstanding`` accesses in flight over ``modules`` modules (docs/devices-media.md,
        "Controller limit and contention").

        * Little's law: the modules' controllers hold ``controller_outstanding_count`` accesses
          each, so at most ``count × modules`` are in flight (applied to the stream as a whole:
          exact when its accesses spread evenly over the modules);
        * contention: the rest wait in the host controller's queues, at most ``host_queue_entries``
          per module (the others wait in the cores); with ``w`` waiting per module beyond the
          module's ``count``, a unit's bank occupancy grows by ``ratio × w / count``
          (``read_contention_ratio`` for reads and read-modify-write fills,
          ``write_contention_ratio`` for media writes).
        * a write-pending queue of the controller's own (``controller_write_outstanding_count`` >
          0): writes are held and wait per controller (``modules_per_controller`` modules share
          it; ``host_queue_entries`` per module may wait), reads per module as above.

        A ``(reads, writes)`` pair (split pools; a kind absent from the stream offers 0) is
        admitted and contends per kind: a controller queues reads and writes separately (Intel's
        iMC: read and write pending queues; the DDR4 MIG, Xilinx PG150: read and write queues), so
        each kind's pool is held to its kind's limit, and its waiting requests grow only its own
        kind's occupancy (reads and read-modify-write fills by the reads', media writes by the
        writes'). One closed loop with a write-pending queue of its own needs ``write_fraction``
        (the stream's share of writes): the loop offers that share of its accesses as writes, the
        rest as reads, each kind admitted and contending as a pool; without one, the loop is held
        to ``count × modules`` and its waiting requests grow both occupancies.

        With ``controller_outstanding_count`` 0 the parameters are returned unchanged."""
        if isinstance(outstanding, tuple):
            r, w = (int(x) for x in outstanding)
            if self.controller_outstanding <= 0:
                return self._fp, (r, w)
            rel_r, ra = self._waiting(False, r, modules) if r > 0 else (0.0, 0)
            rel_w, wa = self._waiting(True, w, modules) if w > 0 else (0.0, 0)
            return self._grown(rel_r, rel_w), (int(ra), int(wa))
        if self.controller_outstanding <= 0:
            return self._fp, outstanding
        if self.write_queue_count <= 0:
            rel, admitted = self._waiting(False, outstanding, modules)
            return self._grown(rel, rel), int(admitted)
        if write_fraction is None:
            raise ValueError("one closed loop on a controller with a write-pending queue of its own needs "
                             "write_fraction (the stream's share of writes)")
        offered_w = outstanding * float(write_fraction)
        offered_r = outstanding - offered_w
        rel_r, ra = self._waiting(False, offered_r, modules) if offered_r > 0 else (0.0, 0.0)
        rel_w, wa = self._waiting(True, offered_w, modules) if offered_w > 0 else (0.0, 0.0)
        admitted = int(outstanding) if ra + wa >= outstanding - 1e-9 else max(1, round(ra + wa))
        return self._grown(rel_r, rel_w), admitted

    def serve(self, stream: AccessStream, state: MediaState, outstanding: int | tuple[int, int], modules: int = 1,
              interleave_B: int = 4096, reference: bool = False, per_access: bool = True,
              write_after_reads: bool = False, crossing: Crossing | None = None,
              stats: np.ndarray | None = None) -> StreamResult:
        """Detailed timing of ``stream`` on ``state`` (updated in place); ``reference=True`` runs
        the plain-Python twin of the kernel (same results, slow); ``per_access=False`` keeps only
        the totals (no per-access arrays: what a system simulation needs, at less memory traffic).
        ``outstanding``: one closed loop's limit, or ``(reads, writes)``: split pools (module
        docstring), where ``write_after_reads`` applies. ``crossing``: the requester reaches the
        modules across a fabric path (:class:`Crossing`), whose times each access's slot is held
        for; None: attached to the requester (the media's own timing). ``stats``: a vector of
        ``media_index.N_S`` floats the kernel adds this stream's statistics to (latency by kind,
        queue occupancy, the crossing's link and queues, bank busy time: ``media_index.S_*``), or
        None (the kernel variant without them; the reference never fills them). Timing is the
        same either way."""
        max_units, requested_B = self._validate(stream, state, outstanding, modules, interleave_B)
        split = isinstance(outstanding, tuple)
        if write_after_reads and not split:
            raise ValueError("write_after_reads needs split pools: outstanding=(reads, writes)")
        n = len(stream)
        if split:
            writes = int(np.count_nonzero(stream.is_write))
            offered = (outstanding[0] if writes < n else 0, outstanding[1] if writes > 0 else 0)
            fp, (outstanding, w_out) = self.loaded(offered, modules)
            outstanding, w_out = max(1, outstanding), max(1, w_out)  # an absent kind's loop is never used
        else:
            frac = None
            if self.write_queue_count > 0:  # the loop's share of writes: its pools at the controllers
                frac = float(np.count_nonzero(stream.is_write)) / n if n else 0.0
            fp, outstanding = self.loaded(outstanding, modules, frac)
            w_out = 0
        ip = self._ip(state, outstanding, w_out)
        if crossing is not None:
            fp = fp.copy()
            crossing.set_params(fp)
            ip[X.I_PATH] = 1 + 2 * (crossing.read_queue_count > 0) + 4 * (crossing.write_queue_count > 0)
        # the device queues a crossing requester takes entries of (one entry each without a crossing: unused)
        qr, qw = crossing.queue_entries(stream) if crossing is not None else (1, 1)
        ip[X.I_PER_ACCESS] = int(per_access or reference or stats is not None)
        ip[X.I_WRITE_AFTER_READS] = int(write_after_reads)
        if n == 0:
            return StreamResult(*(np.zeros(0),) * 3, -math.inf, -math.inf, 0.0, 0.0, 0, 0, 0.0, 0, 0.0, 0.0)
        K = self._K
        if crossing is not None:
            X.new_link_stream(state.link_free, state.link_at)
        if reference:
            start, complete, ack, c = self._serve_reference(stream, state, ip, fp, qr, qw)
        else:
            m = n if per_access or stats is not None else 1  # statistics: from the per-access results
            start, complete, ack = np.empty(m), np.empty(m), np.empty(m)
            c = np.zeros(X.N_C)
            c[X.C_ACK_MAX] = c[X.C_END_MAX] = c[X.C_FILL] = X.NO_TIME
            # free times of the requester's slots (the reads' with split pools), a loser tree
            loop_ring, loop_tree = K.slot_tree(outstanding)
            # split pools: the writes' slots (None: the one-pool kernel)
            wloop_ring, wloop_tree = K.slot_tree(w_out) if split else (None, None)
            # a crossing's link and device queues (None: the kernel's variant without a crossing)
            path = ((state.link_free, state.link_at, *K.slot_tree(qr), *K.slot_tree(qw)) if crossing is not None
                    else (None,) * 6)
            scratch = [np.zeros(state.modules, np.int64), np.zeros(state.modules), np.zeros(state.modules)]
            room = 2 * max_units + 2
            # the kernel is compiled per policy: the other policy's state goes in as None
            rp = self._read_priority
            posted = ((state.pq_g, state.pq_s, state.pq_r, state.pq_head, state.pq_len, state.pq_n, state.pq_hr)
                      if rp else (None,) * 7)
            fifo = (None, None) if rp else (state.wq_ring, state.wq_head)
            i, stopped = 0, False
            while i < n:
                # drop entries dead before access i (issue times never decrease) when the kernel
                # stopped at the load limit, or at the start when the table is large for the
                # accesses served since the last look (this stream and any short ones before it:
                # the pass is amortised over them; dead entries lengthen every probe, and at that
                # point most are dead); sized for the rest of the stream at once (at most a new key
                # per unit written)
                scan = False
                if i == 0:
                    state.served_since_scan += n
                    if (state.keys.shape[0] > INITIAL_TABLE_SLOTS
                            and 8 * state.served_since_scan * max_units >= state.keys.shape[0]):
                        scan, state.served_since_scan = True, 0
                if stopped or scan:
                    rest = room + min(int(np.count_nonzero(stream.is_write[i:])) * max_units, MAX_GROW_ROOM)
                    state._rebuild(float(stream.issue_ns[i]), rest)
                i = K.serve_kernel(stream.issue_ns, stream.addr_B, stream.size_B, stream.is_write, i,
                                   fp, ip, state.bank_free, state.cmd_free, state.last_line,
                                   *fifo, state.wcb_tag, state.wcb_filt, state.wcb_stamp,
                                   state.stamp, state.wcb_prev, state.wcb_next, state.wcb_lru,
                                   state.keys, state.times, state.used, self._wear(state),
                                   *posted, loop_ring, loop_tree, wloop_ring, wloop_tree, start, complete, ack, c, *scratch,
                                   *path, stats)
                stopped = True
            if stats is not None:
                self._count(stats, stream, state, start, ack, crossing, outstanding + w_out, qr, qw)
            if not per_access:
                start = complete = ack = np.zeros(0)
        state.horizon_ns = float(stream.issue_ns[-1])
        media_r, media_w = float(c[X.C_MEDIA_R]), float(c[X.C_MEDIA_W])
        if stats is not None and not reference:  # each media unit holds its bank for its occupancy
            stats[X.S_BANK_NS] += (media_r * fp[X.F_OCC_R] + media_w * fp[X.F_OCC_W]) / self.unit_B
        requested = float(requested_B)
        return StreamResult(start, complete, ack, float(c[X.C_END_MAX]), float(c[X.C_ACK_MAX]),
                            media_r, media_w, int(c[X.C_RMW]), int(c[X.C_RAW]), float(c[X.C_RAW_NS]),
                            int(c[X.C_HITS]), requested, self.traffic_energy_J(media_r, media_w, requested))

    def _count(self, st: np.ndarray, s: AccessStream, state: MediaState, start: np.ndarray, ack: np.ndarray, crossing: Crossing | None,
               slots: int, qr: int, qw: int) -> None:
        """Add a served stream's per-access results to the statistics vector ``st`` (``X.S_*``):
        latency (start to acknowledgement) count, sum, most and histogram per kind, the slots' hold
        time and the accesses that started after their issue (no free slot, or a write waiting for
        its reads' data), requested bytes per kind, the crossing's link busy time (each access's
        line messages each way, as the kernel stages them) and the capacities."""
        c = crossing
        self._K.count_stream(st, s.issue_ns, s.size_B, s.is_write, start, ack,
                             *((c.up_hdr_ns, c.up_data_ns, c.down_hdr_ns, c.down_data_ns) if c is not None
                               else (0.0,) * 4))
        st[X.S_SLOTS] = max(st[X.S_SLOTS], slots)
        depth = state.pq_g.shape[2] if self._read_priority else state.wq_ring.shape[1]
        st[X.S_WQ_CAP] = max(st[X.S_WQ_CAP], depth)
        if crossing is not None:
            st[X.S_CROSSING] = 1
            if crossing.read_queue_count:
                st[X.S_XR_CAP] = max(st[X.S_XR_CAP], qr)
            if crossing.write_queue_count:
                st[X.S_XW_CAP] = max(st[X.S_XW_CAP], qw)

    def _validate(self, s: AccessStream, state: MediaState, outstanding: int | tuple[int, int], modules: int,
                  interleave_B: int) -> tuple[int, int]:
        """Check the call; returns the most units one access of ``s`` touches and the bytes ``s``
        asks for (0, 0 if empty)."""
        if state.modules != modules or state.interleave_B != interleave_B:
            raise ValueError(f"state was made for {state.modules} modules at {state.interleave_B} B, "
                             f"not {modules} at {interleave_B} B")
        if isinstance(outstanding, tuple):
            if len(outstanding) != 2 or min(outstanding) < 1:
                raise ValueError("outstanding (reads, writes) must be two limits >= 1")
        elif outstanding < 1:
            raise ValueError("outstanding must be >= 1")
        n = len(s)
        if not (s.issue_ns.shape[0] == s.size_B.shape[0] == s.is_write.shape[0] == n):
            raise ValueError("stream arrays differ in length")
        if n == 0:
            return 0, 0
        bad, max_units, requested_B = self._K.scan_stream(s.issue_ns, s.addr_B, s.size_B, self.unit_B, state.horizon_ns)
        if bad >= 0:
            if s.size_B[bad] < 1 or s.addr_B[bad] < 0:
                raise ValueError("sizes must be >= 1 B and addresses >= 0")
            raise ValueError("issue_ns must not decrease (within a stream and across serve calls)")
        return int(max_units), int(requested_B)

    def _serve_reference(self, s: AccessStream, state: MediaState, ip: np.ndarray, fp: np.ndarray,
                         read_queue: int = 1, write_queue: int = 1):
        K = self._K
        pending = {int(k): float(t) for k, t in zip(state.keys, state.times, strict=True) if k != X.EMPTY}
        lines = [state.buffered_units(m) if self.params.wcb_entries else [] for m in range(state.modules)]
        banks = range(state.pq_len.shape[1])
        posted = [[state.posted_writes(m, b) for b in banks] for m in range(state.modules)]
        start, complete, ack, c = K.serve_reference(
            s.issue_ns, s.addr_B, s.size_B, s.is_write, fp, ip, pending, state.bank_free,
            state.cmd_free, state.last_line, state.wq_ring, state.wq_head, lines, state.wear_count,
            posted, state.pq_g.shape[2], (state.link_free, state.link_at), [X.NO_TIME] * read_queue,
            [X.NO_TIME] * write_queue)
        state.keys, state.times = K.new_table(state.keys.shape[0])
        state.used = np.zeros(1, np.int64)
        state.pq_len[:] = 0  # refilled from ``posted`` below, once the table holds their units
        state._rebuild(-math.inf, len(pending))
        for g, t in pending.items():
            K.pend_insert(state.keys, state.times, state.used, np.int64(g), float(t), -math.inf)
        state.wcb_tag[:] = X.EMPTY
        for m, ls in enumerate(lines):
            for e, g in enumerate(ls):
                state.wcb_tag[m, e] = g
                state.wcb_stamp[m, e] = state.stamp[0]
                state.stamp[0] += 1
        state.wcb_filt = K.wcb_filter(state.wcb_tag)
        state.wcb_prev, state.wcb_next, state.wcb_lru = K.lru_state(state.wcb_tag, state.wcb_stamp)
        state.wq_ring.sort(axis=1)  # the kernel keeps each write queue as a sorted ring from wq_head
        state.wq_head[:] = 0
        state.pq_head[:] = 0
        for m, per_bank in enumerate(posted):
            for b, q in enumerate(per_bank):
                state.pq_len[m, b] = len(q)
                for k, (g, r) in enumerate(q):
                    state.pq_g[m, b, k], state.pq_r[m, b, k] = g, r
                state.pq_hr[m, b] = q[0][1] if q else math.inf
            state.pq_n[m] = sum(map(len, per_bank))
        K.reslot_posted(state.keys, state.pq_g, state.pq_s, state.pq_head, state.pq_len)
        return start, complete, ack, c

    def drain(self, state: MediaState, at_ns: float) -> DrainResult:
        """Start every posted write (read priority: they start when their bank is free, whatever
        ``at_ns``), then write every buffered unit back (LRU first per module) from ``at_ns``;
        empties queues and buffers. Posted writes' bytes were counted by the ``serve`` that
        posted them."""
        p = self.params
        K = self._K
        ip = self._ip(state, 1)
        end = max(float(at_ns), K.flush_posted(self._fp, ip, state.bank_free, state.times,
                                               self._wear(state), state.pq_g, state.pq_s, state.pq_r, state.pq_head,
                                               state.pq_len, state.pq_n, state.pq_hr))
        if p.wcb_entries == 0:
            return DrainResult(end, 0.0, 0.0)
        lines = [state.buffered_units(m) for m in range(state.modules)]
        state._rebuild(float(at_ns), 2 * sum(map(len, lines)) + 2)
        written = 0
        for m, ls in enumerate(lines):
            for g in ls:
                local = K._locate(g * self.unit_B, self.unit_B, state.interleave_B, state.modules, self.banks)
                slot = K.pend_slot(state.keys, state.times, state.used, np.int64(g), float(at_ns))
                done = K._media_write(m, local[2], max(float(at_ns), float(state.times[slot])), slot, self._fp, ip,
                                      state.bank_free, state.times, self._wear(state))
                end = max(end, done)
                written += self.unit_B
        state.wcb_tag[:] = X.EMPTY
        state.wcb_filt[:] = 0
        state.wcb_prev, state.wcb_next, state.wcb_lru = K.lru_state(state.wcb_tag, state.wcb_stamp)
        state.horizon_ns = max(state.horizon_ns, float(at_ns))
        return DrainResult(end, float(written), self.traffic_energy_J(0.0, written, 0.0))

    def module_of(self, addr_B: int, modules: int, interleave_B: int) -> int:
        """Module holding byte ``addr_B``."""
        return (int(addr_B) // interleave_B) % modules


def _check(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")


def build(family: str):
    """The ``build`` callable of a media family."""
    return lambda params: MediaModel(family, params)


def energy(model: MediaModel, use: Usage) -> Energy:
    """The energy hook of the media families: background power of ``use.count`` modules, traffic
    energy of ``use.read_B`` / ``use.write_B`` media bytes and ``use.requested_B`` interface bytes."""
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count),
                  dynamic_J=model.traffic_energy_J(use.read_B, use.write_B, use.requested_B))
