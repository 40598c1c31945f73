"""Emulated media's energy: ``energy.emulated_media``.

The prototype's CXL-MEM (``pmem/u200-emulated``) is DDR4 behind controllers that delay its responses
to emulate Optane PMEM (its ``emulates: pmem/optane-100``). ``as_emulated`` (the default) prices that
role as the emulated preset's modules; ``as_built`` as the apparatus' own DDR4. The reading changes
energy only, only where a role emulates, and is declared unused elsewhere.
"""

from __future__ import annotations

import json
import os
from functools import cache

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.config.catalog import resolve_preset
from cxlsim.devices.registry import family_schema, load_preset
from cxlsim.energy import energy_detail, energy_per_batch
from cxlsim.energy.model import priced_pools
from cxlsim.energy.report import baseline_sets
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.config import load_system
from cxlsim.systems.graph import build_devices
from cxlsim.systems.platform import load_platform
from cxlsim.systems.provision import provision
from cxlsim.systems.reach import check_overrides, unread
from cxlsim.workloads.catalog import load_workload

SMALL = {"batch_size": 32}
PROTOTYPE = [("platform", "prototype")]
AS_BUILT = [("energy.emulated_media", "as_built")]
EMULATED = "pmem/optane-100"


@cache
def run(system: str, platform: str = "prototype"):
    return cxlsim.simulate(system, workload="rm1", batches=1, warmup=0, seed=1, workload_sets=SMALL,
                           sets=[("platform", platform)], trace=False)


def media(result, role: str = "table_memory") -> tuple[float, float, float]:
    """Mean media bytes read, written and requested per batch on ``role`` (the energy model's ledger)."""
    per = [[sum(getattr(tr, f) for key, tr in a.media.items() if key.split(".")[0] == role)
            for f in ("media_read_B", "media_write_B", "requested_B")] for a in result.activity]
    return tuple(np.mean(per, axis=0))


def test_the_u200_emulates_optane_and_its_own_energy_is_ddr4():
    u200, optane, ddr4 = load_preset("pmem/u200-emulated"), load_preset(EMULATED), load_preset("dram/ddr4-2666")
    assert u200.emulates == EMULATED and "VANS" in u200.emulates_source
    assert optane.emulates is None and load_preset("pmem/paper").emulates is None
    for key in ("read_media_pJ_per_bit", "write_media_pJ_per_bit", "io_pJ_per_bit", "background_W"):
        assert u200.params[key] == ddr4.params[key]  # as built: the DDR4 behind the delay


def test_as_emulated_prices_the_emulating_role_as_the_emulated_device():
    """cxl on the prototype: the table memory's static power is the emulated modules' background power
    and its dynamic energy the emulated preset's per-bit energies on the traffic the apparatus timed;
    as_built uses the u200's own; nothing else moves."""
    r = run("cxl")
    emulated = energy_detail(r)  # the default reading
    built = energy_detail(r, cxlsim.load_config("cxl", PROTOTYPE + AS_BUILT))
    assert r.config.energy.emulated_media == "as_emulated"
    T = r.activity[0].wall_ns
    pools = provision(r.devices, r.workload)
    read_B, write_B, req_B = media(r)
    for got, preset in ((emulated, EMULATED), (built, "pmem/u200-emulated")):
        p = load_preset(preset).params
        assert got["pmem"]["static"] == pytest.approx(pools["table_memory"].modules * p.background_W * T * 1e-9)
        dyn = (read_B * p.read_media_pJ_per_bit + write_B * p.write_media_pJ_per_bit + req_B * p.io_pJ_per_bit) * 8e-12
        assert got["pmem"]["dynamic"] == pytest.approx(dyn)
    assert emulated["pmem"]["static"] == pytest.approx(3 * built["pmem"]["static"])  # 3 W Optane, 1 W DDR4 module
    assert emulated["pmem"]["dynamic"] > 10 * built["pmem"]["dynamic"]
    assert {c: v for c, v in emulated.items() if c != "pmem"} == {c: v for c, v in built.items() if c != "pmem"}


def test_the_readings_are_identical_where_nothing_is_emulated():
    """pmem on the prototype (real Optane) and cxl on the physical platform (Optane behind the
    CXL-MEM): nothing emulates, so the setting is declared unused and both readings price the same."""
    for system, platform in (("pmem", "prototype"), ("cxl", "physical")):
        r = run(system, platform)
        sets = [("platform", platform)]
        assert energy_per_batch(r) == energy_per_batch(r, cxlsim.load_config(system, sets + AS_BUILT))
        cfg = cxlsim.load_config(system, sets + AS_BUILT)
        assert "emulates" in cfg.energy.skipped["emulated_media"]
        with pytest.raises(InputError, match="energy.emulated_media.*emulates"):
            check_overrides(cfg, AS_BUILT)


def test_the_reading_reaches_energy_and_is_read_where_a_role_emulates():
    r = run("cxl")
    cfg = cxlsim.load_config("cxl", PROTOTYPE + AS_BUILT)
    energy_per_batch(r, cfg)
    assert "emulated_media" in cfg.energy.reads and unread(cfg).get("energy") is None
    check_overrides(cfg, AS_BUILT)  # accepted: it reached energy
    # as_emulated: the u200's own energy parameters are declared unused, so overriding one is refused
    sets = PROTOTYPE + [("devices.table_memory.params.background_W", 5.0)]
    cfg = cxlsim.load_config("cxl", sets)
    assert energy_per_batch(r, cfg) == energy_per_batch(r)
    with pytest.raises(InputError, match="background_W.*as_emulated"):
        check_overrides(cfg, sets[1:])
    # as_built, the same override prices the u200's own modules
    cfg = cxlsim.load_config("cxl", sets + AS_BUILT)
    assert energy_per_batch(r, cfg) != energy_per_batch(r, cxlsim.load_config("cxl", PROTOTYPE + AS_BUILT))
    check_overrides(cfg, sets[1:])


def test_the_emulated_pool_is_provisioned_at_the_emulated_capacity():
    """as_emulated holds the data in the emulated device's modules: the configured count, or what the
    data needs at its capacity_GB (128 GB Optane), not at the u200's 16 GB controllers."""
    wl = load_workload("rm1")
    for reading, capacity in (("as_emulated", 128.0), ("as_built", 16.0)):
        cfg = load_system("cxl", PROTOTYPE + [("energy.emulated_media", reading),
                                             ("devices.table_memory.count", 1)])
        devices = build_devices(cfg)
        pool = priced_pools(devices, provision(devices, wl))["table_memory"]
        assert pool.capacity_GB == capacity and pool.configured == 1
        assert pool.modules == int(np.ceil(pool.needed_GB / capacity))


def test_energy_section_validation():
    assert load_system("cxl", PROTOTYPE + AS_BUILT).energy.emulated_media == "as_built"
    for key, value, message in (("energy.emulated_media", "as_bought", "must be one of"),
                                ("energy.bogus", 1, "unknown key")):
        with pytest.raises(ConfigError, match=message) as err:
            load_system("cxl", PROTOTYPE + [(key, value)])
        assert err.value.where == "--set" and err.value.key == key
    with pytest.raises(ConfigError) as err:
        load_system("cxl", [("energy", [1])])
    assert err.value.key == "energy"
    assert load_system("cxl", PROTOTYPE).resolved()["energy"] == {"emulated_media": "as_emulated"}


def _catalog(tmp_path, monkeypatch):
    """A user catalog after the current ones (the worktree's presets stay visible)."""
    monkeypatch.setenv("CXLSIM_PATH", os.pathsep.join(filter(None, [os.environ.get("CXLSIM_PATH"), str(tmp_path)])))
    return tmp_path


def test_a_platform_gives_the_energy_default_and_the_system_wins(tmp_path, monkeypatch):
    root = _catalog(tmp_path, monkeypatch)
    folder = root / "configs" / "platforms"
    folder.mkdir(parents=True)
    text = open(load_platform("prototype").path).read()
    (folder / "proto-built.yaml").write_text(text.replace("name: prototype", "name: proto-built")
                                             + "energy:\n  emulated_media: as_built\n")
    plat = [("platform", "proto-built")]
    assert load_system("cxl", plat).energy.emulated_media == "as_built"
    assert load_system("cxl", plat + [("energy.emulated_media", "as_emulated")]).energy.emulated_media == "as_emulated"
    (folder / "proto-bad.yaml").write_text(text.replace("name: prototype", "name: proto-bad")
                                           + "energy:\n  emulated_medium: as_built\n")
    with pytest.raises(ConfigError) as err:
        load_system("cxl", [("platform", "proto-bad")])
    assert err.value.where.endswith("proto-bad.yaml") and err.value.key == "energy.emulated_medium"


PRESET = """version: 1
family: pmem
description: an emulating toy
inherits: pmem/u200-emulated
"""


@pytest.mark.parametrize("emulates,key,message", [
    ("{preset: pmem/optane-100}", "emulates.source", "no source"),
    ("{preset: dram/ddr4-2666, source: s}", "emulates.preset", "family"),
    ("{preset: pmem/nosuch, source: s}", "emulates.preset", "no such preset"),
    ("{preset: pmem/optane-100, source: s, why: x}", "emulates.why", "unknown key"),
    ("pmem/optane-100", "emulates", "expected"),
    ("{preset: pmem/emu, source: s}", "emulates.preset", "itself"),
])
def test_malformed_emulates_names_file_and_key(tmp_path, monkeypatch, emulates, key, message):
    folder = _catalog(tmp_path, monkeypatch) / "devices" / "pmem"
    folder.mkdir(parents=True)
    (folder / "emu.yaml").write_text(PRESET + f"emulates: {emulates}\n")
    with pytest.raises(ConfigError, match=message) as err:
        resolve_preset("pmem/emu", family_schema)
    assert err.value.where.endswith("emu.yaml") and err.value.key == key


def test_emulates_is_inherited_and_a_child_may_name_another(tmp_path, monkeypatch):
    folder = _catalog(tmp_path, monkeypatch) / "devices" / "pmem"
    folder.mkdir(parents=True)
    (folder / "child.yaml").write_text(PRESET)
    assert load_preset("pmem/child").emulates == EMULATED
    (folder / "other.yaml").write_text(PRESET + "emulates: {preset: pmem/paper, source: s}\n")
    assert load_preset("pmem/other").emulates == "pmem/paper"


def test_the_commands_refuse_the_reading_where_nothing_is_emulated(capsys):
    small = ["--system", "cxl", "--workload", "rm1", "--batches", "1", "--warmup", "0",
             "--set", "workload_overrides.batch_size=32", "--set", "energy.emulated_media=as_built"]
    for args in (["run", *small], ["energy", *small, "--baseline", "cxl"]):  # physical: nothing emulates
        assert main(args) == 2
        assert "emulates" in capsys.readouterr().err
    assert main(["run", *small, "--platform", "prototype", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["energy"] == {"emulated_media": "as_built"}


def test_devices_show_names_the_emulated_preset(capsys):
    assert main(["devices", "show", "pmem/u200-emulated", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["emulates"]["preset"] == EMULATED
    assert main(["devices", "show", EMULATED, "--json"]) == 0
    assert "emulates" not in json.loads(capsys.readouterr().out)


def test_energy_readings_reach_the_baseline():
    cxl, pmem = load_system("cxl", PROTOTYPE), load_system("pmem", PROTOTYPE)
    assert baseline_sets(AS_BUILT, cxl, pmem) == AS_BUILT
