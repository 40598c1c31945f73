"""Hold the symmetry reduction (:mod:`cxlsim.systems.symmetry`) against full detail.

    python -m cxlsim.studies.symmetry                 # the table of docs/scale-out.md
    python -m cxlsim.studies.symmetry --points 2x2 16x4 --workloads rm1 rm4

Each point runs one system on one workload at ``G`` GPUs × ``M`` CXL-MEMs twice, in full detail
(``topology.symmetry: off``) and reduced (``on``), with the same seed, batches and settings as the
scale-out study at scale (``row_sharded`` tables, a 32 MiB scratchpad, one switch level while the
devices fit its 15 ports, else two), and reports the batch time (throughput is samples over it, so
its relative error is the batch time's, inverted), the most utilised resource of each, their kinds
(the resource less its device number: ``ndp.3`` → ``ndp``) and wall time.
"""
