"""One registry, one way to plug in: every pluggable kind is an entry-point group resolved by
:class:`cxlsim.plugins.Registry`; the built-ins are declared in pyproject.toml as a third party's
are; an implementation registered at run time runs through the same code path as a built-in (a toy
ft scheme through ``run_scenario``, a toy persistence scheme through a simulation and a crash
campaign)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from cxlsim.errors import ConfigError, InputError
from cxlsim.ft import run_scenario
from cxlsim.ft.scenario import FT_SCHEMES, parse_scenario
from cxlsim.ft.schemes import Full
from cxlsim.plugins import Registry
from cxlsim.sweep.executors import EXECUTORS
from cxlsim.systems import axes
from cxlsim.systems.models import SYSTEM_MODELS

ROOT = Path(__file__).resolve().parents[2]


def _fake_distribution(site: Path, group: str, lines: str) -> None:
    info = site / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}\n")


def test_names_come_from_entry_points_without_importing(tmp_path):
    """A declared name is listed before (and without) its module being imported; asking for it
    imports it; an unknown name names the kind, the group and the known names."""
    _fake_distribution(tmp_path, "cxlsim.test_plugins", "ghost = toy_plugin_not_importable:Ghost")
    sys.path.insert(0, str(tmp_path))
    try:
        reg = Registry("cxlsim.test_plugins", "toy thing")
        assert reg.names() == ("ghost",) and "ghost" in reg
        assert "toy_plugin_not_importable" not in sys.modules
        with pytest.raises(ImportError, match=r"toy thing 'ghost': entry point 'toy_plugin_not_importable:Ghost' "
                                              r"of group cxlsim.test_plugins does not load"):
            reg.get("ghost")
        with pytest.raises(InputError, match=r"unknown toy thing 'nope'; choose from ghost \(entry-point group "
                                             r"cxlsim.test_plugins\)"):
            reg.get("nope")
        with pytest.raises(ConfigError, match=r"f.yaml: kind: unknown toy thing"):
            reg.get("nope", "f.yaml", "kind")
    finally:
        sys.path.remove(str(tmp_path))


def test_runtime_registration_refuses_a_taken_name():
    reg = Registry("cxlsim.test_plugins_empty", "toy thing")
    a, b = object(), object()
    assert reg.register("a", a) is a and reg.get("a") is a
    reg.register("a", a)  # the same object again: a no-op
    with pytest.raises(ValueError, match="already registered"):
        reg.register("a", b)
    reg.unregister("a")
    assert reg.names() == ()


def test_builtins_are_declared_as_a_third_party_declares_them():
    """Each built-in of every group is an entry point of cxlsim's own pyproject.toml, and each
    resolves (the kinds' lists are these names)."""
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    groups = {EXECUTORS.group: EXECUTORS, SYSTEM_MODELS.group: SYSTEM_MODELS, FT_SCHEMES.group: FT_SCHEMES,
              **{reg.group: reg for reg in axes.REGISTRIES.values()}}
    for group, reg in groups.items():
        assert set(eps[group]) <= set(reg.names()), group
        for name in eps[group]:
            assert reg.get(name) is not None
    assert {"serial", "process", "dask"} <= set(EXECUTORS)
    assert {"check-n-run", "undo-log", "full"} <= set(FT_SCHEMES)


def test_a_scheme_folder_holds_every_level_of_it():
    """A persistence scheme's batch timing and crash protocol and its ft scheme resolve from one
    folder."""
    for axis_name, ft_kind in (("cnr", "check-n-run"), ("undo", "undo-log")):
        home = f"cxlsim.axes.persistence.{axis_name}."
        cls = axes.implementation("persistence", axis_name)
        assert cls.__module__.startswith(home) and cls.build_protocol.__module__.startswith(home)
        assert FT_SCHEMES.get(ft_kind).__module__.startswith(home)


class ToyFull(Full):
    """A toy ft scheme: full recovery under another kind (its own folder in a study's package)."""


@pytest.fixture
def toy_ft_scheme():
    FT_SCHEMES.register("toy-full", ToyFull)
    yield
    FT_SCHEMES.unregister("toy-full")


def test_a_registered_ft_scheme_runs_as_a_builtin(toy_ft_scheme):
    doc = {"version": 1, "name": "t", "seed": 1, "job": {"duration_h": 200, "step_s": 0.1},
           "model": {"embedding_GB": 1.0, "dense_GB": 0.0, "row_B": 64, "emb_shards_count": 4, "nodes_count": 4},
           "failures": {"process_policy": "exponential", "mtbf_h": 5, "reschedule_s": 0},
           "schemes": [{"kind": "full", "interval_h": 1.0}, {"kind": "toy-full", "interval_h": 1.0}]}
    full, toy = run_scenario(parse_scenario(doc, "t.yaml"))["schemes"]
    assert toy["kind"] == "toy-full" and ToyFull.kind == "toy-full"
    drop = ("scheme", "kind")
    assert {k: v for k, v in toy.items() if k not in drop} == {k: v for k, v in full.items() if k not in drop}
    with pytest.raises(ConfigError, match=r"schemes\[0\].kind: must be one of .*toy-full.*got 'nope'"):
        parse_scenario({**doc, "schemes": [{"kind": "nope"}]}, "t.yaml")
    with pytest.raises(ConfigError, match=r"schemes\[0\].bogus"):  # the toy's parameters: its SCHEMA
        parse_scenario({**doc, "schemes": [{"kind": "toy-full", "bogus": 1}]}, "t.yaml")


@pytest.fixture
def toy_persistence():
    cnr = axes.implementation("persistence", "cnr")

    class ToyCnr(cnr):
        """A toy persistence scheme: cnr under another name, counting its recoveries."""

        plans = 0

        @classmethod
        def plan(cls, img, proto):
            cls.plans += 1
            return super().plan(img, proto)

    axes.REGISTRIES["persistence"].register("toy_cnr", ToyCnr)
    yield ToyCnr
    axes.REGISTRIES["persistence"].unregister("toy_cnr")


@pytest.mark.slow
def test_a_registered_persistence_scheme_runs_and_crashes_as_a_builtin(toy_persistence):
    """The toy runs through the machine (same timing as cnr) and through a crash campaign, whose
    recovery asks the toy (by its registered name) for its plan."""
    from cxlsim.crash import prepare, run_points
    from cxlsim.systems.run import simulate

    sets = [("pipeline.persistence", "cnr"), ("pipeline.cnr_interval_batches", 2)]
    base = simulate("cxl-b", batches=2, warmup=1, seed=3, workload_sets={"batch_size": 16}, sets=sets)
    toy_sets = [("pipeline.persistence", "toy_cnr"), ("pipeline.cnr_interval_batches", 2)]
    toy = simulate("cxl-b", batches=2, warmup=1, seed=3, workload_sets={"batch_size": 16}, sets=toy_sets)
    assert type(toy.machine.persistence) is toy_persistence
    np.testing.assert_array_equal(toy.batch_times_ns, base.batch_times_ns)
    tiny = [("workload_overrides.tables", 4), ("workload_overrides.rows_per_table", 400_000),
            ("workload_overrides.batch_size", 32), ("workload_overrides.lookups_per_table", 8),
            ("workload_overrides.dim", 16), ("workload_overrides.bottom_mlp", "13-1024-256-16"),
            ("workload_overrides.top_mlp", "26-16-1")]
    cr = prepare("cxl-b", "rm1", 0.01, 4, 3, None, tiny + toy_sets)
    assert cr.protocol.kind == "toy_cnr"
    rep = run_points(cr, 20)
    assert rep.summary["violations"] == 0 and toy_persistence.plans > 0
