"""The composite CXL memory device (family ``cxl_mem``) and its MLC-style probes: the
composite's configuration, its equality with what the platforms build, and each mechanism of the
timing model (cxlsim/devices/cxl_mem/queueing.py, driven by the probes of
cxlsim/validate/cxl_mlc.py) pinned both ways: the measured curve holds with it and
fails without it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.config.catalog import list_presets
from cxlsim.devices import build_device, load_preset
from cxlsim.devices.cxl_mem.cxl_mem import CxlMem
from cxlsim.errors import ConfigError
from cxlsim.systems.config import load_system
from cxlsim.validate import cxl_mlc as mlc

E3S = "cxl_mem/e3s-x8-spr"
POOL = "cxl_mem/apollo-pool-2x8"
#: [intel-cachelib-ocp] (GB/s by reads:writes); [guo-arxiv26] §2.3 (two competing streams, each).
MIX_MEASURED = {"1:0": 17.8, "3:1": 23.6, "2:1": 25.1, "1:1": 27.2}
TWO_STREAMS_READ = 10.6
TOL = 0.15


@cache
def dev(name: str = E3S) -> CxlMem:
    return build_device(name)


def err(model: float, measured: float) -> float:
    return abs(model - measured) / measured


# -- the composite -----------------------------------------------------------------------------
def test_every_composite_preset_builds_its_parts():
    names = list_presets("cxl_mem")
    assert {E3S, POOL, "cxl_mem/cz120-x8", "cxl_mem/agilex7-type2", "cxl_mem/trainingcxl-prototype",
            "cxl_mem/trainingcxl-physical"} <= set(names)
    for name in names:
        d = build_device(name)
        assert isinstance(d, CxlMem) and d.link.raw_bw_GBps > 0 and d.controller.line_B == 64
        assert (d.switch is not None) == (d.path.hops == 1)


def test_a_part_parameter_is_overridden_per_part():
    base = dev()
    wide = build_device(E3S, {"link.params.lanes_count": 16})
    assert wide.link.raw_bw_GBps == pytest.approx(2 * base.link.raw_bw_GBps)
    assert load_preset(E3S, {"link.params.lanes_count": 16}).params.sources["link.params.lanes_count"].startswith("override")
    media = build_device(E3S, {"media.params.read_latency_random_ns": 90})
    assert mlc.fabric_of(media).media_latency_ns[("read", "random")] == 90


@pytest.mark.parametrize(("overrides", "key", "needle"), [
    ({"link.params.lanes": 16}, "params.link.params.lanes", "unknown key"),
    ({"linc.params.lanes_count": 16}, "params.linc.params.lanes_count", "part override"),
    ({"controller.params.max_outstanding_count": 0}, "params.controller.params.max_outstanding_count", ">= 1"),
    ({"link": "cxl_protocol/asic"}, "params.link", "the link part takes cxl_link"),
    ({"media": "dram/nope"}, "params.media", "no such preset"),
    ({"switch.params.hop_latency_ns": 5}, "params.switch.params.hop_latency_ns", "has none"),
])
def test_bad_overrides_are_refused_naming_the_key(overrides, key, needle):
    with pytest.raises(ConfigError) as exc:
        load_preset(E3S, overrides)
    assert exc.value.key == key and needle in exc.value.message
    assert exc.value.where == "--set"


def test_a_bad_preset_file_names_file_and_key(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("version: 1\nfamily: cxl_mem\nsource: test\nparams:\n  link: cxl_link/cxl2-x8\n"
                 "  controller: cxl_protocol/asic\n  media: dram/ddr4-2666\n  host_credits_count: 8\n"
                 "  device_read_queue_count: 8\n  device_write_queue_count: 8\n  controller_static_W: 1\n  media.params.bogus_ns: 3\n")
    with pytest.raises(ConfigError) as exc:
        load_preset(str(f))
    assert exc.value.where == str(f) and exc.value.key == "params.media.params.bogus_ns"


@pytest.mark.parametrize(("platform", "preset"), [("prototype", "cxl_mem/trainingcxl-prototype"),
                                                  ("physical", "cxl_mem/trainingcxl-physical")])
def test_the_trainingcxl_composite_is_what_the_platform_builds(platform, preset):
    """The composite names the same presets, overrides, counts and interleaving as the platform's
    roles of cxl-d (table_memory, fabric_link, cxl_protocol, switch): equal parameter sets."""
    cfg = load_system("cxl-d", [("platform", platform)])
    d = build_device(preset)
    roles = cfg.devices
    assert d.link.params == roles["fabric_link"].params
    assert d.controller.params == roles["cxl_protocol"].params
    assert d.switch.params == roles["switch"].params and roles["switch"].levels == d.path.hops == 1
    assert d.media_preset.name == roles["table_memory"].preset.name
    assert d.media_preset.params == roles["table_memory"].params
    assert (d.media_count, d.params["media_interleave_B"]) == (roles["table_memory"].count, roles["table_memory"].interleave_B)
    # the composite's unloaded line read (its timing model's) is the controller's over the path the
    # system composes: one idle latency on both sides
    media_ns = roles["table_memory"].params["read_latency_random_ns"]
    assert d.read_line_ns() == pytest.approx(d.controller.read_line_ns(media_ns, d.path), rel=1e-12)


CXL_MEM_PRESETS = sorted(p.stem for p in (Path(__file__).parents[2] / "devices" / "cxl_mem").glob("*.yaml"))


@pytest.mark.parametrize("name", CXL_MEM_PRESETS)
@pytest.mark.parametrize("pattern", ["random", "sequential"])
def test_one_idle_latency_per_device(name, pattern):
    """The device's line read is the event model's pointer chase on an idle device: the closed
    form and the queues give one number."""
    d = build_device(f"cxl_mem/{name}")
    assert d.read_line_ns(pattern) == pytest.approx(mlc.idle_latency_ns(d.fabric(), pattern), rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(lanes=st.sampled_from([4, 8, 16]), switched=st.booleans(), port_ns=st.floats(0.0, 500.0),
       hop_ns=st.floats(0.0, 400.0))
def test_the_idle_line_read_follows_every_stage(lanes, switched, port_ns, hop_ns):
    """Raising a link's port latency by x moves the idle read by 2 x per link crossed (request and
    response), a switch hop's by 2 x; the lone-message serialisation is paid once on the path."""
    over = {"link.params.lanes_count": lanes, "link.params.port_latency_ns": port_ns}
    if switched:
        over |= {"switch": "cxl_switch/cxl2-x16", "switch.params.hop_latency_ns": hop_ns}
    d = build_device("cxl_mem/cz120-x8", over)
    base = build_device("cxl_mem/cz120-x8", over | {"link.params.port_latency_ns": 0.0}
                        | ({"switch.params.hop_latency_ns": 0.0} if switched else {}))
    links = 2 if switched else 1
    moved = d.read_line_ns() - base.read_line_ns()
    assert moved == pytest.approx(2 * links * (d.link.latency_ns - base.link.latency_ns) + (2 * hop_ns if switched else 0.0),
                                  abs=1e-6)
    assert mlc.idle_latency_ns(d.fabric()) == pytest.approx(d.read_line_ns(), rel=1e-12)


def test_building_a_composite_builds_no_media_model():
    d = build_device(E3S)
    assert d._media is None
    assert d.media_model().read_latency_ns("random") == d.media_preset.params["read_latency_random_ns"]


# -- full duplex -------------------------------------------------------------------------------
def test_mixes_pass_one_direction_only_with_full_duplex():
    """[intel-cachelib-ocp]: 1:1 reaches 27.2 GB/s, above what one direction carries; with both
    directions on one server (half duplex) the sum cannot pass one direction and the 1:1 check
    fails."""
    d = dev()
    full = mlc.peak_bw_GBps(mlc.fabric_of(d), (1, 1)).bw_GBps
    half = mlc.peak_bw_GBps(mlc.fabric_of(d, duplex=False), (1, 1)).bw_GBps
    assert err(full, MIX_MEASURED["1:1"]) <= TOL
    one_direction = mlc.LINE_B / d.link.per_message_ns(mlc.LINE_B)  # reads' data alone on one direction
    assert half <= one_direction + 1e-9
    assert err(half, MIX_MEASURED["1:1"]) > TOL


@pytest.mark.slow
def test_the_e3s_mix_curve_holds():
    d = dev()
    for key, measured in MIX_MEASURED.items():
        assert err(mlc.peak_bw_GBps(mlc.fabric_of(d), mlc.MIXES[key]).bw_GBps, measured) <= TOL, key


# -- the device's queues and the host's credits ------------------------------------------------
def test_the_queues_bound_bandwidth_and_make_the_knee():
    """The device's queue entries bound reads by Little's law (17.8 GB/s); with unbounded queues
    and credits the reads run to the link's slots, past the measured ceiling."""
    d = dev()
    bounded = mlc.peak_bw_GBps(mlc.fabric_of(d)).bw_GBps
    free = mlc.peak_bw_GBps(mlc.fabric_of(d, read_queue=10**6, write_queue=10**6, host_credits=10**6)).bw_GBps
    assert err(bounded, MIX_MEASURED["1:0"]) <= TOL
    assert free > MIX_MEASURED["1:0"] * (1 + TOL)
    assert free == pytest.approx(mlc.LINE_B / d.link.per_message_ns(mlc.LINE_B), rel=0.01)


def test_host_credits_bound_bandwidth_when_fewer_than_the_device_queues():
    d = dev()
    few = mlc.peak_bw_GBps(mlc.fabric_of(d, host_credits=8)).bw_GBps
    # Little's law: 8 lines over an idle round trip (the credit is held for all of it)
    assert few == pytest.approx(8 * mlc.LINE_B / mlc.idle_latency_ns(mlc.fabric_of(d)), rel=0.03)


def test_loaded_latency_is_flat_then_knees_before_saturation():
    d = dev()
    f = mlc.fabric_of(d)
    peak = mlc.peak_bw_GBps(f).bw_GBps
    rows = mlc.loaded_latency(f, peak, (0.05, 0.5, 0.8, 1.1))
    idle = rows[0]["latency_ns"]
    assert rows[1]["latency_ns"] < 1.05 * idle and rows[2]["latency_ns"] < 1.1 * idle  # nearly flat
    assert rows[3]["latency_ns"] > 1.5 * idle  # the queues fill
    assert rows[3]["achieved_GBps"] <= peak * 1.02


# -- the switch --------------------------------------------------------------------------------
def test_two_streams_share_one_device_by_arbitration():
    """[guo-arxiv26] §2.3: two competing streams (one per host port) on one device get 10.6 GB/s
    each: round robin at the switch's egress gives each half the device link; without the shared
    egress (each host port a private path) each gets the whole link and the check fails."""
    d = dev(POOL)
    ports = [k % 2 for k in range(32)]
    shared = mlc.peak_bw_GBps(mlc.fabric_of(d, devices=1), ports=ports)
    private = mlc.peak_bw_GBps(mlc.fabric_of(d, devices=1, arbitrate=False), ports=ports)
    assert err(shared.bw_GBps / 2, TWO_STREAMS_READ) <= TOL
    assert err(private.bw_GBps / 2, TWO_STREAMS_READ) > TOL


def test_round_robin_is_fair_between_unequal_host_ports():
    """One host port with 24 threads, the other with 8, on one device link: round robin gives each
    port half of the link as long as both keep requests waiting."""
    d = dev(POOL)
    f = mlc.fabric_of(d, devices=1)
    ports = [0] * 24 + [1] * 8
    sim = mlc.simulate(f, threads=32, ports=ports, requests=6000)
    assert sim.bw_GBps == pytest.approx(mlc.LINE_B / d.link.per_message_ns(mlc.LINE_B), rel=0.02)


def test_the_switch_adds_its_hop_to_the_idle_latency():
    d = dev(POOL)
    direct = build_device(E3S)
    hop = 2 * (d.switch.hop_latency_ns + d.link.latency_ns)  # the switch core and the link it inserts, each way
    # a lone message serialises once on the path (its whole flit), unless its slots on the two
    # links take longer (the servers' occupancies): what the second link adds
    lk = d.link
    extra_ser = sum(max(lk.transfer_ns(b), 2 * lk.per_message_ns(b)) - lk.transfer_ns(b) for b in (0, 64))
    media = d.media_preset.params["read_latency_random_ns"] - direct.media_preset.params["read_latency_random_ns"]
    assert mlc.idle_latency_ns(mlc.fabric_of(d)) == pytest.approx(
        mlc.idle_latency_ns(mlc.fabric_of(direct)) + hop + extra_ser + media, rel=1e-12)


# -- properties --------------------------------------------------------------------------------
@settings(max_examples=8, deadline=None)
@given(lanes=st.sampled_from([4, 8, 16]), queue=st.integers(2, 128), credits=st.integers(2, 256),
       mix=st.sampled_from(list(mlc.MIXES.values())))
def test_bandwidth_never_passes_a_link_direction(lanes, queue, credits, mix):
    d = build_device(E3S, {"link.params.lanes_count": lanes})
    res = mlc.simulate(mlc.fabric_of(d, read_queue=queue, write_queue=queue, host_credits=credits), threads=16, mix=mix,
                       requests=1500)
    raw = d.link.raw_bw_GBps
    assert res.read_GBps <= raw * 1.001 and res.write_GBps <= raw * 1.001


@pytest.mark.slow
@settings(max_examples=5, deadline=None)
@given(queue=st.integers(8, 64))
def test_loaded_latency_rises_with_offered_load_and_achieved_stays_below_offered(queue):
    d = dev()
    f = mlc.fabric_of(d, read_queue=queue)
    peak = mlc.peak_bw_GBps(f, requests=3000).bw_GBps
    rows = mlc.loaded_latency(f, peak, (0.1, 0.6, 1.2))
    lat = [r["latency_ns"] for r in rows]
    assert lat[0] <= lat[1] * 1.01 <= lat[2] * 1.01
    for r in rows:
        assert r["achieved_GBps"] <= r["offered_GBps"] * 1.03


# -- the command -------------------------------------------------------------------------------
@pytest.mark.slow
def test_microbench_json_keys(capsys, tmp_path):
    png = tmp_path / "e3s.png"
    assert main(["microbench", E3S, "--json", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("idle_latency_ns", "loaded_latency", "bw_by_mix_GBps", "bw_by_threads_GBps"):
        assert key in out
    assert set(out["loaded_latency"][0]) == {"offered_GBps", "achieved_GBps", "latency_ns"}
    assert {"1:0", "3:1", "2:1", "1:1"} <= set(out["bw_by_mix_GBps"])
    assert png.stat().st_size > 0


def test_a_type2_device_reports_cache_ops():
    from cxlsim.validate.cxl_mlc import cache_ops_hook

    d = build_device("cxl_mem/agilex7-type2")
    ops = cache_ops_hook(d)
    assert set(ops) == {"RdCurr", "RdShared", "RdOwn", "ItoMWr", "WOWrInvF"}
    assert ops["RdShared"]["bw_GBps"] < ops["RdCurr"]["bw_GBps"]  # the allocation cap reaches it


@pytest.mark.slow
def test_median_error_over_the_fabric_points():
    """The median |error| over the CXL fabric checks' points is at most 15 %, and every fabric check
    outside its tolerance is a documented conflict (test_validate's KNOWN_MISSES)."""
    import statistics

    from cxlsim.validate import checks as validate

    checks = [c for c in validate.load_catalog() if c.id.startswith("cxl")]
    report = validate.run(checks)
    errs = [abs(p["rel_error"]) for c in report["checks"] for p in c["points"]]
    assert statistics.median(errs) <= 0.15
    missed = {c["id"] for c in report["checks"] if not c["within"]}
    assert missed == {"cxl-load-adder-over-dram", "cxl-e3s-idle-latency", "cxl-pool-idle-latency",
                      "cxl-pool-idle-latency-beluga"}


def test_saturated_latency_follows_what_the_host_keeps_outstanding():
    """Past the device's ceiling the chase waits behind every miss the host keeps in flight, not
    behind the root port's credits: Little's law bounds it by outstanding × 64 B / peak, and a host
    with more fill buffers climbs further (the port's credits no longer cap it)."""
    d = dev()
    f = mlc.fabric_of(d)
    peak = mlc.peak_bw_GBps(f, requests=3000).bw_GBps
    lat = {}
    for n in (72, 512, 1024):
        (row,) = mlc.loaded_latency(f, peak, (1.5,), host_outstanding=n)
        lat[n] = row["latency_ns"]
        assert row["latency_ns"] <= n * mlc.LINE_B / row["achieved_GBps"] * 1.05
    assert lat[72] < lat[512] < lat[1024]
    assert lat[1024] > f.host_credits * mlc.LINE_B / peak  # beyond what the port's credits alone allow


def test_a_host_with_few_misses_in_flight_cannot_reach_the_ceiling():
    """72 misses (the i5's six cores × 12 fill buffers) at the idle latency move at most
    72 × 64 B / 288 ns: the device's 17.7 GB/s is out of that host's reach."""
    d = dev()
    f = mlc.fabric_of(d)
    (row,) = mlc.loaded_latency(f, 17.7, (1.5,), host_outstanding=72)
    assert row["achieved_GBps"] <= 72 * mlc.LINE_B / d.read_line_ns() * 1.01


@pytest.mark.parametrize(("host", "outstanding"), [(None, 32 * 16), ("cpu/i5-9600k", 6 * 12)])
def test_microbench_loads_a_cxl_memory_device_as_its_host_would(capsys, host, outstanding):
    argv = ["microbench", E3S, "--json"] + (["--host", host] if host else [])
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["host"] == (host or "cpu/xeon-gold-6430")
    assert out["host_outstanding_count"] == outstanding
