"""The configuration system: presets, inheritance, ratios, overrides and one-line errors."""

from __future__ import annotations

import pytest

from cxlsim.config.catalog import list_presets
from cxlsim.config.params import Param, Schema, check_le
from cxlsim.config.yamlio import apply_sets, parse_set
from cxlsim.devices.registry import DeviceFamily, load_preset, register
from cxlsim.errors import ConfigError

TOY = register(
    DeviceFamily(
        name="toy",
        doc="a device family for configuration tests",
        schema=Schema(
            "toy",
            (
                Param("read_latency_ns", float, "idle read latency", minimum=0, exclusive_minimum=True),
                Param("write_latency_ns", float, "idle write latency", minimum=0),
                Param("bw_GBps", float, "bandwidth", minimum=0, exclusive_minimum=True),
                Param("min_bw_GBps", float, "floor bandwidth", default=0.0, minimum=0),
                Param("channels_count", int, "channels", default=1, minimum=1),
            ),
            checks=(check_le("min_bw_GBps", "bw_GBps"),),
        ),
        build=lambda p: p,
        kind="logic",
        energy=None,
    )
)


def write(folder, name, text):
    (folder / "toy").mkdir(exist_ok=True)
    path = folder / "toy" / f"{name}.yaml"
    path.write_text(text)
    return path


BASE = """version: 1
family: toy
description: base toy
source: toy datasheet
params:
  read_latency_ns: {value: 100, source: measured}
  write_latency_ns: 90
  bw_GBps: 10
"""


def test_preset_values_sources_defaults(user_catalog):
    write(user_catalog, "base", BASE)
    p = load_preset("toy/base")
    assert p.params.read_latency_ns == 100.0
    assert p.params.sources["read_latency_ns"] == "measured"
    assert p.params.sources["write_latency_ns"] == "toy datasheet"
    assert p.params.channels_count == 1 and p.params.sources["channels_count"] == "schema default"
    assert "toy/base" in list_presets("toy")


def test_inherits_and_ratio(user_catalog):
    write(user_catalog, "base", BASE)
    write(user_catalog, "slow", """version: 1
family: toy
inherits: toy/base
params:
  read_latency_ns: {ratio: 3, of: "toy/base:read_latency_ns", source: "Table 2"}
""")
    p = load_preset("toy/slow")
    assert p.params.read_latency_ns == 300.0
    assert p.params.bw_GBps == 10.0
    assert "Table 2" in p.params.sources["read_latency_ns"] and "3 × toy/base" in p.params.sources["read_latency_ns"]


def test_overrides_apply_and_validate(user_catalog):
    write(user_catalog, "base", BASE)
    p = load_preset("toy/base", {"bw_GBps": 20})
    assert p.params.bw_GBps == 20.0 and "override" in p.params.sources["bw_GBps"]
    with pytest.raises(ConfigError, match=r"--set: params.bw_GBps: expected a number"):
        load_preset("toy/base", {"bw_GBps": "fast"})


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("  bw_GBs: 10\n", r"params.bw_GBs: unknown key; did you mean bw_GBps"),
        ("  channels_count: 1.5\n", r"params.channels_count: expected a whole number"),
        ("  write_latency_ns: -4\n", r"params.write_latency_ns: must be >= 0"),
        ("  read_latency_ns: fast\n", r"params.read_latency_ns: expected a number"),
        ("  min_bw_GBps: 50\n", r"params.min_bw_GBps: must be <= bw_GBps"),
    ],
)
def test_bad_values_name_file_and_key(user_catalog, edit, message):
    path = write(user_catalog, "bad", BASE + edit)
    with pytest.raises(ConfigError, match=message) as err:
        load_preset("toy/bad")
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_malformed_yaml_missing_version_and_missing_preset(user_catalog):
    write(user_catalog, "broken", "version: 1\nfamily: toy\nparams: {read_latency_ns: [\n")
    with pytest.raises(ConfigError, match="malformed YAML at line"):
        load_preset("toy/broken")
    write(user_catalog, "nover", BASE.replace("version: 1\n", ""))
    with pytest.raises(ConfigError, match="version: missing"):
        load_preset("toy/nover")
    with pytest.raises(ConfigError, match="no such preset"):
        load_preset("toy/absent")


def test_value_without_any_source_is_rejected(user_catalog):
    write(user_catalog, "nosrc", BASE.replace("source: toy datasheet\n", ""))
    with pytest.raises(ConfigError, match="write_latency_ns: no source"):
        load_preset("toy/nosrc")


def test_parse_set_and_apply_sets():
    sets = parse_set(["a.b=1", "a.c=text", "d=[1, 2]"])
    assert sets == [("a.b", 1), ("a.c", "text"), ("d", [1, 2])]
    doc = apply_sets({"a": {"b": 0}}, sets)
    assert doc == {"a": {"b": 1, "c": "text"}, "d": [1, 2]}
    with pytest.raises(ConfigError, match="expected dotted.key=value"):
        parse_set(["nokey"])
    with pytest.raises(ConfigError, match="a.b: is a value"):
        apply_sets({"a": {"b": 1}}, [("a.b.c", 2)])
