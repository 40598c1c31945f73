"""Device models: DRAM, PMEM, SSD, CXL fabric, PCIe, GPU, host CPU, near-data logic.

Each family module declares a parameter schema, a pure timing model (functions of request size,
pattern and state returning time in ns, bytes moved and energy in J; no simpy), an analytic bound,
a simpy component adding queueing and contention, and a microbenchmark. Import a model without the
rest of the simulator::

    from cxlsim.devices import build_device
    pmem = build_device("pmem/optane-100")
"""

from cxlsim.devices.registry import build_device, get_family, load_families, register

__all__ = ["build_device", "get_family", "load_families", "register"]
