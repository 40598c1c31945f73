"""The switch levels a scale-out topology settles on (cxlsim.systems.scale.settle): with no
``topology.fanout_count`` the fan-out is the switch's ports less its upstream port, so ``D`` devices
need the fewest levels ``L`` with ``(ports − 1)^L ≥ D``; the tree then holds them (exactly at its
capacity too), and one device past an explicit tree's capacity is refused."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cxlsim
from cxlsim.errors import ConfigError
from cxlsim.systems.graph import build_devices
from cxlsim.systems.scale import settle
from cxlsim.systems.topology import Fabric
from cxlsim.workloads.catalog import load_workload

SMALL = {"batch_size": 8, "rows_per_table": 4096}


@pytest.fixture(scope="module")
def rm1():
    return load_workload("rm1", SMALL)


def _cfg(ports: int, gpus: int, mems: int, levels: int | None = None):
    sets = [("topology.gpus_count", gpus), ("topology.cxl_mems_count", mems),
            ("devices.switch.params.ports_count", ports)]
    return cxlsim.load_config("cxl", sets + ([("devices.switch.levels", levels)] if levels else []))


def _split(devices: int, gpu_share: float) -> tuple[int, int]:
    gpus = min(devices - 1, max(1, round(devices * gpu_share)))
    return gpus, devices - gpus


@settings(max_examples=12, deadline=None)
@given(ports=st.integers(3, 17), levels=st.integers(1, 3), where=st.sampled_from(["at", "one past", "between"]),
       frac=st.floats(0.0, 1.0), gpu_share=st.floats(0.05, 0.95))
@example(ports=16, levels=2, where="between", frac=25 / 30, gpu_share=0.8)  # 200 GPUs + 50 CXL-MEMs
@example(ports=3, levels=2, where="between", frac=1.0, gpu_share=0.5)  # 9 devices on a fan-out of 2: 4 levels
def test_the_derived_fanout_is_the_ports_less_the_upstream_port(rm1, ports, levels, where, frac, gpu_share):
    fanout = ports - 1
    cap = fanout**levels
    if where == "at":
        devices = cap
    elif where == "one past":
        devices = cap + 1
    else:  # more than the fan-out's capacity, no more than the ports' (which counts the upstream port)
        devices = cap + 1 + int(frac * (ports**levels - cap - 1))
    if devices < 2 or devices > 4000:
        return
    gpus, mems = _split(devices, gpu_share)
    s = settle(_cfg(ports, gpus, mems), rm1)
    want = levels if devices <= cap else levels + 1
    while fanout**want < devices:  # a small fan-out: the ports' count may pass fanout**(levels + 1)
        want += 1
    assert s.role("switch").levels == want
    assert fanout**want >= devices and (want == 1 or fanout ** (want - 1) < devices)
    fabric = Fabric.of(build_devices(s), gpus, mems)  # the settled tree holds every device
    assert fabric.tree.n_devices >= devices


@pytest.mark.parametrize(("ports", "levels"), [(16, 1), (16, 2), (5, 3)])
def test_an_explicit_tree_takes_its_capacity_and_refuses_one_past_it(ports, levels):
    cap = (ports - 1) ** levels
    gpus, mems = _split(cap, 0.8)
    assert Fabric.of(build_devices(_cfg(ports, gpus, mems, levels)), gpus, mems).tree.n_devices == cap
    gpus, mems = _split(cap + 1, 0.8)
    with pytest.raises(ConfigError, match="leaf ports"):
        Fabric.of(build_devices(_cfg(ports, gpus, mems, levels)), gpus, mems)
