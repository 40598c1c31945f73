"""A platform's roles agree with the host CPU they hang on: DRAM modules are the host's channels,
the PCIe link trains at the host root port's rate."""

from __future__ import annotations

import pytest

from cxlsim.errors import ConfigError
from cxlsim.systems.config import load_system


@pytest.mark.parametrize("platform", ["prototype", "physical", "table2"])
@pytest.mark.parametrize("system", ["dram", "pmem", "ssd", "pcie"])
def test_shipped_platforms_agree_with_their_host(system, platform):
    cfg = load_system(system, [("platform", platform)])
    host = cfg.devices["host_cpu"].params
    for role in ("host_dram", "table_memory"):
        dev = cfg.devices.get(role)
        if dev is not None and dev.preset.family == "dram":
            assert dev.count <= host["dram_channels_count"]
    assert cfg.devices["pcie"].params["rate_GTps"] <= host["pcie_rate_GTps"]


def test_more_dram_modules_than_the_host_has_channels_is_refused():
    with pytest.raises(ConfigError) as e:
        load_system("dram", [("platform", "prototype"), ("devices.table_memory.count", 6)])
    msg = str(e.value)
    assert "devices.table_memory.count" in msg and "cpu/i5-9600k" in msg and "2 memory channels" in msg


def test_a_pcie_link_faster_than_the_root_port_is_refused():
    with pytest.raises(ConfigError) as e:
        load_system("pmem", [("platform", "physical"), ("devices.pcie.preset", "pcie/gen4-x16")])
    msg = str(e.value)
    assert "devices.pcie.params.rate_GTps" in msg and "slower end" in msg


def test_a_host_without_the_facts_is_not_checked():
    """The RISC-V soft core states no root port: the prototype's CXL systems load."""
    cfg = load_system("cxl", [("platform", "prototype")])
    assert cfg.devices["host_cpu"].params["pcie_rate_GTps"] == 0
