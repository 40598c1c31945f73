"""Cluster-scale failure tolerance side by side (docs/design.md#cluster-scale-failure-tolerance) and
the TPU/PS step model.

Time inside this package is in **seconds** (runs span hours); sizes are bytes. Conversions to the
project's ns happen at the boundary (:func:`cxlsim.systems.tpu_ps.tpu_ps_step` returns ns).

- :mod:`cxlsim.ft.formulas` closed forms (Eq. 1/2, PLS, CPR decision, intermittent rule, ...);
- :mod:`cxlsim.ft.scenario` scenario files (``configs/ft/*.yaml``), validated;
- :mod:`cxlsim.ft.failures` the seeded interruption trace shared by all schemes;
- :mod:`cxlsim.ft.access` row access statistics (power-law process, kernels' counters/bit vectors);
- :mod:`cxlsim.ft.storage` checkpoint save/load times from sizes and bandwidth;
- :mod:`cxlsim.ft.schemes` the scheme contract; full, partial, CPR, ECRec, TPU epochs (Check-N-Run and
  the undo log live with their persistence schemes: :mod:`cxlsim.axes.persistence.cnr.ft`,
  :mod:`cxlsim.axes.persistence.undo.ft`); every kind is a name of the entry-point group
  ``cxlsim.ft_schemes`` (:data:`cxlsim.ft.scenario.FT_SCHEMES`);
- :mod:`cxlsim.ft.simulator` the simpy failure-and-checkpoint simulator;
- :mod:`cxlsim.systems.tpu_ps` the TPU / parameter-server per-step model.
"""

from cxlsim.ft.run import run_scenario
from cxlsim.ft.scenario import Scenario, load_scenario
from cxlsim.systems.tpu_ps import tpu_ps_step

__all__ = ["Scenario", "load_scenario", "run_scenario", "tpu_ps_step"]
