"""Sweeps: many simulations from one YAML spec, on one machine or a Dask cluster.

    from cxlsim.sweep import load_spec, run_sweep, to_dataframe
    spec = load_spec("configs/sweeps/pmem-write-bw.yaml")
    outcome = run_sweep(spec, "out/pmem-bw", executor="process")
    df = to_dataframe("out/pmem-bw")          # needs pandas

Modules: :mod:`~cxlsim.sweep.spec` (the spec format and its points), :mod:`~cxlsim.sweep.evaluate`
(one point → one record), :mod:`~cxlsim.sweep.executors` (serial, process, dask),
:mod:`~cxlsim.sweep.runner` (resumable runs), :mod:`~cxlsim.sweep.results` (CSV/JSON/DataFrame),
:mod:`~cxlsim.sweep.reproduce` and :mod:`~cxlsim.sweep.figures` (the paper's comparison and its
Figures 11–13).
"""

from cxlsim.sweep.executors import EXECUTORS, make_executor
from cxlsim.sweep.results import read_results, to_dataframe
from cxlsim.sweep.runner import SweepOutcome, run_sweep
from cxlsim.sweep.spec import Point, SweepSpec, build_spec, load_spec

__all__ = ["EXECUTORS", "Point", "SweepOutcome", "SweepSpec", "build_spec", "load_spec", "make_executor",
           "read_results", "run_sweep", "to_dataframe"]
