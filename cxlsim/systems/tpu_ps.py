"""TPU / parameter-server per-step model (SPEC §1.4 ``tpu-ps``, §8.4; reference/strategies.md §4).

Two placements of the embedding tables:

- ``hbm``: tables sharded over the SparseCores in accelerator HBM by **table**, **column**,
  **row** or **table+column** partitioning. Load imbalance LI = N·max Bᵢ / Σ Bᵢ (Bᵢ bytes accessed
  on SparseCore i) slows the embedding step by the busiest core. Ids travel in a deduplicated
  all-to-all: traffic ∝ unique ids per batch (ids out, vectors back; gradients the same way).
- ``ps``: row-sharded tables on CPU parameter servers; each server receives one fetch/update RPC
  pair per (accelerator core, table) per step, or a single pair per step when coalesced.

Dense work (bottom and top MLP, forward + backward = 3× the forward FLOPs) runs on the
TensorCores at a fraction of peak. Sparse and dense work overlap when pipelined (step = max of the
two, each slowed by ``contention_factor``) or serialise (sum). The epoch checkpoint (drain + write
to the distributed file system) is amortised over the steps of an epoch.

Public entry point (the lead wires it into ``cxlsim run --system tpu-ps``)::

    tpu_ps_step(workload_params: dict, system_params, unique_ids_per_table: list[int]) -> dict

Internal units: seconds; the result is in ns (``cxlsim.units``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.units import S

GB = 1e9
#: Forward + backward MLP work relative to the forward pass (backward ≈ 2× forward).
FWD_BWD_FACTOR = 3.0
#: Embedding HBM traffic per unique row relative to the gather: gather + (read + write) update.
EMB_RW_FACTOR = 3.0
#: FLOPs per multiply-accumulate.
FLOP_PER_MAC = 2.0

PARTITIONINGS = ("table", "column", "row", "table+column")

TPU_PS_SCHEMA = Schema("tpu-ps", (
    Param("placement_policy", str, "where the embedding tables live", default="hbm", choices=("hbm", "ps")),
    Param("partitioning_policy", str, "HBM sharding of the tables", default="table+column", choices=PARTITIONINGS),
    Param("column_shards_count", int, "table+column: SparseCores each table's columns are split over", default=4, minimum=1),
    Param("chips_count", int, "accelerator chips (reference setup: 128 TPUv4)", default=128, minimum=1),
    Param("sparsecores_per_chip_count", int, "SparseCores per chip (TPUv4: 4)", default=4, minimum=1),
    Param("hbm_bw_GBps", float, "HBM bandwidth per chip (TPUv4: 1200 GB/s)", default=1200.0, minimum=0, exclusive_minimum=True),
    Param("hbm_gather_efficiency_fraction", float, "share of HBM bandwidth random row gathers reach", default=0.5,
          minimum=0, maximum=1, exclusive_minimum=True),
    Param("a2a_GBps", float, "all-to-all bandwidth per chip over the interconnect", default=50.0, minimum=0, exclusive_minimum=True),
    Param("a2a_latency_us", float, "latency of one all-to-all phase", default=10.0, minimum=0),
    Param("peak_TFLOPps", float, "TensorCore peak per chip (TPUv4 bf16: 275)", default=275.0, minimum=0, exclusive_minimum=True),
    Param("mlp_efficiency_fraction", float, "share of peak the MLPs reach", default=0.4, minimum=0, maximum=1, exclusive_minimum=True),
    Param("id_B", int, "bytes per id in the all-to-all", default=4, minimum=1),
    Param("element_B", int, "bytes per embedding element", default=4, minimum=1),
    Param("pipelining", bool, "overlap sparse step N+1 with dense step N", default=True),
    Param("contention_factor", float, "slowdown of each side when they overlap", default=1.1, minimum=1),
    Param("ps_servers_count", int, "CPU parameter servers (placement ps)", default=16, minimum=1),
    Param("ps_cores_count", int, "CPU cores per parameter server", default=32, minimum=1),
    Param("accelerator_cores_count", int, "accelerator cores issuing lookups (TPUv4: 2 per chip)", default=256, minimum=1),
    Param("rpc_coalescing", bool, "one fetch/update RPC pair per server per step", default=False),
    Param("rpc_cpu_us", float, "server CPU time per RPC", default=20.0, minimum=0),
    Param("rpc_latency_us", float, "network round trip of one RPC", default=50.0, minimum=0),
    Param("ps_row_ns", float, "server CPU time per row gathered or updated", default=50.0, minimum=0),
    Param("ps_nic_GBps", float, "parameter-server NIC bandwidth (25 Gbps = 3.125)", default=3.125, minimum=0, exclusive_minimum=True),
    Param("epoch_s", float, "epoch length (a checkpoint at each end)", default=3600.0, minimum=0, exclusive_minimum=True),
    Param("drain_s", float, "drain before the epoch checkpoint", default=60.0, minimum=0),
    Param("checkpoint_GB", float, "checkpoint size (0 = embedding tables + dense parameters)", default=0.0, minimum=0),
    Param("dfs_write_GBps", float, "distributed-file-system write bandwidth", default=10.0, minimum=0, exclusive_minimum=True),
))


#: Parameters of one placement only: the other placement's go unused (and are declared so).
HBM_ONLY = ("partitioning_policy", "column_shards_count", "sparsecores_per_chip_count", "hbm_bw_GBps",
            "hbm_gather_efficiency_fraction", "a2a_GBps", "a2a_latency_us")
PS_ONLY = ("ps_servers_count", "ps_cores_count", "accelerator_cores_count", "rpc_coalescing", "rpc_cpu_us",
           "rpc_latency_us", "ps_row_ns", "ps_nic_GBps")


def declare_unused(params: ParamSet) -> None:
    """Declare the other placement's parameters unused (:meth:`ParamSet.skip`)."""
    placement = params.placement_policy
    for key in (PS_ONLY if placement == "hbm" else HBM_ONLY):
        params.skip(key, f"placement_policy is {placement}")


def load_imbalance(bytes_per_core: Sequence[float]) -> float:
    """LI = N·max Bᵢ / Σ Bᵢ over N cores (1 = perfectly balanced)."""
    total = float(sum(bytes_per_core))
    if total == 0:
        return 1.0
    return len(bytes_per_core) * max(bytes_per_core) / total


def ps_rpc_pairs_per_server(accelerator_cores: int, tables: int, coalesced: bool) -> int:
    """Fetch/update RPC pairs each parameter server receives per step: one per (core, table)
    without coalescing, one per server per batch with fetch/update coalescing."""
    return 1 if coalesced else accelerator_cores * tables



# ----------------------------------------------------------------------------- partitioning
def _split(total: int, parts: int, offset: int = 0) -> list[int]:
    """``total`` items dealt round-robin to ``parts`` bins starting at bin ``offset``."""
    base, extra = divmod(total, parts)
    return [base + (1 if (i - offset) % parts < extra else 0) for i in range(parts)]


def _lpt(items: Sequence[float], cores: int) -> list[float]:
    """Longest-processing-time-first assignment of item loads to cores."""
    loads = [0.0] * cores
    for w in sorted(items, reverse=True):
        i = min(range(cores), key=loads.__getitem__)
        loads[i] += w
    return loads


def partition_bytes(lookups_per_row: Sequence[Sequence[float]] | None, unique_ids: Sequence[float],
                    widths: Sequence[int], cores: int, policy: str, column_shards: int = 4,
                    element_B: int = 4) -> list[float]:
    """Bytes accessed per SparseCore (one pass) under ``policy``.

    ``lookups_per_row[t][r]``: post-dedup lookups of row r of table t (exact row partitioning);
    when None, row partitioning uses the unique-id counts with ids hashed (mod) to cores and the
    expected busiest core of a balanced multinomial (mean + sqrt(2·ln N·variance)).
    """
    if policy not in PARTITIONINGS:
        raise ValueError(f"unknown partitioning {policy!r}")
    n_tab = len(widths)
    if lookups_per_row is not None:
        unique_ids = [float(np.sum(r)) for r in lookups_per_row]
    if policy == "table":
        return _lpt([unique_ids[t] * widths[t] * element_B for t in range(n_tab)], cores)
    if policy == "table+column":
        g = min(column_shards, cores)
        slices = [unique_ids[t] * c * element_B for t in range(n_tab) for c in _split(widths[t], g) if c]
        return _lpt(slices, cores)
    if policy == "column":
        loads = [0.0] * cores
        for t in range(n_tab):
            for i, c in enumerate(_split(widths[t], cores, offset=t % cores)):
                loads[i] += unique_ids[t] * c * element_B
        return loads
    # row partitioning: row r of every table lives on core r mod N
    if lookups_per_row is not None:
        loads = [0.0] * cores
        for t in range(n_tab):
            rows = np.asarray(lookups_per_row[t], dtype=float)
            for r, v in enumerate(rows):
                loads[r % cores] += v * widths[t] * element_B
        return loads
    total = sum(u * w * element_B for u, w in zip(unique_ids, widths, strict=True))
    var = sum(u * (1 / cores) * (1 - 1 / cores) * (w * element_B) ** 2 for u, w in zip(unique_ids, widths, strict=True))
    mean = total / cores
    busiest = min(total, mean + math.sqrt(2.0 * math.log(cores) * var)) if cores > 1 else total
    rest = (total - busiest) / (cores - 1) if cores > 1 else 0.0
    return [busiest] + [rest] * (cores - 1)


# ----------------------------------------------------------------------------- workload view
def _widths(v: Any) -> tuple[int, ...]:
    if isinstance(v, str):
        return tuple(int(x) for x in v.split("-"))
    return tuple(int(x) for x in v)


def _get(wl: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for n in names:
        if n in wl:
            return wl[n]
    if default is None:
        raise KeyError(f"workload parameters lack {' / '.join(names)}")
    return default


def mlp_macs(widths: Sequence[int]) -> float:
    return float(sum(a * b for a, b in zip(widths[:-1], widths[1:], strict=True)))


def _system(system_params: Any) -> ParamSet:
    if isinstance(system_params, ParamSet) and system_params.schema_name == TPU_PS_SCHEMA.name:
        return system_params
    return TPU_PS_SCHEMA.validate(dict(system_params or {}), {}, "tpu-ps system")


# ----------------------------------------------------------------------------- the step
def tpu_ps_step(workload_params: dict, system_params: Any, unique_ids_per_table: list[int]) -> dict:
    """One training step of the TPU / parameter-server system.

    ``workload_params``: the workload's parameters (``batch_size`` global samples per step,
    ``tables``, ``dim``, ``bottom_mlp``, ``top_mlp`` as "13-512-16" strings or width lists,
    optional ``rows_per_table``); ``system_params``: a mapping or ParamSet of
    :data:`TPU_PS_SCHEMA` (validated; unknown keys raise ConfigError); ``unique_ids_per_table``:
    distinct ids per table in this step's batch (after deduplication).

    Returns ``{"step_ns", "breakdown": {"b_mlp", "t_mlp", "transfer", "embedding", "checkpoint"}
    (ns), "sparse_ns", "dense_ns", "placement", "pipelined", "load_imbalance",
    "rpc_pairs_per_server", "transfer_bytes_per_chip"}``; ``step_ns`` includes the amortised
    epoch checkpoint.
    """
    sp = _system(system_params)
    batch = int(_get(workload_params, "batch_size"))
    dim = int(_get(workload_params, "dim", "embedding_dim"))
    tables = int(_get(workload_params, "tables", "tables_count", default=len(unique_ids_per_table)))
    if len(unique_ids_per_table) != tables:
        raise ValueError(f"unique_ids_per_table has {len(unique_ids_per_table)} entries for {tables} tables")
    bottom = _widths(_get(workload_params, "bottom_mlp"))
    top = _widths(_get(workload_params, "top_mlp"))
    chips = sp.chips_count
    flops_s = chips * sp.peak_TFLOPps * 1e12 * sp.mlp_efficiency_fraction
    b_mlp = FWD_BWD_FACTOR * FLOP_PER_MAC * batch * mlp_macs(bottom) / flops_s
    t_mlp = FWD_BWD_FACTOR * FLOP_PER_MAC * batch * mlp_macs(top) / flops_s
    uniq = [float(u) for u in unique_ids_per_table]
    row_B = dim * sp.element_B
    li, rpc_pairs = 1.0, 0
    if sp.placement_policy == "hbm":
        cores = chips * sp.sparsecores_per_chip_count
        loads = partition_bytes(None, uniq, [dim] * tables, cores, sp.partitioning_policy,
                                sp.column_shards_count, sp.element_B)
        li = load_imbalance(loads)
        core_Bps = sp.hbm_bw_GBps * GB * sp.hbm_gather_efficiency_fraction / sp.sparsecores_per_chip_count
        embedding = EMB_RW_FACTOR * max(loads) / core_Bps
        per_chip_B = 2.0 * sum(uniq) * (sp.id_B + row_B) / chips  # forward and backward exchanges
        transfer = per_chip_B / (sp.a2a_GBps * GB) + 2.0 * sp.a2a_latency_us * 1e-6
    else:
        servers = sp.ps_servers_count
        rpc_pairs = ps_rpc_pairs_per_server(sp.accelerator_cores_count, tables, sp.rpc_coalescing)
        rows_per_server = sum(uniq) / servers
        embedding = (2 * rpc_pairs * sp.rpc_cpu_us * 1e-6 + 2 * rows_per_server * sp.ps_row_ns * 1e-9) / sp.ps_cores_count
        per_chip_B = 2.0 * rows_per_server * (sp.id_B + row_B)  # per server: fetch vectors, update gradients
        transfer = per_chip_B / (sp.ps_nic_GBps * GB) + 2.0 * sp.rpc_latency_us * 1e-6
    sparse = transfer + embedding
    dense = b_mlp + t_mlp
    if sp.pipelining:
        step = max(sparse * sp.contention_factor, dense * sp.contention_factor)
    else:
        step = sparse + dense
    ckpt_B = sp.checkpoint_GB * GB
    if ckpt_B == 0:
        rows = int(_get(workload_params, "rows_per_table", default=1))
        ckpt_B = tables * rows * row_B + (mlp_macs(bottom) + mlp_macs(top)) * sp.element_B
    ckpt_s = sp.drain_s + ckpt_B / (sp.dfs_write_GBps * GB)
    checkpoint = ckpt_s * step / sp.epoch_s  # amortised over the epoch's steps
    return {
        "step_ns": (step + checkpoint) * S,
        "breakdown": {"b_mlp": b_mlp * S, "t_mlp": t_mlp * S, "transfer": transfer * S,
                      "embedding": embedding * S, "checkpoint": checkpoint * S},
        "sparse_ns": sparse * S,
        "dense_ns": dense * S,
        "placement": sp.placement_policy,
        "pipelined": sp.pipelining,
        "load_imbalance": li,
        "rpc_pairs_per_server": rpc_pairs,
        "transfer_bytes_per_chip": per_chip_B,
    }
