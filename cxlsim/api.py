"""Python API: load a system configuration, simulate it, price its energy.

    import cxlsim
    cfg = cxlsim.load_config("cxl-b", sets={"pipeline.relaxed_lookup": False})
    result = cxlsim.simulate("cxl", workload="rm1", batches=10)
    result.batch_time_ms["mean"], result.breakdown_ms, result.energy, result.to_dict()

Contract: the same (configuration, workload, seed, batch count) gives the same numbers.
:func:`simulate` is :func:`cxlsim.systems.run.simulate` plus the energy per measured batch
(``result.energy``, every system's from its batches' activity, :mod:`cxlsim.energy`); an override of
a parameter that neither the timing nor the energy read is refused with :class:`~cxlsim.errors.InputError`
(:mod:`cxlsim.systems.reach`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from cxlsim.config.yamlio import parse_set
from cxlsim.energy import energy_per_batch, energy_report
from cxlsim.errors import InputError
from cxlsim.systems import run as _run
from cxlsim.systems.reach import check_file_keys, check_overrides
from cxlsim.systems.result import RunResult
from cxlsim.workloads.catalog import load_workload

load_config = _run.load_config

__all__ = ["RunResult", "energy_report", "load_config", "load_workload", "simulate", "simulate_from_args"]


def simulate(
    system: str | Any,
    workload: str | None = None,
    batches: int | str | None = None,
    seed: int | None = None,
    warmup: int | str | None = None,
    sets: Mapping[str, Any] | list[tuple[str, Any]] | None = None,
    workload_sets: Mapping[str, Any] | None = None,
    trace: bool = True,
    ci: float | None = None,
    set_origins: Mapping[str, tuple[str, str]] | None = None,
    platform: str | None = None,
    stats: bool = False,
) -> RunResult:
    """Simulate ``system`` on ``workload`` (default: the system's); the result carries its energy.
    ``batches="auto"`` samples until the 95 % interval of the mean batch time is within ``ci``
    (a fraction, default 1 %) of the mean (:mod:`cxlsim.systems.sampling`). ``set_origins``: where
    each of ``sets`` came from (file or option, key path there), if not ``--set``: errors name it.
    ``platform``: the platform filling the system's device roles (default: ``physical``, or the one
    ``sets`` names; ``configs/platforms/``). ``stats``: collect the statistics dump's records as the
    models run (:mod:`cxlsim.reports.stats` turns the result into the dump; same timing)."""
    if platform is not None:
        items = list(sets.items()) if isinstance(sets, Mapping) else list(sets or [])
        if any(k == "platform" for k, _ in items):
            raise InputError("simulate: give the platform once, as platform= or in sets, not both")
        sets = items + [("platform", platform)]
        set_origins = {**(set_origins or {}), "platform": ("platform=", "")}
    result = _run.simulate(system, workload=workload, batches=batches, seed=seed, warmup=warmup, sets=sets,
                           workload_sets=workload_sets, trace=trace, ci=ci, set_origins=set_origins, stats=stats)
    result.energy = energy_per_batch(result)  # every system: its batches' activity, priced by the device models
    items = list(sets.items()) if isinstance(sets, Mapping) else list(sets or [])
    check_overrides(result.config, items, set_origins=set_origins)
    check_file_keys(result.config)
    return result


def simulate_from_args(args: argparse.Namespace) -> RunResult:
    """``cxlsim run``/``timeline`` arguments → :func:`simulate`."""
    system = args.config or args.system
    if not system:
        raise InputError("name a system with --system (e.g. --system cxl) or give --config FILE")
    sets = parse_set(args.set)
    origins: dict[str, tuple[str, str]] = {}  # the options that become sets name themselves in errors
    if getattr(args, "platform", None) is not None:  # an empty name is refused, not read as none
        sets.append(("platform", args.platform))
        origins["platform"] = ("--platform", "")
    if getattr(args, "symmetry", None):
        sets.append(("topology.symmetry", args.symmetry))
        origins["topology.symmetry"] = ("--symmetry", "")
    return simulate(system, workload=args.workload, batches=args.batches, seed=args.seed,
                    warmup=getattr(args, "warmup", None), sets=sets, trace=True, ci=getattr(args, "ci", None),
                    set_origins=origins, stats=bool(getattr(args, "stats", False) or getattr(args, "stats_file", None)))
