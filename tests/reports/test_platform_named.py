"""Every command that writes text or CSV names the platform its numbers were simulated on.

The cases are generated from one table of commands (small runs: a tiny workload, one or two
batches); every subcommand with a ``--platform`` option must have a case, so a new one is held as
soon as it exists. Each case runs on a platform other than the default where the command takes
one, so a header that printed a fixed name would fail."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

import cxlsim.studies.expansion.__main__ as expansion_main
import cxlsim.studies.symmetry.__main__ as symmetry_main
from cxlsim.cli import build_parser
from cxlsim.cli import main as cli_main
from cxlsim.studies.sensitivity.report import render as sensitivity_render
from cxlsim.studies.sensitivity.simulation import study as sensitivity_study
from cxlsim.systems.platform import DEFAULT_PLATFORM

ROOT = Path(__file__).resolve().parents[2]

#: A tiny workload: 4 tables of 10,000 rows, 8 lookups, batches of 16.
TINY = {"workload_overrides.batch_size": 16, "workload_overrides.rows_per_table": 10000,
        "workload_overrides.tables": 4, "workload_overrides.lookups_per_table": 8}
SETS = [a for k, v in TINY.items() for a in ("--set", f"{k}={v}")]
OTHER = "prototype"  # a platform other than the default


def _spec(tmp_path, platform_axis: bool) -> str:
    axes = "  grid: {platform: [prototype, physical]}\n" if platform_axis else ""
    sets = "".join(f"    {k}: {v}\n" for k, v in TINY.items())
    path = tmp_path / "spec.yaml"
    path.write_text("version: 1\nname: platform-named\nbase:\n  systems: [cxl]\n  workloads: [rm1]\n"
                    f"  batches: 1\n  warmup_batches: 0\n  set:\n{sets}"
                    + ("axes:\n" + axes if axes else ""))
    return str(path)


#: name -> (argv given tmp_path, the platforms the output must name, CSV files it writes (relative to tmp_path))
CASES = {
    "run": (lambda t: ["run", "--system", "cxl", "--workload", "rm1", "--batches", "1", "--platform", OTHER, *SETS],
            [OTHER], []),
    "energy": (lambda t: ["energy", "--system", "cxl", "--workload", "rm1", "--batches", "1", "--platform", OTHER,
                          *SETS], [OTHER], []),
    "timeline": (lambda t: ["timeline", "--system", "cxl", "--batches", "1", "--platform", OTHER, *SETS], [OTHER], []),
    "crashtest": (lambda t: ["crashtest", "--system", "cxl-b", "--workload", "rm1", "--scale", "0.001", "--batches",
                             "2", "--points", "2", "--platform", OTHER, *SETS], [OTHER], []),
    "reproduce": (lambda t: ["reproduce", "--out", str(t / "plots"), "--systems", "pmem", "cxl", "--workloads", "rm1",
                             "--batches", "1", "--platform", OTHER, "--executor", "serial", "--no-progress",
                             "--set", "warmup_batches=0", *SETS], [OTHER], ["plots/results.csv"]),
    "reproduce --csv": (lambda t: ["reproduce", "--out", str(t / "plots"), "--plots-only", "--platform", OTHER,
                                   "--csv"], [OTHER], []),
    "sweep": (lambda t: ["sweep", _spec(t, False), "--out", str(t / "sw"), "--executor", "serial", "--no-progress"],
              [DEFAULT_PLATFORM], ["sw/results.csv"]),
    "sweep over platforms": (lambda t: ["sweep", _spec(t, True), "--out", str(t / "swp"), "--executor", "serial",
                                        "--no-progress"], ["prototype", "physical"], ["swp/results.csv"]),
    "sweep --csv": (lambda t: ["sweep", _spec(t, False), "--out", str(t / "sw"), "--executor", "serial",
                               "--no-progress", "--csv"], [DEFAULT_PLATFORM], []),
}


#: commands with ``--platform`` held elsewhere, and why
ELSEWHERE = {"bench": "a speed benchmark of whole reproductions (too slow here); its tables are titled "
                      "'platform P' (cxlsim/bench/sim.py)"}


def test_every_command_with_a_platform_option_has_a_case():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    with_platform = {name for name, p in sub.choices.items()
                     if any("--platform" in a.option_strings for a in p._actions)}
    assert with_platform and with_platform <= {name.split()[0] for name in CASES} | set(ELSEWHERE)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """One folder for the module (``reproduce --plots-only`` reads what ``reproduce`` wrote)."""
    return tmp_path_factory.mktemp("platform-named")


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if n.startswith("reproduce") else [])
                                  for n in CASES])
def test_output_names_the_platform(name, workdir, capsys):
    argv, platforms, csv_files = CASES[name]
    if name == "reproduce --csv" and not (workdir / "plots" / "results.json").is_file():
        assert cli_main(CASES["reproduce"][0](workdir)) == 0
        capsys.readouterr()
    assert cli_main(argv(workdir)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    for platform in platforms:
        assert platform in out, f"{name}: {platform!r} not in its output:\n{out}"
    tables = [(f, (workdir / f).read_text()) for f in csv_files]
    if "--csv" in argv(workdir):
        tables.append(("stdout", out))
    for where, text in tables:
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows and {r["platform"] for r in rows} == set(platforms), f"{name}: {where}"


def test_studies_name_the_platform(capsys):
    """The studies that print tables title them with their platform."""
    systems = ("pmem", "cxl")
    res = sensitivity_study(["rm1"], 1, sets={s: list(TINY.items()) for s in systems}, systems=systems)
    assert f"rm1 on platform {DEFAULT_PLATFORM}: energy per batch" in sensitivity_render(res)
    assert symmetry_main.main(["--workloads", "rm4", "--points", "2x2", "--batches", "1", "--warmup", "0"]) == 0
    assert f"| cxl | {DEFAULT_PLATFORM} | rm4 |" in capsys.readouterr().out


@pytest.mark.slow
def test_expansion_names_its_platform(capsys):
    assert expansion_main.main(["--query-lengths", "20"]) == 0
    assert "on platform spr-cxl" in capsys.readouterr().out


@pytest.mark.parametrize("stem", ["results", "results_physical"])
def test_the_reproduced_figures_name_their_platform(stem, monkeypatch, tmp_path):
    """Figures 11-13 drawn from the committed results (no simulation) carry the platform in their
    titles (Figure 12: in each panel's)."""
    import json

    from cxlsim.studies.paper import report

    doc = json.loads((ROOT / "plots" / f"{stem}.json").read_text())
    titles: list[str] = []
    monkeypatch.setattr(report, "_stacked", lambda panels, systems, parts, colours, unit, title, path, **kw:
                        titles.append(title))
    monkeypatch.setattr(report.tl, "plot", lambda timelines, path: titles.extend(t.title for t in timelines))
    report.fig11_breakdown(doc, tmp_path / "f11.png")
    report.fig13_energy(doc, tmp_path / "f13.png")
    report.fig12_timeline(doc, tmp_path / "f12.png")
    assert len(titles) == 5 and all(f"platform {doc['platform']}" in t for t in titles), titles
