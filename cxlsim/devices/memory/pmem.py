"""PMEM family: persistent-memory modules (Optane-like DIMMs or emulated PMEM controllers).

Timing contract (units: ns, B, GB/s, J): the shared media mechanism of
:mod:`cxlsim.devices.memory.media.media` with a 256 B internal unit (XPLine), a write-combining buffer (XPBuffer,
LRU), read-modify-write of partial lines that miss it, and per-line read-after-write waits decided
per access from the real address stream. A write is durable once acknowledged (ADR domain); writes
in flight at a crash may be torn at 64 B. Presets are data, not subclasses: ``pmem/optane-100``
(first-generation Optane DC PMM) and ``pmem/paper`` (the paper's emulated PMEM, ratio-derived from
``dram/ddr4-2666``). ``build(params)`` returns a :class:`~cxlsim.devices.memory.media.media.MediaModel`.
"""

from __future__ import annotations

from cxlsim.devices.memory.media import media
from cxlsim.devices.registry import DeviceFamily, register

UNIT_B = 256  # Optane XPLine

SCHEMA = media.media_schema("pmem", UNIT_B)

FAMILY = register(DeviceFamily(
    name="pmem",
    doc="persistent memory module: 256 B lines, write-combining buffer, RMW, read-after-write",
    schema=SCHEMA,
    build=media.build("pmem"),
    kind="memory",
    energy=media.energy,
    energy_params=media.ENERGY_PARAMS,
    capabilities=frozenset({"media", "persistent"}),
))
