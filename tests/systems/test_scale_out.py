"""Scale-out (docs/design.md#scale-out): GPUs and CXL-MEMs on a switch tree, data-parallel training,
every link direction a contended resource, against closed-form bounds of the ports."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.errors import ConfigError
from cxlsim.systems.graph import build_devices
from cxlsim.systems.topology import Fabric, Placement
from cxlsim.workloads.layout import TableLayout

SMALL = {"batch_size": 32}


def run(system="cxl", gpus=1, mems=1, extra=(), batches=2, warmup=1, workload="rm1"):
    sets = [("topology.gpus_count", gpus), ("topology.cxl_mems_count", mems), *extra]
    return cxlsim.simulate(system, workload=workload, batches=batches, warmup=warmup, workload_sets=SMALL,
                           trace=False, sets=sets)


@pytest.mark.parametrize("system", ["pmem", "pcie", "cxl-d", "cxl-b", "cxl"])
def test_one_gpu_and_one_memory_device_are_todays_system(system):
    a = cxlsim.simulate(system, workload="rm1", batches=2, warmup=1, workload_sets=SMALL, trace=False)
    b = run(system)
    assert np.array_equal(a.batch_times_ns, b.batch_times_ns)
    assert a.energy == b.energy


def test_the_tree_places_devices_and_names_the_links_they_cross():
    cfg = cxlsim.load_config("cxl", [("topology.gpus_count", 2), ("topology.cxl_mems_count", 2),
                                     ("devices.switch.levels", 2), ("topology.fanout_count", 2)])
    f = Fabric.of(build_devices(cfg), 2, 2)
    # packed: GPUs under the first leaf switch, CXL-MEMs under the second; peer traffic turns at the root
    assert f.lanes(("mem", 0), ("gpu", 1)) == ("link.dev2.up", "link.s2.1.up", "link.s2.0.down", "link.dev1.down")
    assert f.lanes(("gpu", 0), ("gpu", 1)) == ("link.dev0.up", "link.dev1.down")  # one hop, under one switch
    path = f.path(("mem", 0), ("gpu", 1))
    assert path.hops == 3 and len(path.links) == 4
    d = f.devices
    assert [lk.params for lk in path.links] == [d["fabric_link"].params] * 3 + [d["gpu_link"].params]
    assert f.path("host", ("mem", 0)).links[0].params == d["host_link"].params
    assert f.powered_switches() == 3 and len(f.powered_links()) == 4 + 2 + 1  # devices, trunks, host


def test_a_tree_too_small_for_the_devices_is_refused_naming_the_levels_that_hold_them():
    # levels given: they win over the topology's, and the refusal names the --set that fixes it
    with pytest.raises(ConfigError, match=r"exceed the 15 leaf ports.*--set devices\.switch\.levels=2"):
        run(gpus=8, mems=8, extra=[("devices.switch.levels", 1)])


def test_whole_tables_spread_by_bytes_and_rows_shard_evenly():
    wl = cxlsim.api.load_workload("rm4")
    layout = TableLayout.from_workload(wl)
    p = Placement.of(layout, 4, "whole")
    sizes = np.diff(np.append(layout.row_base, layout.total_rows))
    load = [sizes[p.table_mem == m].sum() for m in range(4)]
    assert max(load) <= sizes.sum() / 4 + sizes.max()  # greedy largest-first onto the least loaded
    rows = np.arange(0, layout.total_rows, 997, dtype=np.int64)
    assert np.array_equal(p.mem_of(rows), p.table_mem[np.searchsorted(layout.row_base, rows, "right") - 1])
    s = Placement.of(layout, 4, "row_sharded")
    assert s.tables_on(2) == wl.params.tables and np.bincount(s.mem_of(rows), minlength=4).min() > 0


def test_throughput_grows_with_gpus_and_cxl_mems_together():
    """Each GPU keeps its batch and each CXL-MEM its share of the tables: with the work per device
    fixed, throughput grows with the devices and the bottleneck is each device's own resource."""
    thr = {}
    for k in (1, 2, 4):
        d = run(gpus=k, mems=k).to_dict()
        thr[k] = d["throughput_samples_per_s"]
        assert d["bottleneck"]["resource"].split(".")[0] in ("media", "ndp", "ckpt_logic")
    assert thr[2] >= 1.7 * thr[1] and thr[4] >= 1.7 * thr[2]


def test_throughput_stays_flat_where_a_shared_port_saturates():
    """GPUs under one leaf switch, CXL-MEMs under another: every pooled vector crosses the CXL-MEMs'
    leaf's upstream trunk. With slow fabric links the trunk is the bottleneck; throughput stays under
    its closed-form bound (each pooled transfer holds the trunk for its flush time) and flat."""
    slow = [("devices.switch.levels", 2), ("devices.fabric_link.params.lanes_count", 1),
            ("devices.fabric_link.params.rate_GTps", 0.25)]
    thr = {}
    for k in (4, 8):
        r = run(gpus=k, mems=k, extra=[*slow, ("topology.fanout_count", k)], batches=3, warmup=2)
        m, d = r.machine, r.to_dict()
        trunk_ns = sum(m.cxl.flush_ns(math.ceil(m.pooled_B_of(i) / 64), m.fabric.path(("mem", i), ("gpu", g)))
                       for i in range(k) for g in range(k))
        bound = k * 32 / (trunk_ns * 1e-9)  # samples per second the trunk can carry
        thr[k] = d["throughput_samples_per_s"]
        assert thr[k] <= bound
        assert thr[k] >= 0.5 * bound
        assert d["bottleneck"]["resource"] in ("link.s2.1.up", "link.s2.0.down", "link.s2.0.up", "link.s2.1.down")
    assert thr[8] == pytest.approx(thr[4], rel=0.2)


def test_allreduce_runs_when_there_are_several_gpus():
    r = run(gpus=2, mems=1)
    rec = r.executor.records
    assert ("allreduce", 1) in rec and ("allreduce", 1) not in run().executor.records
    ar = rec[("allreduce", 1)]
    assert ar.start_ns >= max(rec[("b_bwd", 1)].end_ns, rec[("b_bwd.1", 1)].end_ns)
    assert rec[("mlp_opt.1", 1)].start_ns >= ar.end_ns
    # the ring's 2 (G - 1) steps of half the gradients over each GPU's link and back
    m = r.machine
    assert ar.end_ns - ar.start_ns >= 2 * m.allreduce_step_ns(m.mlp_grad_B / 2)


@pytest.mark.slow
def test_mlp_param_width_sizes_the_log_and_pull_but_not_the_gradients():
    """fp16 MLP parameters halve what the checkpoint pulls and logs; the gradients all-reduced stay
    fp32 (the training itself is fp32: docs/workloads.md)."""
    def go(width):
        return cxlsim.simulate("cxl-d", workload="rm1", batches=1, warmup=0, trace=False, sets=[("topology.gpus_count", 2)],
                               workload_sets={**SMALL, "mlp_param_width": width})
    a, b = go("fp32"), go("fp16")
    ma, mb = a.machine, b.machine
    assert mb.mlp_B * 2 == ma.mlp_B == ma.mlp_params * 4 and mb.mlp_grad_B == ma.mlp_grad_B == ma.mlp_B
    assert b.activity[0].mlp_log_B * 2 == a.activity[0].mlp_log_B == ma.mlp_B
    assert mb._allreduce_ns == ma._allreduce_ns > 0  # the ring's own time: the same gradients


@pytest.mark.parametrize("reading", [{}, {"bag_size": "dlrm_uniform"}])
def test_row_sharded_pooled_vectors_are_the_expectation_over_the_bag_sizes(reading):
    """Row-sharded, a device sends a pooled vector for each table whose bag has a row on it:
    T (1 - E[(1 - 1/M)^K]) per sample, K the bag's draws (L, or DLRM's uniform sizes)."""
    r = run("cxl", gpus=1, mems=4, extra=[("topology.tables_policy", "row_sharded")], batches=1, warmup=0)
    if reading:
        r = cxlsim.simulate("cxl", workload="rm1", batches=1, warmup=0, trace=False,
                            workload_sets={**SMALL, **reading},
                            sets=[("topology.cxl_mems_count", 4), ("topology.tables_policy", "row_sharded")])
    m = r.machine
    x = 80
    q = 0.75
    if reading:  # K = 1 w.p. 1.5/x, j w.p. 1/x (1 < j < x), x w.p. 0.5/x
        power = (1.5 * q + sum(q**j for j in range(2, x)) + 0.5 * q**x) / x
    else:
        power = q**x
    assert m.transfer_tables(0) == pytest.approx(20 * (1 - power), rel=1e-12)
    assert m.pooled_B_of(0) == pytest.approx(m.B * 20 * (1 - power) * m.dim * 4, rel=1e-12)


def test_every_device_logs_its_rows_and_a_shard_of_the_mlp():
    r = run("cxl-b", gpus=2, mems=2)
    m = r.machine
    assert [s.mlp_B for s in m.sides] == [m.mlp_B / 2] * 2 and [s.source_gpu for s in m.sides] == [0, 1]
    rec = r.executor.records
    for dev in ("", ".1"):  # the update writes in place once every device's embedding log is flagged
        assert rec[("update" + dev, 1)].start_ns >= max(rec[(f"emb_log{d}", 1)].end_ns for d in ("", ".1"))
    for g in ("", ".1"):  # the optimizer steps once every device's MLP log shard is flagged
        assert rec[("mlp_opt" + g, 1)].start_ns >= max(rec[(f"mlp_log{d}", 1)].end_ns for d in ("", ".1"))


def test_host_engine_systems_refuse_several_memory_devices():
    with pytest.raises(ConfigError, match="cxl_mems_count"):
        run("pmem", gpus=1, mems=2)


def test_energy_counts_every_device():
    one, two = run(gpus=1, mems=1).energy, run(gpus=2, mems=2).energy
    assert two["by_component"]["gpu"] > 1.5 * one["by_component"]["gpu"]
    assert two["by_component"]["cxl_mem_logic"] > 1.5 * one["by_component"]["cxl_mem_logic"]


def test_the_issue_command_reports_utilisation_and_the_bottleneck(capsys):
    assert main(["run", "--system", "cxl", "--workload", "rm2", "--set", "topology.gpus_count=4", "--set",
                 "topology.cxl_mems_count=8", "--batches", "1", "--warmup", "1", "--set",
                 "workload_overrides.batch_size=16", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["devices"] == {"gpus": 4, "cxl_mems": 8}
    assert {"gpu", "gpu.3", "ndp.7", "media.table_memory.7"} <= set(d["utilisation"])
    assert d["bottleneck"]["resource"] == next(iter(d["utilisation"]))
    assert d["throughput_samples_per_s"] == pytest.approx(4 * 16 / (d["batch_time_ms"]["mean"] / 1e3))
    assert d["config"]["provisioned_modules"]["table_memory"] >= 8 * 4
