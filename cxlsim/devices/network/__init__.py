"""Data-centre network elements: NIC, parameter server, and the TPU inter-chip interconnect.
Contract: :mod:`cxlsim.devices.network.interface`."""
