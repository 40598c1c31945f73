"""The host's last-level cache in front of its table memory (host-engine systems).

Contract: :class:`HostLlc` ``(cpu, data_base_B, row_B, data_end_B)`` holds the state of a
set-associative, true-LRU, write-back write-allocate cache of ``cpu.llc_lines`` lines of
``cache_line_B`` bytes in ``llc_ways_count`` ways: the kernel of :mod:`cxlsim.kernels.vector_cache`.
:meth:`HostLlc.access` ``(addr_B, write)`` takes the rows at ``addr_B`` (``row_B`` each, in the
order the host touches them), touches each row's lines in order (a write marks them dirty: the
update's read-modify-write allocates and dirties the lines, their write-back waits for an eviction)
and returns an :class:`LlcAccess`: which rows hit whole, how many lines were touched and hit, the
lines of the rows that hit (served by the cache) and the dirty lines it evicted, as write requests
to the memory below.

Placement of lines in sets. Where rows are whole lines from a line boundary (``row_B`` a multiple
of ``cache_line_B``: every shipped workload), a row's ``k = row_B / cache_line_B`` lines go to ``k``
sibling sets at the same place (as consecutive lines go to consecutive sets of a slice, the set
index being the address bits above the line offset), and the host always touches a row whole: the
``k`` sibling sets then see the same sequence of rows and hold the same rows in the same order, so
the cache is kept once per row (keys: row ids; ``sets / k`` sets of ``ways`` rows), with the same
hits and evictions as a line-keyed cache with that placement at ``1/k`` of the kernel's work (a
cache of fewer sets than ``k``, or not a multiple of ``k``, holds a row's lines in one set:
``ways / k`` rows a set). A row
hits or misses whole, and its dirty lines are evicted together (one request of ``row_B``). Rows
that share or straddle lines (``row_B`` not a multiple of the line) are kept per line (keys: line
ids from the data region's first line, hashed onto sets); a row with a missing line is read from
below whole, and the dirty lines one access evicts are written back one request per row, in
address order (named approximations).

The cache has no notion of time: a batch's lookup, update and checkpoint reads touch it in the
order the steps start, each op whole. The set of a key is the kernel's multiplicative hash, where
Intel hashes addresses onto slices; replacement is true LRU, where Intel's is an adaptive pseudo-LRU
(named approximations, docs/devices-compute.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cxlsim.errors import InputError
from cxlsim.kernels.vector_cache import MAX_ROW, cache_access, new_cache


@dataclass(frozen=True)
class LlcAccess:
    """What one access of rows did (module docstring)."""

    row_hit: np.ndarray  # bool per row: every line of the row hit
    lines: int  # lines touched
    hit_lines: int  # of which hit
    served_lines: int  # lines of the rows that hit whole (served by the cache)
    wb_addr_B: np.ndarray  # write-back requests to the memory below: address
    wb_size_B: np.ndarray  # and bytes (whole dirty lines of one row)


class HostLlc:
    """State and line bookkeeping of the host's last-level cache (module docstring)."""

    def __init__(self, cpu, data_base_B: int, row_B: int, data_end_B: int) -> None:
        p = cpu.params
        self.cpu = cpu
        self.line_B = int(p.cache_line_B)
        self.row_B = int(row_B)
        self.base_B = int(data_base_B)
        ways = int(p.llc_ways_count)
        #: rows of whole lines from a line boundary: a row's lines sit in sibling sets (module docstring),
        #: so the cache is kept per row, ``lines_per_row`` lines an entry
        k = self.row_B // self.line_B
        line_sets = max(1, cpu.llc_lines // ways)
        if line_sets % max(1, k) == 0:  # a row's k lines in k sibling sets
            row_sets, row_ways = line_sets // max(1, k), ways
        else:  # fewer sets than lines a row: a row's lines in one set, ways / k rows of them
            row_sets, row_ways = line_sets, ways // max(1, k)
        self.whole_lines = (self.row_B % self.line_B == 0 and self.base_B % self.line_B == 0 and row_ways > 0
                            and (line_sets % k == 0 or ways % k == 0))
        self.lines_per_row = k if self.whole_lines else 0
        self.base_line = self.base_B // self.line_B
        if self.whole_lines:
            last = (int(data_end_B) - self.base_B) // self.row_B - 1
            entries, ways = row_sets * row_ways, row_ways
        else:
            last = (int(data_end_B) - 1) // self.line_B - self.base_line
            entries = cpu.llc_lines
        if last > MAX_ROW:
            raise InputError(f"host LLC: the data region holds {last + 1:,} cache entries; the cache's kernel keys at "
                             f"most {MAX_ROW + 1:,} (devices.host_cpu.params.llc_capacity_B=0 runs without it)")
        self.state = new_cache(max(1, entries), ways)

    def lines_of(self, addr_B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Line ids of the rows at ``addr_B`` in order, and each row's first position in them."""
        first = addr_B // self.line_B
        count = (addr_B + self.row_B - 1) // self.line_B - first + 1
        starts = np.zeros(addr_B.size, np.int64)
        np.cumsum(count[:-1], out=starts[1:])
        keys = np.repeat(first - starts, count) + np.arange(int(count.sum()))
        return keys - self.base_line, starts

    def access(self, addr_B: np.ndarray, write: bool, rows: np.ndarray | None = None) -> LlcAccess:
        """Touch the rows at ``addr_B`` (module docstring); ``rows``: their row numbers, when the
        caller has them (``addr_B = data_base_B + rows × row_B``), saves recomputing them."""
        addr_B = np.asarray(addr_B, np.int64)
        if addr_B.size == 0:
            empty = np.zeros(0, np.int64)
            return LlcAccess(np.zeros(0, bool), 0, 0, 0, empty, empty)
        if self.whole_lines:
            keys = (addr_B - self.base_B) // self.row_B if rows is None else rows
            hit, evicted = cache_access(keys, write, *self.state)
            k = self.lines_per_row
            hits = int(np.count_nonzero(hit)) * k
            wb_addr = self.base_B + evicted * self.row_B
            return LlcAccess(hit, addr_B.size * k, hits, hits, wb_addr, np.full(wb_addr.size, self.row_B, np.int64))
        keys, starts = self.lines_of(addr_B)
        hit, evicted = cache_access(keys, write, *self.state)
        row_hit = np.logical_and.reduceat(hit, starts)
        row_lines = np.diff(np.append(starts, keys.size))
        wb_addr, wb_size = self._writebacks(evicted)
        return LlcAccess(row_hit, int(keys.size), int(np.count_nonzero(hit)), int(row_lines[row_hit].sum()),
                         wb_addr, wb_size)

    def _writebacks(self, evicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evicted dirty line ids as write requests: the lines of one row as one request."""
        if evicted.size == 0:
            return evicted, evicted
        addr = np.sort((evicted + self.base_line) * self.line_B)
        row = (addr - self.base_B) // self.row_B
        new = np.ones(addr.size, bool)
        new[1:] = row[1:] != row[:-1]
        idx = np.flatnonzero(new)
        counts = np.diff(np.append(idx, addr.size))
        return addr[idx], counts * self.line_B
