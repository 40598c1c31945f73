"""Energy model and reports (docs/design.md#energy): joules per measured batch by component.

    from cxlsim.energy import energy_per_batch
    energy_per_batch(cxlsim.simulate("cxl", workload="rm1"))
    # {"total": J, "by_component": {"gpu": J, "cpu": J, "dram": J, "pmem": J, "ssd": J,
    #                               "cxl_mem_logic": J, "links": J}}

It prices what the systems layer measured: :mod:`cxlsim.systems.provision` (how many memory
modules a system holds, by capacity) and each batch's typed activity (:mod:`cxlsim.systems.activity`:
wall time, busy lanes, bytes, operations). Modules, one job each: :mod:`~cxlsim.energy.formulas`
(each device's energy from its preset parameters),
:mod:`~cxlsim.energy.model` (one batch's energy by component), :mod:`~cxlsim.energy.report`
(means over measured batches, baseline normalisation); the study of the weak parameters' effect
on the normalised results is :mod:`cxlsim.studies.sensitivity`. Model and parameters: ``docs/energy.md``.
"""

from cxlsim.energy.model import COMPONENTS, PARTS
from cxlsim.energy.report import energy_detail, energy_per_batch, energy_report

__all__ = ["COMPONENTS", "PARTS", "energy_detail", "energy_per_batch", "energy_report"]
