"""What the paper's comparison covers: its systems, workloads, Figure-12 runs and baseline.

Light on purpose (the command line reads it to build ``--help``); :mod:`cxlsim.studies.paper.simulation`
runs the comparison.
"""

from __future__ import annotations

from cxlsim.sweep.lists import sweep_lists
from cxlsim.systems.config import list_systems, load_system

#: The catalog sweep (``configs/sweeps/<name>.yaml``) that states the paper's comparison: its
#: systems (docs/design.md#systems-compared in the paper's order, then the schemes cxlsim adds) and
#: workloads.
PAPER_SWEEP = "paper"
#: The catalog sweep of Figure 12's runs: the three TrainingCXL variants on one embedding-intensive
#: model (its systems and first workload; :func:`timeline_runs`). A reproduction draws their
#: timelines over two measured batches.
TIMELINE_SWEEP = "fig12"
TIMELINE_BATCHES = 2
#: The catalog sweep whose ``platform`` axis lists the platforms a reproduction runs (:func:`platforms`).
PLATFORM_SWEEP = "reproduce"
BASELINE = "pmem"


def timeline_runs() -> tuple[tuple[str, ...], str]:
    """Figure 12's ``(systems, workload)``, from the catalog sweep :data:`TIMELINE_SWEEP`."""
    lists = sweep_lists(TIMELINE_SWEEP, needs=("systems", "workloads"))
    return lists.systems, lists.workloads[0]


def platforms(name: str = PLATFORM_SWEEP) -> tuple[str, ...]:
    """The platforms a reproduction runs, the values of the catalog sweep's ``platform`` axis: the
    paper's apparatus first (its figures keep the plain names), then the design on real devices
    (figures and results with a ``_physical`` suffix)."""
    return sweep_lists(name, needs=("platforms",)).platforms


def suffix(platform: str) -> str:
    """File-name suffix of a platform's figures and results: none for the first (the paper's)."""
    return "" if platform == platforms()[0] else f"_{platform}"


def sweep_grid(name: str = PAPER_SWEEP) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``base.systems`` and ``base.workloads`` of the catalog sweep ``configs/sweeps/<name>.yaml``
    (:func:`~cxlsim.sweep.lists.sweep_lists`: ``$CXLSIM_PATH`` shadows the shipped one), in its
    order; :class:`~cxlsim.errors.ConfigError` naming the file and key when it is missing or invalid."""
    lists = sweep_lists(name, needs=("systems", "workloads"))
    return lists.systems, lists.workloads


def default_systems() -> list[str]:
    """The paper sweep's systems that have a configuration, in its order."""
    known = set(list_systems())
    return [s for s in sweep_grid()[0] if s in known]


def paper_workloads() -> list[str]:
    """The paper sweep's workloads, in its order."""
    return list(sweep_grid()[1])


def dataflow_systems(name: str = PAPER_SWEEP) -> tuple[str, ...]:
    """The sweep's systems that the op-graph model runs (those with a pipeline, as their simulation
    model declares; the analytic ``tpu_ps`` model has its own tests and figures), in its order."""
    known = set(list_systems())
    return tuple(s for s in sweep_grid(name)[0] if s in known and load_system(s).pipeline is not None)
