"""What the scale-out study reads: its two catalog sweeps, their lists and the GPU counts at scale."""

from __future__ import annotations

from cxlsim.sweep.lists import axis_values, sweep_lists

#: The catalog sweeps this module reads the points of: the balanced study and the study at scale.
SWEEPS = ("scale-out", "scale-out-1024")
MAX_MEMS_ONE_LEVEL = 7
#: the study at scale: GPUs per CXL-MEM (or card) and its GPU counts
GPUS_PER_MEM_AT_SCALE = 4
COLORS = {"cxl": "#55A868", "cxl-b": "#4C72B0", "cxl-d": "#8172B2", "pcie": "#C44E52", "pmem": "#CCB974",
          "tpu-ps": "#64B5CD"}


def study_lists() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The systems (in name order) and the workloads (in file order) of :data:`SWEEPS` together."""
    both = [sweep_lists(name, needs=("systems", "workloads")) for name in SWEEPS]
    systems = sorted({s for lists in both for s in lists.systems})
    return tuple(systems), tuple(dict.fromkeys(w for lists in both for w in lists.workloads))


def scale_gpus() -> tuple[int, ...]:
    """The GPU counts of the study at scale: the ``topology.gpus_count`` axis of its sweep
    (``configs/sweeps/scale-out-1024.yaml``)."""
    return axis_values(SWEEPS[1], "topology.gpus_count")
