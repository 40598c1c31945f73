"""Logic on a memory device: near-data processing and checkpointing logic. Contract:
:mod:`cxlsim.devices.logic.interface`."""
