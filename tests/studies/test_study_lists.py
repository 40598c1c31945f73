"""Every study's systems, workloads and platforms come from its catalog sweep (configs/sweeps/):
a user catalog on $CXLSIM_PATH that shadows the sweep changes what the study runs, and a bad sweep
stops the study with exit status 2 naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

import cxlsim.bench.crashtest as crash_bench
import cxlsim.bench.sim as sim_bench
import cxlsim.bench.sweep as sweep_bench
import cxlsim.crash.run as crash_run
import cxlsim.studies.fig12.__main__ as fig12_main
import cxlsim.studies.fig12.settings as fig12_settings
import cxlsim.studies.paper.settings as paper_settings
import cxlsim.studies.paper.simulation as paper_simulation
import cxlsim.studies.platform_study.__main__ as platform_study_main
import cxlsim.studies.platform_study.settings as platform_study_settings
import cxlsim.studies.platform_study.simulation as platform_study_simulation
import cxlsim.studies.scaleout.__main__ as scaleout_main
import cxlsim.studies.scaleout.report as scaleout_report
import cxlsim.studies.scaleout.settings as scaleout_settings
import cxlsim.studies.scaleout.simulation as scaleout_simulation
import cxlsim.systems.streams as streams
from cxlsim import goldens
from cxlsim.cli import main as cli_main
from cxlsim.errors import ConfigError
from cxlsim.sweep.lists import sweep_lists, sweep_path

SHIPPED = Path(__file__).resolve().parents[2] / "configs" / "sweeps"


@pytest.fixture
def sweeps(tmp_path, monkeypatch):
    """Write ``configs/sweeps/<name>.yaml`` of a user catalog on $CXLSIM_PATH: the shipped sweep with
    ``base`` keys replaced (``None`` removes one) and, optionally, ``axes`` replaced."""
    root = tmp_path / "catalog"
    (root / "configs" / "sweeps").mkdir(parents=True)
    monkeypatch.setenv("CXLSIM_PATH", str(root))

    def write(name: str, axes: dict | None = None, **base) -> Path:
        doc = yaml.safe_load((SHIPPED / f"{name}.yaml").read_text())
        for key, value in base.items():
            if value is None:
                doc["base"].pop(key, None)
            else:
                doc["base"][key] = value
        if axes is not None:
            doc["axes"] = axes
        path = root / "configs" / "sweeps" / f"{name}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    return write


def test_a_user_sweep_shadows_the_shipped_one(sweeps):
    assert sweep_path("paper").samefile(SHIPPED / "paper.yaml")
    path = sweeps("paper", systems=["cxl", "pmem"], workloads=["rm3"])
    assert sweep_path("paper") == path
    assert paper_settings.sweep_grid() == (("cxl", "pmem"), ("rm3",))
    assert paper_settings.default_systems() == ["cxl", "pmem"] and paper_settings.paper_workloads() == ["rm3"]


def test_platform_study(sweeps, monkeypatch):
    sweeps("platform-study", systems=["cxl", "cxl-b", "cxl-d", "pcie", "pmem", "dram"], workloads=["rm2"],
           set={"platform": "physical"})
    ran = []

    def fake(system, workload, sets, batches, seed):
        ran.append((system, workload))
        return 1.0

    monkeypatch.setattr(platform_study_simulation, "batch_times", fake)
    out = platform_study_simulation.run(batches=1)
    assert out["platform"] == "physical" and out["workloads"] == ["rm2"]
    assert list(out["base"]["rm2"]) == ["cxl", "cxl-b", "cxl-d", "pcie", "pmem", "dram"]
    assert {w for _, w in ran} == {"rm2"}


def test_platform_study_needs_the_systems_it_compares(sweeps, capsys):
    path = sweeps("platform-study", systems=["cxl", "pmem"])
    assert platform_study_main.main(["--batches", "1"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "base.systems" in err and "pcie" in err


def test_scale_out_tables(sweeps):
    sweeps("scale-out", systems=["pmem", "cxl"], workloads=["rm2"],
           axes={"grid": {"topology.gpus_count": [1, 2]}})
    sweeps("scale-out-1024", systems=["cxl"], workloads=["rm2"], axes={"grid": {"topology.gpus_count": [16]}})
    assert scaleout_settings.study_lists() == (("cxl", "pmem"), ("rm2",))
    pts = [scaleout_simulation.ScalePoint(s, w, 1, None, None, 10.0, None, 1.0, None, None)
           for s in ("pmem", "pcie") for w in ("rm1", "rm2")]
    assert [r[:2] for r in scaleout_report.balanced_table(pts)[1]] == [["pmem", "rm2"]]  # pcie and rm1 are not listed


def test_fig12_points(sweeps, monkeypatch, capsys):
    sweeps("fig12", systems=["cxl", "cxl-d"], workloads=["rm2"], axes={"grid": {"platform": ["physical"]}})
    monkeypatch.setattr(fig12_main, "points", lambda s, p, w: {"system": s, "platform": p, "workload": w,
                                                                 "batch_ms": 1.0})
    assert fig12_main.main(["--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["system"], r["platform"], r["workload"]) for r in rows] == [("cxl", "physical", "rm2"),
                                                                          ("cxl-d", "physical", "rm2")]


def test_reproduce_timelines_follow_fig12(sweeps):
    """The reproduction's Figure-12 timelines run fig12.yaml's systems (those reproduced) on its
    first workload."""
    runs = {(p.system, p.workload) for p in paper_simulation.plan(["cxl", "cxl-b", "pmem"], ["rm1"]).timelines}
    assert runs == {("cxl-b", "rm1"), ("cxl", "rm1")}
    sweeps("fig12", systems=["cxl", "pmem"], workloads=["rm3"])
    runs = {(p.system, p.workload) for p in paper_simulation.plan(["cxl", "cxl-b", "pmem"], ["rm1"]).timelines}
    assert runs == {("cxl", "rm3"), ("pmem", "rm3")}


@pytest.mark.parametrize("quick", [False, True])
def test_bench_sweep(sweeps, quick):
    sweeps("bench-sweep", systems=["pmem", "cxl-d", "cxl"], workloads=["rm4"])
    spec = sweep_bench._spec(quick)
    assert [(p.system, p.workload) for p in spec.points] == [("pmem", "rm4"), ("cxl-d", "rm4"), ("cxl", "rm4")][
        : 2 if quick else 3]
    assert {dict(p.sets)["batches"] for p in spec.points} == {1 if quick else 2}


def test_bench_crashtest(sweeps, monkeypatch):
    sweeps("crash-bench", systems=["cxl-b"], workloads=["rm2"])
    prepared = []

    def prepare(system, workload, scale, batches):
        prepared.append((system, workload))
        return SimpleNamespace(checker=SimpleNamespace(evaluate_slow=lambda t: None))

    monkeypatch.setattr(crash_run, "prepare", prepare)
    monkeypatch.setattr(crash_run, "run_points", lambda cr, n: SimpleNamespace(points_s=1.0, summary={"violations": 0}))
    monkeypatch.setattr(crash_run, "instants", lambda cr, n: np.arange(float(n)))
    out = crash_bench.run(SimpleNamespace(quick=True))
    assert prepared == [("cxl-b", "rm2")] and out["workload"] == "rm2"


def test_goldens_cases(sweeps, monkeypatch):
    sweeps("goldens", systems=["cxl", "tpu-ps", "pmem"], workloads=["rm4"],
           axes={"grid": {"platform": ["prototype"]}})
    c = goldens.cases()
    assert (c.systems, c.workloads, c.platforms) == (("cxl", "pmem"), ("rm4",), ("prototype",))  # op-graph systems
    monkeypatch.setattr(goldens, "compute", lambda s, w, p: {})
    assert list(goldens.compute_all()) == ["prototype/cxl/rm4", "prototype/pmem/rm4"]


def test_bench_sim(sweeps, monkeypatch):
    sweeps("bench-sim", systems=["pmem", "cxl"], workloads=["rm3"], axes={"grid": {"platform": ["prototype"]}})
    monkeypatch.setattr(streams, "stream_set", lambda wl, seed, n: SimpleNamespace(prepare=lambda n: SimpleNamespace(nbytes=1)))
    monkeypatch.setattr(sim_bench, "_one", lambda job: {"system": job[0], "workload": job[1], "platform": job[3]})
    rows = sim_bench._comparison(2, 1)[0]
    assert [(r["system"], r["workload"], r["platform"]) for r in rows] == [("pmem", "rm3", "prototype"),
                                                                          ("cxl", "rm3", "prototype")]


# -- bad sweeps: exit 2, the file and the key -------------------------------------------------------

ENTRY_POINTS = {
    "platform-study": lambda tmp: platform_study_main.main(["--batches", "1"]),
    "fig12": lambda tmp: fig12_main.main([]),
    "scale-out": lambda tmp: scaleout_main.main([str(tmp)]),
    "goldens": lambda tmp: goldens.main(["--only", "energy", "--energy-path", str(tmp / "e.json")]),
    "bench-sim": lambda tmp: cli_main(["bench", "sim", "--quick"]),
    "bench-sweep": lambda tmp: cli_main(["bench", "sweep", "--quick"]),
    "crash-bench": lambda tmp: cli_main(["bench", "crashtest", "--quick"]),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("change", "key"), [
    ({"systemz": ["cxl"]}, "base.systemz"),
    ({"systems": ["cxl", "no-such-system"]}, "base.systems[1]"),
    ({"workloads": ["rm9"]}, "base.workloads[0]"),
])
def test_a_bad_sweep_exits_2_naming_file_and_key(sweeps, tmp_path, capsys, name, change, key):
    path = sweeps(name, **change)
    assert ENTRY_POINTS[name](tmp_path) == 2
    err = capsys.readouterr().err
    assert str(path) in err and key in err


@pytest.mark.parametrize(("name", "axes", "key"), [
    ("goldens", {"grid": {"platform": ["physical", "mars"]}}, "axes.grid.platform[1]"),
    ("fig12", {"zip": {"platform": ["mars"]}}, "axes.zip.platform[0]"),
    ("bench-sim", {}, "axes.grid.platform"),  # no platforms: the bench needs them
])
def test_platforms_are_checked_against_the_catalog(sweeps, name, axes, key):
    path = sweeps(name, axes=axes)
    with pytest.raises(ConfigError) as e:
        sweep_lists(name, needs=("platforms",))
    assert str(path) in str(e.value) and key in str(e.value)
    if key.endswith("]"):
        assert "no such platform 'mars'" in str(e.value) and "prototype" in str(e.value)


def test_a_fixed_platform_is_checked_too(sweeps, capsys):
    path = sweeps("platform-study", set={"platform": "mars"})
    assert platform_study_main.main(["--batches", "1"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "base.set.platform" in err and "no such platform 'mars'" in err


def test_shipped_study_lists_are_the_former_tuples():
    """What the studies ran before their lists moved into the catalog (outputs stay identical)."""
    assert platform_study_settings.study_lists().systems == ("pmem", "pcie", "cxl-d", "cxl-b", "cxl")
    assert platform_study_settings.study_lists().platforms == ("prototype",)
    assert scaleout_settings.study_lists() == (("cxl", "cxl-b", "cxl-d", "pcie", "pmem", "tpu-ps"), ("rm1", "rm2", "rm3", "rm4"))
    assert (fig12_settings.study_lists().systems, fig12_settings.study_lists().platforms) == (
        ("cxl-d", "cxl-b", "cxl"), ("prototype", "physical"))
    assert sweep_lists("crash-bench").systems == ("cxl-d", "cxl") and sweep_lists("crash-bench").workloads == ("rm1",)
    assert goldens.cases().platforms == sim_bench.comparison()[2] == ("physical", "prototype")


def test_goldens_and_bench_sim_cover_the_paper_comparison():
    """goldens.yaml and bench-sim.yaml list the paper sweep's systems and workloads again (a sweep
    holds one platform axis, and paper.yaml's must stay one run per system and workload): a system
    added to configs/sweeps/paper.yaml must be added to both."""
    assert goldens.cases().systems == sim_bench.comparison()[0] == paper_settings.dataflow_systems()
    assert goldens.cases().workloads == sim_bench.comparison()[1] == tuple(paper_settings.paper_workloads())
    reproduce = sweep_lists(paper_settings.PLATFORM_SWEEP)  # the reproduction's platforms are listed beside them
    assert (reproduce.systems, reproduce.workloads) == paper_settings.sweep_grid()


def test_study_counts_are_catalog_lists():
    """The reproduction's platforms and the scale lines' GPU counts, as they were before they moved
    into the catalog (configs/sweeps/reproduce.yaml, scale-out-1024.yaml, bench-scale.yaml)."""
    assert paper_settings.platforms() == ("prototype", "physical")
    assert scaleout_settings.scale_gpus() == (16, 64, 256, 1024)
    assert sim_bench.scale_gpus() == (1, 4, 16, 64, 256, 1024)
