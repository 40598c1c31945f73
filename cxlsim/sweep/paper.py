"""What the paper's comparison covers: its systems, workloads, Figure-12 runs and baseline.

Light on purpose (the command line reads it to build ``--help``); :mod:`cxlsim.sweep.reproduce`
runs the comparison.
"""

from __future__ import annotations

from cxlsim.systems.config import list_systems

#: SPEC §1.4, in the paper's order; those without a configs/<name>.yaml are left out.
PAPER_SYSTEMS = ("ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram", "tpu-ps")
WORKLOADS = ("rm1", "rm2", "rm3", "rm4")
#: Figure 12: the three TrainingCXL variants on one embedding-intensive model, two batches.
TIMELINE_SYSTEMS = ("cxl-d", "cxl-b", "cxl")
TIMELINE_WORKLOAD = "rm1"
TIMELINE_BATCHES = 2
BASELINE = "pmem"


def default_systems() -> list[str]:
    """The paper's systems that have a configuration, in the paper's order."""
    known = set(list_systems())
    return [s for s in PAPER_SYSTEMS if s in known]
