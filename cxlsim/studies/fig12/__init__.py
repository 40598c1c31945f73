"""The Figure 12 calibration points (docs/design.md#calibration) of a run, for
``docs/validation.md``.

    python -m cxlsim.studies.fig12                       # both platforms, RM1, batch 2
    python -m cxlsim.studies.fig12 --platform prototype --json
    python -m cxlsim.studies.fig12 --implied              # the batch each paper duration implies

For the systems of ``configs/sweeps/fig12.yaml`` (``cxl-d``, ``cxl-b`` and ``cxl``) on its first
workload (RM1; seed 1, two warm-up batches) and on its platforms, the first measured batch's steps
as intervals from its ``begin`` (ms): the GPU phases, the lookup, the update, the logs or redo
record, and the batch time; the paper's values beside them (docs/design.md#calibration, its Figure
12).
"""
