"""The symmetry reduction of data-parallel scale-out (cxlsim.systems.symmetry) against full detail."""

from __future__ import annotations

import numpy as np
import pytest

from cxlsim.api import simulate
from cxlsim.cli import main as cli_main
from cxlsim.studies.symmetry.settings import settings
from cxlsim.studies.symmetry.simulation import compare, kind
from cxlsim.systems.device_streams import DeviceStreams, busiest_device, heads
from cxlsim.systems.streams import StreamSet
from cxlsim.systems.symmetry import AUTO_MIN_GPUS, SymmetryRefused
from cxlsim.systems.topology import Placement
from cxlsim.workloads.catalog import load_workload

#: Batch-time error docs/scale-out.md states for the reduction (cxl, RM1/RM4, up to 16 × 16 and 32 × 8,
#: 1 warm-up + 2 measured batches as its table): the representative CXL-MEM serves the busiest
#: device's stream and the trunks are shared deterministically. (32 × 32 is outside it:
#: docs/scale-out.md, "Reduction against full detail".)
STATED_ERROR = 0.06


def test_the_reduction_agrees_with_full_detail_at_two_gpus():
    c = compare("cxl", "rm1", 2, 2, batches=1, warmup=1)
    assert abs(c.error) <= STATED_ERROR
    assert c.same_bottleneck


@pytest.mark.slow
@pytest.mark.parametrize("workload,gpus,mems", [
    *[(w, g, m) for w in ("rm1", "rm4") for g, m in ((4, 4), (8, 2), (16, 4), (16, 16))], ("rm4", 32, 8)])
def test_the_reduction_agrees_with_full_detail_at_scale(workload, gpus, mems):
    c = compare("cxl", workload, gpus, mems, batches=2, warmup=1)
    assert abs(c.error) <= STATED_ERROR, c
    assert c.same_bottleneck, c


@pytest.mark.slow
def test_a_reduced_run_says_so_and_counts_the_whole_system():
    d = simulate("cxl", "rm1", batches=1, warmup=1, sets=settings(4, 2, "on")).to_dict()
    sym = d["symmetry"]
    assert {k: sym[k] for k in ("reduced", "groups", "group_gpus", "group_mems")} == {
        "reduced": True, "groups": 2, "group_gpus": 2, "group_mems": 1}
    assert len(sym["mem_devices"]) == 1 and 0 <= sym["mem_devices"][0] < 2  # the busiest CXL-MEM's stream
    assert d["devices"] == {"gpus": 4, "cxl_mems": 2}
    assert d["accelerators"] == 4  # throughput is the whole system's samples over the batch
    off = simulate("cxl", "rm1", batches=1, warmup=1, sets=settings(4, 2, "off")).to_dict()
    assert off["symmetry"] == {"reduced": False}
    # energy is the whole system's: within the batch-time error of full detail
    assert d["energy_J_per_batch"]["total"] == pytest.approx(off["energy_J_per_batch"]["total"], rel=STATED_ERROR)


@pytest.mark.parametrize("sets,reason", [
    ({"topology.gpus_count": 6, "topology.cxl_mems_count": 4}, "not a multiple"),
    ({"topology.gpus_count": 4, "topology.cxl_mems_count": 3, "topology.tables_policy": "whole"}, "not a multiple"),
    ({"topology.gpus_count": 2, "topology.cxl_mems_count": 8, "topology.tables_policy": "whole"}, "equal shards"),
    ({"topology.gpus_count": 4, "topology.cxl_mems_count": 1}, "one group"),
])
def test_asymmetric_configurations_are_refused_with_the_reason(sets, reason):
    with pytest.raises(SymmetryRefused, match=reason):
        simulate("cxl", "rm1", batches=1, warmup=0, sets={**sets, "topology.symmetry": "on",
                                                        "devices.switch.levels": 1})


def test_the_host_engine_is_refused_and_auto_keeps_small_systems_in_full_detail():
    with pytest.raises(SymmetryRefused, match="one host CPU"):
        simulate("pmem", "rm1", batches=1, warmup=0, sets={"topology.gpus_count": 4, "topology.symmetry": "on"})
    d = simulate("cxl", "rm1", batches=1, warmup=0, sets={**settings(4, 2, "auto")}).to_dict()
    assert d["symmetry"]["reduced"] is False and AUTO_MIN_GPUS > 4


def test_the_cli_refuses_in_one_line_with_exit_2(capsys):
    rc = cli_main(["run", "--system", "cxl", "--workload", "rm1", "--batches", "1", "--symmetry", "on",
                   "--set", "topology.gpus_count=6", "--set", "topology.cxl_mems_count=4"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "not a multiple" in err


def test_kind_strips_device_numbers():
    assert kind("ndp.3") == "ndp" and kind("ckpt_logic.12") == "ckpt_logic" and kind(None) is None
    assert kind("link.dev4.down") == kind("link.dev0.up") == "link.dev"
    assert kind("link.s2.2.down") == kind("link.s2.0.up") == "link.s2" != kind("link.s3.1.up")


def test_tpu_ps_tiles_a_group_of_chips():
    full = simulate("tpu-ps", "rm1", batches=1, warmup=0, sets={"topology.gpus_count": 32}).to_dict()
    red = simulate("tpu-ps", "rm1", batches=1, warmup=0,
                   sets={"topology.gpus_count": 32, "topology.symmetry": "on"}).to_dict()
    assert red["symmetry"]["reduced"] and red["symmetry"]["groups"] == 2
    assert red["batch_time_ms"]["mean"] == pytest.approx(full["batch_time_ms"]["mean"], rel=0.02)


@pytest.mark.parametrize("workload,gpus,mems,reading", [
    ("rm1", 16, 16, {}), ("rm4", 8, 4, {}),
    ("rm1", 16, 16, {"bag_size": "dlrm_uniform"}),
    # 62,500 rows a device: its tail ranks enumerated
    pytest.param("rm1", 16, 16, {"rows_per_table": 1_000_000}, marks=pytest.mark.slow),
    pytest.param("rm1", 16, 16, {"bag_size": "dlrm_uniform", "bag_dedup": True}, marks=pytest.mark.slow),
])
def test_a_device_stream_is_the_full_systems_device_part(workload, gpus, mems, reading):
    """DeviceStreams draws, without the full system's streams, what the system's busiest device
    serves of them: lookups and distinct rows agree within 3 %, rows shared with the previous batch
    5 %, under every bag reading."""
    wl = load_workload(workload, {"batch_size": 128, **reading})
    full = StreamSet(load_workload(workload, {"batch_size": 128 * gpus, **reading}), 1, 3)
    pl = Placement.of(full.layout, mems, "row_sharded")
    d = busiest_device(heads(wl, full.layout, 1), pl)
    ds = DeviceStreams(wl, gpus, pl, d, 1, 3)
    loads = np.bincount(pl.mem_of(full.batch(1).lookup_rows), minlength=mems)
    assert loads[d] >= 0.99 * loads.max()  # the busiest in expectation; realised loads differ by noise
    for n in range(3):
        b = full.batch(n)
        want, got = b.on(pl.mem_of(b.lookup_rows), pl.mem_of(b.unique_rows), d), ds.batch(n)
        assert np.all(pl.mem_of(got.lookup_rows) == d)
        assert got.n_indices == pytest.approx(want.n_indices, rel=0.03)
        assert got.n_unique == pytest.approx(want.n_unique, rel=0.03)
        assert got.n_shared_prev == pytest.approx(want.n_shared_prev, rel=0.05)
    assert ds.batch(1).n_shared_prev > 0


def test_free_positions_are_distinct_and_outside_the_taken_ones():
    rng = np.random.default_rng(0)
    from cxlsim.systems.device_streams import _Head, _TableStream
    ts = _TableStream(_Head(1000, 1.1, np.uint64(7)), 0, 1000, 10_000, 0.5)
    taken = np.sort(rng.choice(10_000, 3000, replace=False))
    got = ts._free_positions(rng, 5000, taken)
    assert got.size == 5000 and np.unique(got).size == 5000
    assert not np.isin(got, taken).any() and got.min() >= 0 and got.max() < 10_000


# ------------------------------------------------------------------ trunk counts
@pytest.mark.parametrize("gpus,mems,levels,fanout,attach", [
    (2, 2, 1, 0, "packed"), (4, 2, 2, 3, "packed"), (4, 4, 2, 4, "interleaved"), (6, 2, 2, 4, "packed"),
    (4, 4, 3, 2, "interleaved"), (8, 4, 2, 4, "interleaved"), (3, 5, 3, 2, "packed")])
def test_trunk_counts_are_the_transfers_that_cross_each_trunk(gpus, mems, levels, fanout, attach):
    """SystemFabric.counts' closed form against a direct count: every memory device sends pooled
    vectors to every GPU (gradients the reverse); a trunk carries exactly the transfers whose path
    crosses it, so a transfer between two endpoints of one subtree never leaves it (and nothing
    of either phase goes up to the host)."""
    from collections import Counter

    from cxlsim import load_config
    from cxlsim.systems.graph import build_devices
    from cxlsim.systems.symmetry import SystemFabric
    from cxlsim.systems.topology import Fabric

    sets = [("topology.gpus_count", gpus), ("topology.cxl_mems_count", mems), ("devices.switch.levels", levels),
            ("topology.fanout_count", fanout), ("topology.attach_policy", attach)]
    fabric = Fabric.of(build_devices(load_config("cxl", sets)), gpus, mems)
    sf = SystemFabric(fabric, gpus, mems)
    pairs = [(("mem", m), ("gpu", g)) for m in range(mems) for g in range(gpus)]
    for phase, ends in (("pooled", pairs), ("grads", [(b, a) for a, b in pairs])):
        direct = Counter(link for src, dst in ends for link in fabric.links(src, dst) if not link[0].startswith("dev"))
        closed = {link: n for link, n in sf.counts(phase).items() if n}
        assert closed == dict(direct), phase
        assert all(n == 0 for (node, _), n in sf.counts(phase).items() if node == "s1.0")  # the host's link


def test_the_reduction_agrees_with_full_detail_where_a_trunk_binds():
    """4 GPUs and 2 CXL-MEMs under two switches of three ports (GPUs 0-2 | GPU 3, both CXL-MEMs):
    the second switch's uplink carries 2 × 3 pooled transfers against 4 on the busiest device
    link, so with slow fabric links it binds in full detail. The reduced run (2 groups) models that
    trunk analytically, and must agree: same batch time within the stated error, bottleneck of the
    same kind, no shared link over 100 % busy. (``cxl-d``: the pooled transfer lies on the batch's
    critical path; a small MLP and one lookup per bag keep the run short and the transfers dominant.)"""
    sets = {"topology.gpus_count": 4, "topology.cxl_mems_count": 2, "topology.tables_policy": "row_sharded",
            "devices.switch.levels": 2, "topology.fanout_count": 3, "topology.attach_policy": "packed",
            "devices.fabric_link.params.lanes_count": 1, "devices.fabric_link.params.rate_GTps": 4}
    wl = {"batch_size": 64, "bottom_mlp": "13-64-32", "lookups_per_table": 1}
    out = {}
    for sym in ("off", "on"):
        r = simulate("cxl-d", "rm1", batches=1, warmup=0, seed=1, workload_sets=wl, trace=False,
                     sets={**sets, "topology.symmetry": sym}).to_dict()
        out[sym] = r
    full, red = out["off"], out["on"]
    assert kind(full["bottleneck"]["resource"]) == "link.s2"  # a trunk binds in full detail
    assert red["symmetry"]["reduced"] and red["symmetry"]["groups"] == 2
    assert kind(red["bottleneck"]["resource"]) == "link.s2"
    assert red["bottleneck"]["utilisation"] <= 1.0
    assert red["batch_time_ms"]["mean"] == pytest.approx(full["batch_time_ms"]["mean"], rel=STATED_ERROR)


def test_an_enumerated_tail_is_the_rejection_samplers_distribution():
    """A device's enumerated tail (ENUMERATED_ROWS) holds exactly its rows of rank ≥ K, and a tail
    draw lands on it as often as the power law restricted to the tail, mapped by the bijection, puts
    it there (rejection, the path of larger ranges)."""
    from cxlsim.kernels.sampling import feistel_inverse, feistel_permute, power_law_ranks
    from cxlsim.systems.device_streams import ENUMERATED_ROWS, _Head, _TableStream

    n, lo, hi = 4_000_000, 1_000_000, 1_062_500
    h = _Head(n, 1.1, np.uint64(12345))
    ts = _TableStream(h, lo, hi, 10**6, 0.5)
    assert hi - lo <= ENUMERATED_ROWS and ts.tail_rows is not None
    ranks = feistel_inverse(np.arange(lo, hi, dtype=np.int64), n, h.key)
    assert np.array_equal(np.sort(ts.tail_rows), np.sort(np.arange(lo, hi)[ranks >= h.K]))
    rng = np.random.default_rng(3)
    u = h.F + (1.0 - h.F) * rng.random(2_000_000)
    rows = feistel_permute(np.maximum(power_law_ranks(u, n, 1.1), h.K), n, h.key)
    on = (rows >= lo) & (rows < hi)
    p = ts.t / (1.0 - h.F)
    assert on.mean() == pytest.approx(p, abs=4 * np.sqrt(p / 2_000_000))
    # which rows: the heaviest of the device's tail rows drawn as often as its probability says
    top = ts.tail_rows[np.argmax(np.diff(np.append(0.0, ts.tail_cdf)))]
    w = float(np.max(np.diff(np.append(0.0, ts.tail_cdf)))) / (1.0 - h.F)
    assert np.count_nonzero(rows == top) == pytest.approx(w * 2_000_000, abs=5 * np.sqrt(w * 2_000_000) + 2)

