"""Validate ``batches: auto`` against 20 measured batches, on every system × RM × platform.

    python -m cxlsim.studies.sampling                          # the paper's grid, both platforms
    python -m cxlsim.studies.sampling --systems cxl pmem --workloads rm1 --json check.json
    python -m cxlsim.studies.sampling --markdown               # the table in docs/validation.md

For each cell it runs the system twice with its configured seed: ``batches: auto`` (1 % target by
default, :mod:`cxlsim.systems.sampling`) and the reference, 20 measured batches after 2 warm-up
(every configuration's fixed counts), and reports the counts auto chose, both means with their
95 % intervals, and three checks:

Both intervals are the ones the runs state (:mod:`cxlsim.systems.sampling`: for the workload's
correlated batches, over whole periods of a periodic schedule).

- ``in_reference_ci``: the auto mean lies inside the 20-batch mean's 95 % interval (with a
  1e-9 relative tolerance: systems whose batches all take the same time have a zero-width one);
- ``reference_in_auto_ci``: the 20-batch mean lies inside the interval auto states;
- ``within_target``: the two means differ by at most auto's target (1 % of the reference).

It also reports the batch simulations each run cost (warm-up + measured + the closing batch) and
the wall time of each, so the saving is measured, not assumed.
"""
