"""What each measured batch did, as the energy model needs it: time, busy lanes, bytes, operations.

Contract: :func:`batch_activity` reads a finished simulation (executor records, the machine's
per-batch media and link counters, the batch's index stream) and returns one
:class:`BatchActivity` per batch number asked for. Attribution: a batch's *wall time* is from its
``begin`` to the next batch's; its *work* (busy time, bytes, operations) is that of the ops tagged
with its number, wherever they ran (with relaxed lookup, batch n+1's lookup runs inside batch n's
window). In steady state both give the same average; warm-up batches are excluded by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cxlsim.systems.machine import Memory

#: Steps that keep every host core busy when they run on ``host_cpu``: the embedding operations and
#: the host's redo copy issue their memory streams from every core (the timing model gives them
#: ``cores × line_fill_buffers`` outstanding requests). Other host steps (configuration, the
#: software data movement's memcpy, launch and synchronisation calls) hold one core.
ALL_CORE_STEPS = frozenset({"lookup", "update", "redo"})


@dataclass(frozen=True)
class BatchActivity:
    """One batch's activity (units: ns, bytes, counts)."""

    batch: int
    time_ns: float
    busy_ns: dict[str, float]  # lane -> busy time of this batch's ops on it
    cpu_core_ns: float  # host busy time weighted by the share of cores busy
    media: dict[str, dict[str, float]]  # memory role -> Memory.TRAFFIC counters
    link_B: dict[str, float]  # path -> bytes (TrainingMachine._count_link)
    n_indices: int
    n_unique: int
    n_shared_lookups: int
    ops: frozenset[str] = field(default_factory=frozenset)  # steps this batch ran


def memories(machine: Any) -> dict[str, Memory]:
    """The machine's :class:`Memory` objects by role (one per role)."""
    out: dict[str, Memory] = {}
    for value in vars(machine).values():
        if isinstance(value, Memory):
            out.setdefault(value.role.role, value)
    return out


def batch_activity(result: Any, batches: range | list[int]) -> list[BatchActivity]:
    """Activity of each batch in ``batches`` of a :class:`~cxlsim.api.RunResult`."""
    ex, machine = result.executor, result.machine
    cores = machine.cpu.params.cores_count
    threads = min(machine.cpu.params.threads_count, cores)
    by_batch: dict[int, list] = {}
    for (name, n), rec in ex.records.items():
        by_batch.setdefault(n, []).append((name, rec))
    mems = memories(machine)
    zero = dict.fromkeys(Memory.TRAFFIC, 0.0)
    paths = {path for (_, path) in machine.link_B}
    out = []
    for n in batches:
        t0, t1 = result.batch_span(n)
        busy: dict[str, float] = {}
        core_ns = 0.0
        for name, rec in by_batch.get(n, []):
            d = rec.end_ns - rec.start_ns
            lane = rec.op.lane
            busy[lane] = busy.get(lane, 0.0) + d
            if lane == "host_cpu":
                core_ns += d * (threads if name in ALL_CORE_STEPS else 1) / cores
        b = machine.streams.batch(n)
        out.append(BatchActivity(
            batch=n,
            time_ns=t1 - t0,
            busy_ns=busy,
            cpu_core_ns=core_ns,
            media={role: dict(m.by_batch.get(n, zero)) for role, m in mems.items()},
            link_B={path: machine.link_B.get((n, path), 0.0) for path in sorted(paths)},
            n_indices=b.n_indices,
            n_unique=b.n_unique,
            n_shared_lookups=b.n_shared_lookups,
            ops=frozenset(name for name, _ in by_batch.get(n, [])),
        ))
    return out
