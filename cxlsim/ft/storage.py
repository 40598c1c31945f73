"""Checkpoint storage adapter: save and load times from sizes, bandwidth and a fixed latency.

Contract: :meth:`Storage.storage_write_s` / :meth:`Storage.storage_read_s` take bytes and return
seconds (this package's time unit). :func:`preset_read_GBps` / :func:`preset_write_GBps` give a
memory preset's sustained media bandwidth of one module in GB/s: ``read_bw_GBps`` /
``write_bw_GBps``, which every family of the memory kind declares (the media schema); a preset of
another kind is refused. Other ``ft`` modules (e.g. the undo-log scheme's PMEM) use them too. Bandwidth is the aggregate of the storage (explicit scenario
parameters, e.g. an HDFS cluster's, or a device preset's sequential bandwidth × devices), capped by
the network between trainers and storage when ``network_GBps`` > 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from cxlsim.devices.registry import family_kind, load_preset
from cxlsim.errors import ConfigError

#: The family kind a storage or log device must be of: its schema declares the two bandwidths.
MEMORY_KIND = "memory"


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


def preset_bw_GBps(name: str, key: str, where: str) -> float:
    """Parameter ``key`` (``read_bw_GBps`` or ``write_bw_GBps``) of memory preset ``name``. ``where``
    names the scenario file in the error when the preset is of another kind."""
    pre = load_preset(name)
    kind = family_kind(pre.family)
    if kind != MEMORY_KIND:
        raise ConfigError(where, "storage.device_name", f"preset {name} is a {pre.family} device ({kind}); a "
                          f"storage or log device is a {MEMORY_KIND} device (dram, pmem, ssd, …)")
    return float(pre.params[key])


def preset_read_GBps(name: str, where: str) -> float:
    """Sustained media read bandwidth (GB/s) of one module of memory preset ``name``."""
    return preset_bw_GBps(name, "read_bw_GBps", where)


def preset_write_GBps(name: str, where: str) -> float:
    """Sustained media write bandwidth (GB/s) of one module of memory preset ``name``."""
    return preset_bw_GBps(name, "write_bw_GBps", where)


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
