"""``cxlsim keys``: every settable key from the schemas, filtered by prefix; docs/reference.md is
its Markdown and must not go stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cxlsim.cli import main
from cxlsim.cli.keys import all_keys, markdown
from cxlsim.devices.registry import get_family
from cxlsim.systems.config import ROLES, TOP_KEYS, pipeline_schema
from cxlsim.workloads.schema import WORKLOAD_SCHEMA

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"


def _keys(capsys, *argv: str) -> list[dict]:
    assert main(["keys", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["keys"]


def test_reference_page_is_fresh():
    assert REFERENCE.read_text(encoding="utf-8") == markdown(), (
        "docs/reference.md is stale: refresh it with `python -m cxlsim.cli.keys --write docs/reference.md`")


def test_every_schema_key_is_listed():
    listed = {k.key for k in all_keys()}
    assert TOP_KEYS <= listed
    assert {f"pipeline.{p.name}" for p in pipeline_schema().params} <= listed
    assert {f"workload:{p.name}" for p in WORKLOAD_SCHEMA.params} <= listed
    assert {f"workload_overrides.{p.name}" for p in WORKLOAD_SCHEMA.params} <= listed
    assert {f"devices.{r}" for r in ROLES} <= listed
    assert {f"family:pmem.{p.name}" for p in get_family("pmem").schema.params} <= listed


def test_prefix_filters_and_shows_type_default_bounds_and_plausible_range(capsys):
    rows = _keys(capsys, "pipeline.")
    assert rows and all(r["key"].startswith("pipeline.") for r in rows)
    row = next(r for r in _keys(capsys, "family:pmem.write_bw_GBps"))
    assert (row["type"], row["default"], row["bounds"], row["plausible"]) == ("float (GB/s)", "required", "> 0",
                                                                               "0.01..100000")
    batch = next(r for r in _keys(capsys, "workload:batch_size"))
    assert batch["plausible"] == "1..655360" and batch["description"] == "samples per training batch"


def test_a_role_prefix_lists_its_entry_and_its_families_parameters(capsys):
    rows = _keys(capsys, "devices.table_memory")
    keys = [r["key"] for r in rows]
    assert {"devices.table_memory", "devices.table_memory.preset", "devices.table_memory.count"} <= set(keys)
    assert "devices.table_memory.levels" not in keys  # only the switch role has switch levels
    bw = [r for r in rows if r["key"] == "devices.table_memory.params.write_bw_GBps"]
    assert {r["description"].split("]")[0] for r in bw} >= {"[pmem", "[dram"}
    assert "pmem" in rows[0]["description"]  # the families the role takes


def test_unknown_prefix_exits_2_suggesting_close_keys(capsys):
    assert main(["keys", "pipline.persistence"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pipeline.persistence" in err


@pytest.mark.parametrize("argv", [["keys"], ["keys", "--markdown"]])
def test_text_and_markdown_render(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "pipeline.persistence" in out and "write_bw_GBps" in out
