"""Interactions, one file each (:mod:`.dot`, :mod:`.cat`, :mod:`.dcn`), behind the contract of
:mod:`.interface` and the registry of :mod:`.registry` (docs/extending.md, "A new workload with a
new interaction")."""

from cxlsim.workloads.interactions.interface import (
    Gemm,
    Interaction,
    InteractionBase,
    Kernel,
    Stream,
    check_direction,
    kernel_flops,
    parameter_count,
    weight_macs_per_sample,
)
from cxlsim.workloads.interactions.registry import get, names, register

__all__ = ["Gemm", "Interaction", "InteractionBase", "Kernel", "Stream", "check_direction", "get", "kernel_flops", "names",
           "parameter_count", "register", "weight_macs_per_sample"]
