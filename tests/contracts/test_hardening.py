"""Malformed, inconsistent or oversized input: every class gives exit 2 and one line naming the file
and key (or option), before anything is simulated. One case per class; the fuzz tests
(tests/contracts/test_fuzz.py) generate many more."""

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
    # the error is one line; a value it found implausible on the way is a warning line before it
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
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
    (["devices.table_memory.params.access_unit_B=300"], "--set: devices.table_memory.params.access_unit_B: interleave_B"),
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


# ----------------------------------------------------------- inputs that escaped
@pytest.mark.parametrize("sets, key", [
    # a media state size beyond its bound (each parameter that sizes one module's state)
    (["devices.table_memory.params.wcb_entries=1e12"], "devices.table_memory.params.wcb_entries"),
    (["devices.table_memory.params.write_queue_entries=1e9"], "devices.table_memory.params.write_queue_entries"),
    (["devices.table_memory.params.controller_outstanding_count=1e12"],
     "devices.table_memory.params.controller_outstanding_count"),
    (["devices.table_memory.params.read_priority=true", "devices.table_memory.params.write_queue_entries=40000"],
     "devices.table_memory.params.write_queue_entries"),                        # banks × queue posted writes
    # a requester keeping more accesses in flight than the bound (the media model's slots)
    (["devices.ndp.params.outstanding_per_mc_count=1e12"], "devices.ndp.params.outstanding_per_mc_count"),
    (["devices.ckpt_logic.params.read_outstanding_count=1e12"], "devices.ckpt_logic.params.read_outstanding_count"),
    (["devices.host_cpu.params.line_fill_buffers_count=1e12"], "devices.host_cpu.params.line_fill_buffers_count"),
    (["devices.switch.levels=1e12"], "devices.switch.levels"),                   # hung computing the tree
    # a mapping that is not one
    (["devices=[]"], "devices"),
    (["devices=0"], "devices"),
    (["topology=[]"], "topology"),
    (["workload_overrides=0"], "workload_overrides"),
    (["devices.table_memory.params=[]"], "devices.table_memory.params"),
    # seeds beyond the one bound
    (["seed=1180591620717411303424"], "seed"),
    (["seed=9007199254740993"], "seed"),
    (["seed=1e300"], "seed"),
    # a GPU timing table that is not one of the catalogs'
    (["devices.gpu.params.mlp_table_name=../../etc/passwd"], "devices.gpu.params.mlp_table_name"),
    (["devices.gpu.params.mlp_table_name=/etc/passwd"], "devices.gpu.params.mlp_table_name"),
    (["devices.gpu.params.mlp_table_name=no-such-table"], "devices.gpu.params.mlp_table_name"),
    (["devices.gpu.params.mlp_table_name=rtx3090_mlp.csv"], "devices.gpu.params.mlp_table_name"),
    # a workload override, named with its full key
    (["workload_overrides.batch_size=0"], "workload_overrides.batch_size"),
    (["workload_overrides.batch_sizes=4"], "workload_overrides.batch_sizes"),
])
def test_escaped_sets_refused_naming_the_option(capsys, sets, key):
    argv = list(RUN)
    for s in sets:
        argv += ["--set", s]
    line = one_line_exit_2(capsys, argv, key)
    assert line.startswith("cxlsim run: error: --set: "), line


def _system_file(tmp_path, body: str) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(f"version: 1\ninherits: cxl\nname: mine\n{body}\n")
    return str(path)


@pytest.mark.parametrize("body, key", [
    ("seed: 1180591620717411303424", "seed"),                                    # 2**70
    ("workload_overrides: {batch_size: 0}", "workload_overrides.batch_size"),
    ("workload_overrides: [1, 2]", "workload_overrides"),
    ("devices: []", "devices"),
    ("pipeline: 0", "pipeline"),
    ("devices: {table_memory: {params: {wcb_entries: 100000000}}}", "devices.table_memory.params.wcb_entries"),
    ("devices: {table_memory: {params: {access_unit_B: 3}}}", "devices.table_memory.params.access_unit_B: interleave_B"),
    ("devices: {gpu: {params: {mlp_table_name: ../x}}}", "devices.gpu.params.mlp_table_name"),
])
def test_escaped_system_file_values_name_the_file(tmp_path, capsys, body, key):
    """A value in a system file is blamed on the file (never on a --set nobody gave)."""
    path = _system_file(tmp_path, body)
    line = one_line_exit_2(capsys, ["run", "--config", path, "--batches", "1", "--warmup", "0"], path, key)
    assert "--set" not in line, line


@pytest.mark.parametrize("argv, where, key", [
    (["microbench", "pmem/optane-100", "--set", "access_unit_B=3"], "--set", "access_unit_B"),
    (["microbench", "ssd/intel-750", "--set", "access_unit_B=3"], "--set", "access_unit_B"),
    (["microbench", "dram/ddr4-2666", "--set", "access_unit_B=8192", "--set", "read_latency_sequential_ns=10000",
      "--set", "read_latency_random_ns=10000"], "--set", "access_unit_B"),
    (["microbench", "pmem/optane-100", "--set", "wcb_entries=1e12"], "--set", "wcb_entries"),
    (["microbench", "pmem/optane-100", "--set", "write_queue_entries=1e12"], "--set", "write_queue_entries"),
    (["microbench", "pmem/optane-100", "--set", "controller_outstanding_count=1e12"], "--set",
     "controller_outstanding_count"),
    (["microbench", "cpu/i5-9600k", "--set", "cores_count=1e9"], "--set", "cores_count"),
    (["microbench", "ndp/alveo-u200", "--set", "outstanding_per_mc_count=1e12"], "--set", "outstanding_per_mc_count"),
    (["microbench", "gpu/rtx3090", "--set", "mlp_table_name=../../etc/passwd", "--mlp", "13-64-32",
      "--batch", "8"], "--set", "mlp_table_name"),
])
def test_escaped_microbench_sets(capsys, argv, where, key):
    """``microbench`` runs the load-time checks ``run`` runs (one validation serves both)."""
    one_line_exit_2(capsys, argv, where, key)


def test_microbench_medium_geometry_is_checked(tmp_path, capsys):
    preset = tmp_path / "pmem" / "odd.yaml"
    preset.parent.mkdir()
    preset.write_text("version: 1\nfamily: pmem\ndescription: odd unit\ninherits: pmem/optane-100\n"
                      "params:\n  access_unit_B: {value: 96, source: test}\n")
    one_line_exit_2(capsys, ["microbench", "cpu/i5-9600k", "--medium", str(preset)], "--medium", "access_unit_B")


@pytest.mark.parametrize("argv, needles", [
    (["ft", "--scenario", "check-n-run", "--set", "seed=1180591620717411303424"], ("--set", "seed")),
    (["crashtest", "--system", "cxl", "--points", "1", "--set", "seed=1180591620717411303424"], ("--set", "seed")),
    (["timeline", "--system", "cxl", "--set", "seed=1180591620717411303424"], ("--set", "seed")),
    (["energy", "--system", "cxl", "--set", "seed=9007199254740993"], ("--set", "seed")),
])
def test_one_seed_bound_everywhere(capsys, argv, needles):
    one_line_exit_2(capsys, argv, *needles)


def test_seed_bound_in_files_and_the_api(tmp_path, capsys):
    from cxlsim.api import simulate
    from cxlsim.errors import InputError

    spec = tmp_path / "spec.yaml"
    spec.write_text("version: 1\nbase: {systems: [dram], workloads: [rm1], seed: 1180591620717411303424}\n")
    one_line_exit_2(capsys, ["sweep", str(spec), "--dry-run"], str(spec), "base.seed")
    spec.write_text("version: 1\nbase: {systems: [dram], workloads: [rm1]}\naxes: {grid: {seed: [1, -1]}}\n")
    one_line_exit_2(capsys, ["sweep", str(spec), "--dry-run"], str(spec), "axes.grid.seed")
    with pytest.raises(InputError, match="seed"):
        simulate("cxl", batches=1, warmup=0, seed=2**70)
    # the bound itself is accepted everywhere
    assert simulate("dram", batches=1, warmup=0, seed=bounds.MAX_SEED, workload_sets={"batch_size": 8}).config.seed \
        == bounds.MAX_SEED


def test_module_state_bound_at_t_and_t_plus_1():
    """One module's state at the bound is accepted, one entry more is refused (naming the parameter
    that sizes most of it)."""
    from cxlsim.devices.memory.interleave import geometry_problem, module_state_entries
    from cxlsim.devices.registry import load_preset

    values = load_preset("pmem/optane-100").params.as_dict()
    others = sum(module_state_entries(values).values()) - module_state_entries(values)["wcb_entries"]
    at = {**values, "wcb_entries": bounds.MAX_MODULE_STATE_ENTRIES - others}
    assert geometry_problem(at, 4096) is None
    key, message = geometry_problem({**at, "wcb_entries": at["wcb_entries"] + 1}, 4096)
    assert key == "wcb_entries" and "bounds.py" in message


#: Bytes one counted entry of a module's media state takes at most (the write-combining buffer's
#: tag, stamp and LRU links: four int64), and the fixed bytes of a module (its buffer filter).
STATE_ENTRY_B, STATE_FIXED_B = 32, 4096 + 256


@pytest.mark.parametrize("preset, overrides", [
    ("pmem/optane-100", {}),
    ("pmem/optane-100", {"wcb_entries": 5000}),
    ("pmem/optane-100", {"write_queue_entries": 5000}),
    ("dram/ddr4-2666", {"write_queue_entries": 2000}),
    ("dram/ddr4-2666", {"read_priority": False, "write_queue_entries": 2000}),
    ("ssd/intel-750", {"parallel_units_count": 8}),
])
def test_module_state_entries_count_what_the_state_allocates(preset, overrides):
    """The bound counts what :class:`~cxlsim.devices.memory.media.media.MediaState` allocates: a state array
    sized by a parameter the count leaves out would make the bound a wrong promise."""
    import numpy as np

    from cxlsim.devices.memory.interleave import module_state_entries
    from cxlsim.devices.registry import build_device

    model = build_device(preset, overrides)
    modules = 3
    state = model.new_state(modules)
    held = sum(v.nbytes for k, v in vars(state).items()
               if isinstance(v, np.ndarray) and k not in ("keys", "times"))  # the pending table grows with streams
    entries = sum(module_state_entries(model.params.as_dict()).values())
    assert held <= modules * (STATE_ENTRY_B * entries + STATE_FIXED_B)


# ------------------------------------- each error names the input that holds it
# A configuration is built from layers (platform entries, system files and their parents, --set);
# the error names the layer that gave the offending value, whatever else was given.

def _shipped_copy(tmp_path, name: str, extra: str = "") -> str:
    from cxlsim.config.catalog import shipped_root

    path = tmp_path / f"{name.replace('/', '-')}.yaml"
    path.write_text((shipped_root("configs") / f"{name}.yaml").read_text() + extra)
    return str(path)


@pytest.mark.parametrize("more", [
    [], ["--set", "workload_overrides.batch_size=8"], ["--platform", "physical"], ["--platform", "prototype"],
    ["--set", "devices.table_memory.params.write_bw_GBps=2", "--set", "seed=3"],
])
def test_a_system_files_device_error_names_the_file_whatever_is_set(tmp_path, capsys, more):
    path = _shipped_copy(tmp_path, "pmem", "devices:\n  table_memory:\n    count: 0\n")
    line = one_line_exit_2(capsys, ["run", "--config", path, "--batches", "1", *more],
                           f"{path}: devices.table_memory.count: must be >= 1")
    assert "--set" not in line, line


def test_a_value_inherited_from_a_parent_file_names_the_parent(tmp_path, capsys):
    parent = _shipped_copy(tmp_path, "cxl", "devices:\n  table_memory:\n    interleave_B: 32\n")
    child = tmp_path / "child.yaml"
    child.write_text(f"version: 1\ninherits: {parent}\nname: child\nseed: 4\n")
    one_line_exit_2(capsys, ["run", "--config", str(child), "--set", "seed=5"], f"{parent}: devices.table_memory.interleave_B")


def test_a_platform_entry_error_names_the_platform_file_and_entry(tmp_path, capsys):
    platform = tmp_path / "mine.yaml"
    platform.write_text(_read(_shipped_copy(tmp_path, "platforms/prototype")).replace(
        "table_memory: {preset: pmem/u200-emulated, count: 4", "table_memory: {preset: pmem/u200-emulated, count: 0"))
    where = f"{platform}: groups[2].roles.table_memory.count: must be >= 1"
    for argv in (["--platform", str(platform)], ["--set", f"platform={platform}", "--set", "seed=2"]):
        one_line_exit_2(capsys, ["run", "--system", "cxl", "--batches", "1", *argv], where)
    # the same key set on the command line: the --set that gives the value (a platform's own
    # count 0 is refused whatever is set: it is checked for every system the platform serves)
    one_line_exit_2(capsys, ["run", "--system", "cxl", "--platform", "prototype", "--set",
                             "devices.table_memory.count=-1"], "--set: devices.table_memory.count: must be >= 1, got -1")


def _read(path: str) -> str:
    from pathlib import Path

    return Path(path).read_text()


def test_the_platform_option_names_itself(capsys):
    one_line_exit_2(capsys, [*RUN, "--platform", "mars"], "--platform: no such platform 'mars'")


@pytest.mark.parametrize("via", ["set", "file"])
def test_an_error_inside_a_preset_given_by_path_names_that_file_and_key(tmp_path, capsys, via):
    """As ``cxlsim devices show`` reports it (it was ``--set: devices.table_memory.preset: unknown key``)."""
    preset = tmp_path / "p.yaml"
    preset.write_text("version: 1\nfamily: pmem\ninherits: pmem/optane-100\nsource: test\nparams:\n  bogus_ns: 3\n")
    shown = one_line_exit_2(capsys, ["devices", "show", str(preset)], f"{preset}: params.bogus_ns: unknown key")
    if via == "set":
        argv = ["run", "--system", "pmem", "--batches", "1", "--set", f"devices.table_memory.preset={preset}"]
    else:
        argv = ["run", "--config", _shipped_copy(tmp_path, "pmem", f"devices:\n  table_memory: {{preset: {preset}}}\n"),
                "--set", "seed=2"]
    line = one_line_exit_2(capsys, argv, f"{preset}: params.bogus_ns: unknown key")
    assert line.split("error: ")[1] == shown.split("error: ")[1]


def test_a_preset_that_is_not_there_names_the_key_that_names_it(tmp_path, capsys):
    one_line_exit_2(capsys, ["run", "--system", "pmem", "--set", f"devices.table_memory.preset={tmp_path}/none.yaml"],
                    "--set: devices.table_memory.preset: file not found")
    path = _shipped_copy(tmp_path, "pmem", "devices:\n  table_memory: pmem/optane-1000\n")
    one_line_exit_2(capsys, ["run", "--config", path, "--platform", "physical"],
                    f"{path}: devices.table_memory.preset: no such preset")


def test_origins_follow_the_layers():
    """The mechanism: the highest layer that gave a key; a set of a whole mapping replaces what is
    under it; a key nobody gave takes its nearest enclosing key's origin."""
    from cxlsim.config.origins import Origins

    o = Origins("sys.yaml")
    o.add({"devices": {"tm": {"count": 1, "params": {"a": 1}}}}, (1, 0), "sys.yaml")
    o.add({"preset": "x", "count": 4, "params": {"a": 2, "b": 3}}, (0, 1), "plat.yaml", "roles.tm", "devices.tm")
    assert o.of("devices.tm.count") == ("sys.yaml", "devices.tm.count")      # the file over the platform
    assert o.of("devices.tm.params.b") == ("plat.yaml", "roles.tm.params.b")  # merged: the platform's own
    assert o.of("devices.tm.levels") == ("sys.yaml", "devices.tm.levels")    # missing: the mapping's newest
    o.add({"count": 0}, (2, 0), "--set", "devices.tm", "devices.tm", replace=True)
    assert o.of("devices.tm.params.b") == ("--set", "devices.tm.params.b")    # replaced by the set
    o.add(5, (2, 1), "spec.yaml", "axes.grid.seed[1]", "seed", replace=True)
    assert o.of("seed") == ("spec.yaml", "axes.grid.seed[1]")
    assert o.of("pipeline.x") == ("sys.yaml", "pipeline.x")
