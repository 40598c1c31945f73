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
- several CXL-MEMs (undo): the same, by the global rule — ``b`` is the newest batch whose logs are
  flagged on every device, every device restores its logs of ``b`` and newer, and each device's
  MLP shard comes from its own MLP log (:func:`plan_undo`).
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
from cxlsim.crash.protocols import MemLog, Protocol, line_align, read_flag
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


def _read_mem(img: np.ndarray, proto: Protocol, d: MemLog) -> tuple[dict, dict, str | None]:
    """Device ``d``'s flagged logs: embedding {batch: (slot, rows)}, MLP {seq: (slot, lo, hi)}."""
    N = proto.n_batches
    on = "" if len(proto.mems) == 1 else f" of CXL-MEM {d.index}"
    emb: dict[int, tuple[int, int]] = {}
    for s in (0, 1):
        f = read_flag(img, d.emb_flag_addr(s))
        if f is None:
            continue
        b, nrows = f[0], f[1]
        if not (0 <= b < N and 0 <= nrows <= d.cap) or b in emb:
            return emb, {}, f"corrupt embedding-log flag in slot {s}{on}: batch {b}, {nrows} rows"
        emb[b] = (s, nrows)
    mlps: dict[int, tuple[int, int, int]] = {}
    for s in (0, 1):
        f = read_flag(img, d.mlp_flag_addr(s))
        if f is None:
            continue
        seq, lo, hi = f[0], f[1], f[2]
        if seq < 0 or seq % 2 != s or not (-1 <= lo <= hi < N) or seq in mlps:
            return emb, mlps, f"corrupt MLP-log flag in slot {s}{on}: log {seq}, batches {lo}..{hi}"
        mlps[seq] = (s, lo, hi)
    if not mlps:
        return emb, mlps, f"no flagged MLP log{on}: the MLP parameters are lost"
    return emb, mlps, None


def plan_undo(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    """The global rule (SPEC §12; :mod:`cxlsim.crash.protocols`): ``P`` is the newest batch whose
    embedding log is flagged on every CXL-MEM and, without relaxation, for which every device still
    has a flagged MLP log of the parameters after ``P − 1`` — a device's newest MLP log may be a
    batch ahead (it flagged both logs of ``P + 1`` while another device has not) or a batch behind
    (its MLP log of ``P`` is not flagged yet: then ``P − 1``, whose embedding logs are still flagged
    everywhere because deletion waits for both flags of ``P`` on every device). Every device
    restores its flagged embedding logs of ``P`` and newer, newest first (undoing a possibly partial
    update ``P``): ``m = P − 1``, and reads the MLP log holding the parameters after ``m`` (relaxed:
    its newest). No such batch: the data region is the initial model (``m = −1``). One device: the
    single-device rule of the module docstring. With the ``local-persistence`` bug only CXL-MEM 0's
    flags decide ``P``."""
    read = [_read_mem(img, proto, d) for d in proto.mems]
    for _, _, err in read:
        if err:
            return RecoveryPlan(-2, error=err)
    embs, mlps = [r[0] for r in read], [r[1] for r in read]
    trusted = range(len(embs)) if proto.global_rule else range(1)
    common = sorted(set.intersection(*(set(embs[i]) for i in trusted)), reverse=True)
    P = common[0] if common else None
    want = None  # without relaxation: the batch every MLP log read must hold (None: each device's newest)
    if not proto.relaxed_mlp:
        # the newest batch P flagged on every device whose MLP logs of the parameters after P − 1
        # exist on every device (P's MLP logs may not all be flagged yet: then P − 1, whose logs are
        # still there because deletion waits for both flags of P on every device)
        for cand in common or [None]:
            h = -1 if cand is None else cand - 1
            if all(any(v[2] == h for v in mlps[i].values()) for i in trusted):
                P, want = cand, h
                break
        else:
            return RecoveryPlan(-2, error=f"no MLP log holds the parameters after batch {-1 if P is None else P - 1} "
                                          f"(or the batch before it) on every CXL-MEM")
    m = -1 if P is None else P - 1
    one = len(proto.mems) == 1
    restores, used, parts = [], [], []
    for d, emb, mlp in zip(proto.mems, embs, mlps, strict=True):
        on = "" if one else f"CXL-MEM {d.index}: "
        for b in sorted((b for b in emb if P is None or b >= P), reverse=True):
            s, nrows = emb[b]
            restores.append((d.emb_ids_addr(s), d.emb_vals_addr(s), nrows, d.emb_slot[s].rid))
            used.append(f"{on}emb_log {b} (slot {s}, {nrows} rows)")
        seq = max(mlp)
        if want is not None and mlp[seq][2] != want:  # the log of the parameters after m, if any
            seq = max((q for q, v in mlp.items() if v[2] == want), default=seq)
        s = mlp[seq][0]
        ct = d.chunk_table[s]
        claimed = img[ct.base:ct.base + d.n_chunks * 8].view(np.int64).copy()
        parts.append((d.mlp_slot[s].base, d.mlp_lo, d.mlp_hi, claimed))
        used.append(f"{on}MLP log {seq} (slot {s})")
    return RecoveryPlan(m, restores, parts, used)


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


def plan_redo(img: np.ndarray, proto: Protocol) -> RecoveryPlan:
    restores, error = committed_records(img, proto, range(proto.n_batches), "record")
    if error:
        return RecoveryPlan(-2, error=error)
    k = len(restores) - 1
    if k >= 0:
        mlp_addr = proto.record_parts(k, restores[-1][2])[2]
        used = [f"snapshot + records 0..{k}"]
    else:
        mlp_addr = proto.snapshot.base + line_align(proto.data_B)
        used = ["snapshot"]
    return RecoveryPlan(k, restores, [(mlp_addr, 0, proto.mlp_n, np.full(proto.n_chunks, k, np.int64))], used)


class RecoveryCost:
    """Recovery time (ns) of a plan, from the media models of the log and data regions."""

    def __init__(self, devices: DeviceGraph, proto: Protocol) -> None:
        p = devices.config.pipeline
        self.proto = proto
        self.log = self._model(devices, p.checkpoint_on)
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
