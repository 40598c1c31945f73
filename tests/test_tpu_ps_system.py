"""The tpu-ps system in `cxlsim run` (issue 8 §4): the analytic step model on the shared streams."""

import json
import subprocess
import sys

import numpy as np
import pytest

import cxlsim
from cxlsim.errors import ConfigError, InputError
from cxlsim.systems.streams import stream_set
from cxlsim.systems.tpu_ps import tpu_ps_step
from cxlsim.systems.tpu_ps_run import unique_ids_per_table

SMALL = {"batch_size": 32}


@pytest.mark.parametrize("workload", ["rm1", "rm2", "rm3", "rm4"])
def test_tpu_ps_runs_every_workload_and_breakdown_sums(workload):
    r = cxlsim.simulate("tpu-ps", workload=workload, batches=2, warmup=0, workload_sets=SMALL)
    d = r.to_dict()
    assert d["batch_time_ms"]["mean"] > 0
    assert sum(d["breakdown_ms"].values()) == pytest.approx(d["batch_time_ms"]["mean"], rel=1e-12)
    assert d["config"]["model"] == "tpu_ps" and d["config"]["tpu_ps"]["chips_count"] == 128
    assert d["energy_J_per_batch"] is None


@pytest.mark.parametrize("sets", [{"tpu_ps.pipelining": False}, {"tpu_ps.placement_policy": "ps"},
                                  {"tpu_ps.placement_policy": "ps", "tpu_ps.rpc_coalescing": True}])
def test_breakdown_sums_in_every_mode(sets):
    r = cxlsim.simulate("tpu-ps", workload="rm2", batches=2, warmup=0, workload_sets=SMALL, sets=sets)
    assert sum(r.breakdown_ms.values()) == pytest.approx(r.batch_time_ms["mean"], rel=1e-12)


def test_unique_ids_per_table_match_the_streams():
    wl = cxlsim.api.load_workload("rm1", SMALL)
    s = stream_set(wl, 1, 2)
    per_table = unique_ids_per_table(s, 1)
    assert len(per_table) == wl.params.tables and sum(per_table) == s.batch(1).n_unique
    rows = s.batch(1).unique_rows
    t = np.searchsorted(s.layout.row_base, rows, side="right") - 1
    assert per_table == np.bincount(t, minlength=wl.params.tables).tolist()


def test_step_times_come_from_the_step_model():
    r = cxlsim.simulate("tpu-ps", workload="rm3", batches=1, warmup=1, workload_sets=SMALL)
    wl = r.workload
    s = stream_set(wl, r.config.seed, 3)
    wp = {"batch_size": wl.params.batch_size, "tables": wl.params.tables, "dim": wl.params.dim,
          "bottom_mlp": wl.bottom_widths, "top_mlp": wl.top_widths,
          "rows_per_table": int(round(s.layout.total_rows / wl.params.tables))}
    ref = tpu_ps_step(wp, r.config.tpu_ps, unique_ids_per_table(s, 1))
    assert r.batch_times_ns[0] == ref["step_ns"]


def test_ps_without_coalescing_is_slower_than_with():
    base = {"tpu_ps.placement_policy": "ps"}
    slow = cxlsim.simulate("tpu-ps", workload="rm2", batches=1, warmup=0, workload_sets=SMALL, sets=base)
    fast = cxlsim.simulate("tpu-ps", workload="rm2", batches=1, warmup=0, workload_sets=SMALL,
                           sets={**base, "tpu_ps.rpc_coalescing": True})
    assert fast.batch_time_ms["mean"] < slow.batch_time_ms["mean"]


def test_bad_keys_are_rejected():
    with pytest.raises(ConfigError, match="tpu_ps.bogus"):
        cxlsim.load_config("tpu-ps", {"tpu_ps.bogus": 1})
    with pytest.raises(ConfigError, match="tpu_ps"):
        cxlsim.load_config("cxl", {"tpu_ps.chips_count": 4})
    with pytest.raises(ConfigError, match="model"):
        cxlsim.load_config("cxl", {"model": "magic"})


def test_no_timeline_for_the_analytic_model():
    r = cxlsim.simulate("tpu-ps", workload="rm1", batches=1, warmup=0, workload_sets=SMALL)
    with pytest.raises(InputError, match="analytic"):
        r.trace  # noqa: B018


def test_cli_json():
    out = subprocess.run([sys.executable, "-m", "cxlsim", "run", "--system", "tpu-ps", "--workload", "rm4",
                          "--batches", "1", "--warmup", "0", "--json"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["system"] == "tpu-ps" and d["tpu_ps"]["placement"] == "hbm"
