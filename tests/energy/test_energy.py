"""Energy model (docs/design.md#energy): each device's energy against hand calculations, per-batch
accounting, capacity provisioning, components summing to the total, determinism, every system ×
RM1–RM4."""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.devices.compute.cpu import CpuModel
from cxlsim.devices.compute.gpu import GpuModel
from cxlsim.devices.logic.ckpt_logic import CkptLogicModel
from cxlsim.devices.logic.ndp import NdpModel
from cxlsim.devices.registry import load_preset
from cxlsim.energy import COMPONENTS, energy_detail, energy_per_batch, energy_report
from cxlsim.energy.model import Deployment, cxl_links, pcie_links
from cxlsim.energy.report import baseline_sets
from cxlsim.systems.config import DeviceRole, load_system
from cxlsim.systems.graph import build_devices, build_role
from cxlsim.systems.machine import Memory
from cxlsim.systems.provision import HOST_MEMORY, checkpoint_B, model_B, provision
from cxlsim.systems.topology import Fabric
from cxlsim.workloads.catalog import load_workload

PJ = 1e-12
SYSTEMS = ("ssd", "pmem", "pcie", "cxl-d", "cxl-b", "cxl", "dram")
WORKLOADS = ("rm1", "rm2", "rm3", "rm4")
SMALL = {"batch_size": 32}
#: The ssd system's 16 GB LRU vector cache costs seconds per batch to set up; a small cache exercises
#: the same energy accounting (host DRAM hits, SSD misses and write-backs).
TABLE2 = [("platform", "table2")]
FAST_SETS = {"ssd": [("pipeline.vector_cache_GB", 0.1)]}


@cache
def small(system: str, workload: str = "rm1", seed: int = 1, batches: int = 1, warmup: int = 0):
    return cxlsim.simulate(system, workload=workload, batches=batches, warmup=warmup, seed=seed,
                           workload_sets=SMALL, sets=FAST_SETS.get(system), trace=False)


def memory(preset: str, count: int = 1) -> Memory:
    role = DeviceRole("table_memory", load_preset(preset), count, 4096)
    return Memory(role, build_role(role))


def traffic_J(mem: Memory, *results) -> float:
    """Media energy of stream results, as the energy model prices the machine's ledger."""
    return mem.model.traffic_energy_J(sum(r.media_read_B for r in results), sum(r.media_write_B for r in results),
                                      sum(r.requested_B for r in results))


# -- each device against a hand calculation -----------------------------------------------------
def test_pmem_full_line_writes_fill_the_buffer_then_cost_a_media_write_each():
    mem, n = memory("pmem/paper"), 200
    p = mem.model.params
    res = mem.serve(0.0, np.arange(n, dtype=np.int64) * 256, 256, True, 1)
    # the 64-entry write-combining buffer keeps the last 64 lines: n - 64 lines reached the media
    assert (res.media_read_B, res.media_write_B, res.requested_B) == (0.0, (n - 64) * 256.0, n * 256.0)
    hand = (n - 64) * 256 * 8 * p.write_media_pJ_per_bit * PJ + n * 256 * 8 * p.io_pJ_per_bit * PJ
    assert traffic_J(mem, res) == pytest.approx(hand, rel=1e-12)
    assert res.energy_J == pytest.approx(hand, rel=1e-12)
    # background: 4 modules x 3 W for 1 ms
    assert mem.model.static_energy_J(1e6, 4) == pytest.approx(4 * 3.0 * 1e-3)


def test_pmem_partial_writes_pay_read_modify_write():
    mem, n = memory("pmem/paper"), 100
    p = mem.model.params
    res = mem.serve(0.0, np.arange(n, dtype=np.int64) * 256, 64, True, 1)  # 64 B into distinct lines
    hand = (n * 256 * 8 * p.read_media_pJ_per_bit + (n - 64) * 256 * 8 * p.write_media_pJ_per_bit
            + n * 64 * 8 * p.io_pJ_per_bit) * PJ
    assert res.energy_J == pytest.approx(hand, rel=1e-12)
    assert traffic_J(mem, res) == pytest.approx(hand, rel=1e-12)


def test_dram_random_reads_and_writes():
    mem, n = memory("dram/ddr4-2666"), 500
    p = mem.model.params
    addr = np.random.default_rng(0).permutation(1 << 20)[:n].astype(np.int64) * 64
    r1 = mem.serve(0.0, addr, 64, False, 8)
    r2 = mem.serve(1e6, addr, 64, True, 8)
    hand = n * 64 * 8 * (p.read_media_pJ_per_bit + p.write_media_pJ_per_bit + 2 * p.io_pJ_per_bit) * PJ
    assert traffic_J(mem, r1, r2) == pytest.approx(hand, rel=1e-12)
    assert r1.energy_J + r2.energy_J == pytest.approx(hand, rel=1e-12)


def test_ssd_page_reads_and_sub_page_write():
    mem, n = memory("ssd/paper"), 20
    p = mem.model.params
    r1 = mem.serve(0.0, np.arange(n, dtype=np.int64) * 4096, 4096, False, 4)
    r2 = mem.serve(1e7, np.array([0], dtype=np.int64), 512, True, 1)  # a sub-page write: read + program a page
    hand = ((n + 1) * 4096 * 8 * p.read_media_pJ_per_bit + 4096 * 8 * p.write_media_pJ_per_bit) * PJ
    assert p.io_pJ_per_bit == 0
    assert r1.energy_J + r2.energy_J == pytest.approx(hand, rel=1e-12)
    # derived from the data sheet: the media energy at full bandwidth is active − idle power
    assert p.read_media_pJ_per_bit * PJ * 8 * 2.5e9 == pytest.approx(p.active_W - p.background_W, rel=1e-3)


def test_gpu_and_cpu_active_and_idle_power():
    gpu = GpuModel(load_preset("gpu/rtx3090").params)
    assert (gpu.static_energy_J(10e6), gpu.active_energy_J(2e6)) == pytest.approx((30 * 10e-3, (350 - 30) * 2e-3))
    cpu = CpuModel(load_preset("cpu/i5-9600k").params)
    assert (cpu.static_energy_J(10e6), cpu.active_energy_J(3e6)) == pytest.approx((10 * 10e-3, (95 - 10) * 3e-3))


def test_near_data_and_checkpointing_logic():
    ndp, dim = NdpModel(load_preset("ndp/alveo-u200").params), 32
    e = ndp.ops_energy_J(dim, n_pooled=1000, n_rows_updated=300, n_grads=1000, n_corrected=50)
    hand = ((1000 + 1000 + 50) * dim * 5 + 300 * dim * 20 + 2 * 1000 * dim * 4 * 5) * PJ
    assert e == pytest.approx(hand, rel=1e-12)
    dev = ndp.pool_cost(1000, dim).energy_J + ndp.update_cost(300, dim, 1000).energy_J + ndp.correction_cost(50, dim).energy_J
    assert e == pytest.approx(dev, rel=1e-12)
    assert CkptLogicModel(load_preset("ckpt_logic/alveo-u200").params).dma_energy_J(1e6) == pytest.approx(1e6 * 2 * PJ)


def test_link_energy_per_path_matches_the_fabric_models():
    devices = build_devices(load_system("cxl-d"))
    fabric = Fabric.of(devices, 1, 1)
    d = Deployment(1, 1, fabric)
    assert pcie_links(devices, d) == 0 and len(cxl_links(d)) == 3 and fabric.powered_switches() == 1
    path = fabric.path(("mem", 0), ("gpu", 0))
    assert [lk.params for lk in path.links] == [devices["fabric_link"].params, devices["gpu_link"].params]
    pr = devices["cxl_protocol"]
    n = 1000
    flush = pr.flush_cost(n, path)
    assert flush.size_B == math.ceil(5 * n / 15) * 256  # header slot + 4 data slots per line, 15 per flit
    # two links at 5 pJ/bit and one switch forwarding at 2 pJ/bit
    assert path.energy_J([flush.size_B] * 2) == pytest.approx(flush.size_B * 8 * (5 + 5 + 2) * PJ, rel=1e-12)
    assert path.energy_J([flush.size_B] * 2) == pytest.approx(flush.energy_J, rel=1e-12)
    pcie = build_devices(load_system("pcie"))
    assert pcie_links(pcie) == 2  # the GPU's and the memory card's
    assert pcie_links(build_devices(load_system("pmem"))) == 1
    assert pcie_links(pcie, Deployment(4, 2)) == 6  # each GPU's and each card's
    assert pcie["pcie"].energy_J(2e6) == pytest.approx(pcie["pcie"].memcpy_cost(1e6, "d2h2d", pcie["host_cpu"]).energy_J)


# -- capacity provisioning ----------------------------------------------------------------------
def test_provisioning_by_capacity():
    """On the Table 2 devices (16 GB PMEM modules; DRAM channels of two 16 GB DIMMs, the
    i5-9600K's two channels)."""
    rm1 = load_workload("rm1")
    dram = provision(build_devices(load_system("dram", TABLE2)), rm1)
    need = (model_B(rm1) + 48e9) / 32e9  # tables + MLP + host software on 32 GB channels
    assert list(dram) == ["table_memory"] and dram["table_memory"].needed == math.ceil(need) == 3
    assert dram["table_memory"].background_W == 3 * 2.0  # six 16 GB DIMMs' background power, as before
    pmem = provision(build_devices(load_system("pmem", TABLE2)), rm1)
    assert pmem["table_memory"].needed == math.ceil((model_B(rm1) + checkpoint_B(rm1)) / 16e9) == 3
    assert pmem["table_memory"].modules == 4  # the configured count is more
    assert pmem[HOST_MEMORY].modules == 3 and pmem[HOST_MEMORY].family == "dram"
    ssd = provision(build_devices(load_system("ssd", TABLE2)), rm1)
    assert ssd["table_memory"].modules == 1 and ssd["host_dram"].modules == 2 and HOST_MEMORY not in ssd
    # twice the tables: DRAM needs more DIMMs and pays their background power; 800 GB SSD does not
    big = load_workload("rm1", {"rows_per_table": 2 * rm1.params.rows_per_table})
    dram_big = provision(build_devices(load_system("dram", TABLE2)), big)["table_memory"]
    assert dram_big.modules == math.ceil((model_B(big) + 48e9) / 32e9) == 5
    assert dram_big.background_W == 5 * 2.0
    assert provision(build_devices(load_system("pmem", TABLE2)), big)["table_memory"].modules == 6
    assert provision(build_devices(load_system("ssd", TABLE2)), big)["table_memory"].modules == 1


def test_run_json_has_energy_and_provisioned_modules(capsys):
    assert main(["run", "--system", "dram", "--workload", "rm1", "--batches", "1", "--warmup", "0",
                 "--set", "workload_overrides.batch_size=32", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["energy_J_per_batch"]) == {"total", "by_component"}
    assert list(d["energy_J_per_batch"]["by_component"]) == list(COMPONENTS)
    assert d["config"]["provisioned_modules"] == {"table_memory": 3}


# -- systems ------------------------------------------------------------------------------------
@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_system_and_model_has_energy_whose_components_sum_to_the_total(system, workload):
    r = small(system, workload)
    e = energy_per_batch(r)
    by = e["by_component"]
    assert list(by) == list(COMPONENTS)
    assert sum(by.values()) == e["total"] > 0
    assert all(v >= 0 for v in by.values())
    assert by["gpu"] > 0 and by["cpu"] > 0 and by["links"] > 0 and by["dram"] > 0  # every host has DRAM
    assert (by["ssd"] > 0) == (system == "ssd")
    assert (by["pmem"] > 0) == (system not in ("ssd", "dram"))
    assert (by["cxl_mem_logic"] > 0) == (system in ("pcie", "cxl-d", "cxl-b", "cxl"))


def test_static_parts_are_power_times_batch_time():
    r = small("pmem")
    (act,) = r.activity
    T = act.wall_ns * 1e-9
    d = energy_detail(r)
    assert T == pytest.approx(r.batch_time_ms["mean"] * 1e-3)
    assert d["pmem"]["static"] == pytest.approx(4 * 3.0 * T)  # 4 PMEM modules
    assert d["dram"]["static"] == pytest.approx(3 * 1.0 * T)  # the host's 48 GB
    assert d["gpu"]["static"] == pytest.approx(30 * T) and d["cpu"]["static"] == pytest.approx(10 * T)
    assert d["links"]["static"] == pytest.approx(0.25 * T)  # the GPU's PCIe link (Gen3 on the i5-9600K)
    assert d["gpu"]["active"] == pytest.approx(320 * act.gpu_kernel_ns * 1e-9)  # kernels on the stream
    assert 0 < act.gpu_kernel_ns <= act.lane_busy_ns["gpu"]
    # the table memory's dynamic energy: its media and interface bytes at the preset's pJ/bit
    tr = act.media["table_memory"]
    p = r.config.role("table_memory").params
    expect = (tr.media_read_B * p.read_media_pJ_per_bit + tr.media_write_B * p.write_media_pJ_per_bit
              + tr.requested_B * p.io_pJ_per_bit) * 8 * PJ
    assert d["pmem"]["dynamic"] == pytest.approx(expect, rel=1e-12) and expect > 0


def test_every_access_and_byte_is_charged_to_one_batch():
    for system in ("cxl-d", "cxl", "ssd"):
        r = small(system)
        assert min(r.machine.ledgers) >= 0  # every step is charged to a real batch
        assert set(r.machine.ledgers) <= {k[1] for k in r.executor.records}
    r = small("cxl-d")
    m = r.machine
    (act,) = r.activity
    flush = m.cxl.flush_cost(math.ceil(m.pooled_B / 64), m.gpu_path).size_B
    fill = m.cxl.read_cost(m.mlp_B, 0.0, m.gpu_path).size_B
    assert act.link_B["cxl:mem0>gpu0"] == pytest.approx(flush)  # pooled vectors
    assert act.link_B["cxl:gpu0>mem0"] == pytest.approx(flush + fill)  # gradients + MLP pull
    assert act.mlp_log_B == m.mlp_B
    assert act.logic.dma_B == act.logic.updated_rows * r.workload.row_B + m.mlp_B  # redo rows + MLP pull


def test_same_seed_same_numbers():
    a = energy_per_batch(cxlsim.simulate("cxl", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, trace=False))
    assert a == energy_per_batch(small("cxl"))
    assert energy_per_batch(small("cxl", seed=7)) != a


def test_repricing_energy_parameters_equals_resimulating():
    sets = [("devices.table_memory.params.background_W", 1.5), ("devices.fabric_link.params.energy_pJ_per_bit", 1.0),
            ("devices.gpu_link.params.energy_pJ_per_bit", 1.0), ("devices.switch.params.idle_power_W", 2.0)]
    resim = cxlsim.simulate("cxl-d", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, sets=sets, trace=False)
    repriced = energy_per_batch(small("cxl-d"), config=cxlsim.load_config("cxl-d", sets))
    assert repriced == energy_per_batch(resim)
    assert repriced["total"] < energy_per_batch(small("cxl-d"))["total"]


def test_baseline_gets_the_overrides_of_shared_devices():
    cxl, pmem, ssd = load_system("cxl"), load_system("pmem"), load_system("ssd")
    sets = [("devices.table_memory.params.background_W", 1.0), ("devices.fabric_link.params.energy_pJ_per_bit", 1.0),
            ("pipeline.relaxed_lookup", False), ("seed", 3)]
    assert baseline_sets(sets, cxl, pmem) == [sets[0], sets[3]]  # same PMEM preset; no fabric link; pipeline is cxl's
    assert baseline_sets(sets, ssd, pmem) == [sets[3]]  # the ssd's table memory is not the PMEM


def test_energy_report_shape_and_normalisation(capsys):
    d = energy_report("dram", workload="rm1", baseline="cxl", batches=1, warmup=0, workload_sets=SMALL)
    assert list(d) == ["system", "workload", "platform", "baseline", "energy_J_per_batch", "normalized_to_baseline",
                       "batch_time_ms", "accelerators", "samples_per_J", "not_normalized"]
    assert d["energy_J_per_batch"] == energy_per_batch(small("dram"))
    assert d["normalized_to_baseline"] == energy_per_batch(small("dram"))["total"] / energy_per_batch(small("cxl"))["total"]
    args = ["energy", "--system", "dram", "--workload", "rm1", "--batches", "1", "--warmup", "0",
            "--set", "workload_overrides.batch_size=32"]
    assert main(args + ["--baseline", "dram", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["normalized_to_baseline"] == 1.0 and out["system"] == "dram" and out["baseline"] == "dram"
    assert out["energy_J_per_batch"]["by_component"] == pytest.approx(d["energy_J_per_batch"]["by_component"])
    assert main(args + ["--baseline", "dram"]) == 0
    assert "total" in capsys.readouterr().out
    assert main(["energy", "--system", "nosuch"]) == 2
    # tpu-ps is priced by the same model, from its devices' usage (tests/energy/test_tpu_ps_energy.py)
    assert main(["energy", "--system", "tpu-ps", "--batches", "1", "--warmup", "0",
                 "--set", "workload_overrides.batch_size=32"]) == 0


@pytest.mark.parametrize("watts", [0.0, 2.5, 7.0])
def test_an_expanders_controller_draws_its_power_over_the_batch(watts):
    # the cxl_mem device's controller chip: its static power x the batch's wall time, in the memory
    # device's logic component, wherever a role holds the device (here the expander's tables)
    sets = [("platform", "spr-cxl"), ("devices.table_memory.params.controller_static_W", watts)]
    r = cxlsim.simulate("cxl-expander", workload="rm1", batches=1, warmup=0, workload_sets=SMALL, sets=sets, trace=False)
    got = energy_detail(r)["cxl_mem_logic"]
    wall_ns = float(np.mean([a.wall_ns for a in r.activity]))
    assert got["static"] == pytest.approx(watts * wall_ns * 1e-9, rel=1e-12)
    assert got["dynamic"] == 0.0 and got["active"] == 0.0


def test_baseline_sets_tell_media_behind_a_cxl_device_from_the_bare_media():
    # physical cxl-expander holds pmem/optane-100 modules behind cxl_mem/trainingcxl-physical: a key of
    # that device (host_credits_count) is no key of the pmem baseline's bare Optane role
    items = [("platform", "physical"), ("devices.table_memory.params.host_credits_count", 64),
             ("devices.table_memory.params.controller_static_W", 3.0)]
    exp, pmem = cxlsim.load_config("cxl-expander", items), cxlsim.load_config("pmem")
    assert exp.role("table_memory").preset.name == pmem.role("table_memory").preset.name  # the same media
    assert baseline_sets(items, exp, pmem) == [items[0]]
