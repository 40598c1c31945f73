"""Recovery after a power failure: read only the durable image, decide what to restore, and charge
the time through the device models (docs/design.md#crash-and-recovery).

Recovery sees the log region's flags, logs and records and the data region — nothing volatile (GPU
memory, caches and scratchpads are gone). It returns a :class:`RecoveryPlan`: the batch ``m`` whose
state it rebuilds, the restores to apply onto the base (undo: the data region; redo: the snapshot),
in order, and where the MLP parameters come from. Applying the plan is the checker's job
(:mod:`cxlsim.crash.checker`), so the same plan can be checked fast or materialised.

Each persistence scheme plans its own recovery
(:meth:`~cxlsim.axes.persistence.Persistence.plan`, in its module: redo replays committed records
onto the snapshot, undo restores flagged embedding logs onto the data region, cnr applies committed
increments); :func:`plan` asks the protocol's scheme. Shared here: :class:`RecoveryPlan`,
:func:`committed_records` (the consecutive valid commit flags of a record-based scheme) and
:class:`RecoveryCost`.

Recovery time: the media model's analytic bound (:meth:`~cxlsim.devices.memory.media.media.MediaModel.bound_ns`)
for each phase — read flags, read logs/records (and the snapshot) in bursts, write the restored rows
(random row writes) or the rebuilt data region — summed, phases being serial.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.protocols import Protocol, line_align, read_flag
from cxlsim.systems import axes
from cxlsim.systems.graph import DeviceGraph


@dataclass
class RecoveryPlan:
    m: int  # recovered batch (−1: initial state); meaningless when error is set
    restores: list[tuple[int, int, int, int]] = field(default_factory=list)  # (ids addr, vals addr, rows, region id)
    #: where the MLP parameters come from: (image address, first parameter, end parameter, per chunk
    #: the batch after which recovery says it was copied), one part per device shard
    mlp_parts: list[tuple[int, int, int, np.ndarray]] = field(default_factory=list)
    used: list[str] = field(default_factory=list)  # what recovery read, for reports
    error: str | None = None


def plan(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    """Recovery from the durable image ``img``: the plan of ``proto``'s persistence scheme."""
    return axes.implementation("persistence", proto.kind).plan(img, proto)


def committed_records(img: np.ndarray, proto: Protocol, batches, what: str) -> tuple[list[tuple], str | None]:
    """The records ``0, 1, …`` whose commit flags are set, in order, until the first unset one:
    ``(ids_at, vals_at, nrows, region)`` each, record ``j`` expected to hold batch ``batches[j]``;
    or a corrupt flag's description (a flag naming another batch, base or an impossible size)."""
    restores = []
    for j, b_j in enumerate(batches):
        f = read_flag(img, proto.record_flag_addr(j))
        if f is None:
            break
        b, nrows, base = f[0], f[1], f[2]
        reg = proto.records[j]
        if b != b_j or base != reg.base or nrows < 1 or line_align(nrows * 8) + line_align(nrows * proto.row_B) + proto.mlp_n * 4 > reg.size:
            return restores, f"corrupt commit flag of {what} {j}: batch {b}, {nrows} rows at {base}"
        ids_at, vals_at, _ = proto.record_parts(j, nrows)
        restores.append((ids_at, vals_at, nrows, reg.rid))
    return restores, None


class RecoveryCost:
    """Recovery time (ns) of a plan, from the media models of the log and data regions."""

    def __init__(self, devices: DeviceGraph, proto: Protocol) -> None:
        p = devices.config.pipeline
        self.proto = proto
        self.log = self._model(devices, axes.of(p, "persistence").checkpoint_role(p))
        self.data = self._model(devices, p.tables_on)
        self._memo: dict[tuple, float] = {}

    @staticmethod
    def _model(devices: DeviceGraph, role: str):
        """``role``'s media model from the system's device graph, and its configured modules."""
        return devices[role], devices.config.role(role).count

    @staticmethod
    def _t(mem, op: str, n: int, size_B: int) -> float:
        model, modules = mem
        return model.bound_ns(op, int(n), int(size_B), modules) if n > 0 else 0.0

    def _bursts(self, mem, op: str, nbytes: int) -> float:
        full, rest = divmod(int(nbytes), im.BURST_B)
        return self._t(mem, op, full, im.BURST_B) + self._t(mem, op, 1 if rest else 0, rest)

    def time_ns(self, rp: RecoveryPlan) -> float:
        key = (rp.m, tuple((r[2], r[3]) for r in rp.restores), tuple(p[1] for p in rp.mlp_parts))
        if key not in self._memo:
            self._memo[key] = self._compute(rp)
        return self._memo[key]

    def _compute(self, rp: RecoveryPlan) -> float:
        """Phases in series on each device; several CXL-MEMs recover side by side (the slowest
        one's time), each with its own modules."""
        pr = self.proto
        if not pr.mems:  # one log (a snapshot and records): every flag, the rebuild, the records
            return self._device(min(len(rp.restores) + 1, pr.n_batches), rp.restores, pr.mlp_n * 4, True)
        return max(self._device(d.flags.size // im.LINE_B, [r for r in rp.restores if pr.mem_of_region(r[3]) == d.index],
                                (part[2] - part[1]) * 4, False) for d, part in zip(pr.mems, rp.mlp_parts, strict=True))

    def _device(self, flags: int, restores: list, mlp_B: int, rebuild: bool) -> float:
        pr, row_B = self.proto, self.proto.row_B
        t = self._t(self.log, "read", flags, im.LINE_B)
        if rebuild:  # redo: rebuild the data region from the snapshot
            t += self._bursts(self.log, "read", pr.data_B) + self._bursts(self.data, "write", pr.data_B)
        for r in restores:
            t += self._bursts(self.log, "read", r[2] * (8 + row_B))
            t += self._t(self.data, "write", r[2], row_B)
        return t + self._bursts(self.log, "read", mlp_B)
