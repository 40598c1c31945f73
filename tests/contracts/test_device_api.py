"""The one device API (cxlsim/devices/base.py): every family's bounds held together by one property
test, the shape of the API, and the library standing alone (no simpy; numba only for media)."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cxlsim.config.catalog import list_presets
from cxlsim.devices import build_device, family_names, get_family
from cxlsim.devices.base import Cost, DeviceModel, PoweredModel, Usage, powered_energy
from cxlsim.devices.fabric.cxl_path import FabricPath
from cxlsim.devices.registry import families_of_kind
from cxlsim.workloads.interactions.dot import Dot

MEDIA = ("dram/ddr4-2666", "pmem/optane-100", "pmem/paper", "ssd/paper", "ssd/intel-750")
LINKS = ("cxl_link/cxl2-x16", "cxl_link/cxl3-x16", "cxl_link/cxl3-x16-lopt")
#: The families built on the numba media kernel: a query on the registry, not a list.
MEDIA_FAMILIES = tuple(families_of_kind("memory", "media"))


@cache
def model(preset: str, **overrides):
    return build_device(preset, overrides or None)


@st.composite
def paths(draw):
    """1-4 links of one shipped preset and the switch between them."""
    link = model(draw(st.sampled_from(LINKS)))
    switch = model("cxl_switch/cxl2-x16" if link.flit_B == 68 else "cxl_switch/cxl3-x16")
    return FabricPath([link] * draw(st.integers(1, 4)), switch)


def rows(n_max: int, unique: bool):
    """Rows of a 16 M-row table (the domain of the CPU's stated factors)."""
    def make(seed_n):
        seed, n = seed_n
        r = np.random.default_rng(seed).integers(0, 1 << 24, n)
        return np.unique(r) if unique else r
    return st.tuples(st.integers(0, 10**6), st.integers(1, n_max)).map(make)


DIRECTION = st.sampled_from(["forward", "backward"])
WIDTH = st.one_of(st.sampled_from([1, 13, 32, 64, 512, 2048, 8192]), st.integers(1, 20000))
MEDIA_ARGS = st.tuples(st.integers(1, 300), st.sampled_from([1, 64, 100, 256, 300, 4096, 5000]), st.integers(1, 8))
PROTO_MEM = st.tuples(st.integers(0, 1 << 20), st.floats(0, 1000), paths(), st.sampled_from([0.0, 1.0, 10.0, 100.0]))
CPU_ARGS = {
    op: st.tuples(rows(5000, op == "update"), st.sampled_from([1, 4, 16, 32, 64, 128, 300]),
                  st.sampled_from(MEDIA).map(model), st.integers(1, 8))
    for op in ("lookup", "update")
}

#: (case, model, op, strategy of the op's arguments): every bounded op of every family, and paths.
CASES = [
    *[(f"{p}:{op}", lambda p=p: model(p), op, MEDIA_ARGS) for p in MEDIA for op in ("read", "write")],
    *[(f"{p}:message", lambda p=p: model(p), "message", st.tuples(st.integers(0, 1 << 22))) for p in LINKS],
    *[(f"{p}:{op}", lambda p=p: model(p), op, PROTO_MEM)
      for p in ("cxl_protocol/asic", "cxl_protocol/fpga") for op in ("read", "write")],
    *[(f"{p}:flush", lambda p=p: model(p), "flush", st.tuples(st.integers(1, 1 << 18), paths()))
      for p in ("cxl_protocol/asic", "cxl_protocol/fpga")],
    *[(f"{p}:cache_fill{'-' + op if op else ''}", lambda p=p: model(p), "cache_fill",
       st.tuples(st.integers(1, 1 << 14), st.floats(0, 1000), paths(), st.sampled_from([0.0, 1.0, 10.0, 100.0]),
                 *([st.just(op)] if op else [])))
      for p in ("cxl_protocol/asic", "cxl_protocol/fpga", "cxl_protocol/agilex7") for op in ("", "RdShared")],
    *[(f"cxl_protocol/asic-{pol}:configure_batch", lambda pol=pol: model("cxl_protocol/asic", index_transfer_policy=pol),
       "configure_batch", st.tuples(st.integers(0, 64), st.integers(0, 1 << 24), paths())) for pol in ("dma", "mmio")],
    *[(f"{p}{'-copy' if c else ''}:{op}", lambda p=p, c=c: model(p, bounce_host_copy=c), op, args)
      for p in ("pcie/gen4-x16", "pcie/u200-gen3-x16") for c in (False, True)
      for op, args in (("dma", st.tuples(st.integers(0, 1 << 30), st.sampled_from(["h2d", "d2h"]))),
                       ("memcpy", st.tuples(st.integers(0, 1 << 30), st.sampled_from(["h2d", "d2h", "d2h2d"]),
                                            st.sampled_from(["cpu/i5-9600k", "cpu/riscv-u200"]).map(model))))],
    ("gpu/rtx3090:layer", lambda: model("gpu/rtx3090"), "layer",
     st.tuples(WIDTH, WIDTH, st.integers(1, 100_000), DIRECTION)),
    ("gpu/rtx3090:mlp", lambda: model("gpu/rtx3090"), "mlp",
     st.tuples(st.lists(WIDTH, min_size=2, max_size=5), st.integers(1, 100_000), DIRECTION)),
    ("gpu/rtx3090:ops(dot)", lambda: model("gpu/rtx3090"), "ops",
     st.tuples(st.integers(1, 100_000), st.integers(2, 128), st.integers(1, 256), DIRECTION).map(
         lambda a: (Dot(a[1] - 1, a[2], a[2]).kernels(a[0], a[3]),))),
    ("gpu/rtx3090:optimizer", lambda: model("gpu/rtx3090"), "optimizer",
     st.tuples(st.integers(1, 10**9), st.integers(1, 64))),
    *[(f"cpu/i5-9600k:{op}", lambda: model("cpu/i5-9600k"), op, CPU_ARGS[op]) for op in ("lookup", "update")],
    ("ndp/alveo-u200:pool", lambda: model("ndp/alveo-u200"), "pool", st.tuples(st.integers(0, 10**7), st.integers(1, 256))),
    ("ndp/alveo-u200:update", lambda: model("ndp/alveo-u200"), "update",
     st.tuples(st.integers(0, 10**6), st.integers(1, 256)).flatmap(
         lambda a: st.tuples(st.just(a[0]), st.just(a[1]), st.integers(a[0], a[0] + 10**6)))),
    ("ndp/alveo-u200:correction", lambda: model("ndp/alveo-u200"), "correction",
     st.tuples(st.integers(0, 10**7), st.integers(1, 256))),
    ("ndp/alveo-u200:stream", lambda: model("ndp/alveo-u200"), "stream",
     st.tuples(st.integers(0, 10**7), st.floats(50, 10_000), st.floats(0.5, 200))),
    ("ndp/alveo-u200:lookup", lambda: model("ndp/alveo-u200"), "lookup",
     st.tuples(st.integers(0, 10**6), st.integers(1, 256), st.floats(50, 10_000), st.floats(0.5, 200))),
    ("ckpt_logic/alveo-u200:copy_issue", lambda: model("ckpt_logic/alveo-u200"), "copy_issue",
     st.tuples(st.integers(1, 10**5), st.integers(0, 10**9)).map(lambda a: (a[0] + a[1], a[0]))),
    ("path:message", None, "message", st.tuples(paths(), st.integers(0, 1 << 22))),
]


def _check(m: DeviceModel, op: str, args: tuple) -> None:
    t = getattr(m, f"{op}_ns")(*args)
    b = m.bound_ns(op, *args)
    assert b <= t * (1 + 1e-9), (op, args, t, b)
    assert t <= m.bound_factor(op) * b * (1 + 1e-9), (op, args, t, b, m.bound_factor(op))


@pytest.mark.slow
@pytest.mark.parametrize(("make", "op", "args"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_detailed_between_bound_and_stated_factor(make, op, args, data):
    drawn = data.draw(args)
    if make is None:  # a path is itself the model
        path, *rest = drawn
        _check(path, op, tuple(rest))
    else:
        _check(make(), op, drawn)


def test_every_bounded_op_of_every_family_is_covered():
    covered = {(c[0].split(":")[0].split("-copy")[0], c[2]) for c in CASES}
    for preset in list_presets():
        m = build_device(preset)
        assert isinstance(m, DeviceModel) and m.params is not None
        for op in type(m).BOUNDED_OPS:
            assert callable(getattr(m, f"{op}_ns")), (preset, op)
            assert any(op == o and preset.split("/")[0] == name.split("/")[0] for name, o in covered), (preset, op)
            assert m.bound_factor(op) >= 1
        with pytest.raises(ValueError, match="no bound for op"):
            m.bound_ns("teleport", 1)


@pytest.mark.parametrize(("preset", "power"), [
    ("dram/ddr4-2666", "background_W"), ("pmem/optane-100", "background_W"), ("ssd/intel-750", "background_W"),
    ("cxl_link/cxl3-x16", "idle_power_W"), ("cxl_switch/cxl3-x16", "idle_power_W"), ("pcie/gen4-x16", "idle_power_W"),
    ("gpu/rtx3090", "idle_power_W"), ("cpu/i5-9600k", "idle_power_W"), ("ndp/alveo-u200", "static_W"),
    ("ckpt_logic/alveo-u200", "static_W"),
])
def test_static_energy_is_power_times_wall_time(preset, power):
    m = build_device(preset)
    w = m.params[power]
    assert m.static_energy_J(2e6) == pytest.approx(w * 2e-3)
    assert m.static_energy_J(2e6, count=3) == pytest.approx(3 * w * 2e-3)


@pytest.mark.parametrize(("preset", "active"), [
    ("cxl_link/cxl3-x16", None), ("cxl_switch/cxl3-x16", None), ("pcie/gen4-x16", None),
    ("gpu/rtx3090", "active_power_W"), ("cpu/i5-9600k", "tdp_W"), ("ndp/alveo-u200", None),
    ("ckpt_logic/alveo-u200", None),
])
def test_powered_families_price_static_active_and_their_own_dynamic_terms(preset, active):
    """The shared hook: static × wall × count, (active − static) × busy, and only the family's dynamic term."""
    m = build_device(preset)
    assert isinstance(m, PoweredModel) and get_family(preset.split("/")[0]).energy is powered_energy
    use = Usage(wall_ns=2e6, count=3, busy_ns=1e6, moved_B=4096.0,
                ops={"pooled_vectors": 10, "updated_rows": 5, "gradient_vectors": 7, "corrected_vectors": 2}, dim=32)
    e = powered_energy(m, use)
    assert e.static_J == pytest.approx(3 * m.params[m.STATIC_POWER_PARAM] * 2e-3)
    if active is None:
        assert e.active_J == 0.0
        with pytest.raises(TypeError, match="no active power"):
            m.active_energy_J(1.0)
    else:
        assert e.active_J > 0
        assert e.active_J == pytest.approx((m.params[active] - m.params[m.STATIC_POWER_PARAM]) * 1e-3)
    assert e.dynamic_J == m.dynamic_energy_J(use)
    assert (e.dynamic_J > 0) == (active is None)  # links, switches and logic price bytes or operations
    assert powered_energy(m, Usage(wall_ns=0.0)) == type(e)()


def test_cost_is_one_type_with_size_in_bytes():
    c = Cost(1.0, 64.0, 2e-9) + Cost(2.0, 128.0, 1e-9)
    assert (c.time_ns, c.size_B, c.energy_J) == (3.0, 192.0, pytest.approx(3e-9))


def test_families_listed_without_importing_models():
    code = ("import sys; from cxlsim.devices import family_names; print(family_names()); "
            "print([m for m in sys.modules if m.startswith('cxlsim.devices.') and m not in "
            "('cxlsim.devices.registry',)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert eval(out[0]) == sorted({p.split("/")[0] for p in list_presets()})  # noqa: S307 (our own output)
    assert eval(out[1]) == []  # noqa: S307
    assert set(family_names()) >= {p.split("/")[0] for p in list_presets()}
    assert get_family("ckpt_logic").name == "ckpt_logic"


STANDALONE = """
import json, sys
for name in {blocked!r}:
    sys.modules[name] = None
from cxlsim.config.catalog import list_presets
from cxlsim.devices import build_device
built = []
for preset in list_presets():
    if preset.split("/")[0] in {skip!r}:
        continue
    build_device(preset)
    built.append(preset)
print(json.dumps({{"built": built, "still_blocked": all(sys.modules[name] is None for name in {blocked!r})}}))
"""


@pytest.mark.parametrize(("blocked", "skip"), [(("simpy",), ()), (("simpy", "numba"), MEDIA_FAMILIES)],
                         ids=["no-simpy", "no-simpy-no-numba"])
def test_library_builds_every_preset_standalone(blocked, skip):
    code = STANDALONE.format(blocked=blocked, skip=skip)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["built"] == [p for p in list_presets() if p.split("/")[0] not in skip]
    assert res["still_blocked"]  # nothing replaced the placeholders: the blocked packages never loaded


def test_numba_loads_only_when_a_media_model_is_built():
    code = ("import sys; from cxlsim.devices import build_device; build_device('cxl_link/cxl3-x16'); "
            "from cxlsim.devices import load_preset; load_preset('pmem/optane-100'); "
            "a = 'numba' in sys.modules; build_device('pmem/optane-100'); print(a, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def _doc_blocks() -> list[str]:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "devices.md").read_text(encoding="utf-8")
    return [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]


@pytest.mark.parametrize("block", _doc_blocks())
def test_docs_examples_run(block, capsys):
    exec(compile(block, "docs/devices.md", "exec"), {})  # noqa: S102 (our own documentation)
    assert capsys.readouterr().out
