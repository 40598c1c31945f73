"""The composite CXL memory device kind: a media preset behind a CXL controller, a link and
optionally a switch, built from the other kinds' families. Contract: :mod:`cxlsim.devices.cxl_mem.interface`."""
