"""Property-based fuzzing of every input reader: system configs, platforms, presets, workloads,
sweep specs, failure scenarios and the validation catalog, mutated from the shipped files by
hypothesis.

Property: reading (and building what was read) either succeeds or raises
:class:`~cxlsim.errors.InputError` whose message is one line naming the file (or ``--set``) and,
for a :class:`~cxlsim.errors.ConfigError`, the key; never another exception. The CLI turns that
into exit 2 (``test_cli_exit_2``). The fast tier runs a few examples per reader; ``-m slow`` runs
many more (``FUZZ_SLOW_EXAMPLES``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cxlsim.config.bounds import MAX_SEED
from cxlsim.config.catalog import shipped_root
from cxlsim.devices.compute.gpu_table import find_table
from cxlsim.devices.registry import get_family, has_capability, load_preset
from cxlsim.errors import ConfigError, InputError
from cxlsim.ft.scenario import load_scenario
from cxlsim.sweep.spec import load_spec
from cxlsim.systems.config import load_system
from cxlsim.systems.graph import build_devices
from cxlsim.systems.platform import load_platform
from cxlsim.validate.checks import load_catalog
from cxlsim.workloads.catalog import load_workload

FUZZ_FAST_EXAMPLES = 20
FUZZ_SLOW_EXAMPLES = 300

CONFIGS = shipped_root("configs")
DEVICES = shipped_root("devices")
WORKLOADS = shipped_root("workloads")

#: Values a careless or hostile user might write anywhere.
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from(["gpu/rtx3090", "pmem/optane-100", "ssd/intel-750", "cxl_link/cxl3-x16", "rm9", "cxl",
                     "nonexistent/preset", "1e-300", "../../etc/passwd", "", "é\u202e", 2**70, -1, 0, 1e-9, 1e9]),
)
#: Factors applied to numbers already in the file (realistic magnitudes gone wrong).
FACTORS = st.sampled_from([0, -1, 1e-9, 1e-3, 0.5, 3, 1e3, 1e9])


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a YAML document (mappings and lists)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, prefix + (i,))
    return out


def get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutated(draw, doc: dict) -> dict:
    """``doc`` with one to three mutations: a value replaced or scaled, a key removed, an unknown
    key added."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        all_paths = paths(doc)
        if not all_paths:
            break
        path = draw(st.sampled_from(all_paths))
        parent, key = get(doc, path[:-1]), path[-1]
        op = draw(st.sampled_from(["replace", "scale", "delete", "add"]))
        if op == "scale" and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            scaled = parent[key] * draw(FACTORS)
            parent[key] = int(scaled) if isinstance(parent[key], int) and float(scaled).is_integer() else scaled
        elif op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(HOSTILE)
        else:
            parent[key] = draw(HOSTILE)
    return doc


@st.composite
def mutated_bytes(draw, text: bytes) -> bytes:
    """``text`` with a few bytes overwritten or inserted (bad encodings, broken YAML)."""
    data = bytearray(text)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(0, len(data) - 1)))
        chunk = draw(st.binary(min_size=1, max_size=4))
        if draw(st.booleans()):
            data[at:at + len(chunk)] = chunk
        else:
            data[at:at] = chunk
    return bytes(data)


def assert_clean(read: Callable[[Path], Any], path: Path, sets: Sequence[tuple[str, Any]] = ()) -> None:
    """``read(path)`` succeeds or fails as bad input, in one line naming ``path`` (or a --set it
    was given), blaming the input that holds the offending key (:func:`assert_blame`)."""
    try:
        read(path)
    except InputError as exc:
        message = str(exc)
        assert "\n" not in message.strip(), message
        assert str(path) in message or (message.startswith("--set") and isinstance(exc, ConfigError)), message
        if isinstance(exc, ConfigError):
            assert_blame(exc, sets)
        if isinstance(exc, ConfigError) and exc.where == str(path) and not exc.key:
            assert any(w in exc.message for w in ("YAML", "UTF-8", "binary", "empty", "mapping", "read")), message


def resolves(doc: Any, key: str) -> bool:
    """Whether key path ``key`` (``a.b``, ``groups[2].roles``; a sweep's axis keys hold dots
    themselves) names a node of ``doc``."""
    node, rest = doc, key
    while rest:
        if isinstance(node, list):
            m = re.match(r"\[(\d+)\]\.?", rest)
            if not m or int(m[1]) >= len(node):
                return False
            node, rest = node[int(m[1])], rest[m.end():]
            continue
        if not isinstance(node, dict):
            return False
        for k in sorted(node, key=lambda k: -len(str(k))):  # the longest key the path starts with
            text = str(k)
            if rest == text or rest.startswith((text + ".", text + "[")):
                node, rest = node[k], rest[len(text):].removeprefix(".")
                break
        else:
            return False
    return True


def assert_blame(exc: ConfigError, sets: Sequence[tuple[str, Any]] = ()) -> None:
    """The oracle of a wrong blame: an error naming ``--set`` is about a key that was set (or one
    under or above it); one naming a file names a key that file holds (or the mapping that would
    hold a missing one)."""
    if exc.where == "--set":
        assert any(exc.key == k or exc.key.startswith((k + ".", k + "[")) or k.startswith(exc.key + ".")
                   for k, _ in sets), f"blamed on a --set not given ({[k for k, _ in sets]}): {exc}"
        return
    path = Path(exc.where)
    assert path.suffix in (".yaml", ".yml") and path.is_file(), f"names no file nor --set: {exc}"
    if not exc.key:
        return
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
        return  # its own reader refuses it (the error is about the file)
    holder = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", exc.key)  # the mapping or list it is in
    if holder == exc.key:  # a top-level key: the document itself would hold it
        holder = ""
    assert resolves(doc, exc.key) or resolves(doc, holder) or "missing" in exc.message, \
        f"{path} holds no {exc.key}: {exc}"


def dump(doc: Any) -> bytes:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True).encode()


# --------------------------------------------------------------------------------- the readers
def build_system(cfg: Any) -> None:
    """What a run builds from a loaded system before it simulates, and what loading promised
    (against inputs accepted and then failed or were silently ignored): the devices, each memory
    role's media state, the workload with the system's overrides; a seed within the bound; a named
    GPU timing table that the catalogs hold."""
    devices = build_devices(cfg)
    for role, d in cfg.devices.items():
        if has_capability(d.preset.family, "media"):
            devices[role].new_state(d.count, d.interleave_B)
    assert 0 <= cfg.seed <= MAX_SEED, cfg.seed
    try:  # as a run loads it: an error names the input that gave the override
        load_workload(cfg.workload, cfg.workload_overrides, cfg.workload_overrides_where, "workload_overrides.")
    except ConfigError as exc:
        raise cfg.blame(exc) from None
    if cfg.has("gpu") and (table := cfg.devices["gpu"].params.as_dict()["mlp_table_name"]):
        assert find_table(table, measured=False) or find_table(table, measured=True), table


def read_system(path: Path) -> None:
    build_system(load_system(str(path)))


def read_platform(path: Path) -> None:
    load_platform(str(path))
    for system in ("cxl", "dram"):
        build_system(load_system(system, platform_sets(path)))


def platform_sets(path: Path) -> list[tuple[str, Any]]:
    return [("platform", str(path))]


#: Sets that change nothing a mutated system file holds wrong (none may make a device error of the
#: file be blamed on --set or --platform).
INNOCENT_SETS = [("workload_overrides.batch_size", 8), ("platform", "physical")]


def read_system_with_sets(path: Path) -> None:
    build_system(load_system(str(path), INNOCENT_SETS))


def with_devices(doc: dict) -> dict:
    """``doc`` with a table memory entry of its own (most shipped systems take their devices from the
    platform), so that mutations reach device values held in the file."""
    doc = copy.deepcopy(doc)
    if doc.get("model", "dataflow") == "dataflow":
        devices = doc.setdefault("devices", {})
        if isinstance(devices, dict) and not isinstance(devices.get("table_memory"), str):
            devices["table_memory"] = {"count": 2, "interleave_B": 4096, **(devices.get("table_memory") or {})}
    return doc


def read_preset(path: Path) -> None:
    preset = load_preset(str(path))
    get_family(preset.family).build(preset.params)


def read_workload(path: Path) -> None:
    load_workload(str(path))


def read_spec(path: Path) -> None:
    load_spec(path)


def read_scenario(path: Path) -> None:
    load_scenario(path)


def read_validation(path: Path) -> None:
    load_catalog(path)


READERS = {
    # name: (reader, shipped files it mutates)
    "system": (read_system, sorted(p for p in CONFIGS.glob("*.yaml"))),
    "system with sets": (read_system_with_sets, sorted(p for p in CONFIGS.glob("*.yaml"))),
    "platform": (read_platform, sorted((CONFIGS / "platforms").glob("*.yaml"))),
    "preset": (read_preset, sorted(p for p in DEVICES.glob("*/*.yaml"))),
    "workload": (read_workload, sorted(WORKLOADS.glob("*.yaml"))),
    "sweep": (read_spec, sorted((CONFIGS / "sweeps").glob("*.yaml"))),
    "scenario": (read_scenario, sorted((CONFIGS / "ft").glob("*.yaml"))),
    "validation": (read_validation, sorted((CONFIGS / "validation").glob("*.yaml"))),
}


def fuzz(tmp_path: Path, reader: str, examples: int) -> None:
    read, sources = READERS[reader]
    docs = [(p, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sources]
    if reader == "system with sets":
        docs = [(p, with_devices(doc)) for p, doc in docs]
    # a preset may be read by path only from its family's folder (inherits and names resolve there)
    out = tmp_path / "fuzz" / "input.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.data_too_large])
    @given(data=st.data())
    def check(data):
        src, doc = data.draw(st.sampled_from(docs))
        target = out.parent / src.parent.name / src.name if reader == "preset" else out
        target.parent.mkdir(parents=True, exist_ok=True)
        if data.draw(st.integers(0, 4)) == 0:
            target.write_bytes(data.draw(mutated_bytes(src.read_bytes())))
        else:
            target.write_bytes(dump(data.draw(mutated(doc))))
        sets = {"platform": platform_sets(target), "system with sets": INNOCENT_SETS}.get(reader, [])
        assert_clean(read, target, sets)

    check()


@pytest.mark.parametrize("reader", sorted(READERS))
def test_fuzz_readers_fast(tmp_path, reader):
    fuzz(tmp_path, reader, FUZZ_FAST_EXAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("reader", sorted(READERS))
def test_fuzz_readers_slow(tmp_path, reader):
    fuzz(tmp_path, reader, FUZZ_SLOW_EXAMPLES)


#: Keys ``--set`` fuzzes: structural ones, and one of each class of input once found escaping (media
#: state sizes, requesters' accesses in flight, mappings that are not, seeds, GPU table names,
#: workload overrides, switch levels).
SET_KEYS = [
    "devices.table_memory.count", "devices.table_memory.interleave_B", "seed", "batches",
    "devices.table_memory.preset", "pipeline.vector_cache_GB", "version", "topology.cxl_mems_count",
    "devices.gpu.preset", "workload",
    "devices.table_memory.params.wcb_entries", "devices.table_memory.params.write_queue_entries",
    "devices.table_memory.params.access_unit_B", "devices.table_memory.params.controller_outstanding_count",
    "devices.ndp.params.outstanding_per_mc_count", "devices.ckpt_logic.params.read_outstanding_count",
    "devices.host_cpu.params.line_fill_buffers_count", "devices.switch.levels",
    "devices", "pipeline", "topology", "workload_overrides", "devices.table_memory.params",
    "devices.gpu.params.mlp_table_name", "workload_overrides.batch_size", "workload_overrides.rows_per_table",
]


def fuzz_set(key: str, examples: int) -> None:
    """``--set key=value`` with hostile values: loaded and built (states and workload included), or
    refused naming --set."""

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None)
    @given(value=HOSTILE)
    def check(value):
        try:
            build_system(load_system("cxl", [(key, value)]))
        except InputError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(("--set", str(CONFIGS / "cxl.yaml"))), str(exc)
            if isinstance(exc, ConfigError):
                assert_blame(exc, [(key, value)])

    check()


@pytest.mark.parametrize("key", SET_KEYS)
def test_fuzz_set_overrides(key):
    fuzz_set(key, FUZZ_FAST_EXAMPLES // 4)


@pytest.mark.slow
@pytest.mark.parametrize("key", SET_KEYS)
def test_fuzz_set_overrides_slow(key):
    fuzz_set(key, FUZZ_SLOW_EXAMPLES // 6)


#: Media parameters ``cxlsim microbench --set`` fuzzes (the unit, and what sizes a module's state).
MICROBENCH_KEYS = ["access_unit_B", "wcb_entries", "write_queue_entries", "controller_outstanding_count",
                   "parallel_units_count", "read_priority"]


def as_set_text(value: Any) -> str:
    """``value`` as the text after ``--set key=`` (YAML flow style, as a user would type it)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("\n...")


def fuzz_microbench(capsys, preset: str, examples: int) -> None:
    """``cxlsim microbench PRESET --set key=value``: exit 0, or exit 2 with one line naming --set."""
    from cxlsim.cli import main

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(key=st.sampled_from(MICROBENCH_KEYS), value=HOSTILE)
    def check(key, value):
        capsys.readouterr()
        try:
            rc = main(["microbench", preset, "--json", "--set", f"{key}={as_set_text(value)}"])
        except SystemExit as exc:
            rc = exc.code
        err = capsys.readouterr().err.strip()
        assert rc in (0, 2), err
        if rc == 2:
            assert len(err.splitlines()) == 1 and "--set" in err, err

    check()


@pytest.mark.parametrize("preset", ["pmem/optane-100", "ssd/intel-750"])
def test_fuzz_microbench_sets(capsys, preset):
    fuzz_microbench(capsys, preset, 3)


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["pmem/optane-100", "dram/ddr4-2666", "ssd/intel-750"])
def test_fuzz_microbench_sets_slow(capsys, preset):
    fuzz_microbench(capsys, preset, FUZZ_FAST_EXAMPLES)


CLI_READERS = {  # commands that read a file and simulate nothing: (command line, reader whose files it mutates)
    "devices show": (lambda p: ["devices", "show", p], "preset"),
    "workload": (lambda p: ["workload", p, "--batches", "1"], "workload"),
    "sweep --dry-run": (lambda p: ["sweep", p, "--dry-run"], "sweep"),
}


@pytest.mark.parametrize("command", sorted(CLI_READERS))
def test_fuzz_cli_exit_2(tmp_path, capsys, command):
    """Through the command line: exit 0, or exit 2 with one line on stderr naming the file."""
    from cxlsim.cli import main

    argv_of, reader = CLI_READERS[command]
    _, sources = READERS[reader]
    docs = [(p, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sources]

    @settings(max_examples=FUZZ_FAST_EXAMPLES // 2, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(data=st.data())
    def check(data):
        src, doc = data.draw(st.sampled_from(docs))
        target = tmp_path / src.parent.name / src.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if data.draw(st.booleans()):
            target.write_bytes(data.draw(mutated_bytes(src.read_bytes())))
        else:
            target.write_bytes(dump(data.draw(mutated(doc))))
        capsys.readouterr()
        try:
            rc = main(argv_of(str(target)))
        except SystemExit as exc:
            rc = exc.code
        err = capsys.readouterr().err.strip()
        assert rc in (0, 2), err
        if rc == 2:
            assert len(err.splitlines()) == 1 and str(target) in err, err

    check()
