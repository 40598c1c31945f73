"""Closed forms of the cluster-scale failure-tolerance schemes ([maeng-mlsys21], [eisenman-nsdi22],
[zhang-vldb23], [kurian-tpu]; docs/design.md#cluster-scale-failure-tolerance).

Units: seconds for times (this package's internal time unit, see :mod:`cxlsim.ft`), bytes for
sizes, fractions for PLS. Symbols follow the reference: T_total training time, T_save checkpoint
interval, T_fail mean time between failures, O_save/O_load/O_res save/load/reschedule times,
N_emb embedding shards.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# the TPU/PS step formulas live with the TPU/PS system model; re-exported for the FT studies
from cxlsim.systems.tpu_ps import load_imbalance, ps_rpc_pairs_per_server  # noqa: F401

#: Check-N-Run: resumes from a checkpoint of b bits tolerated within the 0.01 % accuracy threshold.
CNR_TOLERATED_RESUMES: dict[int, int] = {2: 1, 3: 3, 4: 20, 8: 100}


def full_overhead_s(t_total: float, t_save: float, t_fail: float, o_save: float, o_load: float,
                    o_res: float) -> float:
    """Eq. 1: O_total ≈ O_save·T_total/T_save + (O_load + T_save/2 + O_res)·T_total/T_fail."""
    return o_save * t_total / t_save + (o_load + t_save / 2 + o_res) * t_total / t_fail


def partial_overhead_s(t_total: float, t_save: float, t_fail: float, o_save: float, o_load: float,
                       o_res: float) -> float:
    """Eq. 2: O_total,part ≈ O_save·T_total/T_save + (O_load + O_res)·T_total/T_fail."""
    return o_save * t_total / t_save + (o_load + o_res) * t_total / t_fail


def optimal_full_interval_s(o_save: float, t_fail: float) -> float:
    """T_save,full = sqrt(2·O_save·T_fail), the minimiser of Eq. 1."""
    return math.sqrt(2.0 * o_save * t_fail)


def expected_pls(t_save: float, t_fail: float, n_emb: float) -> float:
    """E[PLS] = 0.5·T_save/(T_fail·N_emb)."""
    return 0.5 * t_save / (t_fail * n_emb)


def partial_interval_s(target_pls: float, n_emb: float, t_fail: float) -> float:
    """T_save,part = 2·PLS·N_emb·T_fail (the interval whose E[PLS] equals the target)."""
    return 2.0 * target_pls * n_emb * t_fail


def pls_increment(samples_now: float, samples_last_ckpt: float, samples_total: float, n_emb: int,
                  failed_shards: int = 1) -> float:
    """PLS_i − PLS_{i−1} = (S_i − S_last_checkpoint)/(S_total·N_emb), per failed shard.

    The reference defines the increment for one failed shard; a failure wiping ``failed_shards``
    shards loses that many shards' updates, so the increments add (exactly the reference for 1).
    """
    return failed_shards * (samples_now - samples_last_ckpt) / (samples_total * n_emb)


def cpr_decision(t_total: float, t_fail: float, o_save: float, o_load_full: float,
                 o_load_part: float, o_res: float, target_pls: float, n_emb: float) -> dict[str, float | str]:
    """CPR: partial recovery at T_save,part if Eq. 2 there beats Eq. 1 at its optimum, else full."""
    t_full = optimal_full_interval_s(o_save, t_fail)
    t_part = partial_interval_s(target_pls, n_emb, t_fail)
    cost_full = full_overhead_s(t_total, t_full, t_fail, o_save, o_load_full, o_res)
    cost_part = partial_overhead_s(t_total, t_part, t_fail, o_save, o_load_part, o_res)
    use_partial = cost_part < cost_full
    return {
        "recovery": "partial" if use_partial else "full",
        "interval_s": t_part if use_partial else t_full,
        "t_save_part_s": t_part,
        "t_save_full_s": t_full,
        "estimated_overhead_partial_s": cost_part,
        "estimated_overhead_full_s": cost_full,
    }


def intermittent_take_full(increments: Sequence[float]) -> bool:
    """Check-N-Run's intermittent rule after increments S₁..Sᵢ (fractions of the full model).

    With S₀ = 1 the baseline: F_c = 1 + S₁ + … + Sᵢ, I_c = (i+1)·Sᵢ; take a new full checkpoint at
    interval i+1 when F_c ≤ I_c. With no increment yet (i = 0) the answer is False.
    """
    i = len(increments)
    if i == 0:
        return False
    f_c = 1.0 + sum(increments)
    i_c = (i + 1) * increments[-1]
    return f_c <= i_c


def cnr_bit_width(expected_failures: float, table: dict[int, int] | None = None) -> int:
    """Lowest bit width whose tolerated resume count covers the expected failures (else 8)."""
    table = CNR_TOLERATED_RESUMES if table is None else table
    for bits in sorted(table):
        if table[bits] >= expected_failures:
            return bits
    return max(table)


def ecrec_memory_factor(k: int) -> float:
    """Coded state takes (k+1)/k of its size (k data units + 1 parity per stripe)."""
    return (k + 1) / k


def ecrec_update_traffic_factor(k: int) -> float:
    """Difference propagation: each update also ships the row's (and optimizer state's) change
    to the one parity server, so update traffic is ×2 whatever k is."""
    del k  # independent of k by construction: one parity unit per stripe
    return 2.0


def ecrec_degraded_throughput(servers: int, k: int) -> float:
    """Relative throughput while one of ``servers`` parameter servers is lost and its rows are
    served by degraded reads (each lost row costs k survivor reads instead of 1), assuming the
    servers' request capacity is the bottleneck: the n−1 survivors carry (n−1) + k units of
    load for the n−1 they could carry, so the rate falls to (n−1)/(n−1+k)."""
    n = servers
    return (n - 1) / (n - 1 + k)
