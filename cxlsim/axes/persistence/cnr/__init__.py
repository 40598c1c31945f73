"""The home of the ``cnr`` persistence scheme (Check-N-Run-style incremental checkpoints), every
level of it in one folder:

- :mod:`.scheme`: the pipeline axis implementation (``persistence: cnr``,
  :class:`~cxlsim.axes.persistence.cnr.scheme.CheckNRun`): its steps in the batch dataflow and their
  timing, and the crash hooks that hand over to
- :mod:`.crash`: its byte-level crash protocol and recovery (imported by a crash campaign only);
- :mod:`.ft`: the cluster-level failure-tolerance scheme (``kind: check-n-run`` of a scenario).

Each part is declared by one entry-point line in pyproject.toml (``cxlsim.axes.persistence``,
``cxlsim.ft_schemes``); :mod:`cxlsim.crash` and :mod:`cxlsim.ft` find them there, never by import.
"""
