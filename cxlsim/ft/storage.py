"""Checkpoint storage adapter: save and load times from sizes, bandwidth and a fixed latency.

Contract: :meth:`Storage.storage_write_s` / :meth:`Storage.storage_read_s` take bytes and return
seconds (this package's time unit). Bandwidth is the aggregate of the storage (explicit scenario
parameters, e.g. an HDFS cluster's, or a device preset's sequential bandwidth × devices), capped by
the network between trainers and storage when ``network_GBps`` > 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from cxlsim.errors import ConfigError

#: Parameter names a device preset may use for sequential bandwidth (first found wins).
_READ_KEYS = ("seq_read_bw_GBps", "read_bw_GBps", "read_bw_seq_GBps", "bw_GBps")
_WRITE_KEYS = ("seq_write_bw_GBps", "write_bw_GBps", "write_bw_seq_GBps", "bw_GBps")


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


def _preset_bw(name: str, keys: tuple[str, ...], where: str) -> float:
    from cxlsim.config.catalog import load_preset

    params = load_preset(name).params
    for key in keys:
        if key in params:
            return float(params[key])
    raise ConfigError(where, "storage.device_name", f"preset {name} has no sequential bandwidth parameter")


def from_scenario(storage, where: str = "scenario") -> Storage:
    """Build the adapter from a scenario's ``storage`` section."""
    write_GBps, read_GBps, source = storage.write_GBps, storage.read_GBps, "scenario parameters"
    if storage.device_name:
        n = storage.devices_count
        write_GBps = n * _preset_bw(storage.device_name, _WRITE_KEYS, where)
        read_GBps = n * _preset_bw(storage.device_name, _READ_KEYS, where)
        source = f"{n} × {storage.device_name}"
    if storage.network_GBps > 0:
        write_GBps = min(write_GBps, storage.network_GBps)
        read_GBps = min(read_GBps, storage.network_GBps)
        source += f", capped by a {storage.network_GBps:g} GB/s network"
    return Storage(write_GBps * 1e9, read_GBps * 1e9, storage.latency_s, source)
