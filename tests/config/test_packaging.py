"""cxlsim installs like a library: catalogs are package data found through one function, user
catalogs on $CXLSIM_PATH layer on top by name, and nothing needs a source checkout.

(CI additionally builds a wheel, installs it into a fresh venv and runs the CLI from an empty
directory: `.ci/run`.)
"""

from __future__ import annotations

import ast
import subprocess
from importlib import resources
from pathlib import Path

import pytest

import cxlsim
from cxlsim.config.catalog import CATALOG_PACKAGES, catalog_roots, list_presets, preset_path
from cxlsim.devices.registry import load_preset
from cxlsim.errors import ConfigError, InputError

CODE = Path(cxlsim.__file__).parent


def test_shipped_catalogs_are_package_data():
    for kind, package in CATALOG_PACKAGES.items():
        root = catalog_roots(kind)[0]
        assert root == resources.files(package)
        assert root.is_dir() and any(root.rglob("*.yaml")), kind
    assert "pmem/optane-100" in list_presets()
    with pytest.raises(ValueError):
        catalog_roots("plots")


def test_no_module_finds_data_relative_to_its_source():
    """A library installs like one: no ``__file__``/``parents[...]``/``REPO_ROOT`` in the package
    (catalog_roots and importlib.resources instead)."""
    offenders = []
    for path in CODE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in ("__file__", "REPO_ROOT"):
                offenders.append(f"{path.relative_to(CODE.parent)}:{node.lineno} {node.id}")
    assert not offenders, offenders


def _user_root(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    for kind in ("devices", "workloads", "configs"):
        (root / kind).mkdir(parents=True)
    return root


def _shipped_text(kind: str, rel: str) -> str:
    return (catalog_roots(kind)[0] / rel).read_text(encoding="utf-8")


def test_cxlsim_path_adds_and_shadows_presets_systems_workloads(tmp_path, monkeypatch):
    from cxlsim.systems.config import list_systems, load_system, system_path
    from cxlsim.workloads import list_workloads, load_workload

    first, second = _user_root(tmp_path, "first"), _user_root(tmp_path, "second")
    monkeypatch.setenv("CXLSIM_PATH", f"{first}:{second}")
    assert catalog_roots("workloads")[1:] == [first / "workloads", second / "workloads"]

    # an extra preset, system and workload are found by name
    (first / "devices" / "pmem").mkdir()
    (first / "devices" / "pmem" / "slow.yaml").write_text(
        "version: 1\nfamily: pmem\ndescription: slower writes\ninherits: pmem/optane-100\n"
        "params:\n  write_bw_GBps: {value: 1.0, source: test}\n")
    (first / "configs" / "my-cxl.yaml").write_text(
        "version: 1\ninherits: cxl\nname: my-cxl\ndescription: mine\nbatches: 3\nworkload: rm9\n")
    (first / "workloads" / "rm9.yaml").write_text(
        _shipped_text("workloads", "rm1.yaml").replace("tables: 20", "tables: 7"))
    assert "pmem/slow" in list_presets("pmem")
    assert load_preset("pmem/slow").params["write_bw_GBps"] == 1.0
    assert "my-cxl" in list_systems() and "rm9" in list_workloads()
    sysc = load_system("my-cxl")
    assert (sysc.batches, sysc.workload) == (3, "rm9")
    assert load_workload("rm9").params["tables"] == 7

    # shipped names are shadowed by the user's files; later roots shadow earlier ones
    (first / "devices" / "pmem" / "optane-100.yaml").write_text(
        _shipped_text("devices", "pmem/optane-100.yaml").replace("value: 2.2,", "value: 1.5,"))
    (second / "devices" / "pmem").mkdir()
    (second / "devices" / "pmem" / "optane-100.yaml").write_text(
        _shipped_text("devices", "pmem/optane-100.yaml").replace("value: 2.2,", "value: 1.25,"))
    assert preset_path("pmem/optane-100") == second / "devices" / "pmem" / "optane-100.yaml"
    assert load_preset("pmem/optane-100").params["write_bw_GBps"] == 1.25
    (first / "workloads" / "rm1.yaml").write_text(
        _shipped_text("workloads", "rm1.yaml").replace("tables: 20", "tables: 5"))
    assert load_workload("rm1").params["tables"] == 5
    (second / "configs" / "dram.yaml").write_text(
        _shipped_text("configs", "dram.yaml").replace("batches: 20", "batches: 4"))
    assert system_path("dram") == second / "configs" / "dram.yaml"
    assert load_system("dram").batches == 4

    # the device library sees the same roots
    from cxlsim.devices import build_device

    assert build_device("pmem/optane-100").params["write_bw_GBps"] == 1.25


def test_cxlsim_path_ft_scenarios_by_name(tmp_path, monkeypatch):
    from cxlsim.ft.scenario import list_scenarios, load_scenario

    assert {"side-by-side", "tpu"} <= set(list_scenarios())
    assert load_scenario("tpu").seed == 13
    root = _user_root(tmp_path, "user")
    (root / "configs" / "ft").mkdir()
    (root / "configs" / "ft" / "tpu.yaml").write_text(
        _shipped_text("configs", "ft/tpu.yaml").replace("seed: 13", "seed: 14"))
    monkeypatch.setenv("CXLSIM_PATH", str(root))
    assert load_scenario("tpu").seed == 14
    with pytest.raises(ConfigError, match="did you mean side-by-side"):
        load_scenario("side-by-sid")


def test_gpu_table_default_output_is_beside_the_preset(user_catalog, capsys):
    from cxlsim.calibrate import gpu_table

    (user_catalog / "gpu").mkdir()
    (user_catalog / "gpu" / "mine.yaml").write_text(
        "version: 1\nfamily: gpu\ndescription: mine\ninherits: gpu/rtx3090\n"
        "params:\n  mlp_table_name: {value: mine, source: test}\n")
    assert gpu_table.main(["--preset", "gpu/mine"]) == 0
    assert (user_catalog / "gpu" / "mine_mlp.csv").is_file()
    assert gpu_table.find_table("mine", measured=False) == user_catalog / "gpu" / "mine_mlp.csv"


def _fake_package(monkeypatch, package_dir: Path):
    import cxlsim.provenance as prov

    package_dir.mkdir(parents=True)
    monkeypatch.setattr(prov, "resources", type("R", (), {"files": staticmethod(lambda name: package_dir)}))
    prov.git_revision.cache_clear()
    return prov


def _git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_git_revision_is_null_outside_a_checkout(tmp_path, monkeypatch):
    prov = _fake_package(monkeypatch, tmp_path / "site-packages" / "cxlsim")
    try:
        assert prov.git_revision() is None
        assert prov.provenance()["git_revision"] is None
    finally:
        prov.git_revision.cache_clear()


def test_git_revision_ignores_a_repository_around_site_packages(tmp_path, monkeypatch):
    _git("init", "-q", cwd=tmp_path)
    prov = _fake_package(monkeypatch, tmp_path / "venv" / "site-packages" / "cxlsim")
    try:
        assert prov.git_revision() is None
    finally:
        prov.git_revision.cache_clear()


def test_git_revision_of_a_checkout(tmp_path, monkeypatch):
    prov = _fake_package(monkeypatch, tmp_path / "cxlsim")
    (tmp_path / "cxlsim" / "__init__.py").write_text("")
    _git("init", "-q", cwd=tmp_path)
    _git("add", ".", cwd=tmp_path)
    _git("commit", "-q", "-m", "x", cwd=tmp_path)
    try:
        rev = prov.git_revision()
        assert rev and len(rev) == 12 and not rev.endswith("-dirty")
        (tmp_path / "cxlsim" / "__init__.py").write_text("x = 1\n")
        prov.git_revision.cache_clear()
        assert prov.git_revision() == rev + "-dirty"
    finally:
        prov.git_revision.cache_clear()


def test_goldens_path_is_found_from_the_working_directory(tmp_path, monkeypatch):
    from cxlsim import goldens

    here = Path(__file__).resolve().parents[1]  # tests/
    assert goldens.default_path(here / "goldens") == here / "goldens" / "timing.json"
    monkeypatch.chdir(here)
    assert goldens.default_path() == here / "goldens" / "timing.json"
    with pytest.raises(InputError, match="not inside a cxlsim checkout"):
        goldens.default_path(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert goldens.main([]) == 2


def test_gpu_tables_resolve_when_the_preset_loads(user_catalog):
    """The preset's MLP tables are found at load (a parameter with its source), a user catalog in
    $CXLSIM_PATH shadows the shipped table, and a measured table wins over a generated one."""
    from cxlsim.devices import build_device, load_preset

    shipped = load_preset("gpu/rtx3090").params
    assert shipped.mlp_table_file.endswith("rtx3090_mlp.csv") and shipped.mlp_measured_table_file == ""
    assert shipped.sources["mlp_table_file"].startswith("resolved at load")
    (user_catalog / "gpu").mkdir()
    text = Path(shipped.mlp_table_file).read_text()
    (user_catalog / "gpu" / "rtx3090_mlp.csv").write_text(text)
    assert load_preset("gpu/rtx3090").params.mlp_table_file == str(user_catalog / "gpu" / "rtx3090_mlp.csv")
    assert build_device("gpu/rtx3090").table_kind == "generated"
    (user_catalog / "gpu" / "rtx3090_mlp_measured.csv").write_text(text)
    gpu = build_device("gpu/rtx3090")
    assert gpu.table_kind == "measured" and gpu.table.path == str(user_catalog / "gpu" / "rtx3090_mlp_measured.csv")
    named = load_preset("gpu/rtx3090", {"mlp_table_file": "/elsewhere.csv"}).params
    assert named.mlp_table_file == "/elsewhere.csv"  # a file the preset names is kept
