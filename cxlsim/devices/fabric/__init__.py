"""Fabric families: CXL links, switches and protocol controllers, PCIe, and the path a message
crosses (:mod:`.cxl_path`: no family). Contract: :mod:`cxlsim.devices.fabric.interface`."""
