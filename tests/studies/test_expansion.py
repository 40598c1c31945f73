"""The embedding-reduction study (``python -m cxlsim.studies.expansion``): its document's keys, its
mechanisms (DRAM-only saturates at the node's channels, CXL-only at the expander's queues, more
threads never slower), and its refusals."""

from __future__ import annotations

import json

import pytest

from cxlsim.studies.expansion import settings as S
from cxlsim.studies.expansion.__main__ import main
from cxlsim.studies.expansion.report import document
from cxlsim.studies.expansion.simulation import devices, point, queries, run


@pytest.fixture(scope="module")
def doc():
    return document(run(query_lengths=(10,), threads=(4, 16, 32)), 10)


def test_the_document_has_the_keys_the_study_promises(doc):
    assert doc["platform"] == "spr-cxl"
    assert doc["threads"] == [4, 16, 32]
    assert doc["ratios"] == [f"{a}:{b}" for a, b in S.RATIOS]
    assert set(doc["throughput_qps"]) == set(doc["ratios"])
    assert all(len(v) == 3 and all(x > 0 for x in v) for v in doc["throughput_qps"].values())
    assert doc["query_length"] == 10 and "readings" in doc


def test_more_threads_are_never_slower_and_cxl_only_is_slowest_when_saturated(doc):
    for values in doc["throughput_qps"].values():
        assert values[0] <= values[1] * 1.01 <= values[2] * 1.02
    last = {r: v[-1] for r, v in doc["throughput_qps"].items()}
    assert last["0:100"] == min(last.values())


def test_each_tier_bounds_its_own_extreme():
    """All on DDR5 at 32 threads: the node's two channels bound it; all on CXL: the expander."""
    g = devices()
    q = queries(10, n=3000)
    ddr = point(g, q, 32, (100, 0), 10)
    cxl = point(g, q, 32, (0, 100), 10)
    assert (ddr.bound, cxl.bound) == ("ddr", "cxl")
    assert ddr.near_share == 1.0 and cxl.near_share == 0.0


def test_the_command_prints_json_and_draws(tmp_path, capsys):
    png = tmp_path / "fig.png"
    assert main(["--json", "--query-lengths", "10", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["threads"] == list(S.THREADS) and png.stat().st_size > 0


@pytest.mark.parametrize("argv", [["--query-lengths", "0"], ["--query-lengths", "10", "--query-length", "20"],
                                  ["--plot", "noext"], ["--plot", "/no/such/dir/f.png"]])
def test_bad_arguments_exit_2_with_one_line(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("error: ")
