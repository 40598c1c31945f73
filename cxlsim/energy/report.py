"""Energy per measured batch of a simulation, and the comparison with a baseline system.

Contract:

* :func:`energy_per_batch` ``(result, config=None)`` → ``{"total": J, "by_component": {c: J}}``,
  the mean over the measured batches (warm-up excluded), components in
  :data:`cxlsim.energy.model.COMPONENTS` order, then any other family's component (a family
  registered outside cxlsim is charged under its own name);
  ``total`` is the sum of the components. ``config`` re-prices the same run with other *energy*
  parameters (same system: model, pipeline or tpu-ps block, topology and the roles' families;
  energy parameters never change timing, so this equals re-simulating with those ``--set``
  overrides). Every system is priced the same way: each measured batch's
  :class:`~cxlsim.systems.activity.BatchActivity` by :func:`~cxlsim.energy.model.batch_energy`.
* :func:`energy_detail` — the same by component and part (static, active, dynamic).
* :func:`energy_report` simulates a system and a baseline on one workload and returns the
  ``cxlsim energy`` document (shape in :mod:`cxlsim.cli.energy`).

Overrides given for the system reach the baseline where they make sense: ``seed``, ``batches``,
``warmup_batches``, ``platform`` (both run on the same apparatus) and ``workload_overrides.*``
(both run the same inputs), ``energy.*`` (both are priced under the same readings: a baseline
where nothing is emulated reads none) and ``devices.<role>.params.<key>`` when the baseline's ``<role>``
uses the same preset (a physical fact of that device, e.g. the PMEM's background power). Pipeline and
structural overrides are the system's alone. An override of the system that reached neither its
timing nor its energy is refused (:func:`~cxlsim.systems.reach.check_overrides`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cxlsim.energy.model import PARTS, Deployment, batch_energy, priced_pools
from cxlsim.errors import InputError
from cxlsim.systems.config import SystemConfig
from cxlsim.systems.graph import build_devices
from cxlsim.systems.provision import provision
from cxlsim.systems.reach import check_file_keys, check_overrides
from cxlsim.systems.run import load_config, simulate
from cxlsim.systems.scale import settle
from cxlsim.systems.topology import Fabric

SHARED_TOP_KEYS = ("seed", "batches", "warmup_batches", "platform")
#: Sections whose every key applies to the baseline too (module docstring).
SHARED_SECTIONS = ("workload_overrides", "energy")


def _check_same_system(ran: SystemConfig, priced: SystemConfig) -> None:
    def timing(c: SystemConfig) -> tuple:
        def block(ps: Any) -> dict | None:
            return ps.as_dict() if ps is not None else None
        return (c.model, block(c.pipeline), block(c.tpu_ps), c.topology.as_dict(),
                {r: d.preset.family for r, d in c.devices.items()})
    if timing(ran) != timing(priced):
        raise InputError(f"energy parameters of {priced.name!r} cannot price a run of {ran.name!r}: "
                         "model, pipeline, tpu-ps parameters, topology or device roles differ")


def energy_detail(result: Any, config: SystemConfig | None = None) -> dict[str, dict[str, float]]:
    """Mean energy per measured batch by component and part (J): :data:`COMPONENTS`, then any
    other family's component (module docstring)."""
    if not result.activity:
        raise InputError(f"the run of {result.config.name!r} recorded no batch activity to charge energy to")
    wl = result.workload
    # a configuration to price with takes the settings its topology derives, as the run's did
    cfg = settle(config, wl) if config is not None else result.config
    _check_same_system(result.config, cfg)
    devices = result.devices if config is None else build_devices(cfg)
    m = result.machine
    if m is None:  # an analytic model: its activity records each device's usage (no fabric, no memory pools)
        deployment = Deployment(result.accelerators, 0)
    else:
        fabric = (m.system_fabric if config is None or m.system_fabric is None
                  else Fabric.of(devices, m.system_gpus, m.system_mems))
        deployment = Deployment(m.system_gpus, m.system_mems, fabric)
    pools = priced_pools(devices, provision(devices, wl, deployment.mems))
    per = [batch_energy(a, devices, pools, wl.params.dim, deployment) for a in result.activity]
    return {c: {part: float(np.mean([b[c][part] for b in per])) for part in PARTS} for c in per[0]}


def energy_per_batch(result: Any, config: SystemConfig | None = None) -> dict[str, Any]:
    """``{"total": J, "by_component": {component: J}}`` per measured batch (module docstring)."""
    detail = energy_detail(result, config)
    by = {c: detail[c]["static"] + detail[c]["active"] + detail[c]["dynamic"] for c in detail}
    return {"total": sum(by.values()), "by_component": by}


def _device_of(config: SystemConfig, role: str) -> tuple[str, str | None]:
    """What a role's ``params`` set: its preset, and the CXL memory device it sits behind (a role
    given a ``cxl_mem`` preset holds that device's media: the same media behind another device are
    another device, with other keys)."""
    r = config.role(role)
    return r.preset.name, (r.via.name if r.via is not None else None)


def baseline_sets(sets: list[tuple[str, Any]], system: SystemConfig, baseline: SystemConfig) -> list[tuple[str, Any]]:
    """The overrides of ``sets`` (given for ``system``) that apply to ``baseline`` (module docstring)."""
    out = []
    for key, value in sets:
        parts = key.split(".")
        if (parts[0] in SHARED_TOP_KEYS and len(parts) == 1) or parts[0] in SHARED_SECTIONS:
            out.append((key, value))
        elif len(parts) == 4 and parts[0] == "devices" and parts[2] == "params":
            role = parts[1]
            if system.has(role) and baseline.has(role) and _device_of(system, role) == _device_of(baseline, role):
                out.append((key, value))
    return out


def energy_report(system: str, workload: str | None = None, baseline: str = "pmem", batches: int | None = None,
                  warmup: int | None = None, seed: int | None = None,
                  sets: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
                  workload_sets: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Simulate ``system`` and ``baseline`` on ``workload`` (with ``workload_sets`` for both); the
    ``cxlsim energy`` document."""
    items = list(sets.items()) if isinstance(sets, Mapping) else list(sets or [])
    cfg = load_config(system, items)
    result = simulate(cfg, workload=workload, batches=batches, warmup=warmup, seed=seed, workload_sets=workload_sets, trace=False)
    energy = energy_per_batch(result)
    check_overrides(result.config, items, "cxlsim energy")
    check_file_keys(result.config, "cxlsim energy")
    base_plain = load_config(baseline)
    if base_plain.name == cfg.name and not items:
        base_energy, base_accelerators = energy, result.accelerators
    else:
        base_cfg = load_config(baseline, baseline_sets(items, cfg, base_plain))
        base = simulate(base_cfg, workload=result.config.workload, batches=result.config.batches,
                        warmup=result.config.warmup_batches, seed=result.config.seed, workload_sets=workload_sets,
                        trace=False)
        base_energy = energy_per_batch(base)
        base_accelerators = base.accelerators
    total = base_energy["total"]
    normalized: float | None = energy["total"] / total if total > 0 else float("nan")
    why = None
    if base_accelerators != result.accelerators:  # a batch of c accelerators is not one of b
        normalized = None
        why = (f"{cfg.name} runs {result.accelerators} accelerators, {base_plain.name} {base_accelerators}: "
               "compare samples_per_J")
    return {
        "system": cfg.name,
        "workload": result.workload.name,
        "platform": result.config.platform,
        "baseline": base_plain.name,
        "energy_J_per_batch": energy,
        "normalized_to_baseline": normalized,
        "batch_time_ms": result.batch_time_ms["mean"],
        "accelerators": result.accelerators,
        "samples_per_J": result.samples_per_batch / energy["total"] if energy["total"] > 0 else None,
        "not_normalized": why,
    }
