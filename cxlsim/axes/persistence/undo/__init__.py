"""The home of the ``undo`` persistence scheme (TrainingCXL's batch-aware undo log), every level
of it in one folder:

- :mod:`.scheme`: the pipeline axis implementation (``persistence: undo``,
  :class:`~cxlsim.axes.persistence.undo.scheme.Undo`): its steps in the batch dataflow and their
  timing, and the crash hooks that hand over to
- :mod:`.crash`: its byte-level crash protocol and recovery (imported by a crash campaign only);
- :mod:`.ft`: the cluster-level failure-tolerance scheme (``kind: undo-log`` of a scenario);
- :mod:`.log_timing`: the logging rates the ft scheme takes from a simulated undo-logging system.

Each part is declared by one entry-point line in pyproject.toml (``cxlsim.axes.persistence``,
``cxlsim.ft_schemes``); :mod:`cxlsim.crash` and :mod:`cxlsim.ft` find them there, never by import.
"""
