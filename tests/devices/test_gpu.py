"""GPU model and MLP timing tables: table/formula agreement, measured-table precedence, the bounds'
closed forms, energy (bounds vs factors: tests/contracts/test_device_api.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.compute.gpu import GpuModel, roofline_total_ns
from cxlsim.devices.compute.gpu_table import BATCH_GRID, COLUMNS, MlpTable, find_table, table_shapes
from cxlsim.workloads.interactions.dot import Dot

RM1_BOTTOM = [13, 8192, 2048, 32]
SHAPES = table_shapes()


@pytest.fixture(scope="module")
def gpu() -> GpuModel:
    return build_device("gpu/rtx3090")


def test_committed_table_is_current(gpu):
    # If this fails, the formula or the preset changed: run `python -m cxlsim.calibrate.gpu_table`.
    assert gpu.table_kind == "generated"
    assert set(gpu.table.rows) == set(SHAPES)


def test_table_equals_formula_on_grid_points(gpu):
    for (n_in, n_out), rows in gpu.table.rows.items():
        assert [r[0] for r in rows] == list(BATCH_GRID)
        for b, fwd, bwd in rows:
            assert fwd == pytest.approx(gpu.layer_formula_ns(n_in, n_out, b, "forward"), abs=0.06)
            assert bwd == pytest.approx(gpu.layer_formula_ns(n_in, n_out, b, "backward"), abs=0.06)
            assert gpu.layer_ns(n_in, n_out, b, "forward") == fwd


shape_st = st.one_of(st.sampled_from(SHAPES), st.tuples(st.integers(1, 20000), st.integers(1, 20000)))
batch_st = st.integers(1, 100_000)
direction_st = st.sampled_from(["forward", "backward"])


def test_kernel_times_hold_no_launch(gpu):
    """Kernel times only: the launch latency is the stream's (gpu_step), not the kernel's."""
    assert gpu.launch_ns == 4000.0  # kernel_launch_us, the stream's launch latency
    ks = gpu.layer_kernels(13, 8192, 512, "forward")
    assert gpu.layer_formula_ns(13, 8192, 512, "forward") == sum(k.time_ns for k in ks)
    dot = Dot(20, 32, 32).kernels(512, "backward")
    assert gpu.ops_ns(dot) == sum(k.time_ns for k in gpu.kernel_times(dot))
    assert gpu.optimizer_ns(10**6, 4) == pytest.approx(12e6 / (936 * 0.85))


def test_bounds_are_rooflines_with_the_latency_a_kernel_cannot_avoid(gpu):
    ks = gpu.layer_kernels(13, 8192, 512, "forward")
    gemm, act = ks
    assert gemm.bound_ns == max(gemm.flops / gpu.peak_flops_per_ns + 500, gemm.size_B / gpu.bw)  # one tile's overhead
    assert act.bound_ns == act.roofline_ns  # streaming kernels: the roofline
    assert gpu.bound_ns("layer", 13, 8192, 512, "forward") == gemm.bound_ns + act.bound_ns
    assert roofline_total_ns(ks) == sum(max(k.flops / gpu.peak_flops_per_ns, k.size_B / gpu.bw) for k in ks)
    assert gpu.bound_ns("optimizer", 10**6, 4) == pytest.approx(12e6 / 936)
    assert gpu.bound_factor("optimizer") == pytest.approx(1 / 0.85)
    # a tiny GEMM is its tile overhead, not its (padded) FLOPs: the bound keeps the layer within its factor
    assert gpu.layer_ns(18873, 1, 2, "forward") <= gpu.bound_factor("layer") * gpu.bound_ns("layer", 18873, 1, 2, "forward")


@settings(max_examples=100, deadline=None)
@given(shape=shape_st, b1=batch_st, b2=batch_st, direction=direction_st)
def test_monotone_in_batch(gpu, shape, b1, b2, direction):
    lo, hi = sorted((b1, b2))
    assert gpu.layer_ns(*shape, lo, direction) <= gpu.layer_ns(*shape, hi, direction)


def test_gemm_efficiency_saturates_below_one(gpu):
    effs = [gpu.gemm_efficiency(m, 4096, 4096) for m in (16, 128, 1024, 8192)]
    assert all(0 < e < 1 for e in effs)
    assert effs == sorted(effs)
    assert effs[-1] == pytest.approx(0.8 * 64 / 68, rel=0.05)  # gemm_peak_fraction x 8x8 issue efficiency


def test_mlp_sums_layers_and_validates(gpu):
    parts = sum(gpu.layer_ns(a, b, 512, "forward") for a, b in zip(RM1_BOTTOM, RM1_BOTTOM[1:], strict=False))
    assert gpu.mlp_ns(RM1_BOTTOM, 512, "forward") == pytest.approx(parts)
    with pytest.raises(ValueError, match="direction"):
        gpu.layer_ns(13, 8192, 512, "sideways")
    with pytest.raises(ValueError, match="batch"):
        gpu.layer_ns(13, 8192, 0, "forward")
    with pytest.raises(ValueError, match="two widths"):
        gpu.mlp_ns([13], 512, "forward")


def test_batch_for_forward_time(gpu):
    target = 0.6e6
    b = gpu.batch_for_forward_time(RM1_BOTTOM, target)
    assert gpu.mlp_ns(RM1_BOTTOM, b, "forward") >= target > gpu.mlp_ns(RM1_BOTTOM, b - 1, "forward")
    p2 = gpu.batch_for_forward_time(RM1_BOTTOM, target, powers_of_two=True)
    assert p2 & (p2 - 1) == 0 and p2 >= b and p2 // 2 < b


def test_override_invalidates_generated_table():
    g = build_device("gpu/rtx3090", {"gemm_tile_overhead_ns": 1000.0})
    assert g.table_kind == "formula"
    base = build_device("gpu/rtx3090")
    assert g.layer_ns(8192, 2048, 512, "forward") > base.layer_ns(8192, 2048, 512, "forward")
    # the launch latency is no formula input (model version 3): the generated table stays valid
    launch = build_device("gpu/rtx3090", {"kernel_launch_us": 5.0})
    assert launch.table_kind == "generated" and launch.launch_ns == 5000.0


def _write_measured(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# measured on a test bench", ",".join(COLUMNS)]
    lines += [f"{i},{o},{b},{f},{w},1,1" for i, o, b, f, w in rows]
    path.write_text("\n".join(lines) + "\n")


def test_measured_table_takes_precedence(user_catalog):
    _write_measured(user_catalog / "gpu" / "rtx3090_mlp_measured.csv",
                    [(13, 8192, 256, 1e5, 2e5), (13, 8192, 1024, 4e5, 8e5)])
    assert find_table("rtx3090", measured=True) is not None
    g = build_device("gpu/rtx3090")
    assert g.table_kind == "measured"
    assert g.layer_ns(13, 8192, 256, "forward") == 1e5
    assert g.layer_ns(13, 8192, 512, "backward") == pytest.approx(4e5)  # log-log midpoint
    # beyond the measured grid: formula scaled by the measured/formula ratio at the edge
    ratio = 4e5 / g.layer_formula_ns(13, 8192, 1024, "forward")
    assert g.layer_ns(13, 8192, 4096, "forward") == pytest.approx(ratio * g.layer_formula_ns(13, 8192, 4096, "forward"))
    # shapes it lacks fall back to the formula, never to zero
    assert g.layer_ns(8192, 2048, 512, "forward") == g.layer_formula_ns(8192, 2048, 512, "forward")


def test_measured_table_by_path(tmp_path):
    path = tmp_path / "mine.csv"
    _write_measured(path, [(2048, 32, 512, 123.0, 456.0)])
    g = GpuModel(build_device("gpu/rtx3090").params, measured_path=path)
    assert (g.table_kind, g.layer_ns(2048, 32, 512, "backward")) == ("measured", 456.0)


def test_malformed_measured_table_is_a_config_error(tmp_path):
    from cxlsim.errors import ConfigError

    path = tmp_path / "bad.csv"
    path.write_text("layer_in,layer_out,batch\n1,2,3\n")
    with pytest.raises(ConfigError, match="missing column"):
        MlpTable.read(path)


def test_cli_microbench_json(capsys):
    assert main(["microbench", "gpu/rtx3090", "--mlp", "13-8192-2048-32", "--batch", "512", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["batch"] == 512 and set(out) >= {"total", "layer_13x8192", "layer_8192x2048", "layer_2048x32"}
    total = out["total"]
    assert total["fwd_ns"] >= total["roofline_fwd_ns"] and total["bwd_ns"] >= total["roofline_bwd_ns"]
    assert main(["microbench", "gpu/rtx3090"]) == 0
    assert "batch_512" in capsys.readouterr().out
    assert main(["microbench", "gpu/rtx3090", "--mlp", "13-x"]) == 2


def test_energy(gpu):
    assert gpu.static_energy_J(1e9) == pytest.approx(30)  # idle power over 1 s
    assert gpu.active_energy_J(1e9) == pytest.approx(350 - 30)  # above idle while kernels run


# ---- the model against a real GPU (docs/validation.md, "The GPU model against a real GPU") ----

def _h200_rows_by_work():
    """(model / measured forward, backward, GEMM FLOP) per row of the H200's measured table."""
    g = build_device("gpu/h200-sxm")
    assert g.table_kind == "measured" and g.table.path.endswith("h200-sxm_mlp_measured.csv")
    formula = GpuModel(g.params, table_path=None)
    out = []
    for (n_in, n_out), rows in g.table.rows.items():
        for b, fwd, bwd in rows:
            out.append((formula.layer_formula_ns(n_in, n_out, b, "forward") / fwd,
                        formula.layer_formula_ns(n_in, n_out, b, "backward") / bwd, 2.0 * b * n_in * n_out))
    return out


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def test_h200_measured_table_covers_the_generated_grid():
    g = build_device("gpu/h200-sxm")
    assert set(g.table.rows) == set(SHAPES)
    assert all([r[0] for r in rows] == list(BATCH_GRID) for rows in g.table.rows.values())


def test_h200_model_predicts_large_gemms_and_misses_small_kernels_as_documented():
    rows = _h200_rows_by_work()
    large = [r for r in rows if r[2] > 1e10]
    small = [r for r in rows if r[2] < 1e8]
    assert len(large) == 95 and len(small) == 256
    # in tolerance, and must stay in: large GEMMs within a few per cent (median), every row within 25 %
    assert 0.95 <= _median(r[0] for r in large) <= 1.05 and 0.93 <= _median(r[1] for r in large) <= 1.05
    assert all(0.55 <= r[0] <= 1.15 and 0.4 <= r[1] <= 1.1 for r in large)
    assert sum(0.75 <= r[0] <= 1.25 for r in large) >= 0.9 * len(large)
    # the named miss (no per-kernel floor; cuBLAS's extra kernels): small layers under-predicted 3-10x.
    # If a model change closes it, update docs/validation.md and this test.
    assert _median(r[0] for r in small) < 0.35 and _median(r[1] for r in small) < 0.35
