"""The ``tpu-ps`` system in ``cxlsim run``: the analytic TPU / parameter-server step model
(:func:`cxlsim.systems.tpu_ps.tpu_ps_step`) driven by the same analysed input streams as every other
system (distinct ids per table and batch), so it joins the paper comparison as an extra row.

Critical-path attribution (sums to the step time exactly): without sparse/dense pipelining the
step is the sum of its parts; with pipelining it is the longer side × the contention factor, so
that side's parts (× the factor) are charged and the hidden side is not. The epoch checkpoint,
amortised over the epoch's steps, is charged as ``checkpoint``.
"""

from __future__ import annotations

import numpy as np

from cxlsim.systems.config import SystemConfig
from cxlsim.systems.result import RunResult
from cxlsim.systems.streams import StreamSet
from cxlsim.systems.tpu_ps import declare_unused, tpu_ps_step
from cxlsim.workloads.catalog import Workload


def unique_ids_per_table(streams: StreamSet, n: int) -> list[int]:
    """Distinct rows of each table touched by batch ``n``."""
    rows = streams.batch(n).unique_rows
    edges = np.append(streams.layout.row_base, streams.layout.total_rows)
    return np.diff(np.searchsorted(rows, edges)).astype(int).tolist()


def critical_path_ns(step: dict, pipelined: bool, contention: float) -> dict[str, float]:
    """Charges per Figure-11 category for one step (see module docstring)."""
    b = step["breakdown"]
    out = {k: 0.0 for k in ("b_mlp", "t_mlp", "transfer", "embedding", "checkpoint")}
    out["checkpoint"] = b["checkpoint"]
    if not pipelined:
        for k in ("b_mlp", "t_mlp", "transfer", "embedding"):
            out[k] = b[k]
    elif step["sparse_ns"] >= step["dense_ns"]:
        out["transfer"], out["embedding"] = b["transfer"] * contention, b["embedding"] * contention
    else:
        out["b_mlp"], out["t_mlp"] = b["b_mlp"] * contention, b["t_mlp"] * contention
    out["idle"] = 0.0
    return out


def simulate_tpu_ps(cfg: SystemConfig, wl: Workload, streams: StreamSet):
    """Per-batch step times of ``cfg`` (model ``tpu_ps``) over the measured batches."""
    wp = {"batch_size": wl.params.batch_size, "tables": wl.params.tables, "dim": wl.params.dim,
          "bottom_mlp": wl.bottom_widths, "top_mlp": wl.top_widths,
          "rows_per_table": int(round(streams.layout.total_rows / wl.params.tables))}
    sp = cfg.tpu_ps
    declare_unused(sp)
    for key in cfg.topology:  # interim (issue 18): the chip count is tpu_ps.chips_count
        cfg.topology.skip(key, "the tpu-ps model's chips are tpu_ps.chips_count in this revision")
    times, parts, steps = [], [], []
    for n in range(cfg.warmup_batches, cfg.warmup_batches + cfg.batches):
        step = tpu_ps_step(wp, sp, unique_ids_per_table(streams, n))
        charges = critical_path_ns(step, sp.pipelining, sp.contention_factor)
        times.append(step["step_ns"])
        parts.append(charges)
        steps.append(step)
    last = steps[-1]
    extra = {"tpu_ps": {"placement": last["placement"], "pipelined": last["pipelined"],
                        "load_imbalance": float(np.mean([s["load_imbalance"] for s in steps])),
                        "rpc_pairs_per_server": last["rpc_pairs_per_server"],
                        "transfer_bytes_per_chip": float(np.mean([s["transfer_bytes_per_chip"] for s in steps]))}}
    return RunResult(cfg, wl, np.asarray(times), parts, np.zeros(len(times)), 0, None, None, extra)
