"""DCOH line-state directory for CXL.cache: MESI states over line ids, as numpy arrays.

A device coherency engine (DCOH) tracks the lines its device caches from another device's memory
(their *home*). The state lives in a :class:`DcohState` (one ``uint8`` per line id), never in
per-line Python objects; every operation takes an array of line ids (duplicates allowed, counted
once), updates the states in place and returns a :class:`Transitions` summary that the timing model
(:class:`cxlsim.devices.fabric.cxl_protocol.CxlProtocol`) turns into time, bytes and energy.

Transitions (requests by the caching device, snoops by the home):

=================  ======================  ==========================================
operation          from → to               traffic
=================  ======================  ==========================================
read_shared        I → S; S/E/M hit        I lines fetch data from home (misses)
write              I → M, S → M, E → M     I: ownership + data (misses; no data if a
                                           full-line write); S: ownership (upgrades)
snoop_invalidate   M → I, S/E → I          M lines write back data (dirty)
snoop_shared       M → S, E → S            M lines write back data (dirty)
flush              M → E (keep) or I       only M lines write back data (dirty)
=================  ======================  ==========================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INVALID, SHARED, EXCLUSIVE, MODIFIED = 0, 1, 2, 3
STATE_NAMES = ("I", "S", "E", "M")


@dataclass(frozen=True)
class Transitions:
    """What one DCOH operation did, in lines (the timing model charges them)."""

    lines: int  # distinct lines addressed
    misses: int = 0  # lines that fetch data from their home
    upgrades: int = 0  # lines that gain ownership without data (S → M)
    changed: int = 0  # lines whose state changed
    dirty: int = 0  # dirty lines written back to their home


class DcohState:
    """MESI state of ``n_lines`` line ids (all Invalid at start)."""

    def __init__(self, n_lines: int) -> None:
        if n_lines < 0:
            raise ValueError("n_lines must be >= 0")
        self.state = np.zeros(int(n_lines), dtype=np.uint8)

    def __len__(self) -> int:
        return len(self.state)

    def _ids(self, lines: np.ndarray | list[int] | None) -> np.ndarray:
        if lines is None:
            return np.arange(len(self.state))
        ids = np.unique(np.asarray(lines, dtype=np.int64))
        if ids.size and (ids[0] < 0 or ids[-1] >= len(self.state)):
            raise IndexError(f"line ids must lie in 0..{len(self.state) - 1}")
        return ids

    def counts(self) -> dict[str, int]:
        """Number of lines in each state, by name."""
        c = np.bincount(self.state, minlength=4)
        return {name: int(c[i]) for i, name in enumerate(STATE_NAMES)}

    def read_shared(self, lines) -> Transitions:
        """The device reads ``lines``: Invalid lines are fetched and become Shared."""
        ids = self._ids(lines)
        s = self.state[ids]
        miss = s == INVALID
        self.state[ids[miss]] = SHARED
        n = int(miss.sum())
        return Transitions(len(ids), misses=n, changed=n)

    def write(self, lines, full_line: bool = True) -> Transitions:
        """The device writes ``lines``: all become Modified.

        Invalid lines request ownership (with data unless ``full_line``: then no fetch, but the
        ownership request still counts as a miss); Shared lines upgrade; Exclusive lines change
        silently.
        """
        ids = self._ids(lines)
        s = self.state[ids]
        inv, shared = s == INVALID, s == SHARED
        changed = int((s != MODIFIED).sum())
        self.state[ids] = MODIFIED
        return Transitions(len(ids), misses=int(inv.sum()), upgrades=int(shared.sum()), changed=changed)

    def snoop_invalidate(self, lines) -> Transitions:
        """The home invalidates ``lines`` (another agent wants ownership); M lines write back."""
        ids = self._ids(lines)
        s = self.state[ids]
        dirty = int((s == MODIFIED).sum())
        changed = int((s != INVALID).sum())
        self.state[ids] = INVALID
        return Transitions(len(ids), changed=changed, dirty=dirty)

    def snoop_shared(self, lines) -> Transitions:
        """The home asks for ``lines`` to read them: M lines write back; M and E become S."""
        ids = self._ids(lines)
        s = self.state[ids]
        owned = (s == MODIFIED) | (s == EXCLUSIVE)
        dirty = int((s == MODIFIED).sum())
        self.state[ids[owned]] = SHARED
        return Transitions(len(ids), changed=int(owned.sum()), dirty=dirty)

    def flush(self, lines=None, keep: bool = True) -> Transitions:
        """Write back the dirty lines among ``lines`` (all if None) to their home.

        Only Modified lines move data; they become Exclusive (clean, still cached) if ``keep``,
        else Invalid. Other lines are untouched.
        """
        ids = self._ids(lines)
        m = ids[self.state[ids] == MODIFIED]
        self.state[m] = EXCLUSIVE if keep else INVALID
        return Transitions(len(ids), changed=len(m), dirty=len(m))
