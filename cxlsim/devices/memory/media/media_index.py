"""Layout of the media kernel's vectors and its sentinels: plain constants, no numba.

:mod:`cxlsim.devices.memory.media.media` builds the kernel's parameter vectors and reads its counters with these
indices without importing the kernel (:mod:`cxlsim.devices.memory.media.media_kernel`, which needs numba): the
kernel is imported only when a media model is built.
"""

from __future__ import annotations

import math

import numpy as np

# --- indices into the float parameter vector ``fp`` -------------------------------------------
F_OCC_R = 0  # bank occupancy of one unit read, ns
F_OCC_W = 1  # bank occupancy of one unit write, ns
F_D_SEQ = 2  # read delay after occupancy when sequential, ns
F_D_RAND = 3  # read delay after occupancy when random (also RMW fill reads), ns
F_LAT_W = 4  # write acknowledgement latency, ns
F_MERGE = 5  # time to merge a write into the write-combining buffer, ns
F_WCB_READ = 6  # latency of a read served from the write-combining buffer, ns
F_CMD_R = 7  # command-processor occupancy per read access per module, ns (0: no limit)
F_CMD_W = 8  # command-processor occupancy per write access per module, ns
F_WEAR_STALL = 9  # wear-levelling stall, ns
F_BUS_R = 10  # data-bus time per unit read, ns, taken on the command processor (0: no bus of its own)
F_BUS_W = 11  # data-bus time per unit written, ns
# with I_PATH (a requester across a fabric path, docs/devices-fabric.md "Crossing"): pure delays, ns
F_PATH_REQ = 12  # a read request from the requester's link server to the device (latencies, lone flit)
F_PATH_REQ_W = 13  # as F_PATH_REQ for a write request (its data message's lone flit)
F_PATH_DEV = 14  # the device controller's protocol time, after its queue entry
F_PATH_RESP = 15  # a read's data from the link server back to the requester (latencies, lone flit, protocol)
F_PATH_RESP_W = 16  # as F_PATH_RESP for a write's completion
# ... and the link directions' servers: occupancy per 64 B line of an access, ns
F_UP_HDR = 17  # a read request's header
F_UP_DATA = 18  # a write's header and data
F_DN_HDR = 19  # a write's completion
F_DN_DATA = 20  # a read's data and header
N_FP = 21
PATH_LINE_B = 64  # the fabric's line: an access of n bytes is ceil(n / 64) messages each way
#: a crossing's link state (:func:`link_state`): ``link_free``, each direction's server free time
#: [0, 1] and latest arrival [2, 3], then per direction ``d`` from ``LINK_GAP0 + d * LINK_DIR`` the
#: horizon (the end of the last idle gap dropped: the server's history before it is unknown),
#: LINK_GAPS places for gap starts and LINK_GAPS for gap ends (ns); ``link_at``, per direction the
#: first kept gap's place [2d] and the place after the last [2d + 1]: the server's idle gaps that a
#: later arrival of the stream may use, in time order (:func:`link_gaps`).
#: a modelling resolution, not hardware (named): how much of a direction's idle history a stream keeps;
#: on exponential arrivals with up to 300 ns of spread at 30-95 % load, 128 gave the mean waits that
#: 256 and 512 did, within 0.5 % (docs/devices-fabric.md, the crossing's link servers)
LINK_GAPS = 128
LINK_GAP0 = 4
LINK_DIR = 1 + 2 * LINK_GAPS
LINK_STATE = LINK_GAP0 + 2 * LINK_DIR


def link_state() -> tuple[np.ndarray, np.ndarray]:
    """A crossing's link state with both servers idle and no history: ``(link_free, link_at)``."""
    return np.full(LINK_STATE, NO_TIME), np.zeros(4, np.int64)


def link_gaps(link_free, link_at, d: int) -> tuple[float, list[list[float]]]:
    """Direction ``d``'s horizon and kept idle gaps ``[start, end]`` (ns), in time order."""
    base = LINK_GAP0 + d * LINK_DIR
    lo, hi = base + 1, base + 1 + LINK_GAPS
    return float(link_free[base]), [[float(link_free[lo + j]), float(link_free[hi + j])]
                                    for j in range(int(link_at[2 * d]), int(link_at[2 * d + 1]))]


def keep_link_gaps(link_free, link_at, d: int, horizon: float, gaps: list[list[float]]) -> None:
    """Store direction ``d``'s horizon and gaps (at most LINK_GAPS), the first at place 0."""
    base = LINK_GAP0 + d * LINK_DIR
    link_free[base] = horizon
    link_at[2 * d], link_at[2 * d + 1] = 0, len(gaps)
    for j, (lo, hi) in enumerate(gaps):
        link_free[base + 1 + j], link_free[base + 1 + LINK_GAPS + j] = lo, hi


def new_link_stream(link_free, link_at) -> None:
    """Before a stream crosses: its early messages fill only the idle time its own stream leaves
    (the gaps of earlier streams are dropped, the horizon set at their latest arrival)."""
    for d in (0, 1):
        keep_link_gaps(link_free, link_at, d, float(link_free[2 + d]), [])


# --- indices into the integer parameter vector ``ip`` -----------------------------------------
I_UNIT = 0  # internal access unit, B
I_BANKS = 1  # parallel units (banks) per module
I_MODULES = 2  # modules interleaved
I_INTERLEAVE = 3  # interleaving granularity, B (a multiple of the unit)
I_WCB = 4  # write-combining buffer entries per module (0: none)
I_RMW = 5  # 1: partial writes missing the buffer read-modify-write the unit
I_FORWARD = 6  # 1: reads never wait for pending writes (controller forwarding)
I_POW2 = 7  # 1: unit, interleave, modules and banks are powers of two (shift/mask addressing);
#             2: all but the module count (shifts and one division by it); 0: divisions
I_WEAR_INTERVAL = 8  # media writes per module between wear-levelling stalls (0: off)
I_OUTSTANDING = 9  # requester's maximum accesses in flight
I_CHUNK_SH = 10  # log2(units per interleave chunk), when I_POW2
I_MOD_SH = 11  # log2(modules), when I_POW2
I_UNIT_SH = 12  # log2(unit), when I_POW2
I_PER_ACCESS = 13  # 1: write per-access start/complete/ack; 0: only the totals (outputs of length 1)
I_READ_PRIORITY = 14  # 1: media writes are posted and yield their bank to reads (write queue below)
I_WRITE_OUTSTANDING = 15  # >0: writes take slots of their own pool of this size, reads those of
#                           I_OUTSTANDING (split pools); 0: one pool of I_OUTSTANDING for all accesses
I_WRITE_AFTER_READS = 16  # 1 (split pools): a write starts no earlier than the data of the reads
#                           between it and the previous write in the stream is back (it carries it)
I_PATH = 17  # >0: the requester reaches the modules across a path (F_PATH_*): its slots are held for it;
#             1 + 2 (the device's read queue bounds) + 4 (its write queue bounds)
N_IP = 18

# --- indices into the counter vector -------------------------------------------------------------
C_MEDIA_R = 0  # media bytes read
C_MEDIA_W = 1  # media bytes written
C_RMW = 2  # read-modify-write fills
C_RAW = 3  # accesses that waited for a pending write
C_RAW_NS = 4  # total read-after-write wait, ns
C_HITS = 5  # units served by / merged into the write-combining buffer
C_ACK_MAX = 6  # latest acknowledgement (reads: data back), ns; -inf before any access
C_END_MAX = 7  # latest completion or acknowledgement, ns; -inf before any access
C_FILL = 8  # split pools: latest data-back time of the reads since the last write, ns (kernel state)
N_C = 9

# --- indices into the optional statistics vector (``serve(..., stats=...)``; kernel variant with it) --
# Every entry adds up across calls (a caller sums a run's streams into one vector), the most and
# the capacities excepted (kept as the largest); times ns. The kernel fills the queues' entries
# (write queue, posted writes, the crossing's device queues); the media model the rest, from the
# per-access results (:meth:`~cxlsim.devices.memory.media.media.MediaModel.serve`).
S_READS = 0  # reads served
S_READ_NS = 1  # sum of the reads' latencies: slot taken (start) to data back, ns
S_READ_MAX_NS = 2  # the longest read latency, ns
S_WRITES = 3  # writes served
S_WRITE_NS = 4  # sum of the writes' latencies: slot taken to acknowledgement, ns
S_WRITE_MAX_NS = 5  # the longest write latency, ns
S_SLOT_WAITS = 6  # accesses that found every requester slot taken (waited for one)
S_SLOT_HOLD_NS = 7  # sum of the requester slots' hold times (start to acknowledgement), ns
S_WQ_ENTRIES = 8  # write-queue entries taken (arrival order: one a module a write's media work needs)
S_WQ_HOLD_NS = 9  # sum of their hold times (acknowledged to media work done), ns
S_WQ_MAX = 10  # most entries of one module's write queue in use (the new one counted)
S_WQ_FULL = 11  # writes whose acknowledgement waited for a full write queue
S_PQ_SAMPLES = 12  # read priority: writes that posted media writes (samples of the posted queue)
S_PQ_SUM = 13  # sum of the module's posted writes seen after each of those posts
S_LINK_UP_NS = 14  # crossing: the link's request server busy, ns
S_LINK_DOWN_NS = 15  # crossing: the link's response server busy, ns
S_XR_HOLD_NS = 16  # crossing: device read-queue entries' hold time, ns
S_XR_MAX = 17  # crossing: most device read-queue entries in use (bounded queue; the new one counted)
S_XR_FULL = 18  # crossing: reads that waited for a device read-queue entry
S_XW_HOLD_NS = 19  # crossing: device write-queue entries' hold time, ns
S_XW_MAX = 20  # crossing: most device write-queue entries in use
S_XW_FULL = 21  # crossing: writes that waited for a device write-queue entry
S_PQ_MAX = 22  # read priority: most posted writes of one module seen
S_BANK_NS = 23  # bank busy time (media units read and written × their occupancy), ns (set by the model)
S_READ_B = 24  # bytes the reads asked for
S_WRITE_B = 25  # bytes the writes asked for
S_SLOTS = 26  # the requester's slots (reads + writes with split pools; the most seen)
S_WQ_CAP = 27  # a module's write queue entries (arrival order) or posted writes (read priority)
S_CROSSING = 28  # 1: some stream crossed the fabric
S_XR_CAP = 29  # crossing: the device's read queue, in accesses (0: unbounded)
S_XW_CAP = 30  # crossing: the device's write queue, in accesses (0: unbounded)
S_HIST = 31  # first histogram bucket: reads' latencies, then writes' (LAT_BUCKETS each)
#: latency histogram: each octave [2**e, 2**(e + 1)) ns split in LAT_PER_OCTAVE equal parts, bucket
#: e * LAT_PER_OCTAVE + part (:func:`lat_bucket_edges`); below LAT_PER_OCTAVE ns a bucket per whole ns;
#: the last bucket also holds everything above LAT_TOP_NS
LAT_SUB_BITS = 3
LAT_PER_OCTAVE = 1 << LAT_SUB_BITS
LAT_OCTAVES = 40  # up to 2**40 ns (about 18 minutes)
LAT_BUCKETS = LAT_PER_OCTAVE * LAT_OCTAVES
LAT_TOP_NS = float(2**LAT_OCTAVES)
N_S = S_HIST + 2 * LAT_BUCKETS

EMPTY = -1  # an unused hash-table slot / buffer entry
NO_TIME = -math.inf  # "no pending write" / "never"
QUEUED = math.inf  # pending-until of a unit whose media write is posted and not yet started
MAX_LOAD_FRACTION = 0.5  # the kernel stops when the pending table is this full


def lat_bucket_edges(k: int) -> tuple[float, float]:
    """The latencies (ns) histogram bucket ``k`` holds: ``[low, high)``."""
    if k < LAT_PER_OCTAVE:
        return float(k), float(k + 1)
    e, part = divmod(k, LAT_PER_OCTAVE)
    step = 2.0 ** e / LAT_PER_OCTAVE
    return 2.0 ** e + part * step, 2.0 ** e + (part + 1) * step
