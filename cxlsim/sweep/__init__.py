"""Sweeps: many simulations from one YAML spec, on one machine or a Dask cluster.

    from cxlsim.sweep import load_spec, run_sweep, to_dataframe
    spec = load_spec("configs/sweeps/pmem-write-bw.yaml")
    outcome = run_sweep(spec, "out/pmem-bw", executor="process")
    df = to_dataframe("out/pmem-bw")          # needs pandas

Modules: :mod:`~cxlsim.sweep.spec` (the spec format and its points), :mod:`~cxlsim.sweep.evaluate`
(one point → one record), :mod:`~cxlsim.sweep.executors` (serial, process, dask),
:mod:`~cxlsim.sweep.runner` (resumable runs), :mod:`~cxlsim.sweep.results` (CSV/JSON/DataFrame),
:mod:`~cxlsim.sweep.lists` (a study's lists from its catalog sweep). The studies built on this
machinery (the paper's comparison, the platform study, ...) are in :mod:`cxlsim.studies`.
"""

import importlib

#: Public names and the module that defines each. They are loaded on first use (PEP 562), so that
#: importing a light submodule (``cxlsim.sweep.executors`` for the command line's choices) does not
#: load the simulator.
_EXPORTS = {
    "EXECUTORS": "executors", "make_executor": "executors", "read_results": "results",
    "to_dataframe": "results", "SweepOutcome": "runner", "run_sweep": "runner", "Point": "spec",
    "SweepSpec": "spec", "build_spec": "spec", "load_spec": "spec",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"cxlsim.sweep.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'cxlsim.sweep' has no attribute {name!r}")
