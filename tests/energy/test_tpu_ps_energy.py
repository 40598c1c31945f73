"""Energy of tpu-ps: each device's closed form through the shared energy model and the families'
hooks, energy parameters never change timing, repricing, and the energy report at equal and unequal
accelerator counts."""

from __future__ import annotations

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.energy import energy_detail, energy_per_batch, energy_report
from cxlsim.energy.model import batch_energy
from cxlsim.errors import InputError
from cxlsim.systems.activity import BatchActivity
from cxlsim.systems.graph import build_devices
from cxlsim.systems.tpu_ps import step_usage

SMALL = {"batch_size": 32}
GRAPH = build_devices(cxlsim.load_config("tpu-ps"))
ZERO = {"static": 0.0, "active": 0.0, "dynamic": 0.0}


def priced(**kw) -> dict[str, dict[str, float]]:
    """One step's usage (:func:`step_usage`) priced by the energy model on the shipped devices."""
    base = dict(wall_ns=2e6, chips=8, hosts=2, servers=0, tensorcore_ns=1e6, sparsecore_ns=5e5,
                hbm_B=3e8, ici_B=7e8, nic_B=0.0, ps_core_ns=0.0)
    act = BatchActivity.analytic(0, 2e6, step_usage(**{**base, **kw}))
    return batch_energy(act, GRAPH, {}, dim=16)


def test_components_in_hbm_on_eight_chips():
    e = priced()
    T = 2e-3
    assert e["tpu"]["static"] == pytest.approx(8 * 90 * T)
    assert e["tpu"]["active"] == pytest.approx(8 * (92 * 1e-3 + 10 * 5e-4))
    assert e["hbm"]["static"] == pytest.approx(8 * 4 * T)
    assert e["hbm"]["dynamic"] == pytest.approx(8 * 3e8 * 3.9e-12)
    assert e["links"]["static"] == pytest.approx(8 * 6 / 2 * 1 * T)  # the interconnect's links
    assert e["links"]["dynamic"] == pytest.approx(8 * 7e8 * 5e-12)
    assert e["param_server"] == ZERO
    assert e["nic"] == {"static": pytest.approx(2 * 10 * T), "active": 0.0, "dynamic": 0.0}
    assert e["host"] == {"static": pytest.approx(2 * 200 * T), "active": 0.0, "dynamic": 0.0}
    for c in ("gpu", "cpu", "dram", "pmem", "ssd", "cxl_mem_logic"):
        assert e[c] == ZERO, c


def test_components_with_parameter_servers_on_one_chip():
    e = priced(chips=1, hosts=1, servers=2, sparsecore_ns=0.0, ici_B=0.0, nic_B=5e8, ps_core_ns=3e7)
    T = 2e-3
    assert e["tpu"]["active"] == pytest.approx(92 * 1e-3)
    assert e["links"] == ZERO  # one chip: no interconnect
    assert e["param_server"]["static"] == pytest.approx(2 * 100 * T)
    assert e["param_server"]["active"] == pytest.approx(150 / 32 * 3e-2)
    assert e["nic"]["static"] == pytest.approx((2 + 1) * 10 * T)
    assert e["nic"]["dynamic"] == pytest.approx(8 * 5e8 * 5e-12)
    assert e["host"]["static"] == pytest.approx(200 * T)


def test_run_energy_is_the_mean_of_its_batches():
    r = cxlsim.simulate("tpu-ps", workload="rm2", batches=2, warmup=0, workload_sets=SMALL,
                        sets={"topology.gpus_count": 4})
    per = [batch_energy(a, r.devices, {}, r.workload.params.dim) for a in r.activity]
    detail = energy_detail(r)
    assert list(detail) == list(per[0])
    for c in detail:
        for part in detail[c]:
            assert detail[c][part] == pytest.approx(np.mean([p[c][part] for p in per]))
    assert r.energy["total"] == pytest.approx(sum(r.energy["by_component"].values()))
    assert r.to_dict()["samples_per_J"] == pytest.approx(4 * 32 / r.energy["total"])


@pytest.mark.parametrize("chips,key,value", [(4, "devices.tpu.params.idle_W", 50.0),
                                             (4, "devices.ici.params.pJ_per_bit", 20.0),
                                             (1, "devices.param_server.params.busy_W", 300.0),
                                             (1, "devices.ps_nic.params.pJ_per_bit", 1.0),
                                             (1, "devices.host_nic.params.power_W", 20.0),
                                             (4, "devices.tpu_hbm.params.pJ_per_bit", 10.0),
                                             (4, "devices.tpu_host.params.power_W", 100.0)])
def test_energy_parameters_never_change_timing_and_reprice_the_same_run(chips, key, value):
    sets = {"topology.gpus_count": chips}
    base = cxlsim.simulate("tpu-ps", workload="rm1", batches=2, warmup=0, workload_sets=SMALL, sets=sets)
    other = cxlsim.simulate("tpu-ps", workload="rm1", batches=2, warmup=0, workload_sets=SMALL,
                            sets={**sets, key: value})
    assert np.array_equal(base.batch_times_ns, other.batch_times_ns)
    assert other.energy["total"] != pytest.approx(base.energy["total"])
    repriced = energy_per_batch(base, cxlsim.load_config("tpu-ps", {**sets, key: value}))
    assert repriced["total"] == pytest.approx(other.energy["total"])


@pytest.mark.parametrize("chips,key", [(4, "devices.host_nic.params.pJ_per_bit"),  # tables in HBM: no NIC bytes
                                       (1, "devices.tpu.params.sparsecores_W"),  # parameter servers: no SparseCores
                                       (4, "devices.param_server.params.idle_W")])  # no servers powered
def test_energy_parameters_of_idle_devices_are_refused(chips, key):
    """A hook reads a parameter only where its device did that work, so overriding one that cannot
    matter is refused (cxlsim.systems.reach)."""
    with pytest.raises(InputError, match="never reads this parameter"):
        cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                        sets={"topology.gpus_count": chips, key: 1.0})


def test_repricing_refuses_another_run():
    r = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL)
    with pytest.raises(InputError, match="cannot price"):
        energy_per_batch(r, cxlsim.load_config("tpu-ps", {"tpu_ps.pipelining": False}))
    with pytest.raises(InputError, match="cannot price"):
        energy_per_batch(r, cxlsim.load_config("tpu-ps", {"topology.gpus_count": 2}))
    with pytest.raises(InputError, match="cannot price"):
        energy_per_batch(r, cxlsim.load_config("cxl"))


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
    assert "not normalised" in out and "param_server" in out and "samples/J" in out
