"""Read the scale-out sweep (``configs/sweeps/scale-out.yaml``): the figure and the tables of
``docs/scale-out.md``.

    cxlsim sweep configs/sweeps/scale-out.yaml --out out/scale-out
    cxlsim sweep configs/sweeps/scale-out-1024.yaml --out out/scale-out-1024
    python -m cxlsim.studies.scaleout out/scale-out out/scale-out-1024   # plots/scale_out.png + tables
    python -m cxlsim.studies.scaleout out/scale-out --plot FILE --markdown
    python -m cxlsim.studies.scaleout plots/scale_out_results.csv plots/scale_out_1024_results.csv

Each finished point gives a system, a workload, its GPUs ``G`` (``topology.gpus_count``; tpu-ps:
chips), CXL-MEMs or PCIe cards ``M``, switch levels ``L``, the whole system's throughput, energy
per batch and its most utilised resource. *Balanced* points have ``M = min(G, 7)`` memory devices
(one switch level holds 15 devices) on one switch level; host PMEM has one host whatever ``G``.
*At scale* (``configs/sweeps/scale-out-1024.yaml``): 16 to 1,024 GPUs with a CXL-MEM or card per 4
GPUs (``M = G / 4``, row-sharded, two or three switch levels; ``tpu-ps`` as many chips as GPUs).
The figure plots throughput and energy per sample against ``G`` (log, 1 to 1,024) for the balanced
points of every system (solid; ``cxl`` with one CXL-MEM, dashed) and the points at scale (dotted,
square markers), one column per workload. Each argument is a sweep folder (its ``points.jsonl``)
or a sweep's ``results.csv`` (no bottleneck there). The tables and the figure cover the systems (in
name order) and workloads (in file order) of both sweeps (:func:`study_lists`).
"""
