"""Energy of tpu-ps (issue 18 item 3): each component's closed form, energy parameters never change
timing, repricing, and the energy report at equal and unequal accelerator counts."""

from __future__ import annotations

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.energy import energy_detail, energy_per_batch, energy_report
from cxlsim.energy.tpu_ps import COMPONENTS, step_energy
from cxlsim.errors import InputError
from cxlsim.systems.graph import build_devices
from cxlsim.systems.tpu_ps import (
    DEVICE_ENERGY_PARAMS,
    ENERGY_PARAMS,
    TPU_PS_SCHEMA,
    TpuPsActivity,
    TpuPsDevices,
)

SMALL = {"batch_size": 32}
P = TPU_PS_SCHEMA.validate({}, {}, "test")


def tpu_devices(**params):
    """The shipped tpu-ps system's device roles, with ``role__param=value`` overrides."""
    sets = {f"devices.{k.split('__')[0]}.params.{k.split('__')[1]}": v for k, v in params.items()}
    return TpuPsDevices.from_graph(build_devices(cxlsim.load_config("tpu-ps", sets)))


DEV = tpu_devices()


def act(**kw) -> TpuPsActivity:
    base = dict(wall_ns=2e6, chips=8, hosts=2, servers=0, tensorcore_busy_ns=1e6, sparsecore_busy_ns=5e5,
                embedding_hbm_B=1e8, mlp_hbm_B=2e8, a2a_B=3e8, allreduce_B=4e8, nic_B=0.0, ps_core_busy_ns=0.0)
    return TpuPsActivity(**{**base, **kw})


def test_components_in_hbm_on_eight_chips():
    e = step_energy(act(), P, DEV)
    T = 2e-3
    assert e["tpu_chips"]["static"] == pytest.approx(8 * 90 * T)
    assert e["tpu_chips"]["active"] == pytest.approx(8 * (92 * 1e-3 + 10 * 5e-4))
    assert e["hbm"]["static"] == pytest.approx(8 * 4 * T)
    assert e["hbm"]["dynamic"] == pytest.approx(8 * 3e8 * 3.9e-12)
    assert e["ici"]["static"] == pytest.approx(8 * 6 / 2 * 1 * T)
    assert e["ici"]["dynamic"] == pytest.approx(8 * 7e8 * 5e-12)
    assert e["ps_cpus"] == {"static": 0.0, "active": 0.0, "dynamic": 0.0}
    assert e["nics"] == {"static": pytest.approx(2 * 10 * T), "active": 0.0, "dynamic": 0.0}
    assert e["host_cpus"]["static"] == pytest.approx(2 * 200 * T)


def test_components_with_parameter_servers_on_one_chip():
    e = step_energy(act(chips=1, hosts=1, servers=2, sparsecore_busy_ns=0.0, a2a_B=0.0, allreduce_B=0.0,
                        nic_B=5e8, ps_core_busy_ns=3e7), P, DEV)
    T = 2e-3
    assert e["tpu_chips"]["active"] == pytest.approx(92 * 1e-3)
    assert e["ici"] == {"static": 0.0, "active": 0.0, "dynamic": 0.0}  # one chip: no interconnect
    assert e["ps_cpus"]["static"] == pytest.approx(2 * 100 * T)
    assert e["ps_cpus"]["active"] == pytest.approx(150 / 32 * 3e-2)
    assert e["nics"]["static"] == pytest.approx((2 + 1) * 10 * T)
    assert e["nics"]["dynamic"] == pytest.approx(8 * 5e8 * 5e-12)
    assert e["host_cpus"]["static"] == pytest.approx(200 * T)


def test_run_energy_is_the_mean_of_its_steps():
    r = cxlsim.simulate("tpu-ps", workload="rm2", batches=2, warmup=0, workload_sets=SMALL,
                        sets={"topology.gpus_count": 4})
    per = [step_energy(s["activity"], r.config.tpu_ps, TpuPsDevices.from_graph(r.devices)) for s in r.steps]
    detail = energy_detail(r)
    assert list(detail) == list(COMPONENTS)
    for c in COMPONENTS:
        assert detail[c]["static"] == pytest.approx(np.mean([p[c]["static"] for p in per]))
    assert r.energy["total"] == pytest.approx(sum(r.energy["by_component"].values()))
    assert r.to_dict()["samples_per_J"] == pytest.approx(4 * 32 / r.energy["total"])


@pytest.mark.parametrize("chips,key,value", [(4, "devices.tpu.params.idle_W", 50.0),
                                             (4, "devices.ici.params.pJ_per_bit", 20.0),
                                             (1, "devices.param_server.params.busy_W", 300.0),
                                             (1, "devices.ps_nic.params.pJ_per_bit", 1.0),
                                             (1, "devices.host_nic.params.power_W", 20.0),
                                             (4, "devices.tpu_hbm.params.pJ_per_bit", 10.0), (4, "tpu_ps.host_W", 100.0)])
def test_energy_parameters_never_change_timing_and_reprice_the_same_run(chips, key, value):
    sets = {"topology.gpus_count": chips}
    base = cxlsim.simulate("tpu-ps", workload="rm1", batches=2, warmup=0, workload_sets=SMALL, sets=sets)
    other = cxlsim.simulate("tpu-ps", workload="rm1", batches=2, warmup=0, workload_sets=SMALL,
                            sets={**sets, key: value})
    assert np.array_equal(base.batch_times_ns, other.batch_times_ns)
    assert other.energy["total"] != pytest.approx(base.energy["total"])
    repriced = energy_per_batch(base, cxlsim.load_config("tpu-ps", {**sets, key: value}))
    assert repriced["total"] == pytest.approx(other.energy["total"])


def test_every_energy_parameter_is_declared():
    assert set(ENERGY_PARAMS) <= set(P)
    assert not set(ENERGY_PARAMS) & {"placement_policy", "pipelining"}
    for role, keys in DEVICE_ENERGY_PARAMS.items():
        assert set(keys) <= set(DEV.by_role()[role].params), role
    assert "a2a_GBps" not in DEVICE_ENERGY_PARAMS["ici"] and "bw_GBps" not in DEVICE_ENERGY_PARAMS["tpu_hbm"]


def test_repricing_refuses_another_run():
    r = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL)
    with pytest.raises(InputError, match="cannot price"):
        energy_per_batch(r, cxlsim.load_config("tpu-ps", {"devices.ici.params.a2a_GBps": 10}))
    with pytest.raises(InputError, match="cannot price"):
        energy_per_batch(r, cxlsim.load_config("tpu-ps", {"topology.gpus_count": 2}))


def test_report_normalises_only_at_equal_accelerator_counts(capsys):
    one = energy_report("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL)
    assert one["accelerators"] == 1 and one["not_normalized"] is None
    assert one["normalized_to_baseline"] > 0 and one["samples_per_J"] == pytest.approx(
        32 / one["energy_J_per_batch"]["total"])
    four = energy_report("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                         sets=[("topology.gpus_count", 4)])
    assert four["accelerators"] == 4 and four["normalized_to_baseline"] is None
    assert "4 accelerators, pmem 1" in four["not_normalized"]
    assert main(["energy", "--system", "tpu-ps", "--workload", "rm1", "--batches", "1", "--warmup", "0",
                 "--set", "workload_overrides.batch_size=32", "--set", "topology.gpus_count=4"]) == 0
    out = capsys.readouterr().out
    assert "not normalised" in out and "tpu_chips" in out and "samples/J" in out
