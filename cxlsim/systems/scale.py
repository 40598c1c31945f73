"""Settings that follow from the topology when the user leaves them unset (docs/scale-out.md,
"Settings that follow from the topology").

A run of many GPUs and CXL-MEMs needs a switch tree deep enough for its devices, a table placement
that uses every CXL-MEM (and, reduced, gives each an equal shard) and a near-data scratchpad that
holds one batch's pooled vectors. :func:`settle` derives each from the topology and the workload
when no input gave it; a value any input gives (a platform's role entry, a system file, ``--set``,
a sweep's axis; :meth:`cxlsim.config.origins.Origins.given`) always wins and is checked as before,
a refusal naming the ``--set`` that fixes it. The rules:

* ``devices.switch.levels`` (:func:`switch_levels`): the fewest levels ``L ≥ 1`` whose tree of
  fan-out ``f`` (``topology.fanout_count``, or the switch preset's ports less its upstream port)
  has a leaf port for every device, ``f**L ≥ gpus_count + cxl_mems_count``. Direct attach
  (``levels: 0``) is never derived: it is asked for.
* ``topology.tables_policy`` (:func:`tables_policy`): ``row_sharded`` when there are several
  CXL-MEMs and either more CXL-MEMs than tables (whole tables would leave a device without one) or
  the run is reduced by symmetry (:func:`reduces`) and whole tables do not split into equal shards
  over the CXL-MEMs (the reduction needs them equal); else ``whole`` (a bag's lookups stay on one
  device: one pooled vector per bag and table).
* ``devices.ndp.params.scratchpad_KiB`` (:func:`scratchpad_KiB`): the preset's, unless one
  batch's pooled vectors on one CXL-MEM need more (:func:`pooled_bags` × ``dim`` fp32: every GPU's
  samples, one partial sum per table whose bag has a row on the device); then that need, rounded up
  to a power of two KiB. Named idealisation: spilling pooled vectors to the media is not modelled,
  so a scratchpad larger than the preset's stands in for it (its size reaches no timing or energy
  beyond this check: energy is per byte accessed).

Below :data:`~cxlsim.systems.symmetry.AUTO_MIN_GPUS` GPUs with one GPU and one CXL-MEM (every
golden) each rule gives the value the run had before: one level, ``whole`` (not read: one
device), the preset's scratchpad. A derived value's ``sources`` note says it was derived.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from cxlsim.config.params import ParamSet
from cxlsim.systems import axes
from cxlsim.systems.config import MAX_SWITCH_LEVELS, SystemConfig
from cxlsim.systems.symmetry import AUTO_MIN_GPUS
from cxlsim.systems.topology import Placement
from cxlsim.units import FP32_B
from cxlsim.workloads.layout import TableLayout

DERIVED = "derived from the topology (cxlsim.systems.scale)"


def switch_levels(devices_count: int, fanout: int) -> int:
    """The fewest switch levels (at least one) whose tree of ``fanout`` children per switch has a
    leaf port for each of ``devices_count`` devices (at most ``MAX_SWITCH_LEVELS``: the fabric then
    refuses the devices it cannot hold)."""
    levels = 1
    while fanout**levels < devices_count and levels < MAX_SWITCH_LEVELS:
        levels += 1
    return levels


def reduces(symmetry: str, gpus: int) -> bool:
    """Whether ``topology.symmetry`` asks for a reduced run of ``gpus`` GPUs
    (:func:`cxlsim.systems.symmetry.plan`: ``on``, or ``auto`` from ``AUTO_MIN_GPUS`` GPUs on)."""
    return symmetry == "on" or (symmetry == "auto" and gpus >= AUTO_MIN_GPUS)


def whole_splits_equally(layout: TableLayout, mems: int) -> bool:
    """Whether whole tables (:class:`~cxlsim.systems.topology.Placement` ``whole``) give every one
    of ``mems`` devices as many tables and rows."""
    rows = np.diff(np.append(layout.row_base, layout.total_rows))
    pl = Placement.of(layout, mems, "whole")
    per_mem = np.bincount(pl.table_mem, minlength=mems)
    rows_per = np.bincount(pl.table_mem, weights=rows, minlength=mems)
    return bool(per_mem.min() == per_mem.max() and rows_per.min() == rows_per.max())


def tables_policy(layout: TableLayout, gpus: int, mems: int, symmetry: str) -> str:
    """``topology.tables_policy`` when unset (module docstring)."""
    tables = int(layout.row_base.size)
    if mems > 1 and (mems > tables or (reduces(symmetry, gpus) and not whole_splits_equally(layout, mems))):
        return "row_sharded"
    return "whole"


def partial_sums_per_sample(workload: Any, tables: int, mems: int, policy: str) -> float:
    """Pooled vectors per sample one device sends each GPU: one per table it holds whole;
    row-sharded over ``mems`` devices, one per table whose bag has a row on it, in expectation
    ``T (1 − E[(1 − 1/M)^K])`` over the bag's draws ``K`` (named approximation: draws independent
    and uniform over the devices; :meth:`cxlsim.systems.machine.TrainingMachine.transfer_tables`)."""
    if policy != "row_sharded" or mems == 1:
        return float(tables)
    if workload.params.bag_size == "fixed":  # (per_table: through the tables' pmfs below)
        return tables * (1.0 - (1.0 - 1.0 / mems) ** workload.params.lookups_per_table)
    return tables * (1.0 - workload.mean_table_power(1.0 - 1.0 / mems))


def pooled_bags(workload: Any, layout: TableLayout, gpus: int, mems: int, policy: str) -> int:
    """Pooled vectors the busiest device holds for one batch: every GPU's ``batch_size`` samples
    times :func:`partial_sums_per_sample` (whole tables: the device holding the most)."""
    if policy == "row_sharded" or mems == 1:
        tables = int(layout.row_base.size)
    else:
        tables = int(np.bincount(Placement.of(layout, mems, policy).table_mem, minlength=mems).max())
    return math.ceil(workload.params.batch_size * gpus * partial_sums_per_sample(workload, tables, mems, policy))


def scratchpad_KiB(need_B: float, preset_KiB: float) -> float:
    """The scratchpad a batch's ``need_B`` bytes of pooled vectors ask for: the preset's if they
    fit, else the need rounded up to a power of two KiB (module docstring)."""
    if need_B <= preset_KiB * 1024:
        return preset_KiB
    return float(2 ** math.ceil(math.log2(need_B / 1024)))


def _with(params: ParamSet, key: str, value: Any, why: str) -> ParamSet:
    return ParamSet({**params.as_dict(), key: value}, {**params.sources, key: f"{DERIVED}: {why}"},
                    params.schema_name, params.descriptive)


def settle(cfg: SystemConfig, workload: Any) -> SystemConfig:
    """``cfg`` with every scale setting no input gave derived from its topology and ``workload``
    (per GPU) by the rules of the module docstring; ``cfg`` itself when nothing changes."""
    origins, p = cfg.origins, cfg.pipeline
    if origins is None or p is None:
        return cfg
    topo = cfg.topology.as_dict()  # unrecorded: a derivation is not a model's read
    G, M = topo["gpus_count"], topo["cxl_mems_count"]
    layout = TableLayout.from_workload(workload)
    topology, devices, changed = cfg.topology, dict(cfg.devices), False
    policy = topo["tables_policy"]
    if M > 1 and not origins.given("topology.tables_policy"):
        policy = tables_policy(layout, G, M, topo["symmetry"])
        if policy != topo["tables_policy"]:
            why = (f"{M} CXL-MEMs, {layout.row_base.size} tables" +
                   ("" if M > layout.row_base.size else ", a reduced run needs equal shards"))
            topology, changed = _with(topology, "tables_policy", policy, why), True
    if "switch" in devices and not origins.given("devices.switch.levels"):
        sw = devices["switch"]
        fanout = topo["fanout_count"] or sw.params.as_dict()["ports_count"] - 1
        levels = switch_levels(G + M, fanout)
        if levels != sw.levels:
            devices["switch"], changed = replace(sw, levels=levels), True
    if "ndp" in devices and axes.of(p, "embedding_engine").on_device \
            and not origins.given("devices.ndp.params.scratchpad_KiB"):
        nd = devices["ndp"]
        have = nd.params.as_dict()["scratchpad_KiB"]
        need_B = pooled_bags(workload, layout, G, M, policy) * workload.params.dim * FP32_B
        size = scratchpad_KiB(need_B, have)
        if size != have:
            params = _with(nd.params, "scratchpad_KiB", size, f"one batch's pooled vectors on one CXL-MEM, "
                           f"{need_B / 1024:.0f} KiB, rounded up to a power of two")
            devices["ndp"], changed = replace(nd, preset=replace(nd.preset, params=params)), True
    return replace(cfg, topology=topology, devices=devices) if changed else cfg

