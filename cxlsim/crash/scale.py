"""The functional row scale: which workload the crash checker materialises.

Functional runs materialise every embedding table and the MLP parameters, so they run at a fraction
``scale`` of the full model. The scaled workload is an ordinary workload with overrides
(``rows_per_table`` for uniform tables, ``criteo_rows_factor`` for the Criteo profile, each of
``table_rows`` scaled for tables of their own sizes): the input
generator then keeps the batch shape, the power-law exponent and the reuse knob, and the timing
model can simulate exactly the same index streams.

Default :data:`DEFAULT_SCALE` = 1e-3: each of RM1–RM4 has ~40 MB of tables (1/1000 of its 40 GB),
RM1/RM3/RM4 still touch a minority of their rows per batch (about 34 %, 13 % and 0.6 %; RM2's
2.5 M lookups per batch touch 74 % of its 312 k scaled rows), and a crash point costs well under a
millisecond (docs/crash.md). The MLP is scaled by the same factor (at least
:data:`MLP_MIN_ELEMENTS` parameters) so that its logs keep their proportion to the embedding logs.
"""

from __future__ import annotations

from typing import Any

from cxlsim.crash.options import DEFAULT_SCALE
from cxlsim.errors import ConfigError
from cxlsim.workloads.catalog import Workload, load_workload

__all__ = ["DEFAULT_SCALE", "MLP_MIN_ELEMENTS", "global_batch", "mlp_elements", "scale_overrides", "scaled_workload"]
#: The scaled MLP keeps at least one 4 KiB log burst of parameters.
MLP_MIN_ELEMENTS = 1024


def scale_overrides(workload: Workload, scale: float) -> dict[str, Any]:
    """Workload overrides that shrink every table by ``scale`` in (0, 1] (at least one row each)."""
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], got {scale!r}")
    p = workload.params
    if p.trace and scale != 1:
        raise ConfigError(p.trace, "", f"a trace's rows are recorded ids and cannot be scaled (functional scale "
                          f"{scale:g}); run the crash checker at scale 1 or on the synthetic stream")
    if p.rows_profile == "uniform":
        return {"rows_per_table": max(1, round(p.rows_per_table * scale))}
    if p.rows_profile == "per_table":
        return {"table_rows": [max(1, round(rows * scale)) for rows in p.table_rows]}
    return {"criteo_rows_factor": p.criteo_rows_factor * scale}


def scaled_workload(name: str, overrides: dict[str, Any], scale: float) -> tuple[Workload, dict[str, Any]]:
    """The workload ``name`` with ``overrides`` (e.g. a system's ``workload_overrides``), shrunk by
    ``scale``; also returns the overrides that shrink it (to pass to the timing model)."""
    full = load_workload(name, overrides or None)
    extra = scale_overrides(full, scale)
    return load_workload(name, {**(overrides or {}), **extra}), extra


def global_batch(name: str, overrides: dict[str, Any], scaled: Workload, gpus: int) -> Workload:
    """The workload of one global batch on ``gpus`` data-parallel GPUs (docs/design.md#scale-out:
    the workload's batch size is each GPU's; the timing model streams ``gpus × batch_size`` samples
    per batch, and the functional run trains on the same samples)."""
    if gpus == 1:
        return scaled
    return load_workload(name, {**(overrides or {}), "batch_size": scaled.params.batch_size * gpus})


def mlp_elements(workload: Workload, scale: float, shards: int = 1) -> int:
    """Parameters of the functional (flat float32) MLP: the model's count times ``scale``, at least
    :data:`MLP_MIN_ELEMENTS` per shard (each CXL-MEM logs a shard of whole log bursts)."""
    return max(MLP_MIN_ELEMENTS * shards, round(workload.mlp_param_count * scale))
