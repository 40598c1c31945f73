"""Layout of the media kernel's vectors and its sentinels: plain constants, no numba.

:mod:`cxlsim.devices.memory.media.media` builds the kernel's parameter vectors and reads its counters with these
indices without importing the kernel (:mod:`cxlsim.devices.memory.media.media_kernel`, which needs numba): the
kernel is imported only when a media model is built.
"""

from __future__ import annotations

import math

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
F_PATH_REQ = 12  # with I_PATH: a request's time from the requester to the modules (fabric), ns
F_PATH_RESP = 13  # with I_PATH: a response's time back to the requester (read data, write completion), ns
F_PATH_PER_B = 14  # with I_PATH: serialisation of the data an access carries on the path, ns per B
N_FP = 15

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
I_PATH = 17  # 1: the requester reaches the modules across a path (F_PATH_*): its slots are held for it
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

EMPTY = -1  # an unused hash-table slot / buffer entry
NO_TIME = -math.inf  # "no pending write" / "never"
QUEUED = math.inf  # pending-until of a unit whose media write is posted and not yet started
MAX_LOAD_FRACTION = 0.5  # the kernel stops when the pending table is this full
