"""The redo record's layout in its log ring (``cxlsim/axes/persistence/redo/scheme.py``).

The host writes a record in 4 KiB pieces from the record's base: the updated rows' pieces (the last
one padded, written whole), then the MLP part. On the SSD (4 KiB pages, read-modify-write of a
partial page, no write buffer) an MLP part starting mid-page made every one of its pieces straddle
two pages, each written partially: a page read and a page write per half piece, twice the MLP's
bytes read and written, in every batch whose record rows did not end on a page (RM3: n_unique not a
multiple of 32), so that batches whose rows happened to end on a page took 209 ms instead of 533.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

import cxlsim
from cxlsim.systems.activity import BatchLedger
from cxlsim.systems.machine import Memory

SMALL = {"batch_size": 16}


@pytest.fixture(scope="module")
def machine():
    # the host's LLC off: the record's rows are then the host's own (not read back through its
    # caches), so the SSD's traffic is the record's pages alone (tests/systems/test_host_llc.py holds the
    # record's reads through the LLC)
    r = cxlsim.simulate("ssd", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                        sets=[("pipeline.vector_cache_GB", 0.001), ("devices.host_cpu.params.llc_capacity_B", 0)])
    return r.machine


def _record_traffic(machine, n_unique: int):
    """Media traffic of writing one redo record of ``n_unique`` rows on an idle SSD."""
    side = machine.sides[0]
    fresh = Memory(machine.cfg.role("table_memory"), side.tables.model)
    saved_sides, saved_batch = machine.sides, machine.batch
    rows = np.arange(n_unique, dtype=np.int64) * 7  # distinct rows, ascending
    try:
        machine.sides = [dataclasses.replace(side, tables=fresh, ckpt_mem=fresh), *saved_sides[1:]]
        machine.batch = lambda n, m=0: SimpleNamespace(unique_rows=rows, n_unique=n_unique)
        machine.restore_ledger(BatchLedger())
        machine.persistence._redo(0, 0.0, None)
        return machine.ledger.traffic(fresh.key), machine.sides[0].mlp_B
    finally:
        machine.sides, machine.batch = saved_sides, saved_batch


@pytest.mark.parametrize("n_unique", [1000, 1024, 1031])
def test_ssd_redo_record_is_written_in_whole_pages(machine, n_unique):
    """Whatever the number of rows (128 B each: 1024 rows end on a page, 1000 and 1031 do not), every
    page of the record is written once and whole: no page is read back but the commit flag's."""
    assert (machine.pipe.persistence, machine.pipe.checkpoint_agent, machine.row_B) == ("redo", "host_cpu", 128)
    unit = machine.sides[0].tables.model.unit_B
    assert unit == 4096 and machine.agent.burst_B() == unit
    tr, mlp_B = _record_traffic(machine, n_unique)
    pages = math.ceil(n_unique * machine.row_B / unit) + math.ceil(mlp_B / unit)
    assert tr.media_read_B == unit  # the flag's line: a partial page, read first
    assert tr.media_write_B == (pages + 1) * unit
