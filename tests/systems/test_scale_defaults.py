"""Scale by default: topology.symmetry auto is the default, the tables policy, the switch levels and
the near-data scratchpad follow from the topology when no input gives them (cxlsim.systems.scale),
an explicit setting wins, and every refusal a setting would fix names it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.config.bounds import MAX_RUN_LOOKUPS
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.config import MAX_SWITCH_LEVELS, TOPOLOGY
from cxlsim.systems.scale import (
    DERIVED,
    partial_sums_per_sample,
    pooled_bags,
    scratchpad_KiB,
    settle,
    switch_levels,
    tables_policy,
    whole_splits_equally,
)
from cxlsim.systems.symmetry import AUTO_MIN_GPUS, SymmetryRefused
from cxlsim.workloads.layout import TableLayout

SMALL = {"batch_size": 32}


@pytest.fixture(scope="module")
def rm1():
    return cxlsim.api.load_workload("rm1")


def test_symmetry_auto_is_the_default():
    assert TOPOLOGY.by_name()["symmetry"].default == "auto"
    assert cxlsim.load_config("cxl").topology.as_dict()["symmetry"] == "auto"


@pytest.mark.parametrize(("value", "policy"), [(False, "off"), (True, "on"), ("off", "off")])
def test_yaml_off_and_on_name_the_symmetry_policy(value, policy):
    """``--set topology.symmetry=off`` (the fix refusals name) reaches the config as YAML's false."""
    assert cxlsim.load_config("cxl", [("topology.symmetry", value)]).topology.as_dict()["symmetry"] == policy


@pytest.mark.parametrize(("devices", "fanout", "levels"), [
    (2, 15, 1), (15, 15, 1), (16, 15, 2), (225, 15, 2), (226, 15, 3), (1024 + 256, 15, 3), (9, 2, 4)])
def test_switch_levels_are_the_fewest_whose_leaves_hold_every_device(devices, fanout, levels):
    assert switch_levels(devices, fanout) == levels
    assert fanout**levels >= devices and (levels == 1 or fanout ** (levels - 1) < devices)


def test_a_fanout_of_one_stops_at_the_fabric_bound():
    assert switch_levels(3, 1) == MAX_SWITCH_LEVELS


def test_tables_policy_rule(rm1):
    layout = TableLayout.from_workload(rm1)  # 20 equal tables
    assert tables_policy(layout, 1, 1, "auto") == "whole"
    assert tables_policy(layout, 8, 8, "auto") == "whole"  # full detail: whole tables, unevenly spread
    assert not whole_splits_equally(layout, 8) and whole_splits_equally(layout, 4)
    assert tables_policy(layout, AUTO_MIN_GPUS, 8, "auto") == "row_sharded"  # reduced: needs equal shards
    assert tables_policy(layout, AUTO_MIN_GPUS, 4, "auto") == "whole"  # 5 tables each
    assert tables_policy(layout, 64, 8, "off") == "whole"
    assert tables_policy(layout, 8, 8, "on") == "row_sharded"
    assert tables_policy(layout, 4, 32, "off") == "row_sharded"  # more devices than tables


def test_scratchpad_rule():
    assert scratchpad_KiB(4096 * 1024, 4096) == 4096  # fits exactly: the preset's
    assert scratchpad_KiB(4096 * 1024 + 1, 4096) == 8192
    assert scratchpad_KiB(300e6, 4096) == 2 ** math.ceil(math.log2(300e6 / 1024))


def test_pooled_bags_hold_every_gpus_partial_sums(rm1):
    layout = TableLayout.from_workload(rm1)
    B, T, L = rm1.params.batch_size, rm1.params.tables, rm1.params.lookups_per_table
    assert pooled_bags(rm1, layout, 1, 1, "whole") == B * T
    assert pooled_bags(rm1, layout, 8, 8, "whole") == 8 * B * 3  # 20 tables over 8: at most 3 on one
    assert pooled_bags(rm1, layout, 16, 256, "row_sharded") == math.ceil(16 * B * T * (1 - (1 - 1 / 256) ** L))
    assert partial_sums_per_sample(rm1, 5, 4, "whole") == 5.0


def test_origins_tell_a_given_key_from_a_default():
    cfg = cxlsim.load_config("cxl", [("topology.gpus_count", 4)])
    assert cfg.origins.given("topology.gpus_count")
    assert not cfg.origins.given("topology.tables_policy")
    assert not cfg.origins.given("devices.switch.levels")
    assert cfg.origins.given("devices.switch.preset")  # the platform's role entry
    assert not cfg.origins.given("devices.ndp.params.scratchpad_KiB")


def test_the_big_run_settles_on_three_levels_row_sharded_tables_and_a_scratchpad_that_fits(rm1):
    cfg = cxlsim.load_config("cxl", [("topology.gpus_count", 1024), ("topology.cxl_mems_count", 256)])
    s = settle(cfg, rm1)
    assert s.topology.as_dict()["tables_policy"] == "row_sharded"
    assert s.topology.sources["tables_policy"].startswith(DERIVED)
    assert s.role("switch").levels == 3
    pad = s.role("ndp").params.as_dict()["scratchpad_KiB"]
    need_B = pooled_bags(rm1, TableLayout.from_workload(rm1), 1024, 256, "row_sharded") * rm1.params.dim * 4
    assert need_B <= pad * 1024 < 2 * need_B and math.log2(pad).is_integer()
    assert s.role("ndp").params.sources["scratchpad_KiB"].startswith(DERIVED)
    assert cfg.role("switch").levels == 1  # the loaded configuration is not changed


def test_an_explicit_setting_always_wins(rm1):
    sets = [("topology.gpus_count", 1024), ("topology.cxl_mems_count", 256), ("topology.tables_policy", "whole"),
            ("devices.switch.levels", 4), ("devices.ndp.params.scratchpad_KiB", 64)]
    cfg = cxlsim.load_config("cxl", sets)
    assert settle(cfg, rm1) is cfg


def test_a_system_file_setting_wins(tmp_path, rm1):
    path = tmp_path / "mine.yaml"
    path.write_text("version: 1\ninherits: cxl\nname: mine\ntopology: {gpus_count: 64, cxl_mems_count: 16, "
                    "tables_policy: whole}\ndevices: {switch: {preset: cxl_switch/cxl3-x16, levels: 2}}\n")
    s = settle(cxlsim.load_config(str(path)), rm1)
    assert s.topology.as_dict()["tables_policy"] == "whole" and s.role("switch").levels == 2


@pytest.mark.parametrize("system", ["cxl", "cxl-b", "cxl-d", "cxl-cnr", "pcie", "pmem", "ssd", "dram"])
def test_one_gpu_settles_to_the_configuration_as_loaded(system, rm1):
    """Below 32 GPUs, one GPU and one CXL-MEM (every golden): nothing is derived differently."""
    cfg = cxlsim.load_config(system)
    assert settle(cfg, rm1) is cfg


def test_a_small_topology_runs_as_before():
    """2 GPUs × 2 CXL-MEMs: the defaults (auto, derived policy, levels and scratchpad) time the run
    exactly as the explicit settings it had before (off, whole, one level, the preset's 4 MiB)."""
    top = [("topology.gpus_count", 2), ("topology.cxl_mems_count", 2)]
    old = top + [("topology.symmetry", "off"), ("topology.tables_policy", "whole"), ("devices.switch.levels", 1),
                 ("devices.ndp.params.scratchpad_KiB", 4096)]
    a = cxlsim.simulate("cxl", workload="rm3", batches=1, warmup=0, workload_sets=SMALL, trace=False, sets=top)
    b = cxlsim.simulate("cxl", workload="rm3", batches=1, warmup=0, workload_sets=SMALL, trace=False, sets=old)
    assert np.array_equal(a.batch_times_ns, b.batch_times_ns) and a.energy == b.energy


# ---- refusals name the setting that fixes them ---------------------------------------------------

def test_the_lookup_bound_names_symmetry_when_the_run_is_in_full_detail():
    with pytest.raises(ConfigError, match=r"lookups one run holds in memory.*--set topology\.symmetry=on"):
        cxlsim.simulate("cxl", "rm1", trace=False, sets={"topology.gpus_count": 1024, "topology.cxl_mems_count": 256,
                                                         "topology.symmetry": "off"})


def test_the_lookup_bound_names_fewer_batches_when_the_run_cannot_shrink(rm1):
    p = rm1.params
    per_batch = p.batch_size * p.tables * p.lookups_per_table
    with pytest.raises(ConfigError, match=r"lookups one run holds in memory.*--batches (\d+)") as exc:
        cxlsim.simulate("cxl", "rm1", batches=10**6, warmup=2, trace=False)
    fits = int(exc.value.message.rsplit("--batches ", 1)[1].split()[0])
    assert (fits + 3) * per_batch <= MAX_RUN_LOOKUPS < (fits + 4) * per_batch


def test_a_scratchpad_too_small_names_the_size_that_holds_the_batch():
    with pytest.raises(InputError, match=r"--set devices\.ndp\.params\.scratchpad_KiB=(\d+)") as exc:
        cxlsim.simulate("cxl", "rm1", batches=1, warmup=0, trace=False, workload_sets=SMALL,
                        sets=[("devices.ndp.params.scratchpad_KiB", 1)])
    size = float(str(exc.value).rsplit("scratchpad_KiB=", 1)[1].split()[0])
    assert size * 1024 >= 32 * 20 * 32 * 4 and math.log2(size).is_integer()


def test_whole_tables_that_do_not_split_name_the_tables_policy():
    with pytest.raises(SymmetryRefused, match=r"--set topology\.tables_policy=row_sharded"):
        cxlsim.simulate("cxl", "rm1", batches=1, warmup=0, trace=False, workload_sets=SMALL, sets={
            "topology.gpus_count": 32, "topology.cxl_mems_count": 8, "topology.tables_policy": "whole"})


@pytest.mark.parametrize(("system", "workload", "gpus", "mems"), [
    ("cxl", "rm1", 32, 12),   # neither count divides the other
    ("pmem", "rm1", 32, 1),   # one host serves every GPU
    ("cxl", "rm4", 256, 64),  # a 28-row table cannot be row-sharded into equal shards over 64
])
def test_asymmetric_configurations_name_full_detail(system, workload, gpus, mems):
    sets = {"topology.gpus_count": gpus, "topology.cxl_mems_count": mems}
    with pytest.raises(SymmetryRefused, match=r"--set topology\.symmetry=off"):
        cxlsim.simulate(system, workload, batches=1, warmup=0, trace=False, workload_sets=SMALL, sets=sets)


def test_one_group_names_full_detail():
    with pytest.raises(SymmetryRefused, match=r"one group.*--set topology\.symmetry=off"):
        cxlsim.simulate("cxl", "rm1", batches=1, warmup=0, trace=False, workload_sets=SMALL,
                        sets={"topology.symmetry": "on"})


@pytest.mark.slow
def test_a_quarter_of_the_big_run_runs_as_written(capsys):
    """256 GPUs × 64 CXL-MEMs with none of the four settings: reduced, row-sharded, three levels."""
    rc = main(["run", "--system", "cxl", "--workload", "rm1", "--batches", "1", "--warmup", "1", "--json",
               "--set", "topology.gpus_count=256", "--set", "topology.cxl_mems_count=64"])
    assert rc == 0
    import json
    d = json.loads(capsys.readouterr().out)
    assert d["symmetry"]["reduced"] and d["symmetry"]["groups"] == 64
    cfg = d["config"]
    assert cfg["topology"]["tables_policy"] == "row_sharded" and cfg["devices"]["switch"]["levels"] == 3
    assert cfg["devices"]["ndp"]["params"]["scratchpad_KiB"] > 4096
