"""Checkpoint storage adapter: save and load times from sizes, bandwidth and a fixed latency.

Contract: :meth:`Storage.storage_write_s` / :meth:`Storage.storage_read_s` take bytes and return
seconds (this package's time unit). :func:`preset_read_GBps` / :func:`preset_write_GBps` give a device
preset's sequential bandwidth in GB/s (the first of ``READ_KEYS`` / ``WRITE_KEYS`` the preset has);
other ``ft`` modules (e.g. the undo-log scheme's PMEM) use them too. Bandwidth is the aggregate of the storage (explicit scenario
parameters, e.g. an HDFS cluster's, or a device preset's sequential bandwidth × devices), capped by
the network between trainers and storage when ``network_GBps`` > 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from cxlsim.devices.registry import load_preset
from cxlsim.errors import ConfigError

#: Parameter names a device preset may use for sequential bandwidth (first found wins).
READ_KEYS = ("seq_read_bw_GBps", "read_bw_GBps", "read_bw_seq_GBps", "bw_GBps")
WRITE_KEYS = ("seq_write_bw_GBps", "write_bw_GBps", "write_bw_seq_GBps", "bw_GBps")


@dataclass(frozen=True)
class Storage:
    """Aggregate bandwidth (B/s) and a fixed per-operation latency (s)."""

    write_Bps: float
    read_Bps: float
    latency_s: float
    source: str = "scenario parameters"

    def storage_write_s(self, nbytes: float) -> float:
        return self.latency_s + nbytes / self.write_Bps if nbytes > 0 else 0.0

    def storage_read_s(self, nbytes: float) -> float:
        return self.latency_s + nbytes / self.read_Bps if nbytes > 0 else 0.0


def preset_bw_GBps(name: str, keys: tuple[str, ...], where: str) -> float:
    """Sequential bandwidth (GB/s) of device preset ``name``: its first parameter among ``keys``.
    ``where`` names the scenario file in the error when the preset has none."""
    params = load_preset(name).params
    for key in keys:
        if key in params:
            return float(params[key])
    raise ConfigError(where, "storage.device_name", f"preset {name} has no sequential bandwidth parameter")


def preset_read_GBps(name: str, where: str) -> float:
    """Sequential read bandwidth (GB/s) of device preset ``name``."""
    return preset_bw_GBps(name, READ_KEYS, where)


def preset_write_GBps(name: str, where: str) -> float:
    """Sequential write bandwidth (GB/s) of device preset ``name``."""
    return preset_bw_GBps(name, WRITE_KEYS, where)


def from_scenario(storage, where: str = "scenario") -> Storage:
    """Build the adapter from a scenario's ``storage`` section."""
    write_GBps, read_GBps, source = storage.write_GBps, storage.read_GBps, "scenario parameters"
    if storage.device_name:
        n = storage.devices_count
        write_GBps = n * preset_write_GBps(storage.device_name, where)
        read_GBps = n * preset_read_GBps(storage.device_name, where)
        source = f"{n} × {storage.device_name}"
    if storage.network_GBps > 0:
        write_GBps = min(write_GBps, storage.network_GBps)
        read_GBps = min(read_GBps, storage.network_GBps)
        source += f", capped by a {storage.network_GBps:g} GB/s network"
    return Storage(write_GBps * 1e9, read_GBps * 1e9, storage.latency_s, source)
