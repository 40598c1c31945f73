"""SSD family: NVMe solid-state drives.

Timing contract (units: ns, B, GB/s, J): the shared media mechanism of
:mod:`cxlsim.devices.memory.media.media` with 4 KiB pages as the access unit, flash parallel units as banks, a
command processor limiting IOPS, read-modify-write of sub-page writes, and no write-combining
buffer (the host-DRAM vector cache belongs to the system model). Queue-depth-limited IOPS follow
from the requester's ``outstanding`` limit (IOPS ≈ outstanding / latency until a resource
saturates). ``active_W`` is the data-sheet active power; ``background_W`` its idle power.
"""

from __future__ import annotations

from cxlsim.config.params import Param
from cxlsim.devices.memory.media import media
from cxlsim.devices.registry import DeviceFamily, register

UNIT_B = 4096  # flash page as seen by the host

SCHEMA = media.media_schema(
    "ssd", UNIT_B,
    extra=(Param("active_W", float, "active power of the drive (data sheet)", minimum=0,
                 descriptive="the data sheet's active power, from which read/write_media_pJ_per_bit are "
                             "derived (per-bit energy × bandwidth + background = active)"),),
)

FAMILY = register(DeviceFamily(
    name="ssd",
    doc="NVMe SSD: 4 KiB pages, queue-depth-limited IOPS, sequential bandwidth, sub-page RMW",
    schema=SCHEMA,
    build=media.build("ssd"),
    kind="memory",
    energy=media.energy,
    energy_params=media.ENERGY_PARAMS,
    capabilities=frozenset({"media", "block_device"}),
))
