"""The one unit system used inside cxlsim, and the conversions from key-name units.

Inside the simulator every quantity is in these base units:

========  =========  ==================================================
quantity  base unit  note
========  =========  ==================================================
time      ns         float64; simpy's clock counts nanoseconds
data      B          bytes (int or float)
rate      B/ns       numerically equal to GB/s (1 GB/s = 1e9 B/s = 1 B/ns)
energy    J          joules
power     W          watts; ``W * ns * 1e-9`` gives joules
========  =========  ==================================================

Configuration keys carry their unit in their name (``read_latency_ns``, ``bw_GBps``,
``capacity_GB``, ``read_pJ_per_bit``). ``UNIT_SUFFIXES`` lists the suffixes a parameter name may
end with and the factor that converts a value in that unit into the base unit above.
"""

from __future__ import annotations

# time
NS = 1.0
US = 1e3
MS = 1e6
S = 1e9

# data (decimal for storage/bandwidth marketing units, binary where the name says so)
B = 1
KB = 1e3
MB = 1e6
GB = 1e9
KiB = 1024
MiB = 1024**2
GiB = 1024**3

# element sizes (B) of the data types the models move
#: One fp32 value (embedding and MLP parameters, activations, gradients).
FP32_B = 4
#: One embedding index as it travels to a memory device (the batch's row numbers, DMAed to the
#: CXL-MEM or copied over PCIe): int32, as tables stay below 2**32 rows (docs/timing-model.md).
WIRE_INDEX_B = 4
#: One element of a PyTorch index tensor on the GPU (int64, torch.long: the interaction's tril
#: indices); a different quantity from WIRE_INDEX_B, which is the device-side wire format.
TORCH_INDEX_B = 8

# energy
PJ = 1e-12
NJ = 1e-9
J = 1.0

#: Suffix of a parameter name -> (human unit, factor to the base unit of its quantity).
UNIT_SUFFIXES: dict[str, tuple[str, float]] = {
    "_ns": ("ns", NS),
    "_us": ("µs", US),
    "_ms": ("ms", MS),
    "_s": ("s", S),
    "_B": ("B", B),
    "_KiB": ("KiB", KiB),
    "_MiB": ("MiB", MiB),
    "_GiB": ("GiB", GiB),
    "_GB": ("GB", GB),
    "_GBps": ("GB/s", 1.0),  # 1 GB/s == 1 B/ns
    "_GTps": ("GT/s", 1.0),
    "_MHz": ("MHz", 1.0),
    "_GHz": ("GHz", 1.0),
    "_IOPS": ("IO/s", 1.0),
    "_W": ("W", 1.0),
    "_pJ_per_bit": ("pJ/bit", PJ),
    "_pJ_per_op": ("pJ/op", PJ),
    "_pJ_per_B": ("pJ/B", PJ),
    "_nJ": ("nJ", NJ),
    "_FLOPps": ("FLOP/s", 1.0),
    "_TFLOPps": ("TFLOP/s", 1.0),
    "_count": ("count", 1.0),
    "_entries": ("entries", 1.0),
    "_lanes": ("lanes", 1.0),
    "_bits": ("bits", 1.0),
    "_ratio": ("×", 1.0),
    "_fraction": ("fraction", 1.0),
    "_factor": ("×", 1.0),
    "_policy": ("", 1.0),
    "_name": ("", 1.0),
    "_path": ("", 1.0),
}


def unit_of(key: str) -> str | None:
    """Return the human unit named by ``key``'s suffix, or None if it names no unit."""
    for suffix in sorted(UNIT_SUFFIXES, key=len, reverse=True):
        if key.endswith(suffix):
            return UNIT_SUFFIXES[suffix][0]
    return None


def watts_over(power_W: float, duration_ns: float) -> float:
    """Energy in joules of ``power_W`` sustained for ``duration_ns``."""
    return power_W * duration_ns * 1e-9
