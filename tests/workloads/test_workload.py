"""Workloads RM1–RM4: catalog values (paper Table 3), generator, CLI and streaming memory."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from cxlsim.cli import main
from cxlsim.errors import ConfigError
from cxlsim.workloads import TableLayout, analyze_batch, batches, load_workload

TABLE3 = {  # dim, dense, tables, lookups, bottom, top
    "rm1": (32, 13, 20, 80, "13-8192-2048-32", "256-64-1"),
    "rm2": (32, 13, 80, 80, "13-8192-2048-32", "512-128-1"),
    "rm3": (32, 13, 20, 20, "13-10240-4096-32", "512-128-1"),
    "rm4": (16, 13, 52, 1, "13-16384-2048-512-16", "512-128-1"),
}
BATCH_SIZE = 359  # the batch-size rule of docs/design.md#workloads with framework time (test_batch_size_gives_rm1_bottom_forward_near_0_6_ms)
#: parameters of readings RM1-RM4 do not use (per-table rows and bags, the dcn interaction's, a recorded trace):
#: schema defaults
NOT_APPLICABLE = ("table_rows", "table_bag_sizes", "cross_layers", "cross_rank", "trace")


@pytest.mark.parametrize("name", sorted(TABLE3))
def test_catalog_follows_table3_and_the_40GB_budget(name):
    w = load_workload(name)
    p = w.params
    assert (p.dim, p.dense_features, p.tables, p.lookups_per_table, p.bottom_mlp, p.top_mlp) == TABLE3[name]
    assert p.batch_size == BATCH_SIZE
    assert w.embedding_bytes == pytest.approx(40e9, rel=0.001)
    assert len(w.rows_per_table) == p.tables
    assert all(src and src != "schema default" for k, src in p.sources.items()
               if k not in ("criteo_rows_factor", "rows_per_table", *NOT_APPLICABLE))


def test_rm4_keeps_criteo_kaggle_proportions():
    from cxlsim.workloads.schema import CRITEO_KAGGLE_ROWS

    rows = np.array(load_workload("rm4").rows_per_table)
    np.testing.assert_array_equal(rows[:26], rows[26:])
    ratio = rows[:26] / np.array(CRITEO_KAGGLE_ROWS)
    big = np.array(CRITEO_KAGGLE_ROWS) > 1000
    assert np.ptp(ratio[big]) < 1e-3


def test_mlp_params_count_weights_and_biases():
    w = load_workload("rm1")
    bottom = 13 * 8192 + 8192 + 8192 * 2048 + 2048 + 2048 * 32 + 32
    # the top MLP as DLRM builds it: the interaction's 242 outputs, then Table 3's 256-64-1
    assert w.interaction_width == 21 * 20 // 2 + 32 == 242
    assert w.top_network == (242, 256, 64, 1)
    assert w.mlp_params == {"bottom": bottom, "interaction": 0, "top": 242 * 256 + 256 + 256 * 64 + 64 + 64 + 1}


def test_batch_size_gives_rm1_bottom_forward_near_0_6_ms():
    """The batch-size rule (docs/design.md#workloads) on the b_fwd phase as PyTorch eager runs it
    (docs/workloads.md)."""
    from cxlsim.devices import build_device
    from cxlsim.devices.compute.gpu_step import StepModel
    from cxlsim.workloads.dlrm_ops import DlrmStep, StepShapes

    w = load_workload("rm1")
    step = DlrmStep(StepModel(build_device("gpu/rtx3090"), build_device("cpu/i5-9600k"), build_device("pcie/gen4-x16")))
    shapes = StepShapes.from_workload(w)
    assert step.phase_ns(shapes, "b_fwd") == pytest.approx(0.6e6, rel=0.01)
    assert step.batch_for_phase_time(shapes, "b_fwd", 0.6e6) == w.params.batch_size


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", ["rm1", "rm2", "rm3", "rm4"])
def test_cli_json_shape_and_consecutive_reuse(capsys, name):
    code, out, _ = run_cli(capsys, "workload", name, "--json", "--batches", "3", "--seed", "1")
    assert code == 0
    d = json.loads(out)
    keys = ["workload", "batch_size", "tables", "lookups_per_table", "dim", "rows_per_table",
            "embedding_bytes", "mlp_params", "per_batch"]
    assert list(d)[: len(keys)] == keys
    w = load_workload(name)
    assert d["workload"] == name and d["rows_per_table"] == list(w.rows_per_table)
    assert d["mlp_params"] == w.mlp_params and d["embedding_bytes"] == w.embedding_bytes
    assert len(d["per_batch"]) == 3
    first, *rest = d["per_batch"]
    assert first["reuse_prev_fraction"] == 0.0
    for b in d["per_batch"]:
        assert b["indices"] == w.lookups_per_batch and 0 < b["unique_rows"] <= b["indices"]
    for b in rest:
        assert b["reuse_prev_fraction"] == pytest.approx(0.8, abs=0.03 if name != "rm4" else 0.05)


def test_cli_table_and_overrides(capsys):
    code, out, _ = run_cli(capsys, "workload", "rm3", "--batches", "2", "--set", "batch_size=16",
                           "--set", "reuse_prev_fraction=0")
    assert code == 0 and "batch_size" in out and "reuse_prev_fraction" in out
    assert f"{16 * 20 * 20:,}" in out


@pytest.mark.parametrize("argv, needle", [
    (["workload", "rm1", "--set", "batch_sise=3"], "--set: batch_sise: unknown key; did you mean batch_size"),
    (["workload", "rm1", "--set", "reuse_prev_fraction=1.5"], "--set: reuse_prev_fraction: must be <= 1"),
    (["workload", "rm9"], "rm9: no such workload"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, needle):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_user_workload_file_errors_name_file_and_key(tmp_path, capsys):
    text = (tmp_path / "x.yaml")
    base = open(load_workload("rm1").path).read()
    text.write_text(base.replace("lookups_per_table: 80", "lookups_per_tabel: 80"))
    code, _, err = run_cli(capsys, "workload", "--config", str(text))
    assert code == 2 and f"{text}: params.lookups_per_tabel: unknown key" in err
    text.write_text(base.replace('"13-8192-2048-32"', '"13-8192-2048-64"'))
    with pytest.raises(ConfigError, match="params.bottom_mlp: output width 64 must equal dim=32"):
        load_workload(text)
    text.write_text(base.replace("dim: 32", "dim: {value: 32, sauce: x}"))
    with pytest.raises(ConfigError, match="params.dim.sauce: unknown key"):
        load_workload(text)


def test_bag_reading_errors_name_file_and_key(tmp_path, capsys):
    text = tmp_path / "x.yaml"
    base = open(load_workload("rm1").path).read()
    text.write_text(base.replace("bag_size: {value: fixed", "bag_size: {value: dlrm"))
    with pytest.raises(ConfigError, match=f"{text}: params.bag_size: .*dlrm_uniform"):
        load_workload(text)
    text.write_text(base.replace("mlp_param_width: {value: fp32", "mlp_param_width: {value: bf16"))
    with pytest.raises(ConfigError, match=f"{text}: params.mlp_param_width"):
        load_workload(text)
    code, _, err = run_cli(capsys, "workload", "rm1", "--set", "bag_dedup=3")
    assert code == 2 and "bag_dedup: expected true or false" in err


def test_cli_reports_the_bag_sizes(capsys):
    code, out, _ = run_cli(capsys, "workload", "rm1", "--json", "--batches", "2", "--row-scale", "0.001",
                           "--set", "batch_size=64", "--set", "bag_size=dlrm_uniform")
    d = json.loads(out)["bags"]
    assert code == 0 and d["bag_size"] == "dlrm_uniform" and d["bag_dedup"] is False
    assert d["expected_draws_mean"] == pytest.approx(40 + 1 / 160)
    assert d["min"] >= 1 and d["max"] <= 80 and abs(d["mean"] - 40) < 3
    code, out, _ = run_cli(capsys, "workload", "rm1", "--json", "--batches", "1", "--row-scale", "0.001",
                           "--set", "batch_size=8")
    d = json.loads(out)["bags"]
    assert (d["mean"], d["min"], d["max"], d["expected_draws_mean"]) == (80, 80, 80, 80)


def _stream(reading, n=4, seed=2, **over):
    w = load_workload("rm1", {"batch_size": 64, **over, **reading})
    return w, list(batches(w, seed=seed, n=n, row_scale=0.001, dense=False))


def test_dlrm_uniform_bags_follow_the_benchmarks_sizes():
    w, bs = _stream({"bag_size": "dlrm_uniform"}, n=40)
    sizes = np.concatenate([b.bag_sizes.ravel() for b in bs])
    assert sizes.min() >= 1 and sizes.max() <= 80
    s, p = w.bag_draws_pmf(15625)
    assert p.sum() == pytest.approx(1.0) and float(s @ p) == pytest.approx(80 / 2 + 1 / 160)
    freq = np.bincount(sizes, minlength=81)[1:] / sizes.size  # 51,200 bags
    assert freq[0] == pytest.approx(1.5 / 80, abs=0.003) and freq[-1] == pytest.approx(0.5 / 80, abs=0.002)
    assert np.abs(freq[1:-1] - 1 / 80).max() < 0.004
    for b in bs:  # offsets describe the bags: every table's add up to its lookups
        assert (b.offsets[:, -1] == np.diff(b.table_starts)).all() and b.indices.size == b.table_starts[-1]
    # a table smaller than L bounds its bags by its rows (min(rows, L))
    small, bs = _stream({"bag_size": "dlrm_uniform"}, n=2, rows_per_table=5000)
    assert max(int(b.bag_sizes.max()) for b in bs) <= 5  # 5000 rows at row_scale 0.001: 5 rows
    assert small.mean_bag_draws(0.001) == pytest.approx(5 / 2 + 1 / 10)


def test_dedup_keeps_each_bags_distinct_rows_and_the_batchs_rows():
    for size in ("fixed", "dlrm_uniform"):
        _, plain = _stream({"bag_size": size})
        _, dedup = _stream({"bag_size": size, "bag_dedup": True})
        for a, b in zip(plain, dedup, strict=True):
            for t in range(a.tables):
                for s in range(a.batch_size):
                    np.testing.assert_array_equal(b.bag(t, s), np.unique(a.bag(t, s)))
        assert sum(b.indices.size for b in dedup) < sum(a.indices.size for a in plain)


def test_fixed_bags_draw_the_stream_the_dedup_and_size_readings_select_from():
    # fixed without dedup is the original stream; the dedup reading looks up each bag's distinct rows
    # of the very same draws, batch after batch (the reuse copies the draws, not what was kept)
    _, plain = _stream({})
    _, dedup = _stream({"bag_dedup": True})
    for a, b in zip(plain, dedup, strict=True):
        np.testing.assert_array_equal(np.unique(a.indices), np.unique(b.indices))


@pytest.mark.parametrize("reading", [{"bag_size": "dlrm_uniform"}, {"bag_dedup": True}])
def test_bag_readings_keep_consecutive_reuse(reading):
    w, bs = _stream(reading, n=3, seed=5)
    layout = TableLayout.from_workload(w, 0.001)
    prev = None
    for b in bs:
        prev = analyze_batch(b.indices, layout, prev, table_starts=b.table_starts)
    _, base = _stream({}, n=3, seed=5)
    prev0 = None
    for b in base:
        prev0 = analyze_batch(b.indices.reshape(w.tables, -1), layout, prev0)
    assert prev.reuse_prev_fraction == pytest.approx(prev0.reuse_prev_fraction, abs=0.05)


def test_mean_table_power_is_the_expectation_over_the_bag_sizes():
    q = 0.75
    fixed = load_workload("rm1")
    assert fixed.mean_table_power(q) == pytest.approx(q ** 80, rel=1e-12)
    w = load_workload("rm1", {"bag_size": "dlrm_uniform"})
    r = (np.arange(2_000_000) + 0.5) / 2_000_000  # midpoint rule over r in [0, 1)
    k = np.round(np.maximum(1.0, r * 80))
    assert w.mean_table_power(q) == pytest.approx(float(np.mean(q ** k)), rel=1e-5)
    four = load_workload("rm4", {"bag_size": "dlrm_uniform"})
    assert four.mean_table_power(q) == pytest.approx(q)  # L = 1: one draw, whatever the rows


def test_generator_is_reproducible_streaming_and_scalable():
    w = load_workload("rm1", {"batch_size": 64})
    a = [b.indices for b in batches(w, seed=5, n=3, row_scale=0.001)]
    b = [b.indices for b in batches(w, seed=5, n=3, row_scale=0.001, dense=False)]
    c = next(iter(batches(w, seed=6, n=1, row_scale=0.001))).indices
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c)
    rows = w.rows_per_table_scaled(0.001)
    assert rows[0] == 15625 and a[0].max() < 15625 and a[0].shape == (20 * 64 * 80,)
    batch = next(iter(batches(w, seed=5, n=1)))
    assert batch.dense.shape == (64, 13) and batch.dense.dtype == np.float32
    np.testing.assert_array_equal(batch.bag(2, 3), batch.indices[2 * 64 * 80 + 3 * 80:2 * 64 * 80 + 4 * 80])
    assert (batch.bag_sizes == 80).all()
    # reuse and skew survive scaling (the shape of the distribution is kept)
    layout = TableLayout.from_workload(w, 0.01)
    prev = None
    for batch in batches(w, seed=5, n=3, row_scale=0.01):
        prev = analyze_batch(batch.indices, layout, prev, table_starts=batch.table_starts)
    assert 0.7 < prev.reuse_prev_fraction < 0.95


STREAM_SCRIPT = """
import sys
def hwm_KiB():  # this process's peak RSS; unlike ru_maxrss it is not inherited from the parent
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
from cxlsim.workloads import TableLayout, analyze_batch, batches, load_workload
w = load_workload("rm2")
layout = TableLayout.from_workload(w)
before = hwm_KiB()
prev = None
for b in batches(w, seed=0, n=20):
    prev = analyze_batch(b.indices, layout, prev, controllers=4, interleave_B=4096, table_starts=b.table_starts)
print(before, hwm_KiB())
"""


@pytest.mark.slow
def test_rm2_full_size_streams_20_batches_under_2GB():
    out = subprocess.run([sys.executable, "-c", STREAM_SCRIPT], capture_output=True, text=True, check=True)
    before_KiB, peak_KiB = map(int, out.stdout.split())
    assert peak_KiB * 1024 < 2e9
    assert (peak_KiB - before_KiB) * 1024 < 1e9


def test_a_workload_that_inherits_is_told_workloads_cannot(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("version: 1\ninherits: rm1\nname: mine\nparams: {}\n")
    with pytest.raises(ConfigError) as exc:
        load_workload(str(f))
    assert exc.value.key == "inherits" and "cannot inherit" in exc.value.message
