"""A platform's device roles must agree with the host they hang on.

The host CPU preset states what its sockets can attach: memory channels (``dram_channels_count``)
and the PCIe root port (``pcie_rate_GTps``, ``pcie_lanes_count``). A role that contradicts them
would model hardware the host cannot have (six DDR4 channels on a two-channel i5-9600K; a PCIe 4.0
link on its PCIe 3.0 root port, where the link trains at the slower end's rate). The check refuses
such a configuration with the role, the key and the host named, rather than letting a constant in
a platform file drift from the host it names.

Contract: :func:`check_host_agreement` ``(cfg, where)`` raises :class:`~cxlsim.errors.ConfigError`
for the first disagreement:

* a DRAM role on the host's memory controller (``host_dram``; ``table_memory`` of family ``dram``
  when the host CPU runs the embeddings) holds more modules than the host has channels (each
  module of a DRAM role is one channel with its own bus, :mod:`cxlsim.devices.memory.media.media`);
* the ``pcie`` role signals faster or wider than the host's root port.

A host preset without these facts (0 or absent) is not checked on them.
"""

from __future__ import annotations

from cxlsim.config.params import ParamSet
from cxlsim.devices.registry import has_capability
from cxlsim.errors import ConfigError


def _fact(params: ParamSet, name: str) -> float:
    return params[name] if name in params else 0


def host_dram_roles(cfg) -> list[str]:
    """The DRAM roles on the host's memory controller."""
    out = []
    engine = cfg.pipeline["embedding_engine"] if cfg.pipeline is not None else None
    for role, dev in cfg.devices.items():
        if not has_capability(dev.preset.family, "host_memory") or dev.via is not None:  # a CXL device's are its own
            continue
        if role == "host_dram" or (role == "table_memory" and engine == "host_cpu"):
            out.append(role)
    return out


def check_host_agreement(cfg, where: str) -> None:
    """Refuse roles that contradict the host CPU's channels or root port (module docstring)."""
    host = cfg.devices.get("host_cpu")
    if host is None:
        return
    hp = host.params
    channels = _fact(hp, "dram_channels_count")
    for role in host_dram_roles(cfg):
        dev = cfg.devices[role]
        if channels and dev.count > channels:
            raise ConfigError(where, f"devices.{role}.count",
                              f"{dev.count} modules of {dev.preset.name}, but the host {host.preset.name} has "
                              f"{channels} memory channels (dram_channels_count): a DRAM role's modules are the "
                              "host's channels (put more capacity on each: a preset of two DIMMs per channel)")
    pcie = cfg.devices.get("pcie")
    if pcie is None:
        return
    lp = pcie.params
    for link_key, host_key in (("rate_GTps", "pcie_rate_GTps"), ("lanes_count", "pcie_lanes_count")):
        limit = _fact(hp, host_key)
        if limit and lp[link_key] > limit:
            raise ConfigError(where, f"devices.pcie.params.{link_key}",
                              f"{lp[link_key]:g} on {pcie.preset.name}, but the host {host.preset.name}'s root port "
                              f"gives {limit:g} ({host_key}): the link trains at the slower end")
