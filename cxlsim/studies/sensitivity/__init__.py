"""How the energy normalised to ``pmem`` moves when the weakest energy parameters vary.

    python -m cxlsim.studies.sensitivity                       # RM1, 2 measured batches
    python -m cxlsim.studies.sensitivity --workloads rm1 rm4 --batches 2 --json sens.json

Each system is simulated once per workload; every variant re-prices that run with dotted
overrides (``devices.<role>.params.<key>=v`` on every role whose preset is of the variant's family,
in the system and in the baseline alike). Energy parameters do not enter timing, so re-pricing
equals re-simulating with ``--set`` (``tests/energy/test_energy.py`` checks it). Variants (ranges in
``docs/validation.md``, Energy section):

* ``pmem_background_W`` — PMEM idle power per module, media energy per bit as in the preset;
* ``pmem_budget_held`` — the same, with the media energy per bit re-derived as the preset does,
  (15 W average budget − idle) / bandwidth, so a module busy at full bandwidth still draws 15 W;
* ``link_pJ_per_bit`` — every PCIe and CXL link's energy per bit;
* ``switch_idle_W`` — the CXL switch's idle power;
* ``cpu_busy_W`` — the host CPU's busy package power (``tdp_W``; 10 W = its idle power: worker
  threads that block on their accesses instead of polling);
* ``gpu_idle_W`` — the GPU's idle board power.
"""
