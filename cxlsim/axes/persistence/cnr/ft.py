"""The cluster-level face of ``persistence: cnr``: Check-N-Run (Eisenman et al., NSDI 2022) as an
ft scheme (``kind: check-n-run`` in a scenario's ``schemes:``; contract: :mod:`cxlsim.ft.schemes`).

Snapshot stall + background write every ``interval_h``, incremental policies (full, one-shot,
consecutive, intermittent) and row quantization; recovery reads the baseline and its increments.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cxlsim.config.params import Param, Schema
from cxlsim.ft import formulas as F
from cxlsim.ft.failures import HOUR_S
from cxlsim.ft.schemes import Scheme
from cxlsim.ft.simulator import CheckpointCost
from cxlsim.kernels import ft as K
from cxlsim.rng import stream
from cxlsim.units import GB

#: Bytes of the row id stored with each row of an incremental checkpoint (int64 local id).
ROW_ID_B = 8
#: Bytes of per-row quantization metadata: symmetric keeps a scale, asymmetric a scale and offset.
QUANT_META_B = {"symmetric": 4, "asymmetric": 8, "adaptive": 8, "kmeans": 0}
#: Vectors the quantization error is measured on, and their init scale (normal N(0, 1/√dim)).
QUANT_SAMPLE_ROWS = 512
KMEANS_ITERS = 8


class CheckNRun(Scheme):
    """Check-N-Run: snapshot stall + background write, incremental policies, quantization."""

    kind = "check-n-run"
    SCHEMA = Schema("ft.scheme.check-n-run", (
        Param("interval_h", float, "checkpoint interval", default=0.5, minimum=0, exclusive_minimum=True),
        Param("incremental_policy", str, "which rows each checkpoint stores", default="intermittent",
              choices=("full", "one-shot", "consecutive", "intermittent")),
        Param("quant_policy", str, "row quantizer (auto: adaptive ≤ 4 bits, asymmetric at 8)", default="auto",
              choices=("auto", "none", "symmetric", "asymmetric", "adaptive", "kmeans")),
        Param("bits_count", int, "bit width (0 = from expected failures)", default=0, minimum=0, maximum=8),
        Param("snapshot_GBps", float, "per-node GPU → pinned host memory copy bandwidth", default=12.0,
              minimum=0, exclusive_minimum=True),
    ), checks=(lambda v: ("bits_count", "must be 0, 2, 3, 4 or 8") if v["bits_count"] not in (0, 2, 3, 4, 8) else None,))
    INTERVAL_KEY = "interval_h"

    def __init__(self, label, p, ctx):
        super().__init__(label, p, ctx)
        self.interval_s = p.interval_h * HOUR_S
        self.policy = p.incremental_policy
        self.bits = p.bits_count if p.bits_count else F.cnr_bit_width(ctx.expected_resumes)
        self.initial_bits = self.bits
        self.fell_back = False
        self.quantized_resumes = 0
        self.chain: list[dict[str, Any]] = []       # valid checkpoints since the current baseline
        self.pending: dict[str, Any] | None = None
        self.sizes: list[dict[str, Any]] = []
        self.dim = ctx.m.row_B // 4
        self.quant_error = self._quant_error()

    def _mode(self, bits: int) -> str:
        q = self.p.quant_policy
        if q == "auto":
            return "adaptive" if bits <= 4 else "asymmetric"
        return q

    def row_bytes(self, bits: int) -> float:
        mode = self._mode(bits)
        if mode == "none":
            return float(self.ctx.m.row_B * (1 + self.ctx.m.optimizer_state_factor))
        codebook = (1 << bits) * 4 if mode == "kmeans" else 0
        return self.dim * bits / 8 + QUANT_META_B[mode] + codebook

    def _quant_error(self) -> dict[str, Any]:
        """Mean ℓ2 error of the chosen quantizer on normal-initialised vectors, per bit width."""
        rng = stream(self.ctx.scenario.seed, "ft.cnr.vectors")
        x = rng.normal(0.0, 1.0 / math.sqrt(self.dim), size=(QUANT_SAMPLE_ROWS, self.dim)).astype(np.float32)
        norm = float(np.linalg.norm(x, axis=1).mean())
        out = {}
        for bits in sorted(F.CNR_TOLERATED_RESUMES):
            mode = self._mode(bits)
            if mode == "none":
                y = x
            elif mode == "kmeans":
                codes, book = K.kmeans_rows(x, bits, KMEANS_ITERS)
                y = K.kmeans_dequantize(codes, book)
            else:
                q, s, o = K.quantize_rows(x, bits, K.MODES[mode])
                y = K.dequantize_rows(q, s, o)
            err = K.mean_l2_error(x, y)
            out[str(bits)] = {"mode": mode, "mean_l2_error": err, "relative_error": err / norm}
        return out

    def _modified_fraction(self, first: int, last: int) -> float:
        acc = self.ctx.access
        bits = np.zeros_like(acc.modified(self.interval_s, max(first, 1)))
        for k in range(first, last + 1):
            bits |= acc.modified(self.interval_s, k)
        return K.count_bits(bits) / acc.rows

    def checkpoint(self, st):
        idx = int(round(st.work_s / self.interval_s))
        rows = self.ctx.rows_total
        row_q = self.row_bytes(self.bits)
        full_B = rows * row_q + self.ctx.dense_state_B
        base_idx = self.chain[0]["index"] if self.chain else None
        incs = [c["fraction"] for c in self.chain[1:]]
        take_full = base_idx is None or self.policy == "full"
        if not take_full and self.policy == "intermittent":
            take_full = F.intermittent_take_full(incs)
        if take_full:
            entry = {"index": idx, "kind": "full", "fraction": 1.0, "bytes": full_B, "bits": self.bits}
        else:
            first = base_idx + 1 if self.policy in ("one-shot", "intermittent") else self.chain[-1]["index"] + 1
            frac = self._modified_fraction(first, idx)
            b = frac * rows * (row_q + ROW_ID_B) + self.ctx.dense_state_B
            entry = {"index": idx, "kind": "increment", "fraction": frac, "bytes": b, "bits": self.bits}
        self.pending = entry
        self.sizes.append({"interval": idx, "kind": entry["kind"], "fraction": entry["fraction"], "bytes": entry["bytes"]})
        self.peak_capacity_bytes = max(self.peak_capacity_bytes, self._needed_B(self.chain) + entry["bytes"])
        snapshot_s = (self.ctx.model_B / self.ctx.m.nodes_count) / (self.p.snapshot_GBps * GB)
        return CheckpointCost(snapshot_s, self.ctx.storage.storage_write_s(entry["bytes"]), entry["bytes"])

    def _needed_B(self, chain: list[dict[str, Any]]) -> float:
        """Bytes a recovery from ``chain`` reads (and storage must keep)."""
        if not chain:
            return 0.0
        if self.policy == "consecutive":
            return sum(c["bytes"] for c in chain)
        return chain[0]["bytes"] + (chain[-1]["bytes"] if len(chain) > 1 else 0.0)

    def on_valid(self, st):
        if self.pending is None:
            return
        if self.pending["kind"] == "full":
            self.chain = [self.pending]
        else:
            self.chain.append(self.pending)
        self.pending = None

    def on_abort(self, st):
        self.pending = None

    def recover(self, st, ev):
        rec = self.recover_full(st, ev, self._needed_B(self.chain))
        quantized = self._mode(self.bits) != "none" and self.bits < 8
        if st.has_valid_checkpoint and quantized:
            self.quantized_resumes += 1
            if self.quantized_resumes > F.CNR_TOLERATED_RESUMES[self.bits]:
                self.bits, self.fell_back = 8, True  # more failures than estimated
        return rec

    def details(self):
        full = [s["bytes"] for s in self.sizes if s["kind"] == "full"]
        inc = [s for s in self.sizes if s["kind"] == "increment"]
        return {
            **super().details(), "incremental_policy": self.policy,
            "bits": self.initial_bits, "bits_final": self.bits, "fell_back_to_8_bits": self.fell_back,
            "quant_mode": self._mode(self.initial_bits),
            "expected_resumes": self.ctx.expected_resumes,
            "quantization_error": self.quant_error,
            "snapshot_stall_s": (self.ctx.model_B / self.ctx.m.nodes_count) / (self.p.snapshot_GBps * GB),
            "full_checkpoint_bytes": full[0] if full else 0.0,
            "mean_increment_fraction": float(np.mean([s["fraction"] for s in inc])) if inc else 0.0,
            "recovery_read_bytes_mean": float(np.mean(self.recovery_reads_B)) if self.recovery_reads_B else 0.0,
            "checkpoints": self.sizes,
        }

    def summary(self):
        mode = self._mode(self.initial_bits)
        q = "fp32" if mode == "none" else f"{self.initial_bits}-bit {mode}"
        return f"{self.policy}, {q}, T {self.interval_s / HOUR_S:.3g} h"
