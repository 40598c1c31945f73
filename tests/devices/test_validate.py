"""`cxlsim validate`: the catalog, the report, the tolerances and the CLI."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

from cxlsim.cli import main
from cxlsim.validate import checks as validate
from cxlsim.validate import media_bench

DOCS = Path(__file__).resolve().parents[2] / "docs" / "validation.md"
#: Checks outside their stated tolerance, each explained in docs/validation.md ("Device models
#: against measurements", "Misses"): the test fails when one of them comes inside (update the docs
#: and this list) or another falls outside.
KNOWN_MISSES = {
    "optane-1dimm-size-read",  # 4 KiB: Fig. 2's sequential latency and the sweep's rate disagree
    "optane-1dimm-size-ntstore",  # 64/128 B: VANS's read-modify-write fill vs the sweep's exact 1/4
    "optane-6dimm-threads-store-clwb",  # one thread: 12 fill buffers at the sources' latencies vs its rate
    "pmem-u200-emulated-table2",  # write bandwidth: Little's law with 16 requests, not Table 2's ratio
    "cxl-load-adder-over-dram",  # Pond's projection vs CXL-DMSim's measured devices
    "optane-persist-latency",  # 4 KiB: the XPBuffer absorbs it; the derived point paces it at the write rate
    "pcie-u280-dma-40KiB",  # card -> host: one fixed cost both ways vs d2h no faster than h2d at 40 KiB
    "pcie-a100-h2d-by-size",  # 1 and 10 MB: no per-copy fixed cost fits both (and the gen3 cluster's 2 us)
    "pcie-a100-d2h-by-size",  # 1 MB: a 24 us fixed cost, GPU -> host only, against gdrcopy's 6-7 us
    "pcie-h200-h2d-by-size",  # 1 MB: the gVisor host's ~17 us per copy against the i5's call path
    "pcie-h200-d2h-by-size",  # 1 MB: as above, GPU -> host
    "cxl-e3s-idle-latency",  # a lone flit's serialisation (one idle latency) on DDR4 media latencies
    "cxl-pool-idle-latency",  # [guo-arxiv26]: a switched path below [intel-cachelib-ocp]'s direct device + CXL-DMSim's +200 ns/hop
    "cxl-pool-idle-latency-beluga",  # [beluga-arxiv25]: the other side of that disagreement (750 ns through another pool)
}
#: The devices the catalog must cover.
COVERED = ("dram/ddr4-2666", "pmem/optane-100", "pmem/paper", "pmem/u200-emulated", "ssd/intel-750",
           "cxl_link/cxl2-x16", "cxl_protocol/asic", "cxl_protocol/fpga", "pcie/gen4-x16", "pcie/gen3-x16",
           "pcie/u200-gen3-x16")


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
    """Persist latency (ntstores + sfence; stores + clwb + sfence) and loaded latency as checks,
    against points derived from the sources' mechanisms (no published points). Inside: one line's
    ntstore persist (one acknowledgement), store + clwb + sfence (a read and a write-back per line,
    then the measured one-thread rate), and the low-load end of the loaded latency. The named miss:
    4 KiB of ntstores persist in 6 acknowledgement rounds (540 ns) where the measured one-thread
    rate gives 1796 ns; it must stay named (the 64 B point stays exact)."""
    by_id = {c["id"]: c for c in report["checks"]}
    for check_id in ("optane-persist-flush-latency", "optane-loaded-latency-low-load", "dram-loaded-latency-low-load"):
        assert by_id[check_id]["within"], check_id
    nt = {p["x"]: p for p in by_id["optane-persist-latency"]["points"]}
    assert nt[64]["rel_error"] == pytest.approx(0.0, abs=0.01)
    # 64 lines, STREAM_STORE_LINES (6) at a time, each round one 90 ns acknowledgement
    assert nt[4096]["model"] == pytest.approx(math.ceil(64 / media_bench.STREAM_STORE_LINES) * 90, rel=0.01)
    assert nt[4096]["rel_error"] < -0.25


def test_ntstore_curves_are_inside_with_the_streaming_store_limit_and_the_shared_write_queue(report):
    """A thread keeps STREAM_STORE_LINES (6) ntstore lines in flight, and each of Cascade Lake's two
    controllers has one write-pending queue for its three channels. With them the six-DIMM Optane
    and six-channel DRAM ntstore curves are inside ±25 % at every thread count (they missed by up to
    +103 % and +101 %). They must stay in; and each mechanism is needed: with 12 lines per thread
    (the fill buffers) DRAM misses again, with a queue per channel six DIMMs do."""
    by_id = {c["id"]: c for c in report["checks"]}
    for check_id in ("optane-6dimm-threads-ntstore", "dram-6ch-threads-ntstore"):
        assert by_id[check_id]["within"] and by_id[check_id]["max_abs_rel_error"] < 0.15, check_id
    catalog = {k.id: k for k in validate.load_catalog()}
    per_channel = validate.run([catalog["optane-6dimm-threads-ntstore"]],
                               overrides={"pmem/optane-100": {"modules_per_controller": 1}})["checks"][0]
    assert not per_channel["within"] and per_channel["points"][-1]["rel_error"] > 0.5  # 24 threads


def test_without_the_streaming_store_limit_dram_ntstores_miss(monkeypatch):
    monkeypatch.setattr(media_bench, "STREAM_STORE_LINES", media_bench.THREAD_LINES)
    c = validate.run([k for k in validate.load_catalog() if k.id == "dram-6ch-threads-ntstore"])["checks"][0]
    assert not c["within"] and c["points"][0]["rel_error"] > 0.9  # one thread: 8.5 GB/s against 4.31


def test_median_error_over_the_optane_and_dram_points(report):
    """The target: median |error| ≤ 10 % over the Optane and DRAM points, published ones (93) and
    with the derived persist and loaded-latency points (101)."""
    checks = [c for c in report["checks"] if c["device"] in ("pmem/optane-100", "dram/ddr4-2666")]
    published = [abs(p["rel_error"]) for c in checks if not c["source"].startswith("derived") for p in c["points"]]
    every = [abs(p["rel_error"]) for c in checks for p in c["points"]]
    assert (len(published), len(every)) == (93, 101)
    assert statistics.median(published) <= 0.10 and statistics.median(every) <= 0.10


def test_the_named_misses_stay_named(report):
    """Each remaining Optane miss is a conflict between two sources (docs/validation.md, Misses);
    the points that show it stay outside, the rest of each curve inside."""
    by_id = {c["id"]: {p["x"]: p for p in c["points"]} for c in report["checks"]}
    outside = {
        "optane-1dimm-size-read": {4096: +1},
        "optane-1dimm-size-ntstore": {64: -1, 128: -1},
        "optane-6dimm-threads-store-clwb": {1: +1},
        "optane-persist-latency": {4096: -1},
    }
    for check_id, points in outside.items():
        for x, p in by_id[check_id].items():
            if x in points:
                assert not p["within"] and p["rel_error"] * points[x] > 0, (check_id, x)
            else:
                assert p["within"], (check_id, x)


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
    assert set(out) == {"version", "checks", "devices", "groups", "plots"}
    assert set(out["devices"]) == {"cxl_protocol/fpga"}
    assert set(out["checks"][0]) == {
        "id", "device", "title", "metric", "relative_to", "x_label", "unit", "source", "figure", "note",
        "tolerance_rel", "points", "mean_abs_rel_error", "max_abs_rel_error", "within_count", "within"}
    assert set(out["checks"][0]["points"][0]) == {"x", "measured", "model", "rel_error", "within"}
    assert all(Path(p).is_file() for p in out["plots"])
    # an override moves the model, and the command still exits 0
    assert main(["validate", "--device", "pcie/gen4-x16", "--set", "h2d_efficiency_fraction=0.4", "--json"]) == 0
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


def test_groups_summarise_the_media_and_the_fabric_with_their_median(report):
    """``groups`` splits the points by family (media / fabric) and states each group's median |error|
    (the fabric's target: at most 15 %)."""
    groups = report["groups"]
    assert set(groups) == {"media", "fabric"}
    by_id = {c["id"]: c for c in report["checks"]}
    fabric_errs = sorted(abs(p["rel_error"]) for c in by_id.values()
                         if c["device"].split("/")[0] in validate.GROUPS["fabric"] for p in c["points"])
    assert groups["fabric"]["points_count"] == len(fabric_errs)
    assert groups["fabric"]["median_abs_rel_error"] == pytest.approx(float(np.median(fabric_errs)))
    assert groups["fabric"]["median_abs_rel_error"] <= 0.15
    assert sum(g["points_count"] for g in groups.values()) == sum(len(c["points"]) for c in report["checks"])


def test_markdown_prints_the_three_tables(capsys):
    assert main(["validate", "--device", "cxl_protocol/fpga", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| `cxl-load-latency-fpga` | cxl_protocol/fpga |" in out
    assert "| cxl_protocol/fpga |" in out and "| fabric |" in out and "median" in out
