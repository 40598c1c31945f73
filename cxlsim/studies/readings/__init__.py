"""The paper's headline claims under each reading it leaves open (docs/workloads.md).

    python -m cxlsim.studies.readings                         # RM1-RM4, 3 measured batches
    python -m cxlsim.studies.readings --markdown --json readings.json

The paper (and the apparatus it measured) leaves open how to read several facts, and each reading
moves a headline more than some mechanisms do. :data:`READINGS` names them: the bag sizes (fixed
80 rows, or the DLRM benchmark's uniform sizes with distinct rows), the MLP parameters' width in
logs and records, the energy of the emulated PMEM (as built, DDR4; or as the Optane it emulates),
when ``cxl-b``'s embedding log starts, whether ``ssd``'s vector cache starts empty or in steady
state, the emulated PMEM's access unit (Optane's 256 B XPLine, or the delaying DDR4 controller's
64 B burst) and the host's last-level cache. Each has the reading the audited revision (0ad86b6)
used and another one.

Columns: ``audited`` (every reading as at 0ad86b6, with the two defects the audit found fixed:
the ``pcie`` bounce and the DRAM channels / PCIe rate of the i5-9600K); then each reading changed
on its own (the others kept audited); then ``defaults`` (cxlsim's defaults: every reading as this
revision argues it, ``docs/workloads.md``, ``docs/energy.md``, ``docs/timing-model.md``). Rows:
the headline claims (:data:`CLAIMS`) with the paper's value. A reading that does not reach a system
reuses the ``audited`` run of that system.

The systems, workloads and platform are those of ``configs/sweeps/readings.yaml``. Runs are short
(``--batches`` measured after two warm-up batches) and deterministic for a seed; ``--markdown``
prints the table ``docs/validation.md`` holds.
"""
