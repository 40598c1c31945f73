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
BATCH_SIZE = 359  # SPEC §4 with framework time (test_batch_size_gives_rm1_bottom_forward_near_0_6_ms)


@pytest.mark.parametrize("name", sorted(TABLE3))
def test_catalog_follows_table3_and_the_40GB_budget(name):
    w = load_workload(name)
    p = w.params
    assert (p.dim, p.dense_features, p.tables, p.lookups_per_table, p.bottom_mlp, p.top_mlp) == TABLE3[name]
    assert p.batch_size == BATCH_SIZE
    assert w.embedding_bytes == pytest.approx(40e9, rel=0.001)
    assert len(w.rows_per_table) == p.tables
    assert all(src and src != "schema default" for k, src in p.sources.items()
               if k not in ("criteo_rows_factor", "rows_per_table"))


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
    assert w.mlp_params == {"bottom": bottom, "top": 242 * 256 + 256 + 256 * 64 + 64 + 64 + 1}


def test_batch_size_gives_rm1_bottom_forward_near_0_6_ms():
    """SPEC §4's rule on the b_fwd phase as PyTorch eager runs it (docs/workloads.md)."""
    from cxlsim.devices import build_device
    from cxlsim.devices.gpu_step import StepModel, StepShapes

    w = load_workload("rm1")
    step = StepModel(build_device("gpu/rtx3090"), build_device("cpu/i5-9600k"), build_device("pcie/gen4-x16"))
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
    (["workload", "rm1", "--set", "batch_sise=3"], "--set: batch_sise: unknown key; did you mean batch_size?"),
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


def test_generator_is_reproducible_streaming_and_scalable():
    w = load_workload("rm1", {"batch_size": 64})
    a = [b.indices for b in batches(w, seed=5, n=3, row_scale=0.001)]
    b = [b.indices for b in batches(w, seed=5, n=3, row_scale=0.001, dense=False)]
    c = next(iter(batches(w, seed=6, n=1, row_scale=0.001))).indices
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c)
    rows = w.rows_per_table_scaled(0.001)
    assert rows[0] == 15625 and a[0].max() < 15625 and a[0].shape == (20, 64 * 80)
    batch = next(iter(batches(w, seed=5, n=1)))
    assert batch.dense.shape == (64, 13) and batch.dense.dtype == np.float32
    np.testing.assert_array_equal(batch.bag(2, 3), batch.indices[2, batch.offsets[3]:batch.offsets[4]])
    # reuse and skew survive scaling (the shape of the distribution is kept)
    layout = TableLayout.from_workload(w, 0.01)
    prev = None
    for batch in batches(w, seed=5, n=3, row_scale=0.01):
        prev = analyze_batch(batch.indices, layout, prev)
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
    prev = analyze_batch(b.indices, layout, prev, controllers=4, interleave_B=4096)
print(before, hwm_KiB())
"""


@pytest.mark.slow
def test_rm2_full_size_streams_20_batches_under_2GB():
    out = subprocess.run([sys.executable, "-c", STREAM_SCRIPT], capture_output=True, text=True, check=True)
    before_KiB, peak_KiB = map(int, out.stdout.split())
    assert peak_KiB * 1024 < 2e9
    assert (peak_KiB - before_KiB) * 1024 < 1e9
