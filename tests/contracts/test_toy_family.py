"""Adding a device family used by a system touches no existing module.

A toy memory family is registered here, from tests/, with its own name, kind, schema, preset and
energy hook; a system names its preset in the table-memory role and runs. Nothing in cxlsim knows
the family: the role takes it by kind, provisioning counts its modules by kind, and the energy
model charges it through its hook, under its own component name.
"""

from __future__ import annotations

import numpy as np
import pytest

import cxlsim
from cxlsim.config.params import Param
from cxlsim.devices.base import Energy, Usage
from cxlsim.devices.memory.media.media import MediaModel, media_schema
from cxlsim.devices.registry import DeviceFamily, families_of_kind, get_family, register
from cxlsim.errors import ConfigError
from cxlsim.units import PJ

BITS_PER_B = 8
NAME = "toy_sram"


def toy_energy(model: MediaModel, use: Usage) -> Energy:
    """The toy's own hook: a flat standby power per module and a flat energy per byte moved (media
    bytes read or written), its interface free."""
    p = model.params
    return Energy(static_J=use.count * p.standby_W * use.wall_ns * 1e-9,
                  dynamic_J=(use.read_B + use.write_B) * BITS_PER_B * p.cell_pJ_per_bit * PJ)


TOY = register(DeviceFamily(
    name=NAME,
    doc="a toy SRAM-like memory module: the media timing API, its own flat energy",
    schema=media_schema(NAME, 64, extra=(
        Param("standby_W", float, "standby power of one module", minimum=0),
        Param("cell_pJ_per_bit", float, "energy per media bit read or written", minimum=0),
    )),
    build=lambda params: MediaModel(NAME, params),
    kind="memory",
    energy=toy_energy,
))

PRESET = """version: 1
family: toy_sram
description: a toy memory module for the family-registration test
source: "assumption: made-up values of an SRAM-like module, for the test only"
params:
  capacity_GB: 64
  read_latency_sequential_ns: {read_ns}
  read_latency_random_ns: {read_ns}
  write_latency_ns: 30
  read_bw_GBps: 40
  write_bw_GBps: 40
  parallel_units_count: 8
  read_media_pJ_per_bit: 0
  write_media_pJ_per_bit: 0
  background_W: 0
  standby_W: 0.5
  cell_pJ_per_bit: 2.0
"""

SYSTEM = """version: 1
inherits: cxl
name: cxl-toy
description: the full TrainingCXL pipeline with its tables in toy SRAM modules
devices:
  table_memory: {{preset: {preset}, count: 4}}
"""

SMALL = {"batch_size": 16}


def _system(tmp_path, read_ns: float = 40.0) -> str:
    folder = tmp_path / NAME
    folder.mkdir(exist_ok=True)
    preset = folder / f"r{int(read_ns)}.yaml"
    preset.write_text(PRESET.format(read_ns=read_ns))
    system = tmp_path / f"cxl-toy-{int(read_ns)}.yaml"
    system.write_text(SYSTEM.format(preset=preset))
    return str(system)


def _run(path: str):
    return cxlsim.simulate(path, workload="rm1", batches=2, warmup=1, workload_sets=SMALL)


def test_toy_family_is_a_memory_family():
    assert get_family(NAME) is TOY
    assert NAME in families_of_kind("memory")
    assert {"dram", "pmem", "ssd"} <= set(families_of_kind("memory"))


def test_a_system_runs_with_the_toy_family_in_a_role(tmp_path):
    r = _run(_system(tmp_path))
    assert r.devices.family("table_memory") == NAME
    model = r.devices["table_memory"]
    assert isinstance(model, MediaModel) and model.params.schema_name == NAME
    # the table memory did the lookups' work: its traffic is in the typed activity record
    traffic = [tr for a in r.activity for k, tr in a.media.items() if k.split(".")[0] == "table_memory"]
    read_B = sum(tr.media_read_B for tr in traffic)
    write_B = sum(tr.media_write_B for tr in traffic)
    assert read_B > 0 and write_B > 0

    # energy: the toy's hook, under its own component, and nothing charged to the PMEM it replaced
    by = r.energy["by_component"]
    assert by["pmem"] == 0.0
    modules = r.to_dict()["config"]["provisioned_modules"]["table_memory"]
    assert modules >= 4
    wall_ns = float(np.mean([a.wall_ns for a in r.activity]))
    static = modules * 0.5 * wall_ns * 1e-9
    dynamic = (read_B + write_B) / len(r.activity) * BITS_PER_B * 2.0 * PJ
    assert by[NAME] == pytest.approx(static + dynamic, rel=1e-9)
    assert r.energy["total"] == pytest.approx(sum(by.values()), rel=1e-12)


def test_the_toy_parameters_time_the_run(tmp_path):
    fast = _run(_system(tmp_path, 40.0)).batch_time_ms["mean"]
    slow = _run(_system(tmp_path, 4000.0)).batch_time_ms["mean"]
    assert slow > fast


def test_a_role_refuses_a_family_of_another_kind(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("version: 1\ninherits: cxl\nname: bad\ndevices:\n  table_memory: {preset: gpu/rtx3090}\n")
    with pytest.raises(ConfigError, match="any memory family"):
        cxlsim.simulate(str(path), workload="rm1", batches=1, warmup=1, workload_sets=SMALL)
