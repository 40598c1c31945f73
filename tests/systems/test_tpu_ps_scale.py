"""tpu-ps at equal resources (docs/design.md#scale-out): the chip count is topology.gpus_count, each
chip trains the workload's batch; the step's interconnect and network terms against closed forms."""

from __future__ import annotations

import math

import pytest

import cxlsim
from cxlsim.errors import ConfigError
from cxlsim.systems.graph import build_devices
from cxlsim.systems.tpu_ps import (
    chips_that_fit,
    mlp_params_count,
    resolve_placement,
    tpu_ps_step,
)
from cxlsim.units import GiB

SMALL = {"batch_size": 32}
WL = {"batch_size": 256, "tables": 8, "dim": 16, "bottom_mlp": "13-512-64-16", "top_mlp": "64-32-1",
      "rows_per_table": 1_000_000}
ROW_B, ID_B = 16 * 4, 4
DENSE_B = (mlp_params_count((13, 512, 64, 16)) + mlp_params_count((64, 32, 1))) * 4


def tpu_devices(**params):
    """The shipped tpu-ps system's device roles, with ``role__param=value`` overrides."""
    sets = {f"devices.{k.split('__')[0]}.params.{k.split('__')[1]}": v for k, v in params.items()}
    return build_devices(cxlsim.load_config("tpu-ps", sets))


DEV = tpu_devices()


@pytest.mark.parametrize("chips", [2, 4, 16])
def test_all_to_all_bytes_per_chip(chips):
    """2·Σu·(id_B + row_B)·(c−1)/c per chip (the share a chip owns stays local), the busiest chip's."""
    per_chip = [[100 + 10 * c + t for t in range(8)] for c in range(chips)]
    step = tpu_ps_step(WL, {"placement_policy": "hbm"}, DEV, per_chip, chips=chips)
    busiest = max(sum(u) for u in per_chip)
    assert step["transfer_bytes_per_chip"] == pytest.approx(2 * busiest * (ID_B + ROW_B) * (chips - 1) / chips)
    a2a_B = sum(2 * sum(u) * (ID_B + ROW_B) * (chips - 1) / chips for u in per_chip)
    assert step["traffic_B"]["a2a"] == pytest.approx(a2a_B)
    assert step["sparse_transfer_ns"] == pytest.approx(
        (step["transfer_bytes_per_chip"] / 50e9 + 2 * 10e-6) * 1e9)


def test_one_chip_has_no_interconnect_traffic():
    step = tpu_ps_step(WL, {"placement_policy": "hbm"}, DEV, [100] * 8, chips=1)
    assert step["transfer_bytes_per_chip"] == 0 and step["sparse_transfer_ns"] == 0 and step["allreduce_ns"] == 0
    assert step["breakdown"]["transfer"] == 0
    assert step["traffic_B"]["a2a"] == 0 and step["traffic_B"]["allreduce"] == 0


@pytest.mark.parametrize("chips", [2, 8, 128])
def test_ring_allreduce_of_the_mlp_gradients(chips):
    """2(c−1)/c × parameter bytes / allreduce_GBps + latency, charged to transfer."""
    step = tpu_ps_step(WL, {"placement_policy": "hbm", "pipelining": False}, DEV, [100] * 8, chips=chips)
    expect_s = 2 * (chips - 1) / chips * DENSE_B / 100e9 + 10e-6
    assert step["allreduce_ns"] == pytest.approx(expect_s * 1e9)
    assert step["breakdown"]["transfer"] == pytest.approx(step["sparse_transfer_ns"] + step["allreduce_ns"])
    assert step["traffic_B"]["allreduce"] == pytest.approx(chips * 2 * (chips - 1) / chips * DENSE_B)


def test_a_chips_batch_and_its_mlps_do_not_shrink_with_chips():
    one = tpu_ps_step(WL, {"placement_policy": "hbm"}, DEV, [100] * 8, chips=1)
    many = tpu_ps_step(WL, {"placement_policy": "hbm"}, DEV, [100] * 8, chips=64)
    assert one["breakdown"]["b_mlp"] == many["breakdown"]["b_mlp"] > 0
    flops = 3 * 2 * 256 * (13 * 512 + 512 * 64 + 64 * 16)
    assert one["breakdown"]["b_mlp"] == pytest.approx(flops / (275e12 * 0.4) * 1e9)


def test_auto_placement_fits_tables_and_dense_parameters_in_hbm():
    need = 40 * GiB
    assert resolve_placement("auto", need, 1, 32.0) == "ps"
    assert resolve_placement("auto", need, 2, 32.0) == "hbm"
    assert resolve_placement("auto", 64 * GiB, 2, 32.0) == "hbm"  # exactly full fits
    assert resolve_placement("auto", 64 * GiB + 1, 2, 32.0) == "ps"
    assert resolve_placement("ps", need, 128, None) == "ps"
    assert chips_that_fit(64 * GiB + 1, 32.0) == 3 and chips_that_fit(1, 32.0) == 1
    with pytest.raises(ConfigError, match=r"tpu_ps.placement_policy: .* 3 chips fit them"):
        resolve_placement("hbm", 64 * GiB + 1, 2, 32.0)
    # the step model sees tables + dense bytes: 1M rows × 8 tables × 64 B = 0.48 GiB
    small = tpu_ps_step(WL, {}, tpu_devices(tpu_hbm__capacity_GiB=0.5), [100] * 8)
    tight = tpu_ps_step(WL, {}, tpu_devices(tpu_hbm__capacity_GiB=0.47), [100] * 8)
    assert small["placement"] == "hbm" and tight["placement"] == "ps"


def test_parameter_servers_count_every_tensorcore_and_the_hosts_nics():
    """RPC pairs per server = chips × TensorCores × tables; the transfer is bound by the busier NIC:
    the servers' (all ids over P servers) or a host's (its chips' ids)."""
    chips, per_chip = 8, [[500] * 8 for _ in range(8)]
    base = {"placement_policy": "ps", "ps_servers_count": 4, "chips_per_host_count": 4}
    s = tpu_ps_step(WL, base, DEV, per_chip, chips=chips)
    assert s["rpc_pairs_per_server"] == chips * 2 * 8
    total_ids = 8 * 8 * 500
    server_s = 2 * total_ids / 4 * (ID_B + ROW_B) / 3.125e9
    host_s = 2 * (4 * 8 * 500) * (ID_B + ROW_B) / 3.125e9
    assert s["sparse_transfer_ns"] == pytest.approx((max(server_s, host_s) + 2 * 50e-6) * 1e9)
    slow_host = tpu_ps_step(WL, base, tpu_devices(host_nic__bw_GBps=0.5), per_chip, chips=chips)
    assert slow_host["sparse_transfer_ns"] == pytest.approx(
        (2 * (4 * 8 * 500) * (ID_B + ROW_B) / 0.5e9 + 2 * 50e-6) * 1e9)
    assert s["hosts"] == 2 and s["servers"] == 4
    assert s["traffic_B"]["nic"] == pytest.approx(4 * total_ids * (ID_B + ROW_B))
    use = s["usage"]  # what each role's devices did: half the NIC bytes through the servers', half the hosts'
    assert (use["param_server"].count, use["ps_nic"].count, use["host_nic"].count, use["tpu_host"].count) == (4, 4, 2, 2)
    assert use["ps_nic"].moved_B == use["host_nic"].moved_B == pytest.approx(s["traffic_B"]["nic"] / 2)


def test_each_chip_deduplicates_only_its_own_batch():
    """Two chips asking for the same rows both send them: the owners serve both requests."""
    same = tpu_ps_step(WL, {"placement_policy": "hbm", "partitioning_policy": "table"}, DEV, [[100] * 8] * 2, chips=2)
    one = tpu_ps_step(WL, {"placement_policy": "hbm", "partitioning_policy": "table"}, DEV, [100] * 8, chips=1)
    assert same["traffic_B"]["embedding_hbm"] == pytest.approx(2 * one["traffic_B"]["embedding_hbm"])


def test_throughput_of_the_system_grows_with_chips():
    """A step trains chips × batch_size samples; RM1 moves into HBM from 2 chips."""
    runs = {c: cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                               sets={"topology.gpus_count": c}) for c in (1, 2, 4)}
    d = {c: r.to_dict() for c, r in runs.items()}
    assert [d[c]["tpu_ps"]["placement"] for c in (1, 2, 4)] == ["ps", "hbm", "hbm"]
    assert d[1]["throughput_samples_per_s"] < d[2]["throughput_samples_per_s"] < d[4]["throughput_samples_per_s"]
    for c in (1, 2, 4):
        assert runs[c].samples_per_batch == c * 32 and d[c]["accelerators"] == c
        assert d[c]["throughput_samples_per_s"] == pytest.approx(c * 32 / (d[c]["batch_time_ms"]["mean"] / 1e3))
        assert d[c]["throughput_samples_per_s_per_accelerator"] == pytest.approx(d[c]["throughput_samples_per_s"] / c)


def test_dataflow_systems_count_their_gpus_as_accelerators():
    r = cxlsim.simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False,
                        sets={"topology.gpus_count": 2})
    d = r.to_dict()
    assert d["accelerators"] == 2 == d["devices"]["gpus"]
    assert d["throughput_samples_per_s_per_accelerator"] == pytest.approx(d["throughput_samples_per_s"] / 2)
    assert d["samples_per_J"] == pytest.approx(64 / d["energy_J_per_batch"]["total"])
    assert math.isfinite(d["samples_per_J"])
