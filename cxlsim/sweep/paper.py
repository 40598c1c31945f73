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
#: The platforms a reproduction runs: the paper's apparatus first (its figures keep the plain
#: names), then the design on real devices (figures and results with a ``_physical`` suffix).
PLATFORMS = ("prototype", "physical")


def suffix(platform: str) -> str:
    """File-name suffix of a platform's figures and results: none for the first (the paper's)."""
    return "" if platform == PLATFORMS[0] else f"_{platform}"


def default_systems() -> list[str]:
    """The paper's systems that have a configuration, in the paper's order."""
    known = set(list_systems())
    return [s for s in PAPER_SYSTEMS if s in known]
