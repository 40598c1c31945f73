"""Platforms (docs/design.md#platforms): a system (architecture) on a platform (apparatus)."""

from __future__ import annotations

import json

import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.errors import ConfigError
from cxlsim.systems.config import load_system, needed_roles
from cxlsim.systems.platform import DEFAULT_PLATFORM, list_platforms, load_platform

SMALL = {"batch_size": 16}


def test_shipped_platforms_and_the_default():
    assert {"physical", "prototype", "table2"} <= set(list_platforms())
    assert DEFAULT_PLATFORM == "physical" and load_system("cxl").platform == "physical"


@pytest.mark.parametrize("platform", ["physical", "prototype", "table2"])
@pytest.mark.parametrize("system", ["ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram"])
def test_every_system_gets_exactly_the_roles_its_pipeline_needs(platform, system):
    cfg = load_system(system, [("platform", platform)])
    assert cfg.platform == platform
    optional = {"replay_host"} if platform == "prototype" and system.startswith("cxl") else set()
    assert sorted(cfg.devices) == sorted([*needed_roles(cfg.pipeline), *optional])


def test_the_apparatus_differs_by_platform_as_the_paper_built_it():
    proto = {s: load_system(s, [("platform", "prototype")]) for s in ("pmem", "ssd", "cxl")}
    phys = {s: load_system(s) for s in ("pmem", "ssd", "cxl")}
    # baselines on real hardware on both; the CXL-MEM is the emulating Alveo card on the prototype
    assert proto["pmem"].role("table_memory").preset.name == "pmem/optane-100"
    assert proto["ssd"].role("table_memory").preset.name == "ssd/intel-750"
    assert phys["cxl"].role("table_memory").preset.name == "pmem/optane-100"
    assert proto["cxl"].role("table_memory").preset.name != "pmem/optane-100"
    assert proto["cxl"].role("fabric_link").preset.name == "cxl_link/alveo-u200-gen3x16"
    assert phys["cxl"].role("fabric_link").preset.name == "cxl_link/cxl3-x16"


def test_system_file_devices_merge_over_the_platform_and_set_wins(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("version: 1\ninherits: cxl\nname: mine\ndevices:\n  table_memory: {count: 8}\n")
    cfg = load_system(str(f))
    tm = cfg.role("table_memory")
    assert tm.count == 8 and tm.preset.name == "pmem/optane-100"  # count from the file, preset from the platform
    cfg = load_system(str(f), [("devices.table_memory.count", 2), ("platform", "table2")])
    assert cfg.role("table_memory").count == 2 and cfg.role("table_memory").preset.name == "pmem/paper"


def test_a_role_the_pipeline_does_not_use_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="does not use a ndp role"):
        load_system("pmem", [("devices.ndp.preset", "ndp/alveo-u200")])
    f = tmp_path / "extra.yaml"
    f.write_text("version: 1\ninherits: dram\nname: extra\ndevices:\n  ckpt_logic: ckpt_logic/alveo-u200\n")
    with pytest.raises(ConfigError, match="does not use a ckpt_logic role") as exc:
        load_system(str(f))
    assert exc.value.where == str(f)


@pytest.mark.parametrize("doc,key", [
    ("version: 1\nname: x\nroles: {}\nbogus: 1\n", "bogus"),
    ("version: 1\nname: x\nroles: [1]\n", "roles"),
    ("version: 1\nname: x\ngroups: [{systems: cxl, roles: {}}]\n", "groups[0].systems"),
    ("version: 1\nname: x\ngroups: [{systems: [cxl], colour: red}]\n", "groups[0].colour"),
    ("version: 1\nname: x\nroles: {gpu: 3}\n", "roles.gpu"),
])
def test_malformed_platforms_name_file_and_key(tmp_path, doc, key):
    f = tmp_path / "p.yaml"
    f.write_text(doc)
    with pytest.raises(ConfigError) as exc:
        load_platform(str(f))
    assert exc.value.where == str(f) and exc.value.key == key


def test_unknown_platform_is_one_line_exit_2(capsys):
    assert main(["run", "--system", "cxl", "--platform", "prototyp", "--batches", "1"]) == 2
    err = capsys.readouterr().err
    assert "no such platform 'prototyp'" in err and "prototype" in err and err.count("\n") == 1


def test_platform_flag_reaches_run_json_and_energy_baseline(capsys):
    args = ["--system", "cxl", "--workload", "rm1", "--batches", "1", "--warmup", "0",
            "--set", "workload_overrides.batch_size=16", "--platform", "prototype", "--json"]
    assert main(["run", *args]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["platform"] == "prototype" == d["config"]["platform"]
    assert main(["energy", *args]) == 0
    e = json.loads(capsys.readouterr().out)
    assert e["platform"] == "prototype"


def test_platforms_give_different_numbers_for_the_same_architecture():
    a = cxlsim.simulate("cxl-d", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False)
    b = cxlsim.simulate("cxl-d", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                        sets=[("platform", "prototype")])
    # the architecture is the same; only apparatus-dependent settings (the platform's pipeline:)
    # may differ: the prototype hands the gradients over after the interaction backward
    pa, pb = a.config.pipeline.as_dict(), b.config.pipeline.as_dict()
    assert {k for k in pa if pa[k] != pb[k]} == {"grads_handoff"}
    assert a.batch_time_ms["mean"] != b.batch_time_ms["mean"]


def test_platform_pipeline_defaults_are_under_the_system_and_the_sets(tmp_path, monkeypatch):
    """A platform's ``pipeline:`` gives apparatus-dependent defaults (the prototype hands the
    gradients over after the interaction); a system file or ``--set pipeline.*`` wins; a bad key
    or value names the platform file."""
    assert load_system("cxl-b", [("platform", "prototype")]).pipeline.grads_handoff == "after_interaction"
    assert load_system("cxl-b").pipeline.grads_handoff == "after_backward"
    sets = [("platform", "prototype"), ("pipeline.grads_handoff", "after_backward")]
    assert load_system("cxl-b", sets).pipeline.grads_handoff == "after_backward"
    folder = tmp_path / "configs" / "platforms"
    folder.mkdir(parents=True)
    text = open(load_platform("prototype").path).read()
    monkeypatch.setenv("CXLSIM_PATH", str(tmp_path))
    for bad, key in (("grads_handoff: sideways", "pipeline.grads_handoff"), ("grads_hand: after_backward", "pipeline.grads_hand")):
        (folder / "prototype.yaml").write_text(text.replace("grads_handoff: after_interaction", bad))
        with pytest.raises(ConfigError) as err:
            load_system("cxl-b", [("platform", "prototype")])
        assert err.value.where.endswith("prototype.yaml") and err.value.key == key


def test_a_platforms_parameters_are_for_its_preset():
    """physical.yaml puts the CXL-MEM's Optane behind a controller per module (a parameter of the
    platform's entry); a system that names another preset for the role takes that preset's own
    parameters (the platform's would be unknown keys there), while its own overrides stay."""
    assert load_system("cxl").role("table_memory").preset.params.modules_per_controller == 1
    assert load_system("pmem").role("table_memory").preset.params.modules_per_controller == 3
    other = load_system("cxl", [("devices.table_memory.preset", "ssd/intel-750")]).role("table_memory")
    assert other.preset.name == "ssd/intel-750"
    back = load_system("cxl", [("devices.table_memory.preset", "pmem/optane-100"),
                               ("devices.table_memory.params.modules_per_controller", 2)])
    assert back.role("table_memory").preset.params.modules_per_controller == 2
