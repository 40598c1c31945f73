"""Which of the paper's conclusions survive the prototype platform's named assumptions (×0.5, ×2).

    python -m cxlsim.studies.platform_study                        # RM1-RM4, 2 measured batches
    python -m cxlsim.studies.platform_study --workloads rm1 --batches 2 --json study.json --markdown

The ``prototype`` platform (``configs/platforms/prototype.yaml``) fills what the paper leaves
unknown about its apparatus with named assumptions (:data:`ASSUMPTIONS`: the RISC-V host's clock,
IPC and MMIO cost, the i5-9600K's last-level cache in front of tables, the U200 links' efficiency and latency, the FPGA logic's outstanding requests,
the split of the 512 GB Optane into modules, the emulated PMEM's requests in flight). Each is set to
half and to twice its preset value (the emulated PMEM's requests in flight also to a quarter: 4,
the count Table 2's write bandwidth implies; the host's last-level cache also to 0: off; a
measured parameter, the U200's DMA efficiency per direction, instead to each of its sources'
readings, :attr:`Assumption.readings`), on every role of the prototype whose preset it belongs to (an
efficiency is capped at 1), and every system it reaches is simulated again; systems it does not
reach keep their base runs. For each variant the study reports the paper's conclusions
(:data:`CONCLUSIONS`) per workload and whether they still hold, plus each CXL system's speed-up
over ``pmem`` (geometric mean over the workloads).

The systems, workloads and the platform are those of ``configs/sweeps/platform-study.yaml``
(:func:`study_lists`). Runs are short (``--batches`` measured after one warm-up batch, full-size
workloads) and deterministic for a seed; ``--markdown`` prints the table ``docs/validation.md`` holds.
"""
