"""`cxlsim measure host` (cxlsim/calibrate/host_measure.py, cxlsim/cli/measure.py): the fit on synthetic
data (no torch), the counts it takes from the op list, the preset it writes, and -- where torch is
installed -- a quick real run whose preset loads."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import yaml

from cxlsim.calibrate.host_measure import (
    FITTED_CALLS,
    Row,
    fit_costs,
    fit_step,
    host_shapes,
    in_step_factor,
    instructions,
    linear_backward_counts,
    model_part_costs,
    nnls,
    part_counts,
    preset_document,
    spread,
    step_options,
)
from cxlsim.cli import main
from cxlsim.devices import build_device
from cxlsim.devices.compute.gpu_step import StepModel
from cxlsim.devices.registry import load_preset
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.dlrm_ops import DlrmStep, StepOptions, StepShapes

TRUE_US = {"op_dispatch_python": 4.0, "op_dispatch_python_no_grad": 1.5, "op_dispatch_cpp": 0.8,
           "python_element": 0.2, "tensor_attribute": 0.15, "module_call": 2.0, "autograd_node": 3.0,
           "backward_call": 30.0, "optimizer_step": 25.0, "optimizer_tensor": 1.5, "zero_grad_call": 10.0}


def micro_rows(costs, noise=0.0, seed=0):
    """Rows with the microbenchmarks' counts (host_measure.microbenchmarks, written out)."""
    rng = np.random.default_rng(seed)
    counts = [
        {"op_dispatch_python": 6}, {"op_dispatch_python_no_grad": 6},
        {"op_dispatch_python": 1, "op_dispatch_cpp": 4}, {"op_dispatch_python": 1, "op_dispatch_cpp": 64},
        {"op_dispatch_python_no_grad": 1, "op_dispatch_cpp": 4}, {"op_dispatch_python_no_grad": 1, "op_dispatch_cpp": 64},
        {"op_dispatch_python_no_grad": 1, "op_dispatch_cpp": 3},
        {"module_call": 5, "op_dispatch_python": 4, "op_dispatch_cpp": 6},
        {"module_call": 1, "op_dispatch_python": 1, "op_dispatch_cpp": 2},
        *({"backward_call": 1, "autograd_node": k + 1, "op_dispatch_cpp": k} for k in (2, 8, 32)),
        linear_backward_counts(2),
        *({"optimizer_step": 1, "optimizer_tensor": k, "op_dispatch_python_no_grad": k} for k in (4, 32)),
        *({"zero_grad_call": 1, "tensor_attribute": k, "op_dispatch_python_no_grad": k} for k in (4, 32)),
        *({"zero_grad_call": 1, "tensor_attribute": k} for k in (4, 32)),
        {"tensor_attribute": 1},
        *({"op_dispatch_python_no_grad": 1, "python_element": n * (n - 1) // 2} for n in (21, 81)),
    ]
    return [Row(f"row {i}", c, sum(n * costs[k] for k, n in c.items()) * (1 + noise * rng.standard_normal()))
            for i, c in enumerate(counts)]


# ---- the fit ---------------------------------------------------------------------------------------
def test_nnls_keeps_costs_non_negative():
    a = np.array([[1.0, 1.0], [1.0, 1.01], [0.0, 1.0]])
    b = np.array([1.0, 0.5, -1.0])  # unconstrained least squares makes the second cost negative
    x = nnls(a, b)
    assert (x >= 0).all()
    free = np.linalg.lstsq(a, b, rcond=None)[0]
    assert free.min() < 0
    # the KKT conditions: zero costs have a non-positive gradient of the fit
    w = a.T @ (b - a @ x)
    assert all(w[j] <= 1e-9 for j in range(2) if x[j] == 0)


def test_fit_recovers_known_costs_exactly_and_under_noise():
    fit = fit_costs(micro_rows(TRUE_US))
    for call, us in TRUE_US.items():
        assert fit.costs_us[call] == pytest.approx(us, rel=1e-6), call
    assert fit.worst_relative_error < 1e-6
    noisy = fit_costs(micro_rows(TRUE_US, noise=0.03, seed=1))
    for call in ("op_dispatch_python", "op_dispatch_cpp", "python_element", "autograd_node", "optimizer_step"):
        assert noisy.costs_us[call] == pytest.approx(TRUE_US[call], rel=0.25), call



def test_fit_weighs_rows_by_relative_error():
    """Each row is one measurement, as good relatively as any other: the fit minimises the rows'
    relative residuals. One call measured at 1 µs alone and at 200 µs in a row of 100 calls (2 µs
    each): minimising (x − 1)² + (100 x / 200 − 1)² gives x = 1.2 (absolute residuals, 2.0)."""
    rows = [Row("one", {"op_dispatch_cpp": 1}, 1.0), Row("hundred", {"op_dispatch_cpp": 100}, 200.0)]
    assert fit_costs(rows, ["op_dispatch_cpp"]).costs_us["op_dispatch_cpp"] == pytest.approx(1.2, rel=1e-9)


def test_fit_is_the_same_whatever_the_size_of_each_row():
    """A row measured over c times its calls takes c times as long and says the same: every fitted
    cost is unchanged when each row's counts and time are scaled (here by 1 to 10⁴, on rows with 3 %
    noise whose times span four orders of magnitude)."""
    rows = micro_rows(TRUE_US, noise=0.03, seed=5)
    scales = np.geomspace(1, 1e4, len(rows))[np.random.default_rng(0).permutation(len(rows))]
    scaled = [Row(r.label, {k: n * c for k, n in r.counts.items()}, r.us * c) for r, c in zip(rows, scales, strict=True)]
    base, big = fit_costs(rows).costs_us, fit_costs(scaled).costs_us
    for call in FITTED_CALLS:
        assert big[call] == pytest.approx(base[call], rel=1e-6), call
    assert max(abs(base[c] / us - 1) for c, us in TRUE_US.items()) < 0.25  # and the noisy fit is near the truth

def test_fit_refuses_what_it_cannot_identify():
    rows = micro_rows(TRUE_US)
    with pytest.raises(ValueError, match="never counted: \\['python_element'\\]"):
        fit_costs([r for r in rows if "python_element" not in r.counts])
    with pytest.raises(ValueError, match="linearly dependent"):  # SGD's per-call and per-tensor costs at one size
        fit_costs([r for r in rows if r.counts.get("optimizer_tensor") != 32])
    with pytest.raises(ValueError, match="not fitted"):
        fit_costs([*rows, Row("x", {"teleport": 1}, 1.0)])
    with pytest.raises(ValueError, match="> 0"):
        fit_costs([*rows[1:], Row("x", rows[0].counts, 0.0)])


def test_row_weights_decide_between_conflicting_rows():
    rows = [Row("a", {"op_dispatch_cpp": 1}, 1.0), Row("b", {"op_dispatch_cpp": 1}, 2.0, weight=10.0)]
    assert fit_costs(rows, ["op_dispatch_cpp"]).costs_us["op_dispatch_cpp"] == pytest.approx(2.0, rel=0.02)


@pytest.fixture(scope="module")
def step():
    return DlrmStep(StepModel(build_device("gpu/rtx3090"), build_device("cpu/i5-9600k"), None),
                    StepOptions(**step_options("2.4.0", "cpu")))


@pytest.fixture(scope="module")
def rm1():
    return StepShapes.from_workload(load_workload("rm1"))


def test_fit_step_recovers_in_step_costs(step, rm1):
    """Microbenchmarks run warm (here 0.6 of the step's costs); the step's parts decide the level."""
    shapes = {w: host_shapes(StepShapes.from_workload(load_workload(w))) for w in ("rm1", "rm4")}
    counts = {w: part_counts(step, s) for w, s in shapes.items()}
    parts = {w: {p: sum(n * TRUE_US[c] for c, n in cs.items()) for p, cs in counts[w].items()} for w in shapes}
    warm = {c: 0.6 * v for c, v in TRUE_US.items()}
    w_fit, fit, k = fit_step(micro_rows(warm), parts, counts, exclude=("loss",))
    assert k == pytest.approx(1 / 0.6)
    assert w_fit.costs_us["op_dispatch_cpp"] == pytest.approx(0.6 * 0.8)
    for call, us in TRUE_US.items():
        assert fit.costs_us[call] == pytest.approx(us, rel=1e-6), call
    assert in_step_factor(counts["rm1"], TRUE_US, parts["rm1"]) == pytest.approx(1.0)


def test_spread_and_instructions():
    s = spread([1.0, 2.0, 4.0])
    assert (s["median"], s["min"], s["max"], s["n"]) == (2.0, 1.0, 4.0, 3) and s["spread"] == pytest.approx(1.5)
    assert instructions(7.0, 3.7, 1.0) == pytest.approx(25_900)  # the preset's convention: µs × 3.7 GHz × IPC
    assert instructions(7.0, 3.7, 1.0, ratio=1.2) == pytest.approx(1.2 * 25_900)
    with pytest.raises(ValueError):
        instructions(1.0, 3.7, 1.0, ratio=0)


# ---- the counts the fit takes from the op list ---------------------------------------------------------
def test_part_counts_follow_the_op_list(step, rm1):
    c = part_counts(step, host_shapes(rm1))
    assert c["b_fwd"]["module_call"] == 8  # DLRM_Net, Sequential, Linear + ReLU per layer
    assert c["top_fwd"]["module_call"] == 7 and c["loss"]["module_call"] == 1
    assert c["b_bwd"]["autograd_node"] == 15 and c["backward"]["autograd_node"] == 24
    assert c["backward"]["backward_call"] == 1
    assert c["mlp_opt"] == {"optimizer_step": 1, "optimizer_tensor": 12, "op_dispatch_python_no_grad": 12}
    assert c["zero_grad"] == {"zero_grad_call": 1, "tensor_attribute": 12}  # torch 2.x: set_to_none
    assert c["interaction"]["python_element"] == 2 * 210
    assert c["hand-off"] == {"tensor_attribute": 1, "op_dispatch_python": 1, "op_dispatch_cpp": 20}
    # on host tensors a copy is one operator: the nested ones of the CUDA list are left out
    assert c["readback"] == {"op_dispatch_python_no_grad": 2, "op_dispatch_cpp": 1, "tensor_attribute": 1}
    assert c["b_fwd"]["op_dispatch_python_no_grad"] == 1  # X.to(device)
    cuda = part_counts(step, host_shapes(rm1), no_copies=False)
    assert cuda["readback"]["op_dispatch_cpp"] == 4  # detach's view, _to_copy, empty_strided, copy_


def test_linear_backward_counts_match_the_op_list(gpu_step_model_1x):
    """The microbenchmark's counts of an MLP's backward are the op list's (its b_bwd + the call)."""
    step, shapes = gpu_step_model_1x
    counts = part_counts(step, shapes)["b_bwd"]
    expected = linear_backward_counts(len(shapes.bottom) - 1)
    assert counts == {k: v for k, v in expected.items() if k != "backward_call"}


@pytest.fixture
def gpu_step_model_1x():
    opts = StepOptions(zero_grad_set_to_none=True)
    return DlrmStep(StepModel(build_device("gpu/rtx3090"), build_device("cpu/i5-9600k"), None), opts), \
        StepShapes(2, (13, 4, 4), (4 + 1, 4, 1), 1, 4)


def test_model_part_costs_prices_the_parts(step, rm1):
    costs = model_part_costs(step, host_shapes(rm1), TRUE_US)
    counts = part_counts(step, host_shapes(rm1))
    for p, cs in counts.items():
        assert costs[p] == pytest.approx(sum(n * TRUE_US[c] for c, n in cs.items()))


def test_preset_document_overrides_the_base():
    base = load_preset("cpu/i5-9600k")
    doc = preset_document(base.params, base.params.sources, "x", {"op_dispatch_cpp_instructions": (1234, "measured")})
    assert doc["family"] == "cpu" and list(doc["params"]) == list(base.params.keys())
    assert doc["params"]["op_dispatch_cpp_instructions"] == {"value": 1234, "source": "measured"}
    assert doc["params"]["clock_GHz"]["value"] == 3.7


# ---- the command ------------------------------------------------------------------------------------------
def test_measure_host_without_torch_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    rc = main(["measure", "host", "--repeat", "1", "--out", str(tmp_path / "x.yaml")])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs PyTorch" in err and "cxlsim[measure]" in err
    assert not (tmp_path / "x.yaml").exists()


def test_measure_help_teaches(capsys):
    assert main(["measure", "--help"]) == 0
    out = capsys.readouterr().out
    for word in ("microbenchmarks", "dlrm_s_pytorch.py", "--ratio", "--rows-per-table", "cxlsim[measure]", "exit"):
        assert word in out


def test_measure_host_runs_and_writes_a_preset(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "quick-host.yaml"
    rc = main(["measure", "host", "--repeat", "1", "--iterations", "2", "--seconds", "0.002", "--no-reference",
               "--check-workloads", "", "--scale-to-base", "--ratio", "1.5", "--out", str(out), "--json"])
    assert rc == 0
    import json

    result = json.loads(capsys.readouterr().out)
    assert set(result["costs_us"]) == set(FITTED_CALLS)
    doc = yaml.safe_load(out.read_text())
    assert doc["family"] == "cpu"
    pre = load_preset(str(out))
    model = build_device(str(out))
    for call in FITTED_CALLS:
        assert pre.params[f"{call}_instructions"] == round(instructions(result["costs_us"][call]["median"], 3.7, 1.0, 1.5))
        assert "torch" in pre.params.sources[f"{call}_instructions"]
    assert model.op_dispatch_ns("cpp") > 0 and pre.params.clock_GHz == 3.7
