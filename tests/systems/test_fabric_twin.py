"""The fabric's contention in full detail and its reduced-run twin held together.

In full detail each pooled-vector and gradient transfer holds every link direction of its path (a
lane, :mod:`cxlsim.systems.topology`); a symmetry-reduced run does not simulate the trunks and loads
them analytically instead (:meth:`~cxlsim.systems.machine.transfers.TransferServices.trunk_busy_ns`
from :class:`~cxlsim.systems.symmetry.SystemFabric`). On every symmetric topology of the trunk-count
test (tests/systems/test_symmetry.py) both must find the same trunks busy for the same time per batch."""

from __future__ import annotations

import pytest

from cxlsim.api import simulate

#: The trunk-count test's topologies that reduce (3 GPUs × 5 CXL-MEMs is asymmetric, 2 × 2 has no trunk):
#: (GPUs, CXL-MEMs, switch levels, fan-out, attach policy).
TOPOLOGIES = [(4, 2, 2, 3, "packed"), (4, 4, 2, 4, "interleaved"), (6, 2, 2, 4, "packed"),
              (4, 4, 3, 2, "interleaved"), (8, 4, 2, 4, "interleaved")]
#: A small step keeps the transfers a large share of the batch (as the reduction test does).
SMALL = {"batch_size": 64, "bottom_mlp": "13-64-32", "lookups_per_table": 1}
#: Per-trunk agreement: the reduced run shares a trunk deterministically among the groups, where
#: full detail orders the transfers as they arrive (4 × 4 under three levels: 2.4 % apart).
TOLERANCE = 0.03


def _trunk_busy_ms(gpus, mems, levels, fanout, attach, symmetry):
    sets = {"topology.gpus_count": gpus, "topology.cxl_mems_count": mems, "topology.tables_policy": "row_sharded",
            "devices.switch.levels": levels, "topology.fanout_count": fanout, "topology.attach_policy": attach,
            "topology.symmetry": symmetry}
    d = simulate("cxl-d", "rm1", batches=1, warmup=0, seed=1, workload_sets=SMALL, trace=False, sets=sets).to_dict()
    assert d["symmetry"]["reduced"] is (symmetry == "on")
    wall = d["batch_time_ms"]["mean"]
    return {lane: u * wall for lane, u in d["utilisation"].items() if lane.startswith("link.s")}


@pytest.mark.parametrize("topology", [pytest.param(t, marks=pytest.mark.slow) if i else t
                                      for i, t in enumerate(TOPOLOGIES)], ids=str)
def test_reduced_trunks_are_as_busy_as_in_full_detail(topology):
    full = _trunk_busy_ms(*topology, "off")
    reduced = _trunk_busy_ms(*topology, "on")
    assert full and set(reduced) == set(full)
    for lane, ms in full.items():
        assert reduced[lane] == pytest.approx(ms, rel=TOLERANCE), lane
