"""Contract tests per device kind: every registered family of a kind, built from each of its
presets, provides the kind's interface (``cxlsim.devices.<kind>/interface.py``: a
``typing.Protocol`` whose docstring is the contract) and behaves as the contract says.

The families come from the registry (entry points, runtime registrations), never from a list kept
here, so a family added by its own folder and one entry-point line is held to its kind's contract
without editing this file. The checks are written from the contracts: times are non-negative and do
not fall as the size of the work grows; the analytic bound of every bounded op the contract names
is not above the detailed time; energy is non-negative and static energy grows with wall time.
A check of a role's protocol (a GPU, a host link, ...) applies to every model that satisfies it.
"""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import entry_points
from typing import Any

import pytest

from cxlsim.config.catalog import list_presets
from cxlsim.devices.base import Energy, Usage
from cxlsim.devices.compute import interface as compute
from cxlsim.devices.cxl_mem import interface as cxl_mem
from cxlsim.devices.fabric import interface as fabric
from cxlsim.devices.logic import interface as logic
from cxlsim.devices.memory import interface as memory
from cxlsim.devices.registry import (
    ENTRY_POINT_GROUP,
    KIND_INTERFACES,
    KINDS,
    build_device,
    families_of_kind,
    family_names,
    get_family,
    kind_interface,
)
from cxlsim.errors import ConfigError

REL = 1e-9  # rounding slack of a bound against the detailed time
SIZES_B = (64, 256, 1024, 4096, 65536)
COUNTS = (1, 4, 16, 256)


def presets_of(family: str) -> list[str]:
    return [p for p in list_presets() if p.split("/")[0] == family]


def registered_families() -> list[str]:
    """Every family the registry knows and can import (entry points, runtime registrations)."""
    out = []
    for name in family_names():
        try:
            get_family(name)
        except ConfigError:  # a catalog folder without a family: nothing to hold to a contract
            continue
        out.append(name)
    return out


CASES = [(f, p) for f in registered_families() for p in presets_of(f)]


def nondecreasing(values: list[float]) -> bool:
    return all(b >= a * (1 - REL) for a, b in zip(values, values[1:], strict=False))


def bound_below(model: Any, op: str, detailed: float, *args: Any) -> None:
    if op in getattr(type(model), "BOUNDED_OPS", ()):
        assert model.bound_ns(op, *args) <= detailed * (1 + REL) + 1e-9, (op, args)


# ------------------------------------------------------------------------------- the kinds
def test_every_kind_states_its_contract_in_a_protocol():
    assert set(KIND_INTERFACES) == set(KINDS)
    for kind in KINDS:
        proto = kind_interface(kind)
        assert getattr(proto, "_is_protocol", False) and getattr(proto, "_is_runtime_protocol", False), kind
        assert "Contract:" in (proto.__doc__ or ""), kind


def test_every_protocol_of_the_interfaces_states_a_contract():
    modules = {spec.split(":")[0] for spec in KIND_INTERFACES.values()}
    for name in modules:
        mod = importlib.import_module(name)
        assert mod.__doc__, name
        for _, obj in inspect.getmembers(mod, inspect.isclass):
            if obj.__module__ == name and getattr(obj, "_is_protocol", False):
                assert "Contract:" in (obj.__doc__ or ""), f"{name}.{obj.__name__}"


def test_every_shipped_family_has_a_preset_to_check():
    """A family cxlsim ships (its entry point names a cxlsim module) has a preset, so the contract
    tests build it."""
    shipped = [ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.value.startswith("cxlsim.")]
    assert shipped
    for family in shipped:
        assert presets_of(family), family


@pytest.mark.parametrize(("family", "preset"), CASES, ids=[p for _, p in CASES])
def test_family_provides_its_kind_interface(family, preset):
    fam = get_family(family)
    model = build_device(preset)
    assert isinstance(model, kind_interface(fam.kind)), f"{preset}: not a {KIND_INTERFACES[fam.kind]}"
    check_behaviour(model)
    check_energy(fam, model)


def check_energy(fam: Any, model: Any) -> None:
    if hasattr(model, "static_energy_J"):
        e = [model.static_energy_J(w) for w in (0.0, 1e3, 1e6)]
        assert e[0] == 0.0 and all(x >= 0 for x in e) and nondecreasing(e)
    if fam.energy is None:
        return
    use = Usage(wall_ns=1e6, count=2, busy_ns=5e5, read_B=1e6, write_B=1e6, requested_B=1e6, moved_B=1e6)
    en = fam.energy(model, use)
    assert isinstance(en, Energy)
    assert min(en.static_J, en.active_J, en.dynamic_J) >= 0


# ------------------------------------------------------------------- behaviour by protocol
def check_behaviour(model: Any) -> None:
    """Every behavioural check whose protocol ``model`` satisfies (at least one)."""
    ran = 0
    for proto, check in CHECKS:
        if isinstance(model, proto):
            check(model)
            ran += 1
    assert ran, f"{type(model).__name__}: no behavioural check applies"


def check_memory(m: memory.MemoryModel) -> None:
    for op in ("read", "write"):
        ns = getattr(m, f"{op}_ns")
        unit_B = m.params["access_unit_B"]
        by_size = [ns(16, k * unit_B) for k in (1, 2, 4, 16)]  # whole units: a partial write may RMW
        by_count = [ns(n, 256) for n in COUNTS]
        assert min(by_size + by_count) >= 0 and nondecreasing(by_size) and nondecreasing(by_count), op
        for s in SIZES_B:
            bound_below(m, op, ns(16, s, 2), 16, s, 2)
    assert m.read_latency_ns("random") >= 0 and m.write_latency_ns("random") >= 0
    assert m.units(m.params["access_unit_B"]) == 1


def check_accelerator_memory(m: memory.AcceleratorMemory) -> None:
    assert m.gather_Bps() > 0


def check_link(m: fabric.Link) -> None:
    assert m.static_energy_J(1e6, 2) >= 0


def check_cxl_link(m: fabric.CxlLinkModel) -> None:
    times = [m.message_ns(s) for s in SIZES_B]
    assert min(times) >= m.latency_ns >= 0 and nondecreasing(times)
    for s, t in zip(SIZES_B, times, strict=True):
        bound_below(m, "message", t, s)
    assert nondecreasing([m.stream_ns(n, 64) for n in COUNTS])


def check_host_link(m: fabric.HostLink) -> None:
    for d in ("h2d", "d2h"):
        times = [m.dma_ns(s, d) for s in SIZES_B]
        assert min(times) >= 0 and nondecreasing(times), d
        for s, t in zip(SIZES_B, times, strict=True):
            bound_below(m, "dma", t, s, d)


def check_switch(m: fabric.Switch) -> None:
    hops = [m.path_latency_ns(h) for h in range(4)]
    assert hops[0] == 0.0 and nondecreasing(hops)
    assert m.forward_energy_J(1024) >= 0


def _path() -> fabric.FabricPath:
    return fabric.FabricPath([build_device("cxl_link/cxl2-x16")])


def check_protocol(m: fabric.ProtocolController) -> None:
    path = _path()
    for op in ("read", "write"):
        ns = getattr(m, f"{op}_ns")
        times = [ns(s, 100.0, path) for s in SIZES_B]
        assert min(times) >= 0 and nondecreasing(times), op
        for s, t in zip(SIZES_B, times, strict=True):
            bound_below(m, op, t, s, 100.0, path)
    flush = [m.flush_ns(n, path) for n in COUNTS]
    assert min(flush) >= 0 and nondecreasing(flush)
    assert m.read_line_ns(100.0, path) >= path.latency_ns


def check_gpu(m: compute.Gpu) -> None:
    for direction in ("forward", "backward"):
        batches = (16, 128, 1024, 8192)
        times = [m.layer_ns(512, 256, b, direction) for b in batches]
        assert min(times) >= 0 and nondecreasing(times), direction
        for b, t in zip(batches, times, strict=True):
            bound_below(m, "layer", t, 512, 256, b, direction)
    assert m.launch_ns >= 0


def check_host_cpu(m: compute.HostCpu) -> None:
    assert m.rows_in_flight(128) >= 1 and m.stream_writes_in_flight(4096) >= 1 and m.storage_reads_in_flight() >= 1
    look = [m.lookup_compute_ns(n, 64) for n in COUNTS]
    upd = [m.update_compute_ns(n, 64) for n in COUNTS]
    assert min(look + upd) >= 0 and nondecreasing(look) and nondecreasing(upd)
    assert nondecreasing([m.fault_ns(n) for n in COUNTS])


def check_compute(m: compute.Compute) -> None:
    assert m.static_energy_J(1e6, 2) >= 0


def check_accelerator(m: compute.Accelerator) -> None:
    assert m.mlp_flops_per_s() > 0


def check_logic(m: logic.Logic) -> None:
    assert m.dynamic_energy_J(Usage(wall_ns=1e6, moved_B=1e6, dim=64)) >= 0


def check_near_data(m: logic.NearData) -> None:
    pool = [m.pool_ns(n, 64) for n in COUNTS]
    upd = [m.update_ns(n, 64) for n in COUNTS]
    assert min(pool + upd) >= 0 and nondecreasing(pool) and nondecreasing(upd)
    for n, t in zip(COUNTS, pool, strict=True):
        bound_below(m, "pool", t, n, 64)


def check_checkpoint_logic(m: logic.CheckpointLogic) -> None:
    times = [m.copy_issue_ns(s) for s in SIZES_B]
    assert min(times) >= 0 and nondecreasing(times)
    for s, t in zip(SIZES_B, times, strict=True):
        bound_below(m, "copy_issue", t, s)


def check_network(m: Any) -> None:
    assert m.static_energy_J(1e6, 2) >= 0


def check_cxl_mem(m: cxl_mem.CxlMemory) -> None:
    assert m.read_line_ns() >= m.path.latency_ns > 0
    assert isinstance(m.link, fabric.CxlLinkModel) and isinstance(m.controller, fabric.ProtocolController)
    assert m.switch is None or isinstance(m.switch, fabric.Switch)


CHECKS = [
    (memory.MemoryModel, check_memory), (memory.AcceleratorMemory, check_accelerator_memory),
    (fabric.Link, check_link), (fabric.CxlLinkModel, check_cxl_link), (fabric.HostLink, check_host_link),
    (fabric.Switch, check_switch), (fabric.ProtocolController, check_protocol),
    (compute.Compute, check_compute), (compute.Gpu, check_gpu), (compute.HostCpu, check_host_cpu),
    (compute.Accelerator, check_accelerator),
    (logic.Logic, check_logic), (logic.NearData, check_near_data), (logic.CheckpointLogic, check_checkpoint_logic),
    (kind_interface("network"), check_network), (cxl_mem.CxlMemory, check_cxl_mem),
]


def test_media_families_are_a_registry_query():
    """The families on the shared media model are those declaring the capability (no list)."""
    media = families_of_kind("memory", "media")
    assert {"dram", "pmem", "ssd"} <= set(media)
    assert families_of_kind(None, "block_device") == ["ssd"] or "ssd" in families_of_kind(None, "block_device")
    assert "dram" not in families_of_kind(None, "block_device")
