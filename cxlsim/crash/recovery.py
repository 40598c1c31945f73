"""Recovery after a power failure: read only the durable image, decide what to restore, and charge
the time through the device models (SPEC §3.5).

Recovery sees the log region's flags, logs and records and the data region — nothing volatile (GPU
memory, caches and scratchpads are gone). It returns a :class:`RecoveryPlan`: the batch ``m`` whose
state it rebuilds, the restores to apply onto the base (undo: the data region; redo: the snapshot),
in order, and where the MLP parameters come from. Applying the plan is the checker's job
(:mod:`cxlsim.crash.checker`), so the same plan can be checked fast or materialised.

- undo: the newest flagged embedding log ``b`` is restored (undoing a possibly partial update
  ``b``): ``m = b − 1``; the MLP comes from the newest flagged MLP log. Without relaxation the MLP
  log must hold the parameters after ``m``; when it is not durable yet, the older embedding log
  ``b − 1`` (still present: logs are deleted only after both flags of the next batch) is restored
  too, so ``m = b − 2`` with the matching MLP log. No flagged embedding log: the data region is
  the initial model (``m = −1``).
- redo: the committed records ``0 … k`` (consecutive valid commit flags) are replayed onto the
  snapshot, ``m = k``; the MLP parameters are record ``k``'s.

Recovery time: the media model's analytic bound (:meth:`~cxlsim.devices.media.MediaModel.bound_ns`)
for each phase — read flags, read logs/records (and the snapshot) in bursts, write the restored rows
(random row writes) or the rebuilt data region — summed, phases being serial.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.protocols import Protocol, line_align, read_flag
from cxlsim.devices.registry import get_family
from cxlsim.systems.config import SystemConfig


@dataclass
class RecoveryPlan:
    m: int  # recovered batch (−1: initial state); meaningless when error is set
    restores: list[tuple[int, int, int, int]] = field(default_factory=list)  # (ids addr, vals addr, rows, region id)
    mlp_addr: int = 0
    claimed_mlp: np.ndarray | None = None  # per chunk: the batch after which recovery says it was copied
    used: list[str] = field(default_factory=list)  # what recovery read, for reports
    error: str | None = None

    @property
    def restored_rows(self) -> int:
        return sum(r[2] for r in self.restores)


def plan(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    return plan_undo(img, proto) if proto.kind == "undo" else plan_redo(img, proto)


def plan_undo(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    N = proto.n_batches
    emb: dict[int, tuple[int, int]] = {}  # batch -> (slot, rows)
    for s in (0, 1):
        f = read_flag(img, proto.emb_flag_addr(s))
        if f is None:
            continue
        b, nrows = f[0], f[1]
        if not (0 <= b < N and 0 < nrows <= proto.cap) or b in emb:
            return RecoveryPlan(-2, error=f"corrupt embedding-log flag in slot {s}: batch {b}, {nrows} rows")
        emb[b] = (s, nrows)
    mlps: dict[int, tuple[int, int, int]] = {}  # seq -> (slot, lo, hi)
    for s in (0, 1):
        f = read_flag(img, proto.mlp_flag_addr(s))
        if f is None:
            continue
        seq, lo, hi = f[0], f[1], f[2]
        if seq < 0 or seq % 2 != s or not (-1 <= lo <= hi < N) or seq in mlps:
            return RecoveryPlan(-2, error=f"corrupt MLP-log flag in slot {s}: log {seq}, batches {lo}..{hi}")
        mlps[seq] = (s, lo, hi)
    if not mlps:
        return RecoveryPlan(-2, error="no flagged MLP log: the MLP parameters are lost")
    mlp_seq = max(mlps)
    order: list[int] = []
    m = -1
    if emb:
        b = max(emb)
        order, m = [b], b - 1
        if not proto.relaxed_mlp and mlps[mlp_seq][2] != m:
            older = [q for q, v in mlps.items() if v[2] == b - 2]
            if b - 1 in emb and older:
                order, m, mlp_seq = [b, b - 1], b - 2, older[0]
    restores = []
    used = []
    for b in order:
        s, nrows = emb[b]
        restores.append((proto.emb_ids_addr(s), proto.emb_vals_addr(s), nrows, proto.emb_slot[s].rid))
        used.append(f"emb_log {b} (slot {s}, {nrows} rows)")
    s = mlps[mlp_seq][0]
    ct = proto.chunk_table[s]
    claimed = img[ct.base:ct.base + proto.n_chunks * 8].view(np.int64).copy()
    used.append(f"MLP log {mlp_seq} (slot {s})")
    return RecoveryPlan(m, restores, proto.mlp_slot[s].base, claimed, used)


def plan_redo(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    k = -1
    restores = []
    for j in range(proto.n_batches):
        f = read_flag(img, proto.record_flag_addr(j))
        if f is None:
            break
        b, nrows, base = f[0], f[1], f[2]
        reg = proto.records[j]
        if b != j or base != reg.base or nrows < 1 or line_align(nrows * 8) + line_align(nrows * proto.row_B) + proto.mlp_n * 4 > reg.size:
            return RecoveryPlan(-2, error=f"corrupt commit flag of record {j}: batch {b}, {nrows} rows at {base}")
        ids_at, vals_at, _ = proto.record_parts(j, nrows)
        restores.append((ids_at, vals_at, nrows, reg.rid))
        k = j
    if k >= 0:
        mlp_addr = proto.record_parts(k, restores[-1][2])[2]
        used = [f"snapshot + records 0..{k}"]
    else:
        mlp_addr = proto.snapshot.base + line_align(proto.data_B)
        used = ["snapshot"]
    return RecoveryPlan(k, restores, mlp_addr, np.full(proto.n_chunks, k, np.int64), used)


class RecoveryCost:
    """Recovery time (ns) of a plan, from the media models of the log and data regions."""

    def __init__(self, cfg: SystemConfig, proto: Protocol) -> None:
        p = cfg.pipeline
        self.proto = proto
        self.log = self._model(cfg, p.checkpoint_on)
        self.data = self._model(cfg, p.tables_on)
        self._memo: dict[tuple, float] = {}

    @staticmethod
    def _model(cfg: SystemConfig, role: str):
        r = cfg.role(role)
        return get_family(r.preset.family).build(r.params), r.count

    @staticmethod
    def _t(mem, op: str, n: int, size_B: int) -> float:
        model, modules = mem
        return model.bound_ns(op, int(n), int(size_B), modules) if n > 0 else 0.0

    def _bursts(self, mem, op: str, nbytes: int) -> float:
        full, rest = divmod(int(nbytes), im.BURST_B)
        return self._t(mem, op, full, im.BURST_B) + self._t(mem, op, 1 if rest else 0, rest)

    def time_ns(self, rp: RecoveryPlan) -> float:
        key = (rp.m, tuple(r[2] for r in rp.restores))
        if key not in self._memo:
            self._memo[key] = self._compute(rp)
        return self._memo[key]

    def _compute(self, rp: RecoveryPlan) -> float:
        pr = self.proto
        row_B, mlp_B = pr.row_B, pr.mlp_n * 4
        flags = pr.flags.size // im.LINE_B if pr.kind == "undo" else min(len(rp.restores) + 1, pr.n_batches)
        t = self._t(self.log, "read", flags, im.LINE_B)
        if pr.kind == "redo":  # rebuild the data region from the snapshot
            t += self._bursts(self.log, "read", pr.data_B) + self._bursts(self.data, "write", pr.data_B)
        for _, _, nrows, _ in rp.restores:
            t += self._bursts(self.log, "read", nrows * (8 + row_B))
            t += self._t(self.data, "write", nrows, row_B)
        return t + self._bursts(self.log, "read", mlp_B)
