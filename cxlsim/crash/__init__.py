"""Crash consistency: functional persistence, power-failure injection and verified recovery
(docs/design.md#persistence).

A functional twin of each persisting system (``ssd``, ``pmem``, ``pcie``, ``cxl-d``, ``cxl-b``,
``cxl``) runs real embedding tables and a flat MLP at a row scale, writes its persistence protocol
byte by byte as timed write events, is crashed at chosen instants (torn 64 B writes, fence-ordered
flags, volatile state lost), recovers from the durable image alone, and is checked bit-exactly
against the fault-free reference. With several CXL-MEMs (``topology.cxl_mems_count``, undo systems)
each device logs its own rows and MLP shard, and a batch is persistent only once every device's
logs are flagged (docs/design.md#scale-out). See docs/crash.md.

Modules, one job each:

- :mod:`~cxlsim.crash.options` — option defaults and the injectable bugs;
- :mod:`~cxlsim.crash.scale` — the functional row scale and the scaled workload;
- :mod:`~cxlsim.crash.sources` — seeded initial parameters and gradients;
- :mod:`~cxlsim.crash.reference` — the fault-free run, every state kept in one payload pool;
- :mod:`~cxlsim.crash.timeline` — step spans from the timing model; spreading writes over a span;
- :mod:`~cxlsim.crash.image` — address layout, write events and their segments;
- :mod:`~cxlsim.crash.protocols` — what the schemes' protocols share (layout record, flag lines,
  timed write events); each persistence scheme builds its own protocol and plans its own recovery
  in its module (:mod:`cxlsim.axes.persistence`: redo records, batch-aware undo logs, cnr);
- :mod:`~cxlsim.crash.recovery` — the recovery plan, the scheme's plan from the durable image,
  recovery time;
- :mod:`~cxlsim.crash.kernels` — numba kernels (apply writes, tear them, check restores);
- :mod:`~cxlsim.crash.checker` — one crash point: durable image, recovery, invariant;
- :mod:`~cxlsim.crash.points` — crash instants; :mod:`~cxlsim.crash.resume` — resume to the end;
- :mod:`~cxlsim.crash.run` — a campaign (``cxlsim crashtest``).
"""

from __future__ import annotations

__all__ = ["CrashReport", "CrashRun", "prepare", "replay", "run_points"]


def __getattr__(name: str):  # lazy: the command line imports cxlsim.crash.options without numba
    if name in __all__:
        from cxlsim.crash import run

        return getattr(run, name)
    raise AttributeError(name)
