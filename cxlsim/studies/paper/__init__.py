"""The paper's comparison (``cxlsim reproduce``): RM1–RM4 on the systems of
docs/design.md#systems-compared on each of its platforms, Figure 12's timelines, the summary against
``pmem`` and Figures 11–13.

* :mod:`~cxlsim.studies.paper.settings`: what it covers (``configs/sweeps/paper.yaml``'s systems and
  workloads, ``reproduce.yaml``'s platforms, ``fig12.yaml``'s timeline runs, the baseline);
* :mod:`~cxlsim.studies.paper.simulation`: its plan, its runs as sweep points on an executor, and
  the summary of each platform's results;
* :mod:`~cxlsim.studies.paper.report`: the summary tables and Figures 11–13, drawn from a results
  document alone.

Its command is ``cxlsim reproduce`` (:mod:`cxlsim.cli.reproduce`).
"""
