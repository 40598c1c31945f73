"""Which parameters reached a run: the proof that no parameter is silent.

Every :class:`~cxlsim.config.params.ParamSet` records the parameters models read from it. After a
run has been timed and priced, a parameter of a device role (or of the pipeline) that nothing read
changes neither timing nor energy: it is either descriptive (its family schema says so, with a
reason) or a defect. ``tests/contracts/test_reach.py`` runs every shipped system and fails on such a defect.

Contract:

* :func:`unread` ``(cfg)`` → ``{"devices.<role>.params": [name, ...], "pipeline": [...]}`` (and
  ``tpu_ps``, ``topology``, ``energy``) with only
  the non-empty entries: the parameters no model has read so far, except descriptive ones and
  those a model or the system declared not to apply, with a reason
  (:meth:`~cxlsim.config.params.ParamSet.skip`);
* :func:`check_overrides` ``(cfg, sets)`` raises :class:`~cxlsim.errors.InputError` naming the first
  ``--set devices.<role>.params.<name>``, ``--set pipeline.<name>`` (or ``tpu_ps.``, ``topology.``,
  ``energy.``) whose parameter the run never
  read: such an override would be accepted and change nothing, so it is refused (exit 2). Call it
  after the run and after whatever the command reports (energy reads the energy parameters: a
  command that prices no energy refuses energy-only overrides). Other keys (``batches``, ``seed``,
  ``devices.<role>.preset``/``count``/``interleave_B``/``levels``, ``workload_overrides.*``) are
  structural and always take effect.
* :func:`check_file_keys` ``(cfg)``, called the same way on the configuration that ran, refuses as
  a :class:`~cxlsim.errors.ConfigError` naming the file and key a ``pipeline.``, ``energy.`` or
  ``topology.`` parameter that the system's own file sets and the run never read; a file it
  inherits from, and the platform's defaults, serve every system that uses them and are not refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.config import FILE_RANK, SystemConfig


def unread(cfg: SystemConfig) -> dict[str, list[str]]:
    """Non-descriptive parameters nothing has read, by config path (see module docstring)."""
    out: dict[str, list[str]] = {}
    for role, dev in cfg.devices.items():
        names = dev.params.unread()
        if names:
            out[f"devices.{role}.params"] = names
    if cfg.pipeline is not None and cfg.pipeline.unread():
        out["pipeline"] = cfg.pipeline.unread()
    if cfg.model_params is not None and cfg.model_params.unread():
        out[cfg.model_params_key] = cfg.model_params.unread()
    if cfg.topology.unread():
        out["topology"] = cfg.topology.unread()
    if cfg.energy.unread():
        out["energy"] = cfg.energy.unread()
    return out


def _target(cfg: SystemConfig, key: str):
    """The ParamSet and parameter name an override key sets, or None if it sets no parameter."""
    parts = key.split(".")
    if len(parts) == 4 and parts[0] == "devices" and parts[2] == "params" and parts[1] in cfg.devices:
        return cfg.devices[parts[1]].params, parts[3]
    if len(parts) == 2 and parts[0] == "pipeline" and cfg.pipeline is not None:
        return cfg.pipeline, parts[1]
    if len(parts) == 2 and parts[0] == cfg.model_params_key and cfg.model_params is not None:
        return cfg.model_params, parts[1]
    if len(parts) == 2 and parts[0] == "topology":
        return cfg.topology, parts[1]
    if len(parts) == 2 and parts[0] == "energy":
        return cfg.energy, parts[1]
    return None


def check_overrides(cfg: SystemConfig, sets: Iterable[tuple[str, Any]], what: str = "this run",
                    set_origins: Mapping[str, tuple[str, str]] | None = None) -> None:
    """Refuse the first override whose parameter ``what`` never read (module docstring), naming
    where ``set_origins`` says it came from (a sweep spec's axis, an option; ``(file or option, key
    path there)``) or else ``--set KEY``."""
    for key, _ in sets:
        target = _target(cfg, key)
        if target is None:
            continue
        params, name = target
        if name in params and name not in params.reads:
            why = params.skipped.get(name) or params.descriptive.get(name, "")
            because = f" ({why})" if why else ""
            message = (f"{what} of {cfg.name} never reads this parameter{because}, so the override would change "
                       "nothing (it is accepted only where it reaches timing or energy)")
            if set_origins and key in set_origins:
                raise ConfigError(*set_origins[key], message)
            raise InputError(f"--set {key}: {message}")


def check_file_keys(cfg: SystemConfig, what: str = "this run") -> None:
    """Refuse the first pipeline, topology or energy parameter that the system's own file
    sets (not a file it inherits from, not its platform, not a set) and ``what`` never read."""
    if cfg.origins is None:
        return
    # a model's own section (tpu_ps) is not checked: its policies apply by workload (placement
    # auto), so a file sets them for the workloads that read them
    for section, params in (("pipeline", cfg.pipeline), ("topology", cfg.topology), ("energy", cfg.energy)):
        if params is None:
            continue
        for name in params.keys():
            if name in params.reads or name in params.descriptive:
                continue
            given = cfg.origins.given_by(f"{section}.{name}")
            if given is None or given[0] != (FILE_RANK, 0):
                continue
            why = params.skipped.get(name) or ""
            because = f" ({why})" if why else ""
            raise ConfigError(given[1], given[2], f"{what} of {cfg.name} never reads this parameter{because}, so "
                              "the value would change nothing (remove it, or set it where it reaches timing or energy)")
