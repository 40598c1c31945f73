"""tpu-ps's devices are families with presets in the one device graph (issue 23): the TPU chip, its
HBM, the ICI, the parameter server and the NICs are roles whose models the step model reads, each
family declares its kind and one energy hook, and the hooks price a step as the tpu-ps energy does."""

from __future__ import annotations

import pytest

import cxlsim
from cxlsim.devices.base import Usage
from cxlsim.devices.registry import get_family
from cxlsim.energy.tpu_ps import step_energy
from cxlsim.errors import ConfigError
from cxlsim.systems.tpu_ps import TPU_PS_ROLES, TpuPsDevices

SMALL = {"batch_size": 32}
KINDS = {"tpu": "compute", "tpu_hbm": "accelerator_memory", "ici": "link", "param_server": "network",
         "ps_nic": "network", "host_nic": "network"}


def test_every_role_is_a_family_preset_with_sources():
    cfg = cxlsim.load_config("tpu-ps")
    assert set(cfg.devices) == set(TPU_PS_ROLES)
    for role in TPU_PS_ROLES:
        preset = cfg.devices[role].preset
        family = get_family(preset.family)
        assert family.kind == KINDS[role] and family.energy is not None, role
        assert set(preset.params.sources) == set(preset.params), (role, preset.name)  # every value sourced
    assert cfg.tpu_ps is not None and not {"hbm_GiB", "a2a_GBps", "chip_idle_W"} & set(cfg.tpu_ps)


def test_the_step_reads_the_roles_models():
    """A role's parameter, set on its preset, is the one the step model uses; the result carries
    the graph that timed it."""
    sets = {"topology.gpus_count": 4}
    base = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, sets=sets)
    slow = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                           sets={**sets, "devices.ici.params.allreduce_GBps": 50})
    assert base.devices is not None and base.devices.family("ici") == "ici"
    b, s = base.steps[0], slow.steps[0]
    lat = base.devices["ici"].params.allreduce_latency_us * 1e3
    assert s["allreduce_ns"] - lat == pytest.approx(2 * (b["allreduce_ns"] - lat))
    assert slow.config.devices["ici"].params.allreduce_GBps == 50


@pytest.mark.parametrize("sets", [{"topology.gpus_count": 4}, {"tpu_ps.placement_policy": "ps"}])
def test_the_families_hooks_price_a_step_as_the_tpu_ps_energy(sets):
    r = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, sets=sets)
    dev = TpuPsDevices.from_graph(r.devices)
    a = r.steps[0]["activity"]
    e = step_energy(a, r.config.tpu_ps, dev)
    T, c = a.wall_ns, a.chips

    def hook(role: str, use: Usage) -> float:
        en = get_family(r.devices.family(role)).energy(r.devices[role], use)
        return en.static_J + en.active_J + en.dynamic_J

    def total(component: str) -> float:
        return sum(e[component].values())

    assert hook("tpu", Usage(T, c, busy_ns=c * a.tensorcore_busy_ns, ops={"sparsecore_ns": c * a.sparsecore_busy_ns})) \
        == pytest.approx(total("tpu_chips"))
    assert hook("tpu_hbm", Usage(T, c, moved_B=a.embedding_hbm_B + a.mlp_hbm_B)) == pytest.approx(total("hbm"))
    if c > 1:
        assert hook("ici", Usage(T, c, moved_B=a.a2a_B + a.allreduce_B)) == pytest.approx(total("ici"))
    if a.servers:
        assert hook("param_server", Usage(T, a.servers, busy_ns=a.ps_core_busy_ns)) == pytest.approx(total("ps_cpus"))
        assert hook("ps_nic", Usage(T, a.servers, moved_B=a.nic_B / 2)) + hook(
            "host_nic", Usage(T, a.hosts, moved_B=a.nic_B / 2)) == pytest.approx(total("nics"))
    else:
        assert hook("host_nic", Usage(T, a.hosts)) == pytest.approx(total("nics"))


def test_roles_are_checked():
    with pytest.raises(ConfigError, match=r"devices\.tpu\.params\.bogus|bogus"):
        cxlsim.load_config("tpu-ps", {"devices.tpu.params.bogus": 1})
    with pytest.raises(ConfigError, match="the ici role takes"):
        cxlsim.load_config("tpu-ps", {"devices.ici.preset": "nic/ecrec-25gbps"})
    with pytest.raises(ConfigError, match="does not use a tpu role"):
        cxlsim.load_config("cxl", {"devices.tpu.preset": "tpu/tpuv4"})
