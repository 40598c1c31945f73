"""Simulation models: how the systems of one ``model:`` run.

A system configuration names its model (``model: dataflow`` by default); the name resolves through
:data:`SYSTEM_MODELS`, the entry-point group ``cxlsim.system_models`` (the built-ins ``dataflow``,
:data:`cxlsim.systems.run.DATAFLOW`, and ``tpu_ps``, :data:`cxlsim.systems.tpu_ps_run.TPU_PS`, are
declared in cxlsim's pyproject.toml as a third party declares its own). The loader
(:func:`cxlsim.systems.config.load_system`) and the run (:func:`cxlsim.systems.run.simulate`) ask
the model what it declares about itself, never its name.

Contract of a :class:`SimulationModel`: ``reduce(cfg, wl)`` → (the symmetry reduction, or
``None``; the accelerators whose samples the input streams hold: all of them, or a reduced run's
group); ``run(cfg, wl, streams, reduction, rule, trace)`` times the batches ``rule`` asks for and
returns the :class:`~cxlsim.systems.result.RunResult`; ``settle(cfg, wl)`` first derives the
settings the user left unset (:mod:`cxlsim.systems.scale`). What configures it:

- ``pipeline``: it runs the dataflow pipeline (the ``pipeline:`` section, the roles the pipeline
  needs, the host-agreement checks); False: it has none (a ``pipeline:`` section is refused);
- ``params_key`` / ``params_schema``: the section of its own parameters (``tpu_ps:``), if any,
  validated by the schema (:attr:`~cxlsim.systems.config.SystemConfig.model_params`);
- ``roles``: the device roles a model without a pipeline needs (the platform fills them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cxlsim.config.params import Schema
from cxlsim.plugins import Registry


def _no_settle(cfg: Any, wl: Any) -> Any:
    return cfg


@dataclass(frozen=True)
class SimulationModel:
    """How the systems of one ``model:`` run (module docstring)."""

    reduce: Callable[[Any, Any], tuple[Any, int]]
    run: Callable[..., Any]
    settle: Callable[[Any, Any], Any] = _no_settle
    pipeline: bool = True
    params_key: str | None = None
    params_schema: Schema | None = None
    roles: tuple[str, ...] = ()


#: The simulation models by ``model:`` name.
SYSTEM_MODELS = Registry("cxlsim.system_models", "simulation model")
