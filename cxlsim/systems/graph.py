"""The one object graph of a system: each role's device model, built once, and the paths between them.

Contract: :func:`build_devices` ``(cfg)`` builds the model of every role of ``cfg`` exactly once
(``build_device`` semantics: the role's preset with its overrides); the machine that times the
system, capacity provisioning and the energy model all read these objects, so a parameter set on a
role is the parameter every one of them uses. No device model looks another preset up: the CXL
paths are composed from the link and switch role models by the system's switch tree
(:class:`cxlsim.systems.topology.Fabric`).

The host's memory: every host has DRAM holding its OS, framework and input pipeline
(``host_cpu.software_memory_GB``). A DRAM role holds it where the system has one (``host_dram``, or
the table memory of the ``dram`` system); otherwise it is an implicit pool of the host CPU's DRAM
module type (``host_cpu.host_dram_preset_name``), built here as :attr:`DeviceGraph.host_memory`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cxlsim.devices.registry import family_kind, get_family, has_capability, load_preset
from cxlsim.systems.config import MEMORY_KIND, DeviceRole, SystemConfig


@dataclass(frozen=True)
class DeviceGraph:
    """Every role's model of one system, built once (module docstring)."""

    config: SystemConfig
    models: Mapping[str, Any]  # role -> model
    host_memory_role: str | None  # the DRAM role holding the host's memory, None: implicit pool
    host_memory: Any | None  # the implicit pool's module model (when host_memory_role is None)
    host_memory_family: str | None = None  # its device family
    #: role -> the CXL memory device its modules sit behind (:attr:`~cxlsim.systems.config.DeviceRole.via`)
    attached: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, role: str) -> Any:
        return self.models[role]

    def get(self, role: str) -> Any | None:
        return self.models.get(role)

    def has(self, role: str) -> bool:
        return role in self.models

    def family(self, role: str) -> str:
        """The device family of ``role``'s model."""
        return self.config.devices[role].preset.family

    def memory_roles(self) -> list[str]:
        """The roles whose family is of the memory kind (capacity-provisioned modules,
        :mod:`cxlsim.systems.provision`), in the configuration's order."""
        return [r for r in self.models if family_kind(self.family(r)) == MEMORY_KIND]

    def family_of(self, model: Any) -> str:
        """The device family of ``model``, one of this graph's role models (the fabric's links are)."""
        for role, m in self.models.items():
            if m is model:
                return self.family(role)
        raise KeyError(f"{model!r} is no model of this device graph")


def build_role(role: DeviceRole) -> Any:
    """The model of one role (its preset's family, its validated parameters)."""
    return get_family(role.preset.family).build(role.params)


def build_devices(cfg: SystemConfig) -> DeviceGraph:
    """Build every role of ``cfg`` once (module docstring)."""
    models = {role: build_role(d) for role, d in cfg.devices.items()}
    attached = {role: get_family(d.via.family).build(d.via.params) for role, d in cfg.devices.items()
                if d.via is not None}
    holder, implicit, family = _host_memory(cfg, models)
    return DeviceGraph(cfg, models, holder, implicit, family, attached)


def _host_memory(cfg: SystemConfig, models: Mapping[str, Any]) -> tuple[str | None, Any | None, str | None]:
    """Which DRAM role holds the host's memory, or the implicit pool's module model and family."""
    if cfg.pipeline is None:
        return None, None, None
    if "host_dram" in models:
        holder = "host_dram"
    elif (has_capability(cfg.devices[cfg.pipeline.tables_on].preset.family, "host_memory")
          and cfg.devices[cfg.pipeline.tables_on].via is None):  # behind a CXL device it is not the host's
        holder = cfg.pipeline.tables_on
    else:
        preset = load_preset(cfg.role("host_cpu").params.host_dram_preset_name)
        return None, get_family(preset.family).build(preset.params), preset.family
    cfg.role("host_cpu").params.skip("host_dram_preset_name",
                                     f"the {holder} role holds the host's memory in {cfg.name}")
    return holder, None, None
