"""A new memory family touches only its own folder, its preset YAML and one entry-point line
(docs/extending.md, "A new device kind or family").

A CXL-attached HBM family is written here into a temporary folder (its module) beside a temporary
distribution whose only content is the entry point ``cxl_hbm = toy_cxl_hbm`` in the group
``cxlsim.device_families``, as a third party's ``pyproject.toml`` would declare it; its preset is a
YAML file in a catalog folder ``devices/cxl_hbm/`` on ``$CXLSIM_PATH``. Nothing in cxlsim is edited:
the registry lists it without importing it, finds it by its entry point, and the kind's contract
tests (tests/contracts/test_device_contracts.py) hold it to the memory contract; the media microbenchmark
characterises it by its declared capability.
"""

from __future__ import annotations

import sys

import pytest

from cxlsim.devices import registry
from cxlsim.devices.registry import (
    build_device,
    families_of_kind,
    family_names,
    get_family,
    kind_interface,
)
from cxlsim.validate.microbench import microbench_of
from tests.contracts.test_device_contracts import check_behaviour, check_energy

NAME = "cxl_hbm"
MODULE = "toy_cxl_hbm"

FAMILY_SOURCE = '''"""A CXL-attached HBM module (a toy family for the extending test): the shared media model with
64 B access units, many parallel channels, no write-combining buffer."""

from cxlsim.config.params import Param
from cxlsim.devices.memory.media import media
from cxlsim.devices.registry import DeviceFamily, register

SCHEMA = media.media_schema("cxl_hbm", 64, extra=(
    Param("stacks_count", int, "HBM stacks behind the CXL controller (descriptive)", minimum=1,
          descriptive="how many stacks the module holds; its bandwidth is given directly"),))

FAMILY = register(DeviceFamily(
    name="cxl_hbm",
    doc="a CXL-attached HBM module on the shared media model",
    schema=SCHEMA,
    build=media.build("cxl_hbm"),
    kind="memory",
    energy=media.energy,
    energy_params=media.ENERGY_PARAMS,
    capabilities=frozenset({"media"}),
))
'''

PRESET = """version: 1
family: cxl_hbm
description: a toy CXL-attached HBM3 module for the extending test
source: "assumption: made-up values of a CXL-attached HBM module, for the test only"
params:
  capacity_GB: 48
  read_latency_sequential_ns: 120
  read_latency_random_ns: 140
  write_latency_ns: 130
  read_bw_GBps: 60
  write_bw_GBps: 50
  parallel_units_count: 32
  read_media_pJ_per_bit: 4
  write_media_pJ_per_bit: 5
  background_W: 3
  stacks_count: 2
"""


@pytest.fixture
def third_party(tmp_path, monkeypatch):
    """The family's folder (its module), a distribution naming it by entry point, its preset."""
    site = tmp_path / "site"
    info = site / "toy_cxl_hbm-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-cxl-hbm\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\n{NAME} = {MODULE}\n")
    (site / f"{MODULE}.py").write_text(FAMILY_SOURCE)
    catalog = tmp_path / "catalog" / "devices" / NAME
    catalog.mkdir(parents=True)
    (catalog / "hbm3-x8.yaml").write_text(PRESET)
    monkeypatch.setenv("CXLSIM_PATH", str(tmp_path / "catalog"))
    monkeypatch.syspath_prepend(str(site))
    yield
    registry._FAMILIES.pop(NAME, None)
    sys.modules.pop(MODULE, None)


def test_the_family_is_listed_without_importing_it(third_party):
    assert NAME in family_names()
    assert MODULE not in sys.modules


def test_the_family_is_found_by_its_entry_point_and_held_to_the_memory_contract(third_party):
    fam = get_family(NAME)
    assert MODULE in sys.modules and fam.kind == "memory"
    assert NAME in families_of_kind("memory", "media")  # the registry's query, no list edited
    model = build_device(f"{NAME}/hbm3-x8")
    assert isinstance(model, kind_interface("memory"))
    check_behaviour(model)  # the same checks the contract tests run over every shipped family
    check_energy(fam, model)
    assert model.read_latency_ns("random") == 140


def test_the_media_microbenchmark_characterises_it_by_capability(third_party):
    tool = microbench_of(get_family(NAME))
    assert tool is not None and tool is microbench_of(get_family("pmem"))  # the media tool, by capability
    assert get_family(NAME).microbench is None  # the family itself names no tool
