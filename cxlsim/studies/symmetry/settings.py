"""What the symmetry check runs: its validation points and each run's overrides."""

from __future__ import annotations

from typing import Any

#: Validation points (GPUs, CXL-MEMs): two to sixteen groups, 1:1 and 4:1 GPUs per CXL-MEM.
POINTS = ((2, 2), (4, 4), (8, 2), (8, 8), (16, 4), (16, 16))
ONE_LEVEL_PORTS = 15


def settings(gpus: int, mems: int, symmetry: str) -> dict[str, Any]:
    """The overrides of one run (the package docstring)."""
    return {"topology.gpus_count": gpus, "topology.cxl_mems_count": mems, "topology.tables_policy": "row_sharded",
            "topology.symmetry": symmetry, "devices.ndp.params.scratchpad_KiB": 32768,
            "devices.switch.levels": 1 if gpus + mems <= ONE_LEVEL_PORTS else 2}
