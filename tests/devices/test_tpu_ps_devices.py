"""tpu-ps's devices are families with presets in the one device graph: the TPU chip, its HBM, the
ICI, the parameter server, the NICs and the accelerator host are roles whose models the step model
reads, each family declares its kind and one energy hook, and each batch's activity records what
every role's devices did, which the energy model prices through those hooks."""

from __future__ import annotations

import pytest

import cxlsim
from cxlsim.devices.registry import get_family
from cxlsim.energy.model import component_of
from cxlsim.errors import ConfigError
from cxlsim.systems.tpu_ps import TPU_PS_ROLES

SMALL = {"batch_size": 32}
KINDS = {"tpu": "compute", "tpu_hbm": "accelerator_memory", "ici": "link", "param_server": "network",
         "ps_nic": "network", "host_nic": "network", "tpu_host": "compute"}


def test_every_role_is_a_family_preset_with_sources():
    cfg = cxlsim.load_config("tpu-ps")
    assert set(cfg.devices) == set(TPU_PS_ROLES)
    for role in TPU_PS_ROLES:
        preset = cfg.devices[role].preset
        family = get_family(preset.family)
        assert family.kind == KINDS[role] and family.energy is not None, role
        assert set(preset.params.sources) == set(preset.params), (role, preset.name)  # every value sourced
    assert cfg.tpu_ps is not None and not {"hbm_GiB", "a2a_GBps", "chip_idle_W", "host_W"} & set(cfg.tpu_ps)


def test_the_step_reads_the_roles_models():
    """A role's parameter, set on its preset, is the one the step model uses; the result carries
    the graph that timed it."""
    sets = {"topology.gpus_count": 4}
    base = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, sets=sets)
    slow = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                           sets={**sets, "devices.ici.params.allreduce_GBps": 50})
    assert base.devices is not None and base.devices.family("ici") == "ici"
    k = base.config.tpu_ps.as_dict()["contention_factor"]  # pipelined: the lanes' busy time × k
    b, s = (r.activity[0].lane_busy_ns["ici.allreduce"] / k for r in (base, slow))
    lat = base.devices["ici"].params.allreduce_latency_us * 1e3
    assert s - lat == pytest.approx(2 * (b - lat))
    assert slow.config.devices["ici"].params.allreduce_GBps == 50


@pytest.mark.parametrize("sets,servers", [({"topology.gpus_count": 8}, 0),
                                         ({"topology.gpus_count": 8, "tpu_ps.placement_policy": "ps",
                                           "tpu_ps.ps_servers_count": 3}, 3),
                                         ({}, 1)])
def test_each_batch_records_every_roles_devices_and_the_hooks_price_them(sets, servers):
    """Chips, HBM stacks, interconnect (more than one chip), hosts (⌈chips / 4⌉) and their NICs,
    parameter servers and their NICs (tables on servers): each role's Usage with its device count;
    every component of the run's energy is its roles' hooks on those usages."""
    r = cxlsim.simulate("tpu-ps", workload="rm1", batches=2, warmup=0, workload_sets=SMALL, sets=sets)
    chips = r.config.topology.gpus_count
    hosts = -(-chips // 4)
    expect = {"tpu": chips, "tpu_hbm": chips, "tpu_host": hosts, "host_nic": hosts}
    if chips > 1:
        expect["ici"] = chips
    if servers:
        expect.update(param_server=servers, ps_nic=servers)
    by: dict[str, float] = {}
    for a in r.activity:
        assert {role: use.count for role, use in a.usage.items()} == expect
        assert all(use.wall_ns == a.wall_ns for use in a.usage.values())
        for role, use in a.usage.items():
            family = get_family(r.devices.family(role))
            en = family.energy(r.devices[role], use)
            c = component_of(family)
            by[c] = by.get(c, 0.0) + (en.static_J + en.active_J + en.dynamic_J) / len(r.activity)
    assert set(by) <= set(r.energy["by_component"])
    for c, j in r.energy["by_component"].items():
        assert j == pytest.approx(by.get(c, 0.0)), c
    assert by["links"] > 0 if chips > 1 else "links" not in by


def test_roles_are_checked():
    with pytest.raises(ConfigError, match=r"devices\.tpu\.params\.bogus|bogus"):
        cxlsim.load_config("tpu-ps", {"devices.tpu.params.bogus": 1})
    with pytest.raises(ConfigError, match="the ici role takes"):
        cxlsim.load_config("tpu-ps", {"devices.ici.preset": "nic/ecrec-25gbps"})
    with pytest.raises(ConfigError, match="does not use a tpu role"):
        cxlsim.load_config("cxl", {"devices.tpu.preset": "tpu/tpuv4"})
