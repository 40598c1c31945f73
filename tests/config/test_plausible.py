"""Plausible ranges: a value inside its bounds but outside its plausible range warns (one line
naming the input, the key and the range); outside the bounds it stays an error; nothing shipped
warns."""

from __future__ import annotations

import warnings

import pytest

from cxlsim.cli import main
from cxlsim.config.catalog import list_presets, shipped_root
from cxlsim.config.params import Param, PlausibilityWarning
from cxlsim.devices.registry import load_preset
from cxlsim.errors import ConfigError
from cxlsim.ft.scenario import list_scenarios, load_scenario
from cxlsim.sweep.spec import load_spec
from cxlsim.systems.config import list_systems, load_system
from cxlsim.systems.platform import list_platforms
from cxlsim.workloads.catalog import list_workloads, load_workload


def _plausibility_warnings(load) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load()
    return [str(w.message) for w in caught if issubclass(w.category, PlausibilityWarning)]


def _every_shipped_input() -> None:
    for name in list_presets():
        load_preset(name)
    for name in list_workloads():
        load_workload(name)
    for name in list_scenarios():
        load_scenario(name)
    for platform in list_platforms():
        for system in list_systems():
            try:
                load_system(system, [("platform", platform)])
            except ConfigError:  # a system this platform cannot build: refused, not warned
                continue
    for spec in sorted((shipped_root("configs") / "sweeps").glob("*.yaml")):
        load_spec(spec)  # loads every system with each axis value


def test_no_shipped_preset_config_sweep_workload_or_scenario_warns():
    assert _plausibility_warnings(_every_shipped_input) == []


def test_a_value_outside_its_plausible_range_warns_naming_the_set_key_and_range():
    found = _plausibility_warnings(lambda: load_system("pmem", [("devices.table_memory.params.write_bw_GBps", 1e-9)]))
    assert found == ["--set devices.table_memory.params.write_bw_GBps=1e-09 is outside its plausible range "
                     "0.01..100000 GB/s"]


def test_a_pipeline_value_names_the_set_not_the_system_file():
    found = _plausibility_warnings(lambda: load_system("cxl", [("pipeline.vector_cache_GB", 1e7)]))
    assert found == ["--set pipeline.vector_cache_GB=10000000.0 is outside its plausible range 0.0001..1e+06 GB"]


def test_inside_the_range_and_zero_do_not_warn_outside_the_bounds_is_an_error():
    p = Param("x_GBps", float, "a bandwidth", minimum=0)
    assert _plausibility_warnings(lambda: [p.coerce(v, "f.yaml", "x_GBps") for v in (0.0, 0.01, 1e5)]) == []
    assert _plausibility_warnings(lambda: p.coerce(1.0001e5, "f.yaml", "x_GBps")) == [
        "f.yaml: x_GBps=100010.0 is outside its plausible range 0.01..100000 GB/s"]
    with pytest.raises(ConfigError):
        p.coerce(-1.0, "f.yaml", "x_GBps")


def test_a_list_warns_per_element_and_a_declared_range_beats_the_units():
    p = Param("sizes", tuple, "bags", minimum=1, item=int, plausible=(1, 1000))
    assert _plausibility_warnings(lambda: p.coerce([1000, 1001], "w.yaml", "sizes")) == [
        "w.yaml: sizes[1]=1001 is outside its plausible range 1..1000"]


def test_the_command_line_prints_one_warning_line_and_runs(capsys):
    assert main(["devices", "show", "pmem/paper", "--set", "write_bw_GBps=1e-9", "--json"]) == 0
    err = capsys.readouterr().err
    assert err == ("warning: --set params.write_bw_GBps=1e-09 is outside its plausible range "
                   "0.01..100000 GB/s\n")
    assert main(["devices", "show", "pmem/paper", "--set", "write_bw_GBps=-1"]) == 2


def test_a_cxl_memory_part_override_names_its_set():
    found = _plausibility_warnings(lambda: load_system(
        "cxl-expander", [("devices.table_memory.params.link.params.port_latency_ns", 1e12)]))
    assert found == ["--set devices.table_memory.params.link.params.port_latency_ns=1000000000000.0 is outside "
                     "its plausible range 0.01..1e+08 ns"]
