"""The tpu-ps system in `cxlsim run`: the analytic step model on the shared streams, at the
accelerator count of topology.gpus_count."""

import json
import subprocess
import sys

import numpy as np
import pytest

import cxlsim
from cxlsim.devices.base import Usage
from cxlsim.energy import PARTS, energy_detail
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.activity import BatchActivity
from cxlsim.systems.result import RunResult
from cxlsim.systems.streams import stream_set
from cxlsim.systems.tpu_ps import tpu_ps_step
from cxlsim.systems.tpu_ps_run import unique_ids_per_chip, unique_ids_per_table, workload_params

SMALL = {"batch_size": 32}


@pytest.mark.parametrize("workload", ["rm1", "rm2", "rm3", "rm4"])
def test_tpu_ps_runs_every_workload_and_breakdown_sums(workload):
    r = cxlsim.simulate("tpu-ps", workload=workload, batches=2, warmup=0, workload_sets=SMALL)
    d = r.to_dict()
    assert d["batch_time_ms"]["mean"] > 0
    assert sum(d["breakdown_ms"].values()) == pytest.approx(d["batch_time_ms"]["mean"], rel=1e-12)
    assert d["config"]["model"] == "tpu_ps" and d["config"]["topology"]["gpus_count"] == 1
    assert d["accelerators"] == 1 and d["devices"]["tpu_chips"] == 1
    assert d["energy_J_per_batch"]["total"] > 0 and d["samples_per_J"] > 0


@pytest.mark.parametrize("sets", [{"topology.gpus_count": 4}, {"tpu_ps.placement_policy": "ps"}])
def test_a_tpu_ps_run_has_the_result_activity_and_energy_types_of_every_system(sets):
    """A plain RunResult, per measured batch a BatchActivity (its devices' Usages), and the energy
    by component and part from the same model as a cxl run's, components summing to the total."""
    kw = dict(workload="rm1", batches=2, warmup=1, workload_sets=SMALL)
    tpu = cxlsim.simulate("tpu-ps", sets=sets, **kw)
    cxl = cxlsim.simulate("cxl", **kw)
    for r in (tpu, cxl):
        assert type(r) is RunResult
        assert len(r.activity) == 2 and all(type(a) is BatchActivity for a in r.activity)
        assert [a.batch for a in r.activity] == list(r.measured)
        assert [a.wall_ns for a in r.activity] == list(r.batch_times_ns)
        detail = energy_detail(r)
        assert all(set(parts) == set(PARTS) for parts in detail.values())
        by = r.energy["by_component"]
        assert list(by) == list(detail)
        assert r.energy["total"] == pytest.approx(sum(by.values()), rel=1e-12)
        assert all(by[c] == pytest.approx(sum(detail[c].values())) for c in by)
        assert set(r.to_dict()["energy_J_per_batch"]) == {"total", "by_component"}
    assert list(cxl.energy["by_component"]) == list(tpu.energy["by_component"])[:len(cxl.energy["by_component"])]
    assert tpu.activity[0].usage and all(isinstance(u, Usage) for u in tpu.activity[0].usage.values())
    assert not cxl.activity[0].usage  # the op-graph systems' usage is read by family kind
    assert all(tpu.energy["by_component"][c] > 0 for c in ("tpu", "hbm", "nic", "host"))
    assert all(cxl.energy["by_component"][c] == 0 for c in ("tpu", "hbm", "nic", "host") if c in cxl.energy["by_component"])
    assert tpu.trace.lanes and tpu.utilisation() and tpu.to_dict()["bottleneck"]["resource"] in tpu.trace.lanes


@pytest.mark.parametrize("sets", [{"tpu_ps.pipelining": False}, {"tpu_ps.placement_policy": "ps"},
                                  {"tpu_ps.placement_policy": "ps", "tpu_ps.rpc_coalescing": True},
                                  {"topology.gpus_count": 4}, {"topology.gpus_count": 4, "tpu_ps.pipelining": False},
                                  {"topology.gpus_count": 4, "tpu_ps.placement_policy": "ps"}])
def test_breakdown_sums_in_every_mode(sets):
    r = cxlsim.simulate("tpu-ps", workload="rm2", batches=2, warmup=0, workload_sets=SMALL, sets=sets)
    assert sum(r.breakdown_ms.values()) == pytest.approx(r.batch_time_ms["mean"], rel=1e-12)


def test_unique_ids_per_table_match_the_streams():
    wl = cxlsim.api.load_workload("rm1", SMALL)
    s = stream_set(wl, 1, 2)
    per_table = unique_ids_per_table(s, 1)
    assert len(per_table) == wl.params.tables and sum(per_table) == s.batch(1).n_unique
    rows = s.batch(1).unique_rows
    t = np.searchsorted(s.layout.row_base, rows, side="right") - 1
    assert per_table == np.bincount(t, minlength=wl.params.tables).tolist()


def test_step_times_come_from_the_step_model():
    r = cxlsim.simulate("tpu-ps", workload="rm3", batches=1, warmup=1, workload_sets=SMALL)
    wl = r.workload
    s = stream_set(wl, r.config.seed, 3)
    ref = tpu_ps_step(workload_params(wl), r.config.tpu_ps, r.devices, unique_ids_per_table(s, 1))
    assert r.batch_times_ns[0] == ref["step_ns"]


def test_each_chip_dedups_its_own_samples():
    """Chip c trains samples [c·B, (c+1)·B) of the global batch and counts its own distinct ids."""
    wl = cxlsim.api.load_workload("rm1", {"batch_size": 8, "tables": 3})
    s = stream_set(wl, 1, 1)
    per_chip = unique_ids_per_chip(s, 0, 4)
    L, B = wl.params.lookups_per_table, 2
    rows = s.batch(0).lookup_rows.reshape(3, -1)
    for c in range(4):
        assert per_chip[c] == [np.unique(rows[t, c * B * L:(c + 1) * B * L]).size for t in range(3)]
    assert unique_ids_per_chip(s, 0, 1) == [unique_ids_per_table(s, 0)]
    assert all(sum(col) >= u for col, u in zip(zip(*per_chip, strict=True), unique_ids_per_table(s, 0), strict=True))


def test_ps_without_coalescing_is_slower_than_with():
    base = {"tpu_ps.placement_policy": "ps"}
    slow = cxlsim.simulate("tpu-ps", workload="rm2", batches=1, warmup=0, workload_sets=SMALL, sets=base)
    fast = cxlsim.simulate("tpu-ps", workload="rm2", batches=1, warmup=0, workload_sets=SMALL,
                           sets={**base, "tpu_ps.rpc_coalescing": True})
    assert fast.batch_time_ms["mean"] < slow.batch_time_ms["mean"]


def test_bad_keys_are_rejected():
    with pytest.raises(ConfigError, match="tpu_ps.bogus"):
        cxlsim.load_config("tpu-ps", {"tpu_ps.bogus": 1})
    with pytest.raises(ConfigError, match="tpu_ps"):
        cxlsim.load_config("cxl", {"tpu_ps.epoch_s": 4})
    with pytest.raises(ConfigError, match="tpu_ps.chips_count"):  # the chips are topology.gpus_count
        cxlsim.load_config("tpu-ps", {"tpu_ps.chips_count": 4})
    with pytest.raises(ConfigError, match="model"):
        cxlsim.load_config("cxl", {"model": "magic"})


def test_hbm_that_does_not_fit_is_refused_naming_the_chips_that_fit():
    """RM1's 37.3 GiB of tables do not fit one 32 GiB chip: auto puts them on parameter servers,
    an explicit hbm is refused (exit 2) naming the 2 chips that hold them."""
    auto = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL)
    assert auto.extra["tpu_ps"]["placement"] == "ps"
    two = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                          sets={"topology.gpus_count": 2})
    assert two.extra["tpu_ps"]["placement"] == "hbm"
    with pytest.raises(ConfigError, match=r"tpu_ps.placement_policy: .*37.3 GiB.* 2 chips fit"):
        cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                        sets={"tpu_ps.placement_policy": "hbm"})


def test_the_switch_tree_keys_do_not_apply():
    with pytest.raises(InputError, match="no CXL-MEMs or switch tree"):
        cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL,
                        sets={"topology.cxl_mems_count": 2})


def test_cli_json():
    out = subprocess.run([sys.executable, "-m", "cxlsim", "run", "--system", "tpu-ps", "--workload", "rm4",
                          "--batches", "1", "--warmup", "0", "--set", "topology.gpus_count=2", "--json"],
                         capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["system"] == "tpu-ps" and d["tpu_ps"]["placement"] == "hbm"  # 37.3 GiB fit 2 × 32 GiB
    assert d["accelerators"] == 2 and d["throughput_samples_per_s_per_accelerator"] == pytest.approx(
        d["throughput_samples_per_s"] / 2)
    assert d["samples_per_J"] == pytest.approx(2 * d["config"]["workload_params"]["batch_size"] / d["energy_J_per_batch"]["total"])


def test_every_parameter_of_the_shipped_config_has_a_source():
    from cxlsim.config.yamlio import read_yaml
    from cxlsim.systems.config import system_path
    from cxlsim.systems.tpu_ps import TPU_PS_SCHEMA

    doc = read_yaml(system_path("tpu-ps"))
    assert doc["topology"] == {"gpus_count": 1}
    given = doc["tpu_ps"]
    assert set(given) == {p.name for p in TPU_PS_SCHEMA.params}
    for name, entry in given.items():
        assert isinstance(entry, dict) and str(entry.get("source", "")).strip(), name
