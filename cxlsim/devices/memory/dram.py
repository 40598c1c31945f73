"""DRAM family: DDR4 modules (one RDIMM on its own channel per module).

Timing contract (units: ns, B, GB/s, J): the shared media mechanism of
:mod:`cxlsim.devices.memory.media.media` with a 64 B burst as access unit, banks as parallel units, no
write-combining buffer and no read-modify-write (masked writes); the controller forwards pending
writes to reads, so DRAM shows no read-after-write stall. Reads are sequential (open row) or random;
writes are acknowledged by the memory controller (ADR domain). ``build(params)`` returns a
:class:`~cxlsim.devices.memory.media.media.MediaModel`; presets live in ``devices/dram/``.
"""

from __future__ import annotations

from cxlsim.devices.memory.media import media
from cxlsim.devices.registry import DeviceFamily, register

UNIT_B = 64  # one DDR4 burst: BL8 × 8 B

SCHEMA = media.media_schema("dram", UNIT_B)

FAMILY = register(DeviceFamily(
    name="dram",
    doc="DDR4 DRAM module (one DIMM per channel): latency, bandwidth, energy per bit, background power",
    schema=SCHEMA,
    build=media.build("dram"),
    kind="memory",
    energy=media.energy,
    energy_params=media.ENERGY_PARAMS,
    capabilities=frozenset({"media", "host_memory"}),
))
