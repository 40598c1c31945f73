"""`cxlsim validate` (issue 19 item 3): the catalog, the report, the tolerances and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cxlsim.cli import main
from cxlsim.devices import validate

DOCS = Path(__file__).resolve().parents[1] / "docs" / "validation.md"
#: Checks outside their stated tolerance, each explained in docs/validation.md ("Device models
#: against measurements", "Misses"): the test fails when one of them comes inside (update the docs
#: and this list) or another falls outside.
KNOWN_MISSES = {
    "optane-1dimm-size-read",  # 4 KiB: the prefetchers' share of one thread's parallelism
    "optane-1dimm-size-ntstore",  # 64/128 B: partial XPLines read-modify-written, not merged
    "optane-6dimm-threads-ntstore",  # a thread's ntstore rate; the shared iMC write queue
    "optane-6dimm-threads-store-clwb",  # one thread: the fill buffers' rate; 24 threads: shared write queue
    "dram-6ch-threads-ntstore",  # a thread's ntstore rate
    "pmem-u200-emulated-table2",  # write bandwidth: Little's law with 16 requests, not Table 2's ratio
    "cxl-load-adder-over-dram",  # Pond's projection vs CXL-DMSim's measured devices
    "optane-persist-latency",  # 4 KiB: the model's buffers absorb it; the derived point paces it at the write rate
}
#: The devices issue 19 asks the catalog to cover.
COVERED = ("dram/ddr4-2666", "pmem/optane-100", "pmem/paper", "pmem/u200-emulated", "ssd/intel-750",
           "cxl_link/cxl2-x16", "cxl_protocol/asic", "cxl_protocol/fpga", "pcie/gen4-x16")


@pytest.fixture(scope="module")
def report():
    return validate.run(validate.load_catalog())


def test_the_catalog_covers_every_device_family_the_issue_names(report):
    assert set(COVERED) <= set(report["devices"])
    for c in validate.load_catalog():
        assert c.source and c.figure and 0 < c.tolerance_rel <= 0.5


def test_tolerances_hold_or_the_miss_is_explained(report):
    missed = {c["id"] for c in report["checks"] if not c["within"]}
    assert missed == KNOWN_MISSES
    text = DOCS.read_text(encoding="utf-8")
    for check_id in KNOWN_MISSES:
        assert f"`{check_id}`" in text, f"{check_id} misses its tolerance and docs/validation.md does not explain it"


def test_the_optane_curves_of_one_dimm_are_inside_their_tolerance(report):
    by_id = {c["id"]: c for c in report["checks"]}
    for op in ("read", "ntstore", "store-clwb"):
        assert by_id[f"optane-1dimm-threads-{op}"]["within"]


def test_six_dimm_reads_are_inside_their_tolerance_with_slots_freed_out_of_order(report):
    """The requester's slots free out of order (a core's fill buffers free as their misses
    return): the interleaved read curve comes inside ±25 % at every thread count; in issue order it
    missed (−13 to −26 %). It must stay in."""
    by_id = {c["id"]: c for c in report["checks"]}
    c = by_id["optane-6dimm-threads-read"]
    assert c["within"] and c["max_abs_rel_error"] < 0.2


def test_dram_reads_are_inside_their_tolerance_with_banks_held_for_trc(report):
    """A random DRAM read holds its bank for tRC (JEDEC DDR4-2666V, 46.25 ns) and the channel's bus
    carries one burst per 64 B / 17.6 GB/s: the six-channel read curve comes inside ±25 % at every
    thread count (with a 58 ns burst slot per bank it missed at 12 and 16 threads, -26 %). It must
    stay in; and without the bank time the preset falls back to the burst slot and misses again."""
    by_id = {c["id"]: c for c in report["checks"]}
    c = by_id["dram-6ch-threads-read"]
    assert c["within"] and c["max_abs_rel_error"] < 0.22
    slot = validate.run([k for k in validate.load_catalog() if k.id == "dram-6ch-threads-read"],
                        overrides={"dram/ddr4-2666": {"bank_read_occupancy_ns": 0}})
    assert not slot["checks"][0]["within"]


def test_persist_and_loaded_latency_checks(report):
    """Issue 26 item 4: persist latency (ntstores + sfence; stores + clwb + sfence) and loaded latency
    as checks, against points derived from the sources' mechanisms (no published points). Inside:
    one line's ntstore persist (one acknowledgement), store + clwb + sfence (a read and a write-back
    per line, then the measured one-thread rate), and the low-load end of the loaded latency. The
    named miss: 4 KiB of ntstores persist in 6 acknowledgement rounds (540 ns) where the measured
    one-thread rate gives 1796 ns; it must stay named (the 64 B point stays exact)."""
    by_id = {c["id"]: c for c in report["checks"]}
    for check_id in ("optane-persist-flush-latency", "optane-loaded-latency-low-load", "dram-loaded-latency-low-load"):
        assert by_id[check_id]["within"], check_id
    nt = {p["x"]: p for p in by_id["optane-persist-latency"]["points"]}
    assert nt[64]["rel_error"] == pytest.approx(0.0, abs=0.01)
    assert nt[4096]["rel_error"] < -0.5


def test_report_points_and_summary(report):
    for c in report["checks"]:
        for p in c["points"]:
            assert p["rel_error"] == pytest.approx((p["model"] - p["measured"]) / p["measured"])
            assert p["within"] == (abs(p["rel_error"]) <= c["tolerance_rel"])
    d = report["devices"]["pmem/optane-100"]
    mine = [c for c in report["checks"] if c["device"] == "pmem/optane-100"]
    assert d["checks_count"] == len(mine) and d["points_count"] == sum(len(c["points"]) for c in mine)


def test_cli_json_is_stable_and_device_filter_and_overrides(capsys, tmp_path):
    assert main(["validate", "--device", "cxl_protocol/fpga", "--json", "--plot", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"version", "checks", "devices", "plots"}
    assert set(out["devices"]) == {"cxl_protocol/fpga"}
    assert set(out["checks"][0]) == {
        "id", "device", "title", "metric", "relative_to", "x_label", "unit", "source", "figure", "note",
        "tolerance_rel", "points", "mean_abs_rel_error", "max_abs_rel_error", "within_count", "within"}
    assert set(out["checks"][0]["points"][0]) == {"x", "measured", "model", "rel_error", "within"}
    assert all(Path(p).is_file() for p in out["plots"])
    # an override moves the model, and the command still exits 0
    assert main(["validate", "--device", "pcie/gen4-x16", "--set", "link_efficiency_fraction=0.4", "--json"]) == 0
    bw = [p for p in json.loads(capsys.readouterr().out)["checks"][0]["points"] if p["x"] == "bw_GBps.down"][0]
    assert bw["model"] < 13 and not bw["within"]


@pytest.mark.parametrize(("args", "needle"), [
    (["--set", "dma_latency_ns=4"], "--device"),
    (["--device", "gpu/rtx3090"], "no check of this preset"),
])
def test_cli_bad_input_exits_2(capsys, args, needle):
    assert main(["validate", *args]) == 2
    assert needle in capsys.readouterr().err


def test_a_bad_catalog_names_file_and_key(tmp_path, capsys):
    bad = tmp_path / "cat.yaml"
    bad.write_text("version: 1\nchecks:\n  - id: x\n    device: pmem/optane-100\n", encoding="utf-8")
    assert main(["validate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "checks[0].title" in err
