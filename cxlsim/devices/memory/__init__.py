"""Memory families: modules holding data (DRAM, PMEM, SSD on the shared media model; HBM on an
accelerator package) and their interleaving. Contract: :mod:`cxlsim.devices.memory.interface`."""
