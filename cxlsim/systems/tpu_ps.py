"""TPU / parameter-server per-step model (SPEC §1.4 ``tpu-ps``, §8.4, §12; reference/strategies.md §4).

``c`` chips train data-parallel, each on the workload's batch (a step trains c × batch_size
samples). Each chip deduplicates the ids of its own batch. Two placements of the embedding tables:

- ``hbm``: tables sharded over the c × SparseCores in accelerator HBM by **table**, **column**,
  **row** or **table+column** partitioning. Every owner serves the rows all chips ask for (one
  request per chip that touched a row); load imbalance LI = N·max Bᵢ / Σ Bᵢ (Bᵢ bytes accessed on
  SparseCore i) slows the embedding step by the busiest core. Ids travel in a deduplicated
  all-to-all: per chip ``2·Σu·(id_B + row_B)·(c−1)/c`` bytes (ids out and vectors back, gradients
  the same way; the chip's own share stays local; 0 on one chip).
- ``ps``: row-sharded tables on CPU parameter servers; each server receives one fetch/update RPC
  pair per (TensorCore, table) per step, or a single pair per step when coalesced. The transfer is
  bound by the busier NIC: the servers' or an accelerator host's (``chips_per_host_count`` chips
  share one host NIC).

``auto`` (the shipped default) puts the tables in HBM when tables + dense parameters fit in
c × ``hbm_GiB``, else on the parameter servers; an explicit ``hbm`` that does not fit is refused
(:class:`~cxlsim.errors.ConfigError` naming the smallest chip count that fits).

Dense work (bottom and top MLP, forward + backward = 3× the forward FLOPs) runs on each chip's
TensorCores at a fraction of peak; the MLP gradients are ring all-reduced over the interconnect
(``2(c−1)/c × parameter bytes / allreduce_GBps`` + one latency, charged to ``transfer``; 0 on
one chip). Sparse work (lookup, update, their transfers) and dense work (MLPs, all-reduce) overlap
when pipelined (step = max of the two, each slowed by ``contention_factor``) or serialise (sum).
The epoch checkpoint (drain + write to the distributed file system) is amortised over the steps
of an epoch.

Public entry point::

    tpu_ps_step(workload_params: dict, system_params, unique_ids_per_table, chips=1) -> dict

Each step also returns a :class:`TpuPsActivity` (busy times, bytes) that
:mod:`cxlsim.energy.tpu_ps` prices; the energy parameters of :data:`TPU_PS_SCHEMA` never change
timing. Internal units: seconds and bytes; the result's times are in ns (``cxlsim.units``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.errors import ConfigError
from cxlsim.units import GB, GiB, S

#: Forward + backward MLP work relative to the forward pass (backward ≈ 2× forward).
FWD_BWD_FACTOR = 3.0
#: Embedding HBM traffic per unique row relative to the gather: gather + (read + write) update.
EMB_RW_FACTOR = 3.0
#: FLOPs per multiply-accumulate.
FLOP_PER_MAC = 2.0
#: MLP HBM traffic per step: passes over the weights (forward read, backward read, gradient write,
#: optimizer read + write of weights and gradient read) and over the activations (forward write,
#: backward read, activation-gradient write and read).
MLP_WEIGHT_PASSES = 6.0
MLP_ACTIVATION_PASSES = 4.0

PARTITIONINGS = ("table", "column", "row", "table+column")
PLACEMENTS = ("auto", "hbm", "ps")

TPU_PS_SCHEMA = Schema("tpu-ps", (
    Param("placement_policy", str, "where the embedding tables live: auto (HBM when tables + dense parameters fit "
          "in chips × hbm_GiB, else parameter servers), hbm or ps", default="auto", choices=PLACEMENTS),
    Param("partitioning_policy", str, "HBM sharding of the tables", default="table+column", choices=PARTITIONINGS),
    Param("column_shards_count", int, "table+column: SparseCores each table's columns are split over", default=4, minimum=1),
    Param("tensorcores_per_chip_count", int, "TensorCores per chip (TPUv4: 2); each issues its own lookups to the "
          "parameter servers", default=2, minimum=1),
    Param("sparsecores_per_chip_count", int, "SparseCores per chip (TPUv4: 4)", default=4, minimum=1),
    Param("hbm_GiB", float, "HBM capacity per chip (TPUv4: 32 GiB)", default=32.0, minimum=0, exclusive_minimum=True),
    Param("hbm_bw_GBps", float, "HBM bandwidth per chip (TPUv4: 1200 GB/s)", default=1200.0, minimum=0, exclusive_minimum=True),
    Param("hbm_gather_efficiency_fraction", float, "share of HBM bandwidth random row gathers reach", default=0.5,
          minimum=0, maximum=1, exclusive_minimum=True),
    Param("a2a_GBps", float, "all-to-all bandwidth per chip over the interconnect", default=50.0, minimum=0, exclusive_minimum=True),
    Param("a2a_latency_us", float, "latency of one all-to-all phase", default=10.0, minimum=0),
    Param("allreduce_GBps", float, "ring all-reduce bandwidth per chip over the interconnect", default=100.0,
          minimum=0, exclusive_minimum=True),
    Param("allreduce_latency_us", float, "latency of one all-reduce of the MLP gradients", default=10.0, minimum=0),
    Param("peak_TFLOPps", float, "TensorCore peak per chip (TPUv4 bf16: 275)", default=275.0, minimum=0, exclusive_minimum=True),
    Param("mlp_efficiency_fraction", float, "share of peak the MLPs reach", default=0.4, minimum=0, maximum=1, exclusive_minimum=True),
    Param("id_B", int, "bytes per id in the all-to-all", default=4, minimum=1),
    Param("element_B", int, "bytes per embedding element and dense parameter", default=4, minimum=1),
    Param("pipelining", bool, "overlap sparse step N+1 with dense step N", default=True),
    Param("contention_factor", float, "slowdown of each side when they overlap", default=1.1, minimum=1),
    Param("ps_servers_count", int, "CPU parameter servers (placement ps)", default=1, minimum=1),
    Param("ps_cores_count", int, "CPU cores per parameter server", default=32, minimum=1),
    Param("rpc_coalescing", bool, "one fetch/update RPC pair per server per step", default=False),
    Param("rpc_cpu_us", float, "server CPU time per RPC", default=20.0, minimum=0),
    Param("rpc_latency_us", float, "network round trip of one RPC", default=50.0, minimum=0),
    Param("ps_row_ns", float, "server CPU time per row gathered or updated", default=50.0, minimum=0),
    Param("ps_nic_GBps", float, "parameter-server NIC bandwidth (25 Gbps = 3.125)", default=3.125, minimum=0, exclusive_minimum=True),
    Param("chips_per_host_count", int, "accelerator chips per host (TPUv4: 4); each host has one NIC", default=4, minimum=1),
    Param("host_nic_GBps", float, "accelerator host NIC bandwidth (placement ps)", default=3.125, minimum=0,
          exclusive_minimum=True),
    Param("epoch_s", float, "epoch length (a checkpoint at each end)", default=3600.0, minimum=0, exclusive_minimum=True),
    Param("drain_s", float, "drain before the epoch checkpoint", default=60.0, minimum=0),
    Param("checkpoint_GB", float, "checkpoint size (0 = embedding tables + dense parameters)", default=0.0, minimum=0),
    Param("dfs_write_GBps", float, "distributed-file-system write bandwidth", default=10.0, minimum=0, exclusive_minimum=True),
    # energy (cxlsim.energy.tpu_ps): never read by the timing
    Param("chip_idle_W", float, "chip power when idle (TPUv4 minimum)", default=90.0, minimum=0),
    Param("tensorcores_W", float, "chip power above idle while its TensorCores run", default=92.0, minimum=0),
    Param("sparsecores_W", float, "chip power above idle while its SparseCores run", default=10.0, minimum=0),
    Param("hbm_background_W", float, "HBM background power per chip", default=4.0, minimum=0),
    Param("hbm_pJ_per_bit", float, "HBM access energy", default=3.9, minimum=0),
    Param("ici_links_per_chip_count", int, "interconnect links per chip (TPUv4: 6); each link joins two chips",
          default=6, minimum=1),
    Param("ici_link_W", float, "idle power per interconnect link", default=1.0, minimum=0),
    Param("ici_pJ_per_bit", float, "interconnect transfer energy", default=5.0, minimum=0),
    Param("host_W", float, "accelerator host power (CPU, DRAM, board) per host", default=200.0, minimum=0),
    Param("ps_idle_W", float, "parameter-server power when idle", default=100.0, minimum=0),
    Param("ps_busy_W", float, "parameter-server power above idle with every core busy", default=150.0, minimum=0),
    Param("nic_W", float, "NIC power per NIC (servers' and hosts')", default=10.0, minimum=0),
    Param("nic_pJ_per_bit", float, "NIC transfer energy per bit through one NIC", default=5.0, minimum=0),
))

#: The energy parameters (:mod:`cxlsim.energy.tpu_ps`): the timing never reads them.
ENERGY_PARAMS = ("chip_idle_W", "tensorcores_W", "sparsecores_W", "hbm_background_W", "hbm_pJ_per_bit",
                 "ici_links_per_chip_count", "ici_link_W", "ici_pJ_per_bit", "host_W", "ps_idle_W", "ps_busy_W",
                 "nic_W", "nic_pJ_per_bit")

#: Parameters of one placement only: the other placement's go unused (and are declared so).
HBM_ONLY = ("partitioning_policy", "column_shards_count", "sparsecores_per_chip_count", "hbm_bw_GBps",
            "hbm_gather_efficiency_fraction", "a2a_GBps", "a2a_latency_us", "sparsecores_W")
PS_ONLY = ("tensorcores_per_chip_count", "ps_servers_count", "ps_cores_count", "rpc_coalescing", "rpc_cpu_us", "rpc_latency_us", "ps_row_ns",
           "ps_nic_GBps", "host_nic_GBps", "ps_idle_W", "ps_busy_W", "nic_pJ_per_bit")
#: Parameters of the chip-to-chip interconnect: unused on one chip.
INTERCONNECT = ("a2a_GBps", "a2a_latency_us", "allreduce_GBps", "allreduce_latency_us", "ici_links_per_chip_count",
                "ici_link_W", "ici_pJ_per_bit")


def declare_unused(params: ParamSet, placement: str, chips: int) -> None:
    """Declare what does not apply to a run of ``chips`` chips with tables at ``placement`` (the
    resolved one) (:meth:`ParamSet.skip`): the other placement's parameters, the interconnect's on
    one chip, ``contention_factor`` without pipelining, ``hbm_GiB`` when placement is given as ps."""
    for key in (PS_ONLY if placement == "hbm" else HBM_ONLY):
        params.skip(key, f"the tables are in {'HBM' if placement == 'hbm' else 'parameter servers'} (placement {placement})")
    if chips == 1:
        for key in INTERCONNECT:
            params.skip(key, "one chip: no chip-to-chip interconnect traffic")
    if not params.as_dict()["pipelining"]:
        params.skip("contention_factor", "pipelining is off: sparse and dense work do not overlap")
    if params.as_dict()["placement_policy"] == "ps":
        params.skip("hbm_GiB", "placement_policy is ps: the tables' fit in HBM is not checked")


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


def chips_that_fit(need_B: float, hbm_GiB: float) -> int:
    """The smallest chip count whose HBM (``hbm_GiB`` each) holds ``need_B`` bytes."""
    return max(1, math.ceil(need_B / (hbm_GiB * GiB)))


def resolve_placement(policy: str, need_B: float, chips: int, hbm_GiB: float | None) -> str:
    """``hbm`` or ``ps`` for ``policy`` (auto: HBM when ``need_B`` fits c × ``hbm_GiB``); an explicit
    ``hbm`` that does not fit raises ConfigError naming the smallest chip count that fits."""
    if policy == "ps":
        return "ps"
    fits = need_B <= chips * hbm_GiB * GiB
    if policy == "auto":
        return "hbm" if fits else "ps"
    if not fits:
        raise ConfigError("tpu-ps system", "tpu_ps.placement_policy",
                          f"hbm: tables + dense parameters ({need_B / GiB:.1f} GiB) do not fit the HBM of {chips} "
                          f"chip(s) × {hbm_GiB:g} GiB; {chips_that_fit(need_B, hbm_GiB)} chips fit them "
                          "(topology.gpus_count), or use placement ps or auto")
    return "hbm"


@dataclass(frozen=True)
class TpuPsActivity:
    """What one step did, the record :mod:`cxlsim.energy.tpu_ps` prices. Units: ns, bytes, counts.

    Busy times are per chip (every chip does the same work); bytes are over all chips and devices.
    """

    wall_ns: float  # the step, amortised checkpoint included
    chips: int
    hosts: int  # accelerator hosts, ⌈chips / chips_per_host⌉
    servers: int  # parameter servers powered (0 with tables in HBM)
    tensorcore_busy_ns: float  # per chip: MLPs (× contention when pipelined)
    sparsecore_busy_ns: float  # per chip: mean SparseCore busy time (0 with parameter servers)
    embedding_hbm_B: float  # HBM bytes of the embedding work, all chips
    mlp_hbm_B: float  # HBM bytes of the MLPs, all chips
    a2a_B: float  # interconnect bytes of the all-to-all, all chips
    allreduce_B: float  # interconnect bytes of the all-reduce, all chips
    nic_B: float  # bytes through NICs, each NIC a byte crosses counted (0 with tables in HBM)
    ps_core_busy_ns: float  # parameter-server core time, all servers


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


def mlp_params_count(widths: Sequence[int]) -> float:
    """Weights plus biases of a fully connected stack."""
    return float(sum(a * b + b for a, b in zip(widths[:-1], widths[1:], strict=True)))


def _system(system_params: Any) -> ParamSet:
    if isinstance(system_params, ParamSet) and system_params.schema_name == TPU_PS_SCHEMA.name:
        return system_params
    return TPU_PS_SCHEMA.validate(dict(system_params or {}), {}, "tpu-ps system")


def _per_chip(unique_ids_per_table: Any, chips: int, tables: int) -> np.ndarray:
    """``chips × tables`` distinct ids: a flat list of ``tables`` counts is every chip's."""
    u = np.asarray(unique_ids_per_table, dtype=float)
    if u.ndim == 1:
        u = np.broadcast_to(u, (chips, u.size))
    if u.shape != (chips, tables):
        raise ValueError(f"unique_ids_per_table has shape {u.shape}; expected {tables} tables "
                         f"(or {chips} chips × {tables} tables)")
    return u


# ----------------------------------------------------------------------------- the step
def tpu_ps_step(workload_params: dict, system_params: Any, unique_ids_per_table: Any, chips: int = 1) -> dict:
    """One data-parallel training step of ``chips`` chips (module docstring).

    ``workload_params``: ``batch_size`` (samples per chip per step), ``tables``, ``dim``,
    ``bottom_mlp``, ``top_mlp`` ("13-512-16" strings or width lists), optional ``rows_per_table``
    (or ``embedding_B``, the tables' bytes) and ``mlp_params_count`` (dense parameters; default:
    weights + biases of the two stacks); ``system_params``: a mapping or ParamSet of
    :data:`TPU_PS_SCHEMA` (validated; unknown keys raise ConfigError);
    ``unique_ids_per_table``: distinct ids per table in a chip's batch (a list of ``tables``
    counts, the same for every chip, or ``chips`` such lists, one per chip).

    Returns ``{"step_ns", "breakdown": {"b_mlp", "t_mlp", "transfer", "embedding", "checkpoint"}
    (ns), "sparse_ns", "dense_ns", "sparse_transfer_ns", "allreduce_ns", "lookup_ns",
    "update_ns", "placement", "pipelined", "chips", "load_imbalance", "rpc_pairs_per_server",
    "transfer_bytes_per_chip", "activity": TpuPsActivity}``; ``step_ns`` includes the amortised
    epoch checkpoint; ``transfer`` is the sparse transfer (all-to-all or parameter-server network)
    plus the all-reduce. Times are the busiest chip's.
    """
    if chips < 1:
        raise ValueError(f"chips must be >= 1, got {chips}")
    sp = _system(system_params)
    batch = int(_get(workload_params, "batch_size"))
    dim = int(_get(workload_params, "dim", "embedding_dim"))
    u0 = np.asarray(unique_ids_per_table, dtype=float)
    tables = int(_get(workload_params, "tables", "tables_count", default=u0.shape[-1]))
    uniq = _per_chip(unique_ids_per_table, chips, tables)
    bottom = _widths(_get(workload_params, "bottom_mlp"))
    top = _widths(_get(workload_params, "top_mlp"))
    el_B = sp.element_B
    row_B = dim * el_B
    dense_B = float(_get(workload_params, "mlp_params_count",
                         default=mlp_params_count(bottom) + mlp_params_count(top))) * el_B
    rows = int(_get(workload_params, "rows_per_table", default=1))
    tables_B = float(_get(workload_params, "embedding_B", default=tables * rows * row_B))
    policy = sp.placement_policy
    placement = resolve_placement(policy, tables_B + dense_B, chips, sp.hbm_GiB if policy != "ps" else None)

    # dense side: the chip's MLPs, then the ring all-reduce of their gradients
    flops_s = sp.peak_TFLOPps * 1e12 * sp.mlp_efficiency_fraction
    b_mlp = FWD_BWD_FACTOR * FLOP_PER_MAC * batch * mlp_macs(bottom) / flops_s
    t_mlp = FWD_BWD_FACTOR * FLOP_PER_MAC * batch * mlp_macs(top) / flops_s
    allreduce = allreduce_B = 0.0
    if chips > 1:
        per_chip_ar_B = 2.0 * (chips - 1) / chips * dense_B
        allreduce = per_chip_ar_B / (sp.allreduce_GBps * GB) + sp.allreduce_latency_us * 1e-6
        allreduce_B = chips * per_chip_ar_B

    # sparse side
    ids_per_chip = uniq.sum(axis=1)  # Σu of each chip
    total_ids = float(ids_per_chip.sum())
    busiest_ids = float(ids_per_chip.max())
    wire_B = sp.id_B + row_B
    li, rpc_pairs = 1.0, 0
    a2a_B = nic_B = ps_core_s = sc_busy = 0.0
    hosts = math.ceil(chips / sp.chips_per_host_count)
    servers = 0
    if placement == "hbm":
        cores = chips * sp.sparsecores_per_chip_count
        served = uniq.sum(axis=0)  # rows each table's owners gather: one request per chip that touched it
        loads = partition_bytes(None, served.tolist(), [dim] * tables, cores, sp.partitioning_policy,
                                sp.column_shards_count, el_B)
        li = load_imbalance(loads)
        core_Bps = sp.hbm_bw_GBps * GB * sp.hbm_gather_efficiency_fraction / sp.sparsecores_per_chip_count
        embedding = EMB_RW_FACTOR * max(loads) / core_Bps
        sc_busy = EMB_RW_FACTOR * (sum(loads) / cores) / core_Bps
        emb_hbm_B = EMB_RW_FACTOR * float(sum(loads))
        per_chip_B = 2.0 * busiest_ids * wire_B * (chips - 1) / chips  # forward and backward exchanges
        sparse_transfer = 0.0
        if chips > 1:
            sparse_transfer = per_chip_B / (sp.a2a_GBps * GB) + 2.0 * sp.a2a_latency_us * 1e-6
            a2a_B = 2.0 * total_ids * wire_B * (chips - 1) / chips
    else:
        servers = sp.ps_servers_count
        rpc_pairs = ps_rpc_pairs_per_server(chips * sp.tensorcores_per_chip_count, tables, sp.rpc_coalescing)
        rows_per_server = total_ids / servers
        core_s = 2 * rpc_pairs * sp.rpc_cpu_us * 1e-6 + 2 * rows_per_server * sp.ps_row_ns * 1e-9
        embedding = core_s / sp.ps_cores_count
        ps_core_s = servers * core_s
        server_B = 2.0 * rows_per_server * wire_B  # per server: fetch vectors, update gradients
        busiest_host_ids = max(float(ids_per_chip[h::hosts].sum()) for h in range(hosts)) if hosts > 1 else total_ids
        host_B = 2.0 * busiest_host_ids * wire_B
        per_chip_B = 2.0 * busiest_ids * wire_B
        sparse_transfer = max(server_B / (sp.ps_nic_GBps * GB), host_B / (sp.host_nic_GBps * GB)) \
            + 2.0 * sp.rpc_latency_us * 1e-6
        nic_B = 2.0 * 2.0 * total_ids * wire_B  # each byte crosses a server's and a host's NIC
        emb_hbm_B = 2.0 * total_ids * row_B  # vectors in, gradients out of each chip's HBM
    sparse = sparse_transfer + embedding
    dense = b_mlp + t_mlp + allreduce
    k = sp.contention_factor if sp.pipelining else 1.0
    step = max(sparse, dense) * k if sp.pipelining else sparse + dense

    ckpt_B = sp.checkpoint_GB * GB
    if ckpt_B == 0:
        ckpt_B = tables_B + dense_B
    ckpt_s = sp.drain_s + ckpt_B / (sp.dfs_write_GBps * GB)
    checkpoint = ckpt_s * step / sp.epoch_s  # amortised over the epoch's steps
    activations = batch * float(sum(bottom) + sum(top)) * el_B
    mlp_hbm_B = chips * (MLP_WEIGHT_PASSES * dense_B + MLP_ACTIVATION_PASSES * activations)
    activity = TpuPsActivity(
        wall_ns=(step + checkpoint) * S, chips=chips, hosts=hosts, servers=servers,
        tensorcore_busy_ns=(b_mlp + t_mlp) * k * S, sparsecore_busy_ns=sc_busy * k * S,
        embedding_hbm_B=emb_hbm_B, mlp_hbm_B=mlp_hbm_B, a2a_B=a2a_B, allreduce_B=allreduce_B, nic_B=nic_B,
        ps_core_busy_ns=ps_core_s * k * S)
    return {
        "step_ns": (step + checkpoint) * S,
        "breakdown": {"b_mlp": b_mlp * S, "t_mlp": t_mlp * S, "transfer": (sparse_transfer + allreduce) * S,
                      "embedding": embedding * S, "checkpoint": checkpoint * S},
        "sparse_ns": sparse * S,
        "dense_ns": dense * S,
        "sparse_transfer_ns": sparse_transfer * S,
        "allreduce_ns": allreduce * S,
        "lookup_ns": embedding / EMB_RW_FACTOR * S,
        "update_ns": embedding * (EMB_RW_FACTOR - 1) / EMB_RW_FACTOR * S,
        "placement": placement,
        "pipelined": sp.pipelining,
        "chips": chips,
        "load_imbalance": li,
        "rpc_pairs_per_server": rpc_pairs,
        "transfer_bytes_per_chip": per_chip_B,
        "activity": activity,
    }
