"""TPU / parameter-server per-step model (``tpu-ps``; [kurian-tpu];
docs/design.md#tpu-and-parameter-server-training, #scale-out).

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
c × the HBM's ``capacity_GiB``, else on the parameter servers; an explicit ``hbm`` that does not fit is refused
(:class:`~cxlsim.errors.ConfigError` naming the smallest chip count that fits).

Dense work (bottom and top MLP, forward + backward = 3× the forward FLOPs) runs on each chip's
TensorCores at a fraction of peak; the MLP gradients are ring all-reduced over the interconnect
(``2(c−1)/c × parameter bytes / allreduce_GBps`` + one latency, charged to ``transfer``; 0 on
one chip). Sparse work (lookup, update, their transfers) and dense work (MLPs, all-reduce) overlap
when pipelined (step = max of the two, each slowed by ``contention_factor``) or serialise (sum).
The epoch checkpoint (drain + write to the distributed file system) is amortised over the steps
of an epoch.

Public entry point::

    tpu_ps_step(workload_params: dict, system_params, devices, unique_ids_per_table, chips=1) -> dict

The device parameters are the roles' (:data:`TPU_PS_ROLES`: the chip, its HBM, the
interconnect, a parameter server, the two NICs and the accelerator host, presets of the families
``tpu``, ``hbm``, ``ici``, ``param_server``, ``nic`` and ``host``), passed in as models (the system's
:class:`~cxlsim.systems.graph.DeviceGraph`, or any mapping of role to model); the system's own
block (:data:`TPU_PS_SCHEMA`) holds the policies, the epoch and the hosts. Each step also returns
what each role's devices did (``usage``: role → :class:`~cxlsim.devices.base.Usage`), which the
run records in its :class:`~cxlsim.systems.activity.BatchActivity` and the energy model prices
through each family's hook, as for every system; the energy parameters never change timing.
Internal units: seconds and bytes; the result's times are in ns (``cxlsim.units``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import Usage
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
          "in chips × the tpu_hbm role's capacity_GiB, else parameter servers), hbm or ps", default="auto",
          choices=PLACEMENTS),
    Param("partitioning_policy", str, "HBM sharding of the tables", default="table+column", choices=PARTITIONINGS),
    Param("column_shards_count", int, "table+column: SparseCores each table's columns are split over", default=4, minimum=1),
    Param("id_B", int, "bytes per id in the all-to-all", default=4, minimum=1),
    Param("element_B", int, "bytes per embedding element and dense parameter", default=4, minimum=1),
    Param("pipelining", bool, "overlap sparse step N+1 with dense step N", default=True),
    Param("contention_factor", float, "slowdown of each side when they overlap", default=1.1, minimum=1),
    Param("ps_servers_count", int, "CPU parameter servers (placement ps)", default=1, minimum=1),
    Param("rpc_coalescing", bool, "one fetch/update RPC pair per server per step", default=False),
    Param("chips_per_host_count", int, "accelerator chips per host (TPUv4: 4); each host has one NIC", default=4, minimum=1),
    Param("epoch_s", float, "epoch length (a checkpoint at each end)", default=3600.0, minimum=0, exclusive_minimum=True),
    Param("drain_s", float, "drain before the epoch checkpoint", default=60.0, minimum=0),
    Param("checkpoint_GB", float, "checkpoint size (0 = embedding tables + dense parameters)", default=0.0, minimum=0),
    Param("dfs_write_GBps", float, "distributed-file-system write bandwidth", default=10.0, minimum=0, exclusive_minimum=True),
))

#: The device roles of model tpu_ps (:data:`cxlsim.systems.config.ROLES`), each one device model
#: built once by the system's device graph (:func:`cxlsim.systems.graph.build_devices`).
TPU_PS_ROLES = ("tpu", "tpu_hbm", "ici", "param_server", "ps_nic", "host_nic", "tpu_host")

#: Parameters of one placement only (the system's, then by role): the other placement's go unused
#: (and are declared so).
HBM_ONLY = ("partitioning_policy", "column_shards_count")
HBM_ONLY_DEVICES = {"tpu": ("sparsecores_per_chip_count", "sparsecores_W"),
                    "tpu_hbm": ("bw_GBps", "gather_efficiency_fraction"), "ici": ("a2a_GBps", "a2a_latency_us")}
PS_ONLY = ("ps_servers_count", "rpc_coalescing")
PS_ONLY_DEVICES = {"tpu": ("tensorcores_per_chip_count",),
                   "param_server": ("cores_count", "rpc_cpu_us", "rpc_latency_us", "row_ns", "idle_W", "busy_W"),
                   "ps_nic": ("bw_GBps", "power_W", "pJ_per_bit"), "host_nic": ("bw_GBps", "pJ_per_bit")}


def declare_unused(params: ParamSet, devices: Any, placement: str, chips: int) -> None:
    """Declare what does not apply to a run of ``chips`` chips with tables at ``placement`` (the
    resolved one) (:meth:`ParamSet.skip`): the other placement's parameters (the system's and the
    roles'), the interconnect's on one chip, ``contention_factor`` without pipelining, the HBM's
    capacity when placement is given as ps. ``devices``: the roles' models (``devices[role]``)."""
    roles = {role: devices[role] for role in TPU_PS_ROLES}
    why = f"the tables are in {'HBM' if placement == 'hbm' else 'parameter servers'} (placement {placement})"
    for key in (PS_ONLY if placement == "hbm" else HBM_ONLY):
        params.skip(key, why)
    for role, keys in (PS_ONLY_DEVICES if placement == "hbm" else HBM_ONLY_DEVICES).items():
        for key in keys:
            roles[role].params.skip(key, why)
    if chips == 1:
        for key in roles["ici"].params:
            roles["ici"].params.skip(key, "one chip: no chip-to-chip interconnect traffic")
    if not params.as_dict()["pipelining"]:
        params.skip("contention_factor", "pipelining is off: sparse and dense work do not overlap")
    if params.as_dict()["placement_policy"] == "ps":
        roles["tpu_hbm"].params.skip("capacity_GiB", "placement_policy is ps: the tables' fit in HBM is not checked")


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
def step_usage(wall_ns: float, chips: int, hosts: int, servers: int, tensorcore_ns: float, sparsecore_ns: float,
               hbm_B: float, ici_B: float, nic_B: float, ps_core_ns: float) -> dict[str, Usage]:
    """What each role's devices did in one step of ``wall_ns`` (role → :class:`Usage`, the energy
    hooks' input): ``chips`` chips (TensorCore and SparseCore time per chip, ``hbm_B`` bytes through
    their HBM, ``ici_B`` through the interconnect when there is more than one chip), ``hosts``
    accelerator hosts and their NICs, ``servers`` parameter servers (none with tables in HBM: no
    server role then) with ``ps_core_ns`` core time; ``nic_B``: bytes through NICs, each byte through
    one server's NIC and one host's, half on each side. Units: ns, bytes, counts."""
    tpu_ops = {"sparsecore_ns": chips * sparsecore_ns} if sparsecore_ns else {}
    usage = {"tpu": Usage(wall_ns, chips, busy_ns=chips * tensorcore_ns, ops=tpu_ops),
             "tpu_hbm": Usage(wall_ns, chips, moved_B=hbm_B),
             "tpu_host": Usage(wall_ns, hosts),
             "host_nic": Usage(wall_ns, hosts, moved_B=nic_B / 2)}
    if chips > 1:
        usage["ici"] = Usage(wall_ns, chips, moved_B=ici_B)
    if servers:
        usage["param_server"] = Usage(wall_ns, servers, busy_ns=ps_core_ns)
        usage["ps_nic"] = Usage(wall_ns, servers, moved_B=nic_B / 2)
    return usage


def tpu_ps_step(workload_params: dict, system_params: Any, devices: Any, unique_ids_per_table: Any,
                chips: int = 1) -> dict:
    """One data-parallel training step of ``chips`` chips (module docstring).

    ``workload_params``: ``batch_size`` (samples per chip per step), ``tables``, ``dim``,
    ``bottom_mlp``, ``top_mlp`` ("13-512-16" strings or width lists), optional ``rows_per_table``
    (or ``embedding_B``, the tables' bytes), ``mlp_params_count`` (dense parameters; default:
    weights + biases of the two stacks) and ``interaction_macs`` (per sample, forward: the
    interaction's GEMMs against its own parameters, timed with the top MLP; default 0); ``system_params``: a mapping or ParamSet of
    :data:`TPU_PS_SCHEMA` (validated; unknown keys raise ConfigError); ``devices``: the
    roles' models (``devices[role]``: the system's device graph), whose parameters the step reads there;
    ``unique_ids_per_table``: distinct ids per table in a chip's batch (a list of ``tables``
    counts, the same for every chip, or ``chips`` such lists, one per chip).

    Returns ``{"step_ns", "breakdown": {"b_mlp", "t_mlp", "transfer", "embedding", "checkpoint"}
    (ns), "sparse_ns", "dense_ns", "sparse_transfer_ns", "allreduce_ns", "lookup_ns",
    "update_ns", "placement", "pipelined", "chips", "load_imbalance", "rpc_pairs_per_server",
    "transfer_bytes_per_chip", "hosts", "servers", "traffic_B", "usage"}`` (``traffic_B``: bytes of
    all chips by kind: ``embedding_hbm``, ``mlp_hbm``, ``a2a``, ``allreduce``, ``nic`` (each NIC a
    byte crosses counted); ``usage``: :func:`step_usage`, busy times × the contention factor when
    pipelined); ``step_ns`` includes the amortised epoch
    checkpoint; ``transfer`` is the sparse transfer (all-to-all or parameter-server network) plus the
    all-reduce. Times are the busiest chip's.
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
    chip, hbm, ici, server = (devices[r].params for r in ("tpu", "tpu_hbm", "ici", "param_server"))
    placement = resolve_placement(policy, tables_B + dense_B, chips, hbm.capacity_GiB if policy != "ps" else None)

    # dense side: the chip's MLPs, then the ring all-reduce of their gradients
    flops_s = devices["tpu"].mlp_flops_per_s()
    b_mlp = FWD_BWD_FACTOR * FLOP_PER_MAC * batch * mlp_macs(bottom) / flops_s
    # the interaction's GEMMs against its own parameters (DCN-v2's cross layers) run as the top
    # MLP's layers do; an interaction without parameters (dot, cat) adds none (its activation
    # products are outside this model, as before)
    inter_macs = float(_get(workload_params, "interaction_macs", default=0.0))
    t_mlp = FWD_BWD_FACTOR * FLOP_PER_MAC * batch * (mlp_macs(top) + inter_macs) / flops_s
    allreduce = allreduce_B = 0.0
    if chips > 1:
        per_chip_ar_B = 2.0 * (chips - 1) / chips * dense_B
        allreduce = per_chip_ar_B / (ici.allreduce_GBps * GB) + ici.allreduce_latency_us * 1e-6
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
        cores = chips * chip.sparsecores_per_chip_count
        served = uniq.sum(axis=0)  # rows each table's owners gather: one request per chip that touched it
        loads = partition_bytes(None, served.tolist(), [dim] * tables, cores, sp.partitioning_policy,
                                sp.column_shards_count, el_B)
        li = load_imbalance(loads)
        core_Bps = devices["tpu_hbm"].gather_Bps() / chip.sparsecores_per_chip_count
        embedding = EMB_RW_FACTOR * max(loads) / core_Bps
        sc_busy = EMB_RW_FACTOR * (sum(loads) / cores) / core_Bps
        emb_hbm_B = EMB_RW_FACTOR * float(sum(loads))
        per_chip_B = 2.0 * busiest_ids * wire_B * (chips - 1) / chips  # forward and backward exchanges
        sparse_transfer = 0.0
        if chips > 1:
            sparse_transfer = per_chip_B / (ici.a2a_GBps * GB) + 2.0 * ici.a2a_latency_us * 1e-6
            a2a_B = 2.0 * total_ids * wire_B * (chips - 1) / chips
    else:
        servers = sp.ps_servers_count
        rpc_pairs = ps_rpc_pairs_per_server(chips * chip.tensorcores_per_chip_count, tables, sp.rpc_coalescing)
        rows_per_server = total_ids / servers
        core_s = 2 * rpc_pairs * server.rpc_cpu_us * 1e-6 + 2 * rows_per_server * server.row_ns * 1e-9
        embedding = core_s / server.cores_count
        ps_core_s = servers * core_s
        server_B = 2.0 * rows_per_server * wire_B  # per server: fetch vectors, update gradients
        busiest_host_ids = max(float(ids_per_chip[h::hosts].sum()) for h in range(hosts)) if hosts > 1 else total_ids
        host_B = 2.0 * busiest_host_ids * wire_B
        per_chip_B = 2.0 * busiest_ids * wire_B
        sparse_transfer = max(server_B / (devices["ps_nic"].params.bw_GBps * GB),
                              host_B / (devices["host_nic"].params.bw_GBps * GB)) \
            + 2.0 * server.rpc_latency_us * 1e-6
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
    usage = step_usage((step + checkpoint) * S, chips, hosts, servers, tensorcore_ns=(b_mlp + t_mlp) * k * S,
                       sparsecore_ns=sc_busy * k * S, hbm_B=emb_hbm_B + mlp_hbm_B, ici_B=a2a_B + allreduce_B,
                       nic_B=nic_B, ps_core_ns=ps_core_s * k * S)
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
        "hosts": hosts,
        "servers": servers,
        "traffic_B": {"embedding_hbm": emb_hbm_B, "mlp_hbm": mlp_hbm_B, "a2a": a2a_B, "allreduce": allreduce_B,
                      "nic": nic_B},
        "usage": usage,
    }
