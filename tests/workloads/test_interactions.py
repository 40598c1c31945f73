"""The workload's interaction (cxlsim/workloads/interactions/): the contract over every registered
interaction, the dot's numbers as they were when it was hard-coded, cat and dcn from their
definitions, and MLPerf's DLRM-DCNv2 as the proof (docs/workloads.md)."""

from __future__ import annotations

import hashlib
import math
from importlib.metadata import entry_points

import pytest

import cxlsim
from cxlsim.devices import build_device
from cxlsim.devices.compute.gpu_step import StepModel
from cxlsim.errors import ConfigError
from cxlsim.units import FP32_B
from cxlsim.workloads import load_workload
from cxlsim.workloads.dlrm_ops import DlrmStep, StepOptions, StepShapes
from cxlsim.workloads.interactions import (
    Interaction,
    get,
    kernel_flops,
    names,
    parameter_count,
    register,
    weight_macs_per_sample,
)
from cxlsim.workloads.interactions.dot import Dot
from cxlsim.workloads.interactions.registry import ENTRY_POINT_GROUP
from cxlsim.workloads.schema import WORKLOAD_SCHEMA

#: A small shape every interaction can take (the dot needs dense == dim), with the dcn's own values.
SHAPE = {"tables": 5, "dim": 8, "dense": 8}
VALUES = {"cross_layers": 2, "cross_rank": 3}


@pytest.fixture(scope="module")
def step_model():
    return StepModel(build_device("gpu/rtx3090"), build_device("cpu/i5-9600k"))


def built(name: str):
    return get(name).build(SHAPE["tables"], SHAPE["dim"], SHAPE["dense"], VALUES)


def test_the_builtins_are_entry_points_as_a_third_party_is():
    eps = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert {"dot", "cat", "dcn"} <= set(eps) <= set(names())
    assert eps["dcn"] == "cxlsim.workloads.interactions.dcn"


@pytest.mark.parametrize("name", names())
def test_every_registered_interaction_keeps_the_contract(name, step_model):
    inter = built(name)
    assert isinstance(inter, Interaction) and inter.name == name and inter.problem() is None
    assert inter == built(name)  # frozen, comparable
    width = inter.output_width()
    assert isinstance(width, int) and width >= 1
    tensors = inter.parameter_tensors()
    assert all(e >= 1 for _, e in tensors) and parameter_count(inter) == sum(e for _, e in tensors)
    declared = WORKLOAD_SCHEMA.by_name()
    assert all(p.name in declared and not p.required for p in type(inter).PARAMS)
    for direction in ("forward", "backward"):
        for batch in (1, 7):
            for k in inter.kernels(batch, direction):
                assert k.kind in ("gemm", "stream") and k.flops >= 0 and k.size_B >= 0
                if k.kind == "gemm":
                    assert min(k.m, k.n, k.k, k.count) >= 1 and k.extra_B >= 0
    assert inter.kernels(1, "forward")  # it joins the vectors: at least one kernel forward
    with pytest.raises(ValueError, match="direction"):
        inter.kernels(1, "sideways")
    assert kernel_flops(inter, 14) == pytest.approx(2 * kernel_flops(inter, 7))  # per sample
    # the op graph takes it from the shapes: it emits forward and backward ops into the t_mlp phase
    shapes = StepShapes(7, (13, 8), (width, 4, 1), SHAPE["tables"], SHAPE["dim"], inter)
    ops = DlrmStep(step_model).phase_ops(shapes, "t_mlp")
    mine = [op for op in ops if "interaction" in op.what]
    assert any(op.part == "interaction" and op.kind == "kernel" for op in mine)
    assert any(op.part == "backward" for op in mine)
    assert all(op.gpu_ns >= 0 and op.dispatch_ns >= 0 for op in ops)
    # its parameters are stepped by the optimizer between the bottom MLP's and the top MLP's
    names_ = [n for n, _ in shapes.parameter_tensors()]
    assert names_[2:2 + len(tensors)] == [n for n, _ in tensors]  # after the bottom MLP's one layer


def old_dot_kernels(gpu, b: int, n: int, d: int, direction: str):
    """The dot's kernels as GpuModel.interaction_kernels wrote them before the interaction moved
    to the workload (kept here as the reference)."""
    pairs = n * (n - 1) // 2
    out_B = FP32_B * b * (pairs + d)
    if direction == "forward":
        return [gpu.gemm(n, n, d, count=b, name="int_bmm"),
                gpu.elementwise(FP32_B * b * n * n + FP32_B * b * pairs, name="int_gather"),
                gpu.elementwise(2.0 * out_B, name="int_concat")]
    return [gpu.elementwise(FP32_B * b * pairs + FP32_B * b * n * n, name="int_scatter"),
            gpu.gemm(n, d, n, count=b, extra_B=FP32_B * b * n * n, name="int_bmm_grad"),
            gpu.elementwise(2.0 * FP32_B * b * n * d, name="int_split")]


@pytest.mark.parametrize(("b", "tables", "d"), [(359, 20, 32), (359, 80, 32), (1, 1, 1), (4096, 52, 16)])
def test_the_dot_kernels_are_the_hard_coded_ones(b, tables, d):
    gpu = build_device("gpu/rtx3090")
    for direction in ("forward", "backward"):
        assert gpu.kernel_times(Dot(tables, d, d).kernels(b, direction)) == old_dot_kernels(gpu, b, tables + 1, d, direction)


#: sha256 of every op of the step (phase, name, what, part, kind, gpu_ns, dispatch_ns, sync) for RM1 on
#: rtx3090 + i5-9600k, computed with the dot hard-coded in dlrm_ops (commit 71e2851): the dot's op
#: list, and the whole step around it, are what they were.
OLD_STEP = {
    False: "df0a7bede1241611d2ee9b79a88fa04c8f0fb70a8a12379006302d68865731b9",
    True: "c1f0778f78a596bf35c95e31d5d0618451b17ac01e5ea57ed01baf946559a2c3",
}


@pytest.mark.parametrize("modern", [False, True])
def test_the_dot_step_is_the_hard_coded_one(modern, step_model):
    opts = StepOptions(cached_tril_indices=True, zero_grad_set_to_none=True, foreach=True) if modern else StepOptions()
    ops = DlrmStep(step_model, opts).step_ops(StepShapes.from_workload(load_workload("rm1")))
    digest = hashlib.sha256(repr([(ph, [(o.name, o.what, o.part, o.kind, o.gpu_ns, o.dispatch_ns, o.sync) for o in lst])
                                  for ph, lst in ops.items()]).encode()).hexdigest()
    assert digest == OLD_STEP[modern]


def test_the_dot_is_rm1_to_rm4s_and_adds_no_parameters():
    for name in ("rm1", "rm2", "rm3", "rm4"):
        w = load_workload(name)
        assert w.params.interaction == "dot" and w.mlp_params["interaction"] == 0
        n = w.params.tables + 1
        assert w.interaction_width == math.comb(n, 2) + w.params.dim
        assert weight_macs_per_sample(w.interaction) == 0


def test_the_dot_needs_a_bottom_output_of_dim():
    with pytest.raises(ConfigError, match="must equal dim=32 .dot interaction"):
        load_workload("rm1", {"bottom_mlp": "13-64-16"})
    w = load_workload("rm1", {"bottom_mlp": "13-64-16", "interaction": "cat"})  # cat takes any width
    assert w.interaction_width == 16 + 20 * 32


def test_cat_is_a_copy():
    c = get("cat").build(20, 32, 16)
    assert c.output_width() == 16 + 20 * 32 and parameter_count(c) == 0
    assert kernel_flops(c, 100) == 0 and c.kernels(100, "backward") == []
    (copy,) = c.kernels(100, "forward")
    assert copy.size_B == 2 * FP32_B * 100 * (16 + 20 * 32)  # read and write every element once


def test_dcn_is_dcn_v2s_low_rank_cross_network():
    d = get("dcn").build(26, 128, 128, {"cross_layers": 3, "cross_rank": 512})
    w = 128 + 26 * 128
    assert d.output_width() == w == 3456
    assert parameter_count(d) == 3 * (2 * w * 512 + w)  # U, V and the bias of each layer
    # per layer forward: x_l V^T ([B,W]x[W,r]) and (.) U^T ([B,r]x[r,W]): 2·2·W·r FLOPs a sample
    gemms = [k for k in d.kernels(1, "forward") if k.kind == "gemm"]
    assert sum(k.flops for k in gemms) == 3 * 4 * w * 512 and all(k.weights for k in gemms)
    assert weight_macs_per_sample(d) == 3 * 2 * w * 512
    # backward: each GEMM's two gradients, twice the forward's FLOPs
    bwd = sum(k.flops for k in d.kernels(1, "backward") if k.kind == "gemm")
    assert bwd == 2 * sum(k.flops for k in gemms)
    assert d.problem() is None
    assert get("dcn").build(26, 128, 128, {"cross_layers": 0, "cross_rank": 512}).problem()[0] == "cross_layers"


def test_register_refuses_a_second_class_under_a_known_name():
    class Other(Dot):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register(Other)
    assert register(Dot) is Dot  # the same class again is no conflict


def test_the_dcn_torch_module_matches_its_contract():
    torch = pytest.importorskip("torch")
    d = get("dcn").build(3, 4, 4, {"cross_layers": 2, "cross_rank": 5})
    m = d.torch_module(torch)
    shapes = [tuple(p.shape) for p in m.parameters()]
    assert [math.prod(s) for s in shapes] == [e for _, e in d.parameter_tensors()]
    x = torch.rand(6, 4)
    out = m.forward(x, [torch.rand(6, 4) for _ in range(3)])
    assert tuple(out.shape) == (6, d.output_width())
    for name in ("dot", "cat"):
        i = get(name).build(3, 4, 4)
        assert tuple(i.torch_module(torch).forward(x, [torch.rand(6, 4) for _ in range(3)]).shape) == (6, i.output_width())


def test_dlrm_dcnv2_is_mlperfs_configuration():
    w = load_workload("dlrm-dcnv2")
    p = w.params
    assert (p.tables, p.dim, p.dense_features, p.bottom_mlp, p.top_mlp) == (26, 128, 13, "13-512-256-128", "1024-1024-512-256-1")
    assert (p.interaction, p.cross_layers, p.cross_rank) == ("dcn", 3, 512)
    assert w.rows_per_table.count(40_000_000) == 5 and sum(w.rows_per_table) == 204_184_588
    assert len(p.table_bag_sizes) == 26 and w.lookups_per_sample == 214 and p.lookups_per_table == 100
    assert w.top_network == (3456, 1024, 1024, 512, 256, 1)
    assert w.mlp_params["interaction"] == 3 * (2 * 3456 * 512 + 3456)
    assert w.mlp_param_count == sum(w.mlp_params.values())
    assert all(src and src != "schema default" for k, src in p.sources.items()
               if k not in ("rows_per_table", "criteo_rows_factor", "trace"))  # no trace: the generator


@pytest.mark.slow
@pytest.mark.parametrize("system", ["cxl", "pmem", "tpu-ps"])
def test_dlrm_dcnv2_runs(system):
    r = cxlsim.simulate(system, workload="dlrm-dcnv2", batches=1, warmup=1, workload_sets={"batch_size": 64})
    assert r.batch_time_ms["mean"] > 0
    assert sum(r.breakdown_ms.values()) == pytest.approx(r.batch_time_ms["mean"], rel=1e-9)


def test_the_extending_docs_example_is_an_interaction(step_model):
    """docs/extending.md's ``sum`` example registers, keeps the contract and runs in a workload."""
    import re
    from pathlib import Path

    from cxlsim.workloads.interactions import registry

    doc = (Path(__file__).resolve().parents[2] / "docs" / "extending.md").read_text()
    code = re.search(r"\*\*Step 1.*?```python\n(.*?)```", doc, re.S).group(1)
    try:
        exec(compile(code, "docs/extending.md", "exec", dont_inherit=True), {"__name__": "my_study"})
        test_every_registered_interaction_keeps_the_contract("sum", step_model)
        w = load_workload("rm1", {"interaction": "sum"})
        assert w.top_network == (32, 256, 64, 1) and w.mlp_params["interaction"] == 0
    finally:
        registry._REGISTRY.pop("sum", None)
