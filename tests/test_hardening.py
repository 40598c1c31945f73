"""Malformed, inconsistent or oversized input: every class gives exit 2 and one line naming the file
and key (or option), before anything is simulated (issue 20). One case per class; the fuzz tests
(tests/test_fuzz.py) generate many more."""

from __future__ import annotations

import json

import pytest

from cxlsim.cli import main
from cxlsim.config import bounds

RUN = ["run", "--system", "cxl", "--workload", "rm1", "--batches", "1", "--warmup", "0"]


def run_cli(argv: list[str]) -> int:
    """``main(argv)``'s exit status (argparse's usage errors leave by SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def one_line_exit_2(capsys, argv: list[str], *needles: str) -> str:
    rc = run_cli(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("content", [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",         # binary (NUL bytes)
    b"version: 1\nname: caf\xe9\n",                # Latin-1, not UTF-8
    b"\xff\xfev\x00e\x00r\x00",                     # UTF-16
])
@pytest.mark.parametrize("command", [
    lambda p: ["run", "--config", p, "--batches", "1"],
    lambda p: ["workload", p],
    lambda p: ["ft", "--scenario", p],
    lambda p: ["sweep", p, "--dry-run"],
    lambda p: ["devices", "show", p],
])
def test_binary_or_non_utf8_files_name_the_file(tmp_path, capsys, content, command):
    path = tmp_path / "input.yaml"
    path.write_bytes(content)
    one_line_exit_2(capsys, command(str(path)), str(path))


def test_deeply_nested_yaml_is_bad_input(tmp_path, capsys):
    path = tmp_path / "deep.yaml"
    path.write_text("version: 1\nname: " + "[" * 5000 + "]" * 5000 + "\n")
    one_line_exit_2(capsys, ["run", "--config", str(path)], str(path))


@pytest.mark.parametrize("sets, key", [
    (["devices.table_memory.preset=gpu/rtx3090"], "devices.table_memory.preset"),   # wrong family
    (["devices.ndp.preset=gpu/rtx3090"], "devices.ndp.preset"),
    (["devices.fabric_link.preset=pcie/gen4-x16"], "devices.fabric_link.preset"),
    (["devices.table_memory.interleave_B=100"], "devices.table_memory.interleave_B"),  # not a multiple
    (["devices.table_memory.params.access_unit_B=300"], "devices.table_memory.interleave_B"),
    (["version=2"], "version"),
    (["devices.table_memory.count=1000000000"], "devices.table_memory.count"),        # beyond a bound
    (["devices.table_memory.count=1e9"], "devices.table_memory.count"),
    (["devices.table_memory.params.capacity_GB=0.001"], "capacity_GB"),              # too small for the tables
    (["workload_overrides.rows_per_table=1000000000000"], "capacity_GB"),
    (["workload_overrides.batch_size=10000000"], "batch_size"),                       # work beyond a bound
])
def test_semantic_checks_refuse_at_load(capsys, sets, key):
    argv = list(RUN)
    for s in sets:
        argv += ["--set", s]
    one_line_exit_2(capsys, argv, key)


@pytest.mark.parametrize("argv, option", [
    (RUN + ["--seed", "-1"], "--seed"),
    (RUN[:-4] + ["--batches", "0"], "--batches"),
    (["workload", "rm1", "--seed", "-1"], "--seed"),
    (["workload", "rm1", "--batches", "x"], "--batches"),
    (["workload", "rm1", "--batches", "100000000"], "--batches"),                # work beyond a bound
    (["run", "--system", "cxl", "--workload", "rm1", "--batches", "1000000"], "batches"),
    (["workload", "rm1", "--set", "tables=1000000000"], "tables"),
    (["workload", "rm1", "--set", "batch_size=1000000000000"], "batch_size"),
    (["timeline", "--system", "cxl", "--width", "-5"], "--width"),
    (["crashtest", "--system", "cxl", "--points", "-1"], "--points"),
    (["microbench", "pmem/optane-100", "--batch", "0"], "--batch"),
])
def test_numeric_options_are_typed(capsys, argv, option):
    one_line_exit_2(capsys, argv, option)


def test_sweep_out_naming_a_file(tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("")
    one_line_exit_2(capsys, ["sweep", _spec(tmp_path), "--out", str(out),
                             "--executor", "serial", "--no-progress"], "--out", str(out))


def _spec(tmp_path) -> str:
    path = tmp_path / "spec.yaml"
    path.write_text("version: 1\nbase: {systems: [dram], workloads: [rm1], batches: 1, warmup_batches: 0}\n")
    return str(path)


def test_sweep_set_that_no_point_uses(tmp_path, capsys):
    one_line_exit_2(capsys, ["sweep", _spec(tmp_path), "--dry-run", "--set", "workload=rm2"], "--set", "workload")
    one_line_exit_2(capsys, ["sweep", _spec(tmp_path), "--dry-run", "--set", "system=cxl"], "--set", "system")


def test_sweep_set_workload_must_exist(tmp_path, capsys):
    path = tmp_path / "own.yaml"
    path.write_text("version: 1\nbase: {systems: [dram]}\n")
    one_line_exit_2(capsys, ["sweep", str(path), "--dry-run", "--set", "workload=rm9"], "workload", "rm9")
    assert main(["sweep", str(path), "--dry-run", "--set", "workload=rm2"]) == 0  # used: the system's own workload


@pytest.mark.parametrize("sets, key", [
    (["schemes=[{kind: cpr, target_pls_fraction: 5}]"], "schemes[0].target_pls_fraction"),
    (["failures.mtbf_h=1e-6"], "failures.mtbf_h"),
    (["schemes=[{kind: check-n-run, interval_h: 1e-6}]"], "schemes[0].interval_h"),
    (["interruptions.preemption_mean_interval_h=1e-5"], "interruptions.preemption_mean_interval_h"),
])
def test_ft_scenarios_refused_at_load(capsys, sets, key):
    argv = ["ft", "--scenario", "check-n-run"]
    for s in sets:
        argv += ["--set", s]
    line = one_line_exit_2(capsys, argv, key)
    assert "bound" in line or "must be <= 1" in line


def test_ft_runtime_bound_is_a_backstop(capsys, monkeypatch):
    """Work no load-time estimate sees (here: a bound lowered below a normal run) is refused by the
    simulator's own count, one line naming the scheme, not run for hours."""
    import cxlsim.ft.run as ft_run

    monkeypatch.setattr(ft_run, "MAX_FT_EVENTS", 10)
    one_line_exit_2(capsys, ["ft", "--scenario", "check-n-run"], "schemes[0]", "bound")


def test_ft_failures_during_recovery_do_not_recurse(capsys):
    """Failures every few seconds against a 600 s reschedule: each interrupts the last recovery;
    thousands of them are handled in a loop (this used to hit Python's recursion limit)."""
    argv = ["ft", "--scenario", "check-n-run", "--set", "failures.mtbf_h=0.0005", "--set", "job.duration_h=1",
            "--set", "failures.horizon_factor=1", "--set", "schemes=[{kind: full, interval_h: 0.5}]", "--json"]
    assert main(argv) == 0
    (scheme,) = json.loads(capsys.readouterr().out)["schemes"]
    assert scheme["interruptions_handled"] > 1500  # beyond Python's default recursion limit of 1000


def test_bounds_are_named_in_one_module():
    assert bounds.MAX_MODULES_PER_ROLE >= 32 and bounds.MAX_RUN_LOOKUPS >= 57_000_000 and bounds.MAX_FT_EVENTS > 0
