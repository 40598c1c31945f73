"""The pending table's buffer pool (cxlsim/devices/memory/media/media_pending.py).

What must hold: a large table comes back empty whoever used its buffer before; a buffer is handed
out again only when nothing refers to it any more (no table, no slice of one); the pool stays
within its byte budget.
"""

from __future__ import annotations

import gc

import numpy as np

from cxlsim.devices.memory.media import media_pending as mp
from cxlsim.devices.memory.media.media_index import EMPTY, NO_TIME


def _owner(keys: np.ndarray) -> np.ndarray:
    return keys.base


def test_a_dropped_table_is_reused_and_comes_back_empty(monkeypatch):
    monkeypatch.setattr(mp, "_POOL", [])
    cap = mp.POOL_MIN_SLOTS
    keys, times = mp.new_table(cap)
    first = id(_owner(keys))
    assert _owner(times) is _owner(keys)  # both tables hold the buffer itself as their base
    keys[:7] = 42
    times[:7] = 1.5
    del keys, times
    gc.collect()
    keys, times = mp.new_table(cap)
    assert id(_owner(keys)) == first  # the pooled buffer, not a fresh one
    assert (keys == EMPTY).all() and (times == NO_TIME).all()


def test_a_buffer_in_use_is_not_handed_out(monkeypatch):
    monkeypatch.setattr(mp, "_POOL", [])
    cap = mp.POOL_MIN_SLOTS
    keys, times = mp.new_table(cap)
    part = times[5:9]  # a slice outliving its table keeps the buffer in use
    del keys, times
    gc.collect()
    other_keys, other_times = mp.new_table(cap)
    other_times[:] = 3.0
    assert (part == NO_TIME).all()
    assert not np.shares_memory(part, other_times)


def test_the_pool_keeps_within_its_budget(monkeypatch):
    cap = mp.POOL_MIN_SLOTS
    table_B = cap * 16
    monkeypatch.setattr(mp, "_POOL", [])
    monkeypatch.setattr(mp, "POOL_MAX_B", 2 * table_B)
    held = [mp.new_table(cap) for _ in range(3)]  # the third is past the budget: not pooled
    assert len(mp._POOL) == 2
    del held
    gc.collect()
    big = mp.new_table(2 * cap)  # room made by dropping the free ones, oldest first
    assert sum(b.nbytes for b in mp._POOL) <= mp.POOL_MAX_B
    assert any(b is _owner(big[0]) for b in mp._POOL)
    small = mp.new_table(cap // 2)  # below the pooled size: never pooled
    assert all(b is not _owner(small[0]) for b in mp._POOL)


def test_a_forked_worker_starts_with_an_empty_pool(monkeypatch):
    """A worker forked from a process with pooled buffers allocates its own (writing into the
    parent's would copy every page on write)."""
    import multiprocessing as mpc

    if "fork" not in mpc.get_all_start_methods():
        return
    monkeypatch.setattr(mp, "_POOL", [])
    keys, _ = mp.new_table(mp.POOL_MIN_SLOTS)
    assert mp._POOL
    with mpc.get_context("fork").Pool(1) as pool:
        assert pool.apply(_pool_size) == 0


def _pool_size() -> int:
    return len(mp._POOL)
