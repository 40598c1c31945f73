"""`cxlsim bench stats` bookkeeping (not its timings): both runs timed, their ratio reported."""

from __future__ import annotations

import json

from cxlsim.cli import main


def test_bench_stats_reports_the_ratio_of_the_two_runs(capsys):
    assert main(["bench", "stats", "--quick", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ratio"] == d["with_stats_s"] / d["without_stats_s"]
    assert d["within_budget"] == (d["ratio"] <= d["budget_ratio"]) and d["batches"] == 2
