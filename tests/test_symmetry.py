"""The symmetry reduction of data-parallel scale-out (cxlsim.systems.symmetry) against full detail."""

from __future__ import annotations

import pytest

from cxlsim.api import simulate
from cxlsim.cli import main as cli_main
from cxlsim.sweep.symmetry_check import compare, kind, settings
from cxlsim.systems.symmetry import AUTO_MIN_GPUS, SymmetryRefused

#: Batch-time errors docs/scale-out.md states for the reduction (cxl, RM1/RM4): within 10 % up to
#: 4 groups; at 16 groups on two switch levels (16 × 16) the reduction is 19-25 % fast (full detail
#: waits for the hottest CXL-MEM and serialises the trunks; the reduction sees the average device and
#: spreads the other groups' trunk traffic evenly).
STATED_ERROR = 0.10
ERROR_16_GROUPS = 0.30


def test_the_reduction_agrees_with_full_detail_at_two_gpus():
    c = compare("cxl", "rm1", 2, 2, batches=1, warmup=1)
    assert abs(c.error) <= STATED_ERROR
    assert c.same_bottleneck


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["rm1", "rm4"])
@pytest.mark.parametrize("gpus,mems", [(4, 4), (8, 2), (16, 4), (16, 16)])
def test_the_reduction_agrees_with_full_detail_at_scale(workload, gpus, mems):
    c = compare("cxl", workload, gpus, mems, batches=1, warmup=1)
    assert abs(c.error) <= (ERROR_16_GROUPS if min(gpus, mems) >= 16 else STATED_ERROR), c
    assert c.same_bottleneck, c


def test_a_reduced_run_says_so_and_counts_the_whole_system():
    d = simulate("cxl", "rm1", batches=1, warmup=1, sets=settings(4, 2, "on")).to_dict()
    assert d["symmetry"] == {"reduced": True, "groups": 2, "group_gpus": 2, "group_mems": 1}
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
    assert kind("ndp.3") == "ndp" and kind("link.dev4.down") == "link.dev4.down" and kind(None) is None


def test_tpu_ps_tiles_a_group_of_chips():
    full = simulate("tpu-ps", "rm1", batches=1, warmup=0, sets={"topology.gpus_count": 32}).to_dict()
    red = simulate("tpu-ps", "rm1", batches=1, warmup=0,
                   sets={"topology.gpus_count": 32, "topology.symmetry": "on"}).to_dict()
    assert red["symmetry"]["reduced"] and red["symmetry"]["groups"] == 2
    assert red["batch_time_ms"]["mean"] == pytest.approx(full["batch_time_ms"]["mean"], rel=0.02)
