"""The home of the ``redo`` persistence scheme (per-batch redo records):

- :mod:`.scheme`: the pipeline axis implementation (``persistence: redo``,
  :class:`~cxlsim.axes.persistence.redo.scheme.Redo`): its steps in the batch dataflow and their
  timing, and the crash hooks that hand over to
- :mod:`.crash`: its byte-level crash protocol and recovery (imported by a crash campaign only).

It has no cluster-level ft scheme.

Declared by one entry-point line in pyproject.toml (``cxlsim.axes.persistence``); :mod:`cxlsim.crash`
finds it there, never by import.
"""
