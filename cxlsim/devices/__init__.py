"""Device models: DRAM, PMEM, SSD, CXL fabric, PCIe, GPU, host CPU, near-data and checkpointing logic.

A standalone library: it needs neither simpy nor the rest of the simulator, and numba only once a
media model (DRAM, PMEM, SSD) is built. Every family follows one API, stated in
:mod:`cxlsim.devices.base` (``.params``, ``*_ns`` times, ``*_cost`` -> :class:`~.base.Cost`,
``bound_ns(op, *args)``, ``*_B`` bytes, energy on the models); ``docs/devices.md`` has an example
per family::

    from cxlsim.devices import build_device
    pmem = build_device("pmem/optane-100")
    pmem.read_ns(1024, 256), pmem.bound_ns("read", 1024, 256)

Models are composed by passing models, never preset names: a CXL protocol times its operations over
a :class:`~cxlsim.devices.fabric.cxl_path.FabricPath` built from link and switch models.
"""

from cxlsim.devices.registry import build_device, family_names, get_family, load_preset, register

__all__ = ["build_device", "family_names", "get_family", "load_preset", "register"]
