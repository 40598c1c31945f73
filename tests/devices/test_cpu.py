"""Host CPU embedding ops: the simulator's mechanism (a media stream with cores × LFB in flight,
overlapped with compute), the three-term bound's closed form, energy, CLI (bounds vs factors:
tests/contracts/test_device_api.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import cxlsim
from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.compute.cpu import microbench
from cxlsim.devices.memory.media.media import AccessStream
from cxlsim.validate import media_bench


@pytest.fixture(scope="module")
def cpu():
    return build_device("cpu/i5-9600k")


@pytest.fixture(scope="module")
def dram():
    return build_device("dram/ddr4-2666")


def test_outstanding_and_compute_terms(cpu):
    assert cpu.outstanding_count == 6 * 12  # cores × line-fill buffers
    n, dim = 100_000, 32
    # (dim × 0.125 + 20) cycles per row at 3.7 GHz on 6 threads
    assert cpu.lookup_compute_ns(n, dim) == pytest.approx(n * (32 * 0.125 + 20) / (6 * 3.7))
    assert cpu.update_compute_ns(n, dim) == pytest.approx(n * (32 * 0.25 + 20) / (6 * 3.7))
    # duplicate gradients are accumulated first, at lookup cost
    assert cpu.update_compute_ns(n, dim, n_grads=3 * n) == pytest.approx(
        cpu.update_compute_ns(n, dim) + cpu.lookup_compute_ns(2 * n, dim))
    assert cpu.lookup_compute_ns(n, dim, threads=1) == pytest.approx(6 * cpu.lookup_compute_ns(n, dim))
    with pytest.raises(ValueError):
        cpu.update_compute_ns(n, dim, n_grads=n - 1)


def test_lookup_is_the_simulators_media_stream(cpu, dram):
    rows = np.random.default_rng(1).integers(0, 1 << 20, 5000)
    # 128 B rows are two cache lines: 72 line-fill buffers keep 36 rows in flight
    assert cpu.rows_in_flight(128) == 36 and cpu.rows_in_flight(64) == 72 and cpu.rows_in_flight(4096) == 1
    r = dram.serve(AccessStream.of(0.0, rows * 128, 128, False), dram.new_state(2), 36, 2, per_access=False)
    assert cpu.lookup_ns(rows, 32, dram, 2) == max(r.done_ns, cpu.lookup_compute_ns(5000, 32))
    assert cpu.lookup_ns([], 32, dram) == 0.0


def test_update_reads_then_writes_each_row(cpu, dram):
    rows = np.unique(np.random.default_rng(2).integers(0, 1 << 20, 3000))
    addr = np.repeat(rows * 128, 2)
    wr = np.tile([False, True], rows.size)
    r = dram.serve(AccessStream.of(0.0, addr, 128, wr), dram.new_state(), 36, per_access=False)
    assert cpu.update_ns(rows, 32, dram) == max(r.done_ns, cpu.update_compute_ns(rows.size, 32))


def test_three_term_bound(cpu, dram):
    """max(compute, ceil(n / outstanding) × sequential latency, busiest bank's occupancy)."""
    rows = np.arange(1440)  # 1440 consecutive rows of 128 B: 2 DRAM units each, all banks evenly
    latency = 20 * 81.0  # ceil(1440 / 72) × sequential read latency
    occupancy = dram.occupancy_ns(AccessStream.of(0.0, rows * 128, 128, False))
    assert occupancy == pytest.approx(2 * 1440 / 16 * dram.occ_read_ns)  # 2 units per row over 16 banks
    assert cpu.bound_ns("lookup", rows, 32, dram) == max(cpu.lookup_compute_ns(1440, 32), latency, occupancy)
    # a slow core: compute-bound, the bound is the compute itself
    slow = build_device("cpu/i5-9600k", {"clock_GHz": 0.01})
    assert slow.bound_ns("lookup", rows, 32, dram) == slow.lookup_compute_ns(1440, 32) == slow.lookup_ns(rows, 32, dram)


def test_dispatch_and_energy(cpu):
    assert cpu.op_dispatch_ns("python") == pytest.approx(37_506 / 3.7)  # the host engine's one operator per batch
    assert cpu.static_energy_J(1e9) == pytest.approx(10)  # idle power over 1 s
    assert cpu.active_energy_J(1e9) == pytest.approx(95 - 10)  # all cores busy for 1 s: TDP − idle


def test_microbench_runs_the_mechanism_on_a_medium(cpu, dram):
    out = microbench(cpu, {"medium": dram, "modules": 2, "batch": 16})
    rows = np.random.default_rng(0).integers(0, 1 << 24, 16 * 20 * 80)
    assert out["vectors"] == rows.size and out["outstanding_count"] == 72
    assert out["lookup"]["time_ns"] == cpu.lookup_ns(rows, 32, dram, 2)
    assert out["lookup"]["bound_ns"] <= out["lookup"]["time_ns"] <= 4 * out["lookup"]["bound_ns"]
    assert out["update"]["rows"] == np.unique(rows).size
    with pytest.raises(ValueError, match="medium"):
        microbench(cpu, {})


def test_cli_medium_option(capsys):
    assert main(["microbench", "cpu/i5-9600k", "--json", "--batch", "8"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["medium"], out["modules"]) == ("dram/ddr4-2666", 2)
    assert main(["microbench", "cpu/i5-9600k", "--json", "--batch", "8", "--medium", "pmem/optane-100",
                 "--modules", "6"]) == 0
    optane = json.loads(capsys.readouterr().out)
    assert (optane["medium"], optane["modules"]) == ("pmem/optane-100", 6)
    assert optane["lookup"]["time_ns"] > out["lookup"]["time_ns"]
    assert main(["microbench", "cpu/i5-9600k", "--medium", "cxl_link/cxl3-x16"]) == 2
    assert main(["microbench", "cpu/i5-9600k", "--link", "cxl_link/cxl3-x16"]) == 2
    assert main(["devices", "show", "cpu/i5-9600k"]) == 0


SOFTWARE_US = {  # the published per-call µs the i5-9600K's instruction counts were derived from
    "kernel_launch": 4.0, "stream_sync": 5.5, "memcpy_call": 6.0, "mmio_write": 0.15,
}
#: the framework calls measured by `cxlsim measure host` and scaled to the i5 (docs/devices-compute.md):
#: µs on the measuring host × the single-thread ratio 1.1, as instruction counts at 3.7 GHz × IPC 1.0
MEASURED_INSTRUCTIONS = {
    "op_dispatch_python": 37_506, "op_dispatch_python_no_grad": 12_509, "op_dispatch_cpp": 4_574,
    "python_element": 758, "tensor_attribute": 700, "module_call": 7_732, "autograd_node": 18_811,
    "backward_call": 369_049, "optimizer_step": 116_084, "optimizer_tensor": 14_446, "zero_grad_call": 162_095,
}


def test_software_costs_are_instruction_counts_at_the_clock(cpu):
    """count / (IPC × clock): the i5 reproduces the published µs exactly."""
    from cxlsim.devices.compute.cpu import SOFTWARE_CALLS

    assert set(SOFTWARE_CALLS) == set(SOFTWARE_US) | set(MEASURED_INSTRUCTIONS)
    p = cpu.params
    for call, us in SOFTWARE_US.items():
        assert cpu.software_ns(call) == us * 1e3  # exact, not approximate
        assert cpu.software_ns(call, 3) == pytest.approx(3 * p[f"{call}_instructions"] / (p.software_ipc * p.clock_GHz))
    for call, n in MEASURED_INSTRUCTIONS.items():
        assert p[f"{call}_instructions"] == n and "cxlsim measure host" in p.sources[f"{call}_instructions"]
        assert cpu.software_ns(call) == pytest.approx(n / 3.7)
    assert cpu.op_dispatch_ns("cpp") == pytest.approx(1_236, rel=1e-3)  # 1.124 µs measured × 1.1
    assert (cpu.launch_call_ns(), cpu.sync_call_ns(), cpu.memcpy_call_ns()) == (4e3, 5.5e3, 6e3)
    assert cpu.mmio_write_ns(4) == pytest.approx(600) and cpu.python_elements_ns(100) == pytest.approx(100 * 758 / 3.7)
    assert cpu.autograd_node_ns(2) == cpu.software_ns("autograd_node", 2) and cpu.module_call_ns() > 0
    assert cpu.tensor_attribute_ns() == pytest.approx(700 / 3.7)
    # a faster clock or a higher IPC runs the same instructions in less time
    fast = build_device("cpu/i5-9600k", {"clock_GHz": 7.4})
    assert fast.launch_call_ns() == pytest.approx(2e3)
    with pytest.raises(ValueError, match="unknown software call"):
        cpu.software_ns("teleport")
    with pytest.raises(ValueError, match="caller"):
        cpu.op_dispatch_ns("java")


def test_the_software_path_runs_on_the_host_it_is_given(cpu):
    """The link has no software of its own: every call is the host's, and none runs without one."""
    pcie = build_device("pcie/gen4-x16")
    assert pcie.launch_ns(host=cpu) == 4e3 and pcie.sync_ns(host=cpu) == 5.5e3
    for size, route in ((0, "h2d"), (1 << 20, "d2h"), (4096, "d2h2d")):
        assert pcie.memcpy_ns(size, route, host=cpu) == pcie.legs(route) * (6e3 + pcie.dma_ns(size, "h2d"))
    with pytest.raises(ValueError, match="host"):
        pcie.memcpy_ns(64, "h2d")


def test_the_riscv_soft_core_runs_the_same_instructions_slower(cpu):
    rv = build_device("cpu/riscv-u200")
    p = rv.params
    ratio = (3.7 * 1.0) / (p.clock_GHz * p.software_ipc)  # (clock × IPC) of the i5 over the soft core's
    assert ratio == pytest.approx(52.857, rel=1e-4)
    for call in set(SOFTWARE_US) - {"mmio_write"}:  # an uncached store: not the same work (the preset's source)
        assert p[f"{call}_instructions"] == cpu.params[f"{call}_instructions"]  # the same software
        assert rv.software_ns(call) == pytest.approx(ratio * cpu.software_ns(call))
    assert rv.launch_call_ns() == pytest.approx(211.4e3, rel=1e-3)  # a 4 µs launch takes ≈0.21 ms
    assert "op_dispatch_us" not in p


def test_the_host_writes_its_records_with_streaming_stores_to_memory_not_to_storage():
    """The host's checkpoint records to memory are non-temporal stores of 4 KiB pieces, each core
    holding ``streaming_store_lines_count`` (6) lines: one piece in flight, not the engine's row
    count (RM4: 72 rows of 64 B); its loads keep the engine's loop. To storage they stay block
    writes in the engine's loop. A preset without the count uses its fill buffers."""
    cpu = build_device("cpu/i5-9600k")
    assert cpu.params.streaming_store_lines_count == media_bench.STREAM_STORE_LINES
    assert cpu.stream_writes_in_flight(4096) == 1 and cpu.stream_writes_in_flight(64) == 36
    soft = build_device("cpu/riscv-u200")
    assert soft.stream_writes_in_flight(64) == soft.outstanding_count
    small = {"batch_size": 16}
    pmem = cxlsim.simulate("pmem", workload="rm4", batches=1, warmup=0, workload_sets=small, trace=False).machine
    assert pmem.ckpt_outstanding() == (pmem.engine.outstanding(), 1) and pmem.engine.outstanding() == 72
    ssd = cxlsim.simulate("ssd", workload="rm4", batches=1, warmup=0, workload_sets=small, trace=False).machine
    assert ssd.ckpt_outstanding() == ssd.engine.outstanding()
