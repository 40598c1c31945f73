"""A TPU-class accelerator chip: TensorCores for the dense layers, SparseCores for the embeddings (family ``tpu``).

Contract (units: FLOP/s, W, ns, J; pure, no simulation engine):

* Parameters: ``tensorcores_per_chip_count``, ``sparsecores_per_chip_count``, ``peak_TFLOPps``
  (TensorCore peak per chip), ``mlp_efficiency_fraction`` (share of peak small MLPs reach),
  ``idle_W`` (the chip's power when idle), ``tensorcores_W`` / ``sparsecores_W`` (power above idle
  while the TensorCores / SparseCores run).
* :meth:`TpuChipModel.mlp_flops_per_s` = ``peak_TFLOPps`` × 10¹² × ``mlp_efficiency_fraction``.
* Energy hook (:func:`energy`) over :class:`~cxlsim.devices.base.Usage` of ``count`` chips:
  static ``count`` × ``idle_W`` × wall; active ``tensorcores_W`` × ``busy_ns`` (TensorCore time,
  summed over the chips) + ``sparsecores_W`` × ``ops["sparsecore_ns"]`` (SparseCore time, summed;
  ``sparsecores_W`` is read only where the SparseCores ran).
"""

from __future__ import annotations

from cxlsim.config.params import Param, ParamSet, Schema
from cxlsim.devices.base import DeviceModel, Energy, Usage, static_energy_J
from cxlsim.devices.registry import DeviceFamily, register
from cxlsim.units import watts_over

SCHEMA = Schema("tpu", (
    Param("tensorcores_per_chip_count", int, "TensorCores per chip; each issues its own lookups to parameter "
          "servers", minimum=1),
    Param("sparsecores_per_chip_count", int, "SparseCores per chip", minimum=1),
    Param("peak_TFLOPps", float, "TensorCore peak per chip", minimum=0, exclusive_minimum=True),
    Param("mlp_efficiency_fraction", float, "share of peak the MLPs reach", minimum=0, maximum=1,
          exclusive_minimum=True),
    Param("idle_W", float, "chip power when idle", minimum=0),
    Param("tensorcores_W", float, "chip power above idle while its TensorCores run", minimum=0),
    Param("sparsecores_W", float, "chip power above idle while its SparseCores run", minimum=0),
))


class TpuChipModel(DeviceModel):
    """One chip (module docstring)."""

    def __init__(self, params: ParamSet) -> None:
        self.params = params

    def mlp_flops_per_s(self) -> float:
        """FLOP/s the chip's TensorCores reach on the MLPs."""
        p = self.params
        return p.peak_TFLOPps * 1e12 * p.mlp_efficiency_fraction

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        return static_energy_J(self.params.idle_W, wall_ns, count)


def energy(model: TpuChipModel, use: Usage) -> Energy:
    """Static idle power; active TensorCore and SparseCore power over their busy time (module docstring)."""
    p = model.params
    active = watts_over(p.tensorcores_W, use.busy_ns)
    sparse_ns = use.ops.get("sparsecore_ns", 0.0)
    if sparse_ns:
        active += watts_over(p.sparsecores_W, sparse_ns)
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count), active_J=active)


FAMILY = register(DeviceFamily(name="tpu", doc="an accelerator chip with TensorCores and SparseCores (TPUv4-class)",
                               schema=SCHEMA, build=TpuChipModel, kind="compute", energy=energy))
