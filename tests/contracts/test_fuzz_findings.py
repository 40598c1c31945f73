"""What a fuzzing round of the command line and the config readers found: each cause exits 2 with
one line naming the file or option and the key, never a traceback, a hang or a silent run. Causes
that are generic are generated (every study command × every bad-argument kind, every platform-file
key path)."""

from __future__ import annotations

import pytest

from cxlsim.config.bounds import MAX_OUTSTANDING_REQUESTS
from tests.contracts.test_hardening import one_line_exit_2, run_cli


@pytest.mark.parametrize("threads", [MAX_OUTSTANDING_REQUESTS // 12 + 1, 10**5, 10**8])
def test_microbench_threads_are_bounded(capsys, threads):
    one_line_exit_2(capsys, ["microbench", "pmem/optane-100", "--threads", str(threads)], "--threads", "5,461")


def test_microbench_threads_at_the_bound_parse():
    from cxlsim.cli import build_parser

    args = build_parser().parse_args(["microbench", "pmem/optane-100", "--threads", str(MAX_OUTSTANDING_REQUESTS // 12)])
    assert args.threads * 12 <= MAX_OUTSTANDING_REQUESTS


#: Each study command's options by the kind of value they take.
STUDY_OPTIONS: dict[str, dict[str, str]] = {
    "fig12": {"--platform": "platform", "--workload": "workload"},
    "sampling": {"--systems": "system", "--workloads": "workload", "--platforms": "platform", "--workers": "count"},
    "sensitivity": {"--workloads": "workload", "--batches": "count"},
    "symmetry": {"--system": "system", "--workloads": "workload", "--points": "point", "--batches": "count",
                 "--warmup": "count0"},
    "platform_study": {"--workloads": "workload", "--batches": "count"},
    "readings": {"--workloads": "workload", "--batches": "count"},
}
#: Bad values of each kind: a typo, an empty name, out of range, not a number, malformed.
BAD_VALUES: dict[str, tuple[str, ...]] = {
    "platform": ("prototyp", ""), "workload": ("rm9", ""), "system": ("sdd", ""),
    "count": ("0", "-1", "x"), "count0": ("-1", "x"), "point": ("2y2", "0x4", "x", ""),
}
STUDY_CASES = [(study, option, value) for study, options in STUDY_OPTIONS.items()
               for option, kind in options.items() for value in BAD_VALUES[kind]]


@pytest.mark.parametrize("study, option, value", STUDY_CASES)
def test_study_commands_refuse_bad_arguments_in_one_line(capsys, study, option, value):
    """Bad input to a study's command exits 2 with one line naming the option, before anything runs."""
    import importlib

    main = importlib.import_module(f"cxlsim.studies.{study}.__main__").main
    try:
        rc = main([option, value])
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert option in lines[0], lines[0]


def _error_classes() -> list[type]:
    """Every :class:`~cxlsim.errors.CxlsimError` class of the modules that define one."""
    import importlib
    import pkgutil

    import cxlsim
    from cxlsim.errors import CxlsimError

    for info in pkgutil.walk_packages(cxlsim.__path__, "cxlsim."):
        if info.name.startswith(("cxlsim.systems", "cxlsim.errors", "cxlsim.ft", "cxlsim.config")):
            importlib.import_module(info.name)
    seen, todo = [], [CxlsimError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
def test_cxlsim_errors_pickle_with_their_fields(cls):
    import pickle

    from cxlsim.errors import ConfigError

    args = ("configs/cxl.yaml", "groups[1].systems[0]", "no such system 'sdd'\n") if issubclass(cls, ConfigError) \
        else ("--workers: must be >= 1",)
    error = cls(*args)
    error.note_of_the_raiser = 7
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls and str(again) == str(error) and again.args == error.args
    assert vars(again) == vars(error)


def test_a_config_error_in_a_study_worker_reaches_the_parent():
    """A system typo in a sampling worker is raised in the parent (it used to leave the pool waiting
    for a result it could not read)."""
    import multiprocessing as mp

    from cxlsim.errors import ConfigError
    from cxlsim.studies.sampling.simulation import check_one

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("the study forks its workers")
    with mp.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(check_one, (("sdd", "rm1", "physical", 0.01, None),))
        with pytest.raises(ConfigError, match="sdd") as caught:
            pending.get(timeout=60)
    assert caught.value.where == "sdd" and "no such system" in caught.value.message


def _typo(name: str) -> str:
    """``name`` with two letters swapped (``ssd`` -> ``sds``), or a letter added where that changes nothing."""
    swapped = name[0] + name[2] + name[1] + name[3:] if len(name) > 2 else name
    return swapped if swapped != name else name + "z"


def _platform_cases() -> list[tuple[str, tuple, str, str]]:
    """(platform file, key path, mutation, the key path the refusal names) for every role name,
    every group's system and every role entry of every shipped platform."""
    import yaml

    from cxlsim.config.catalog import shipped_root

    cases = []
    for path in sorted((shipped_root("configs") / "platforms").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        layers = [(("roles",), "roles", doc.get("roles") or {})]
        for i, group in enumerate(doc.get("groups") or []):
            layers.append((("groups", i, "roles"), f"groups[{i}].roles", group.get("roles") or {}))
            for j in range(len(group["systems"])):
                cases.append((path.name, ("groups", i, "systems", j), "typo", f"groups[{i}].systems[{j}]"))
        for at, kp, roles in layers:
            for role in roles:
                cases.append((path.name, at + (role,), "rename", f"{kp}.{_typo(role)}"))
                cases.append((path.name, at + (role,), "count 0", f"{kp}.{role}.count"))
    return cases


@pytest.mark.parametrize("name, path, mutation, key", _platform_cases(), ids=lambda v: str(v))
def test_platform_files_refuse_names_and_counts_no_run_reads(tmp_path, name, path, mutation, key):
    """A role typo, a group naming no system, ``count: 0`` in any entry: refused naming the file and
    the key path, whichever system runs (here ``dram``, which uses few roles)."""
    import yaml

    from cxlsim.config.catalog import shipped_root
    from cxlsim.errors import ConfigError
    from cxlsim.systems.config import load_system

    doc = yaml.safe_load((shipped_root("configs") / "platforms" / name).read_text())
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if mutation == "typo":
        parent[last] = _typo(parent[last])
    elif mutation == "rename":
        parent[_typo(last)] = parent.pop(last)
    else:
        entry = parent[last]
        parent[last] = {**({"preset": entry} if isinstance(entry, str) else entry), "count": 0}
    target = tmp_path / name
    target.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(ConfigError) as caught:
        load_system("dram", [("platform", str(target))])
    assert (caught.value.where, caught.value.key) == (str(target), key), str(caught.value)


@pytest.mark.parametrize("section", [
    "pipeline: {tables_on: table_memory, embedding_engine: host_cpu, data_movement: software, persistence: none, "
    "cnr_interval_batches: 5}",
    "energy: {emulated_media: as_built}",
])
def test_a_system_files_key_the_run_never_reads_names_the_file(tmp_path, capsys, section):
    """A schedule or energy option a system's own file sets and the run never reads is refused
    naming the file and key (as a --set of it is), not accepted and ignored."""
    path = tmp_path / "mine.yaml"
    path.write_text(f"version: 1\ninherits: dram\nname: mine\n{section}\n")
    key = "pipeline.cnr_interval_batches" if "cnr" in section else "energy.emulated_media"
    line = one_line_exit_2(capsys, ["run", "--config", str(path), "--batches", "1", "--warmup", "0"],
                           f"{path}: {key}", "never reads")
    assert "--set" not in line


@pytest.mark.parametrize("system", ["ssd", "pmem", "dram"])
def test_pipeline_bounce_is_refused_where_nothing_bounces(capsys, system):
    """``pipeline.bounce`` only shapes a copy through host memory; where none is made the set is
    refused (it used to be read after being marked unused, and accepted)."""
    one_line_exit_2(capsys, ["run", "--system", system, "--workload", "rm1", "--batches", "1", "--warmup", "0",
                             "--set", "pipeline.bounce=chunked"], "--set pipeline.bounce", "never reads")


#: Workload keys each choice leaves unread, with a workload whose choice that is.
INERT_WORKLOAD_KEYS = [("rm1", "cross_layers", 3), ("rm1", "cross_rank", 4), ("dlrm-dcnv2", "rows_per_table", 1000),
                       ("rm1", "criteo_rows_factor", 2.0), ("rm4", "rows_per_table", 1000),
                       ("dlrm-dcnv2", "criteo_rows_factor", 2.0)]


@pytest.mark.parametrize("workload, key, value", INERT_WORKLOAD_KEYS)
@pytest.mark.parametrize("via", ["file", "set", "system file"])
def test_workload_keys_the_choice_ignores_are_refused(tmp_path, workload, key, value, via):
    """A table-size key of another rows_profile, an interaction's parameter under another
    interaction: refused naming the file (or option) and key, wherever it is written."""
    import yaml

    from cxlsim.config.catalog import shipped_root
    from cxlsim.errors import ConfigError
    from cxlsim.systems.config import load_system
    from cxlsim.workloads.catalog import load_workload

    if via == "file":
        doc = yaml.safe_load((shipped_root("workloads") / f"{workload}.yaml").read_text())
        doc["params"][key] = value
        path = tmp_path / "w.yaml"
        path.write_text(yaml.safe_dump(doc))
        expected = (str(path), f"params.{key}")
        with pytest.raises(ConfigError) as caught:
            load_workload(str(path))
    elif via == "set":
        expected = ("--set", key)
        with pytest.raises(ConfigError) as caught:
            load_workload(workload, {key: value})
    else:
        path = tmp_path / "s.yaml"
        path.write_text(f"version: 1\ninherits: dram\nname: s\nworkload: {workload}\n"
                        f"workload_overrides: {{{key}: {value}}}\n")
        expected = (str(path), f"workload_overrides.{key}")
        with pytest.raises(ConfigError) as caught:
            cfg = load_system(str(path))
            load_workload(cfg.workload, cfg.workload_overrides, str(path), "workload_overrides.")
    assert (caught.value.where, caught.value.key) == expected, str(caught.value)
    assert "change nothing" in caught.value.message


@pytest.mark.parametrize("workload", ["rm4"])
def test_uniform_tables_need_their_rows(capsys, workload):
    """Switching a workload to uniform tables without rows_per_table used to run 1-row tables."""
    one_line_exit_2(capsys, ["workload", workload, "--batches", "0", "--set", "rows_profile=uniform"],
                    "rows_profile", "rows_per_table")
    assert run_cli(["workload", workload, "--batches", "0", "--set", "rows_profile=uniform",  # given: taken
                    "--set", "rows_per_table=1000"]) == 0


def test_a_workload_file_without_table_sizes_is_refused(tmp_path):
    import yaml

    from cxlsim.config.catalog import shipped_root
    from cxlsim.errors import ConfigError
    from cxlsim.workloads.catalog import load_workload

    doc = yaml.safe_load((shipped_root("workloads") / "rm1.yaml").read_text())
    del doc["params"]["rows_per_table"], doc["params"]["rows_profile"]
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError, match="need rows_per_table") as caught:
        load_workload(str(path))
    assert (caught.value.where, caught.value.key) == (str(path), "params.rows_per_table")


PLATFORM_COMMANDS = [
    ["run", "--system", "cxl", "--workload", "rm1", "--batches", "1"],
    ["timeline", "--system", "cxl", "--batches", "1"],
    ["energy", "--system", "cxl", "--batches", "1"],
    ["crashtest", "--system", "cxl"],
    ["bench", "sim"],
]


@pytest.mark.parametrize("argv", PLATFORM_COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("name, needle", [("", "expected a platform name"), ("protoype", "did you mean prototype")])
def test_every_platform_option_names_itself(capsys, argv, name, needle):
    """A bad or empty --platform is blamed on --platform (not --set: platform), and an empty one is
    refused rather than run as the default platform."""
    line = one_line_exit_2(capsys, [*argv, "--platform", name], "--platform: ", needle)
    assert "--set" not in line


def test_crashtest_without_points_is_refused(capsys):
    one_line_exit_2(capsys, ["crashtest", "--system", "cxl", "--points", "0"], "--points")


@pytest.mark.parametrize("instant", ["nan", "inf", "-inf", "-5", "-5.0", "1e30"])
def test_crashtest_replays_only_instants_within_the_run(capsys, instant):
    """``--replay`` of an instant outside the run (or not a number) used to report "crash at nan ns
    -- ok"."""
    one_line_exit_2(capsys, ["crashtest", "--system", "cxl", "--batches", "2", "--replay", instant], "--replay")


def test_crash_points_parse_replay_bounds():
    import numpy as np

    from cxlsim.crash.run import parse_replay
    from cxlsim.errors import InputError

    ts = np.array([10.0, 20.0])
    assert parse_replay("20.0", ts, 100.0) == (20.0, 1)
    assert parse_replay("100.0", ts, 100.0) == (100.0, -1)  # the end itself is within
    with pytest.raises(InputError, match="within the run"):
        parse_replay("100.5", ts, 100.0)


PLOT_COMMANDS = [["microbench", "cxl_mem/e3s-x8-spr"], ["ft", "--scenario", "check-n-run"]]


@pytest.mark.parametrize("argv", PLOT_COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize("path, needle", [("{tmp}", "ending in .png"), ("{tmp}/figure", "ending in .png"),
                                          ("{tmp}/figure.jpeg", "ending in .png"), ("{tmp}/.png", "ending in .png"),
                                          ("{tmp}/missing/figure.png", "does not exist")])
def test_plot_paths_are_figure_files_in_existing_folders(tmp_path, capsys, argv, path, needle):
    """``--plot PATH`` without a figure suffix wrote PATH.png (``/tmp`` wrote ``/tmp.png``); into a
    missing folder it was an internal error."""
    one_line_exit_2(capsys, [*argv, "--plot", path.format(tmp=tmp_path)], "--plot", needle)
    assert not list(tmp_path.parent.glob(f"{tmp_path.name}*.png")) and not list(tmp_path.glob("*.png"))


def test_the_scaleout_study_plot_is_a_figure_file(tmp_path, capsys):
    from cxlsim.studies.scaleout.__main__ import main

    with pytest.raises(SystemExit) as caught:
        main([str(tmp_path), "--plot", str(tmp_path / "figure")])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and len(err.strip().splitlines()) == 1 and "--plot" in err, err


@pytest.mark.parametrize("axis, values", [("pipeline.bounce", ["serial", "chunked"]),
                                          ("energy.emulated_media", ["as_emulated", "as_built"])])
def test_a_sweep_axis_the_run_never_reads_names_the_spec_and_axis(tmp_path, capsys, axis, values):
    """Each point's refusal names the sweep file and the axis value (``axes.grid.KEY[i]``), not
    ``--set KEY``, which the user never wrote."""
    import json

    spec = tmp_path / "sweep.yaml"
    spec.write_text("version: 1\nbase: {systems: [ssd], workloads: [rm1], batches: 1, warmup_batches: 0}\n"
                    f"axes:\n  grid:\n    {axis}: {json.dumps(values)}\n")
    assert run_cli(["sweep", str(spec), "--out", str(tmp_path / "out"), "--executor", "serial", "--no-progress"]) == 2
    capsys.readouterr()
    errors = [json.loads(line)["error"] for line in (tmp_path / "out" / "points.jsonl").read_text().splitlines()]
    named = sorted(e.split(": ")[2] for e in errors if e.startswith(f"ConfigError: {spec}: ") and "never reads" in e)
    assert named == [f"axes.grid.{axis}[{i}]" for i in range(len(values))], errors
    assert not any("--set" in e for e in errors)


@pytest.mark.parametrize("via", ["system file", "system file and another --set", "platform file", "--set"])
def test_a_capacity_too_small_names_where_it_was_set(tmp_path, capsys, via):
    """check_provision blamed every overridden capacity_GB on --set."""
    from cxlsim.config.catalog import shipped_root

    argv = ["run", "--batches", "1", "--warmup", "0"]
    if via.startswith("system file"):
        path = tmp_path / "mine.yaml"
        path.write_text("version: 1\ninherits: pmem\nname: mine\n"
                        "devices:\n  table_memory: {params: {capacity_GB: 0.001}}\n")
        argv += ["--config", str(path)] + (["--set", "seed=3"] if "another" in via else [])
        needle = f"{path}: devices.table_memory.params.capacity_GB: modules of 0.001 GB"
    elif via == "platform file":
        path = tmp_path / "platform.yaml"
        text = (shipped_root("configs") / "platforms" / "physical.yaml").read_text()
        path.write_text(text.replace("groups:", "groups:\n  - systems: [pmem]\n    why: a test\n"
                                     "    roles: {table_memory: {params: {capacity_GB: 0.001}}}", 1))
        argv += ["--system", "pmem", "--platform", str(path)]
        needle = f"{path}: groups[0].roles.table_memory.params.capacity_GB: modules of 0.001 GB"
    else:
        argv += ["--system", "pmem", "--set", "devices.table_memory.params.capacity_GB=0.001"]
        needle = "--set: devices.table_memory.params.capacity_GB: modules of 0.001 GB"
    one_line_exit_2(capsys, argv, needle)


#: Topology refusals of values given on the command line: (the sets or options, what the line starts with).
TOPOLOGY_REFUSALS = [
    (["--set", "devices.switch.levels=0", "--set", "topology.gpus_count=2"], "--set: devices.switch.levels: "),
    (["--set", "topology.fanout_count=1000"], "--set: topology.fanout_count: "),
    (["--set", "topology.gpus_count=3", "--set", "topology.cxl_mems_count=2", "--set", "topology.symmetry=on"],
     "--set: topology.symmetry: on: "),
    (["--set", "topology.gpus_count=4000"], "--set: topology.gpus_count: "),
    (["--set", "topology.gpus_count=300", "--set", "devices.switch.levels=1", "--set", "topology.symmetry=off"],
     "--set: topology.gpus_count: "),
    (["--symmetry", "on"], "--symmetry: on: "),
]


@pytest.mark.parametrize("system, extra, start", [("cxl", *case) for case in TOPOLOGY_REFUSALS]
                         + [("tpu-ps", ["--symmetry", "on"], "--symmetry: on: ")], ids=str)
def test_topology_refusals_name_the_option_that_gave_the_value(capsys, system, extra, start):
    """Not the system file (configs/cxl.yaml) nor a bare ``topology`` location."""
    line = one_line_exit_2(capsys, ["run", "--system", system, "--workload", "rm1", "--batches", "1", "--warmup", "0",
                                    *extra])
    assert line.split("error: ", 1)[1].startswith(start), line
    assert ".yaml" not in line.split("error: ", 1)[1].split(": ")[0], line


@pytest.mark.parametrize("workload", ["rm1", "rm4", "dlrm-dcnv2"])
def test_the_crash_scale_shrinks_every_table_profile(workload):
    """The crash checker's scale reads the key of the workload's own profile (it gave a per_table
    workload a criteo_rows_factor, which changed nothing: its tables stayed full size)."""
    from cxlsim.crash.scale import scaled_workload
    from cxlsim.workloads.catalog import load_workload

    full = sum(load_workload(workload).rows_per_table)
    scaled, _ = scaled_workload(workload, {}, 1e-3)
    assert sum(scaled.rows_per_table) < full * 2e-3
