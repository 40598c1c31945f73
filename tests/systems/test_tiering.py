"""Tables over two tiers (``pipeline.table_placement``) and memory roles behind a CXL memory device:
the interleave's page shares, the popularity the hot tier follows, the accesses each tier serves,
and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cxlsim
from cxlsim.errors import ConfigError
from cxlsim.kernels.sampling import power_law_ranks
from cxlsim.systems.config import load_system
from cxlsim.systems.streams import StreamSet
from cxlsim.systems.tiering import PAGE_B, Tiering, popular_pages, rank_mass
from cxlsim.workloads.catalog import load_workload

SMALL = {"batch_size": 16}


def _run(**sets):
    return cxlsim.simulate("cxl-expander", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, sets=sets)


@settings(max_examples=30, deadline=None)
@given(near=st.integers(0, 100), far=st.integers(0, 100), base=st.integers(0, 7))
def test_weighted_interleave_puts_near_of_every_near_plus_far_pages_in_dram(near, far, base):
    if near + far == 0:
        return
    cfg = load_system("cxl-expander", [("pipeline.table_placement", "interleave"),
                                       ("pipeline.table_placement_near_weight", near),
                                       ("pipeline.table_placement_far_weight", far)])
    t = Tiering(cfg.pipeline, 0, 256, None)
    period = near + far
    pages = np.arange(base * period, (base + 3) * period, dtype=np.int64)
    mask = t.near(pages * PAGE_B + 100)  # any byte of a page is placed with its page
    assert mask.sum() == 3 * near
    assert np.all(mask.reshape(3, period)[:, :near]) and not np.any(mask.reshape(3, period)[:, near:])


@pytest.mark.parametrize(("n", "e"), [(1, 1.1), (10, 1.1), (1000, 1.0), (5000, 0.6), (777, 1.6)])
def test_rank_mass_is_the_generators_law(n, e):
    """The hot tier's popularity is the generator's: masses sum to 1, fall with rank, and match
    the ranks the generator draws."""
    mass = rank_mass(np.arange(n), n, e)
    assert mass.sum() == pytest.approx(1.0, rel=1e-9)
    assert np.all(np.diff(mass) <= 1e-15)
    u = np.random.default_rng(1).random(200_000)
    drawn = np.bincount(power_law_ranks(u, n, e), minlength=n)[:5] / u.size
    assert np.all(np.abs(drawn - mass[:5]) <= 4 * np.sqrt(mass[:5] / u.size) + 1e-4)


def test_the_hot_tier_holds_the_most_accessed_pages():
    """Over a long stream, the hot pages take more accesses than any other equally many of the
    touched pages, and a larger budget takes a larger share."""
    w = load_workload("rm1", {"batch_size": 64})
    streams = StreamSet(w, seed=1, n=40)
    pages = np.concatenate([(streams.batch(n).lookup_rows.astype(np.int64) * w.row_B) // PAGE_B
                            for n in range(streams.n)])
    touched, counts = np.unique(pages, return_counts=True)
    share = {}
    for budget in (500, 5000):
        hot = popular_pages(streams, 0, w.row_B, budget)
        assert hot.size <= budget and np.all(np.diff(hot) > 0)
        share[budget] = np.isin(pages, hot).mean()
        best = np.sort(counts)[::-1][:hot.size].sum() / pages.size  # the oracle's share, same page count
        assert share[budget] > 0.5 * best
    assert share[5000] > share[500] > 0.0


@pytest.mark.parametrize(("near", "far"), [(1, 1), (83, 17), (17, 83)])
def test_each_tier_serves_its_share_of_the_table_accesses(near, far):
    r = _run(**{"pipeline.table_placement": "interleave", "pipeline.table_placement_near_weight": near,
                "pipeline.table_placement_far_weight": far})
    tiers = r.table_tiers
    assert tiers["host_dram"] == pytest.approx(near / (near + far), abs=0.03)
    assert sum(tiers.values()) == pytest.approx(1.0)
    assert r.to_dict()["table_tiers"] == tiers


def test_a_single_tier_and_a_hot_tier():
    assert _run().table_tiers == {"table_memory": 1.0}
    small = _run(**{"pipeline.table_placement": "hot_first", "pipeline.table_placement_near_GB": 0.05}).table_tiers
    large = _run(**{"pipeline.table_placement": "hot_first", "pipeline.table_placement_near_GB": 2.0}).table_tiers
    assert 0.0 < small["host_dram"] < large["host_dram"]


@pytest.mark.parametrize("form", [{}, {"devices.table_memory.count": 2},
                                  {"devices.table_memory.preset": "cxl_mem/apollo-pool-2x8"}],
                         ids=["one-expander", "two-expanders", "a-pool"])
def test_dram_pages_skip_the_expanders_link(form):
    """Only the pages on the expanders pay their links (one, two on their own root ports, a pool's
    endpoints): with every page in DRAM, the port latency changes nothing; with every page on
    them, the lookup slows."""
    def lookup_ms(placement: dict, port_ns: float) -> float:
        r = _run(**form, **placement, **{"devices.table_memory.params.link.params.port_latency_ns": port_ns})
        return r.breakdown_ms["embedding"]
    all_near = {"pipeline.table_placement": "interleave", "pipeline.table_placement_near_weight": 1,
                "pipeline.table_placement_far_weight": 0}
    assert lookup_ms(all_near, 2000.0) == pytest.approx(lookup_ms(all_near, 62.0), rel=1e-12)
    assert lookup_ms({}, 2000.0) > 1.5 * lookup_ms({}, 62.0)


@pytest.mark.parametrize(("sets", "key"), [
    ([("pipeline.table_placement", "interleave"), ("pipeline.embedding_engine", "ndp")], "pipeline."),
    ([("pipeline.table_placement", "hot_first"), ("pipeline.vector_cache_GB", 4)], "pipeline.table_placement"),
    ([("pipeline.table_placement", "interleave"), ("pipeline.table_placement_near_weight", 0),
      ("pipeline.table_placement_far_weight", 0)], "pipeline.table_placement_near_weight"),
    ([("devices.table_memory.interleave_B", 8192)], "devices.table_memory.interleave_B"),
    ([("devices.table_memory.count", 2), ("devices.table_memory.interleave_B", 100)], "devices.table_memory.interleave_B"),
    ([("devices.table_memory.count", 0)], "devices.table_memory.count"),
    ([("devices.table_memory.preset", "cxl_mem/apollo-pool-2x8"),
      ("devices.table_memory.params.host_ports_count", 1)], "devices.table_memory"),
    ([("devices.table_memory.preset", "cxl_mem/apollo-pool-2x8"), ("devices.table_memory.count", 2)],
     "devices.table_memory.count"),
])
def test_placements_and_cxl_roles_refuse_what_they_cannot_model(sets, key):
    with pytest.raises(ConfigError) as exc:
        load_system("cxl-expander", sets)
    assert key in f"{exc.value.key}"


@settings(max_examples=60, deadline=None)
@given(addr=st.lists(st.integers(0, 1 << 40), min_size=1, max_size=50), devices=st.integers(2, 9),
       lines=st.integers(1, 128))
def test_spreading_over_devices_is_one_to_one(addr, devices, lines):
    """Every address lands on one device at one address of it, chunk by chunk in turn, and the two
    give the address back."""
    from cxlsim.systems.machine.memory import spread_over

    inter = 64 * lines
    a = np.array(addr, np.int64)
    dev, local = spread_over(a, devices, inter)
    assert np.all((dev >= 0) & (dev < devices))
    np.testing.assert_array_equal(((local // inter) * devices + dev) * inter + local % inter, a)
    np.testing.assert_array_equal(dev, (a // inter) % devices)


def test_a_role_spread_over_several_expanders_holds_their_paths_and_channels():
    """``count: 2`` of a CXL memory device: both devices' media channels provisioned, both their
    controllers powered (the ASIC's ``controller_static_W``: twice the power over the run) and
    both their links (more link power a ms, the lines' wire bits being as many as with one)."""
    def run(**sets):
        return cxlsim.simulate("cxl-expander", workload="rm1", batches=2, warmup=1, workload_sets=SMALL,
                               sets=sets, platform="spr-cxl").to_dict()
    one, two = run(), run(**{"devices.table_memory.count": 2})
    assert "devices_count" not in one["config"]["devices"]["table_memory"]
    assert two["config"]["devices"]["table_memory"]["devices_count"] == 2
    mods = [d["config"]["provisioned_modules"]["table_memory"] for d in (one, two)]
    assert mods[1] == 2 * mods[0]
    (e1, t1), (e2, t2) = ((d["energy_J_per_batch"]["by_component"], d["batch_time_ms"]["mean"]) for d in (one, two))
    assert e2["cxl_mem_logic"] / t2 == pytest.approx(2 * e1["cxl_mem_logic"] / t1, rel=1e-9)
    assert e2["links"] / t2 > 1.3 * e1["links"] / t1


def test_two_expanders_share_a_lookup():
    """RM2's host lookup on the expander's Optane channels: spread over two devices (each its own
    channels, link and queues) it is faster, by less than half (the host's lines in flight are one
    loop, shared); a one-lane link on each slows it, as each device's link carries its lines."""
    def lookup_ms(**sets) -> float:
        return cxlsim.simulate("cxl-expander", workload="rm2", batches=2, warmup=1, workload_sets={"batch_size": 256},
                               sets=sets).breakdown_ms["embedding"]
    one, two = lookup_ms(), lookup_ms(**{"devices.table_memory.count": 2})
    assert 0.5 * one < two < 0.85 * one
    assert lookup_ms(**{"devices.table_memory.count": 2, "devices.table_memory.params.link.params.lanes_count": 1}) > two


def test_a_pool_is_a_role_over_its_endpoints():
    """A pooled preset (two x8 host ports, two endpoints behind its switch) holds the tables: the
    role spreads them over the endpoints at the pool's interleave, provisions both endpoints'
    channels, and powers one switch, four links and two controllers."""
    pool = {"devices.table_memory.preset": "cxl_mem/apollo-pool-2x8"}
    d = cxlsim.simulate("cxl-expander", workload="rm1", batches=2, warmup=1, workload_sets=SMALL, sets=pool,
                        platform="spr-cxl").to_dict()
    role = d["config"]["devices"]["table_memory"]
    via = load_system("cxl-expander", [("platform", "spr-cxl"), *pool.items()]).devices["table_memory"].via
    assert role["devices_count"] == 2 and role["devices_interleave_B"] == via.params["media_interleave_B"]
    assert d["config"]["provisioned_modules"]["table_memory"] >= 2 * via.params["media_count"]


@pytest.mark.parametrize(("preset", "copies", "links", "switches"), [
    ("cxl_mem/apollo-pool-2x8", 2, 4, 1),  # a pool: a host-port link and an endpoint link each, one switch
    ("cxl_mem/e3s-x8-spr", 3, 3, 0),  # three direct expanders: a link each
])
def test_a_roles_devices_are_powered_path_by_path(preset, copies, links, switches):
    """The static power of a role's CXL memory devices: every link of every device's path, a
    pool's one switch, each device's controller."""
    from cxlsim.devices import build_device
    from cxlsim.energy.model import _Ledger, _price_attached

    d = build_device(preset)
    led = _Ledger(1)
    _price_attached(led, d, [], 1e9, copies)
    link_W = d.path.links[0].params["idle_power_W"]
    switch_W = d.path.switch.params["idle_power_W"] if d.path.switch is not None else 0.0
    static = sum(part["static"] for part in led.e.values())
    assert static == pytest.approx(links * link_W + switches * switch_W + copies * d.params["controller_static_W"])
