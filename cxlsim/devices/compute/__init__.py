"""Compute families: GPU (with its MLP timing tables and framework step), host CPU, TPU chip, host
package. Contract: :mod:`cxlsim.devices.compute.interface`."""
