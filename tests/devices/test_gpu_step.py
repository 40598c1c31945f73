"""The GPU training step as PyTorch eager runs it: the DLRM op lists (cxlsim/workloads/dlrm_ops.py) against
their per-op sources, the CUDA stream schedule's semantics and bound, sync points, and the
batch-size rule of docs/design.md#workloads re-derived with framework time."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.devices import build_device
from cxlsim.devices.compute.gpu_step import (
    SCHEDULE_BOUND_FACTOR,
    StepModel,
    StepOp,
    schedule,
    schedule_bound_ns,
)
from cxlsim.workloads.catalog import load_workload
from cxlsim.workloads.dlrm_ops import PHASES, DlrmStep, StepOptions, StepShapes, _foreach_launches

US = 1e3
LAUNCH = 4 * US  # gpu/rtx3090 kernel_launch_us


@pytest.fixture(scope="module")
def gpu():
    return build_device("gpu/rtx3090")


@pytest.fixture(scope="module")
def i5():
    return build_device("cpu/i5-9600k")


@pytest.fixture(scope="module")
def model(gpu, i5):
    return StepModel(gpu, i5, build_device("pcie/gen4-x16"))


@pytest.fixture(scope="module")
def step(model):
    """The DLRM step's op lists priced by ``model``."""
    return DlrmStep(model)


@pytest.fixture(scope="module")
def rm1():
    return StepShapes.from_workload(load_workload("rm1"))


def kernel(gpu_ns: float, dispatch_ns: float = 0.0, launch_ns: float = LAUNCH, **kw) -> StepOp:
    return StepOp("k", "test kernel", "cpp", "kernel", dispatch_ns, launch_ns, gpu_ns, **kw)


# ---- shapes -----------------------------------------------------------------------------------------
def test_shapes_follow_dlrm(rm1):
    """DLRM prepends the interaction's width to --arch-mlp-top: RM1's top is 242-256-64-1."""
    assert rm1.bottom == (13, 8192, 2048, 32) and rm1.top == (242, 256, 64, 1)
    assert (rm1.n_vectors, rm1.pairs, rm1.interaction_width) == (21, 210, 242)
    assert len(rm1.parameter_tensors()) == 12  # weight and bias of 6 layers
    assert sum(e for _, e in rm1.parameter_tensors()) == 13 * 8192 + 8192 + 8192 * 2048 + 2048 + 2048 * 32 + 32 \
        + 242 * 256 + 256 + 256 * 64 + 64 + 64 + 1
    rm2 = StepShapes.from_workload(load_workload("rm2"), batch=64)
    assert rm2.batch == 64 and rm2.top[0] == 3272
    with pytest.raises(ValueError, match="dot interaction"):
        StepShapes(384, (13, 64, 16), (242, 1), 20, 32)
    with pytest.raises(ValueError, match="top MLP's input"):
        StepShapes(384, (13, 64, 32), (256, 64, 1), 20, 32)


# ---- the op lists against their sources -------------------------------------------------------------
#: What prices each host op that dispatches no operator (the host's software call).
HOST_CALLS = {"nn.Linear": "module_call", "nn.ReLU": "module_call", "nn.Sigmoid": "module_call",
              "nn.Sequential": "module_call", "DLRM_Net": "module_call", "nn.BCELoss": "module_call",
              "requires_grad_": "tensor_attribute", "numpy": "tensor_attribute", "grad = None": "tensor_attribute",
              "run_backward": "backward_call", "SGD.step": "optimizer_step", "SGD tensor": "optimizer_tensor",
              "zero_grad": "zero_grad_call", "list comprehension": "python_element"}


def test_every_op_costs_its_host_call(model, i5, rm1, step):
    """An operator costs the host's dispatch by caller (+ a memcpy call for a copy), the kernel launch
    4 µs; every host op is priced by its software call: module calls, autograd nodes, tensor
    attributes, backward(), SGD per call and per tensor, zero_grad, the list's elements."""
    ops = [op for ph in PHASES for op in step.phase_ops(rm1, ph)]
    for op in ops:
        if op.caller in ("python", "python_no_grad", "cpp") and op.name != "multi_tensor_apply":
            extra = i5.memcpy_call_ns() if op.kind == "copy" else 0.0
            assert op.dispatch_ns == i5.op_dispatch_ns(op.caller) + extra, op
        elif op.caller == "host":
            if op.name.endswith("Backward0") or op.name == "AccumulateGrad":
                assert op.dispatch_ns == i5.autograd_node_ns(), op
            elif op.name == "list comprehension":
                assert op.dispatch_ns == i5.python_elements_ns(2 * rm1.pairs)
            else:
                assert op.dispatch_ns == i5.software_ns(HOST_CALLS[op.name]), op
        assert op.launch_ns == (LAUNCH if op.kind == "kernel" else 0.0), op
        if op.sync:
            assert op.sync_ns == i5.sync_call_ns()
    linear = [op for op in step.phase_ops(rm1, "b_fwd") if op.name in ("linear", "relu")]
    assert {(op.caller, op.dispatch_ns) for op in linear} == {("python", i5.op_dispatch_ns("python"))}


def test_an_n_op_phase_dispatches_in_n_times_the_cost(model, i5, rm1, step):
    """No sync: the host runs ahead, its last dispatch ends at the sum of the costs."""
    opt = step.phase_ops(rm1, "mlp_opt")  # SGD without foreach: the call, then per tensor its Python and add_
    assert [op.name for op in opt] == ["SGD.step"] + ["SGD tensor", "add_"] * 12
    per_tensor = i5.software_ns("optimizer_tensor") + i5.op_dispatch_ns("python_no_grad")
    assert model.schedule(opt).host_end_ns == pytest.approx(i5.software_ns("optimizer_step") + 12 * per_tensor)
    bwd = step.phase_ops(rm1, "b_bwd")  # the autograd engine: its nodes, their C++ dispatches
    assert {op.caller for op in bwd} == {"cpp", "host"}
    nodes = [op for op in bwd if op.caller == "host"]
    assert len(nodes) == 15 and {op.name for op in nodes} == {"ReluBackward0", "AddmmBackward0", "TBackward0",
                                                               "AccumulateGrad"}
    assert model.schedule(bwd).host_end_ns == pytest.approx((len(bwd) - 15) * i5.op_dispatch_ns("cpp")
                                                            + 15 * i5.autograd_node_ns())


def operators(ops):
    return [op for op in ops if op.caller != "host"]


def test_op_counts_per_phase(model, rm1, step):
    """Per layer forward: linear, t, copy_ (bias), addmm, activation; backward per autograd."""
    counts = {ph: (len(operators(ops)), sum(op.kind == "kernel" for op in ops), sum(op.sync for op in ops))
              for ph, ops in step.step_ops(rm1).items()}
    assert counts["b_fwd"] == (4 + 3 * 5, 3 * 3, 1)  # X.to(device): to, _to_copy, empty_strided, copy_; 3 layers
    # backward per layer: activation grad, [t, mm dX], t, mm dW, t, sum, add_ bias, t, add_ weight
    assert counts["b_bwd"] == (3 * 10 - 2, 3 * 6 - 1, 0)  # the first layer's input needs no gradient
    assert counts["mlp_opt"] == (12, 12, 0)
    t = step.phase_ops(rm1, "t_mlp")
    assert counts["t_mlp"][2] == 4  # the li and lj copies, the targets, the loss read back
    assert [op.name for op in t if op.sync] == ["copy_"] * 4
    assert sum(op.name == "zero_" for op in t) == 12 and sum(op.name == "add_" for op in t) == 6
    # the loss read back, L = E.detach().cpu().numpy(): 6 operators (as the profiler lists them), numpy none
    back = [op for op in t if op.part == "readback"]
    assert [op.name for op in operators(back)] == ["detach", "detach", "cpu", "_to_copy", "empty_strided", "copy_"]
    assert [(op.name, op.caller) for op in back if op.caller == "host"] == [("numpy", "host")]
    # requires_grad_ sets a flag: no operator (hand-off, and zero_grad per tensor)
    assert {op.caller for op in t if op.name == "requires_grad_"} == {"host"}
    assert sum(op.name == "requires_grad_" for op in t) == 13
    # module calls: top Sequential, Linear + activation per layer, BCELoss; in b_fwd DLRM_Net, Sequential, 6
    assert sum(op.what.endswith("nn.Module call") for op in t) == 8
    assert sum(op.what.endswith("nn.Module call") for op in step.phase_ops(rm1, "b_fwd")) == 8
    # backward nodes: BCE, 5 per top layer, the interaction's 6, SplitBackward, the leaf's AccumulateGrad
    assert sum(op.what.endswith("autograd engine runs the node") for op in t) == 1 + 15 + 6 + 2
    assert [op.name for op in t if op.caller == "host" and op.part == "backward"][:2] == \
        ["run_backward", "BinaryCrossEntropyBackward0"]
    assert {op.part for op in t} == {"hand-off", "interaction", "top_fwd", "loss", "readback", "zero_grad", "backward"}
    assert [op.name for op in t if op.name in ("relu", "sigmoid")] == ["relu", "relu", "sigmoid"]
    assert sum(op.name == "narrow" for op in t) == 20 + 2 + 21  # split, R's and T's CatBackward
    first_mm = [op for op in step.phase_ops(rm1, "b_bwd") if op.name == "mm"]
    assert len(first_mm) == 5  # dX and dW for layers 2 and 1, dW only for layer 0


def test_layer_kernels_are_the_timing_tables(model, gpu, rm1, step):
    """A layer's addmm + activation is the table's forward; its backward kernels the table's."""
    fwd = step.phase_ops(rm1, "b_fwd")
    for i, (a, c) in enumerate(rm1.layers("bottom")):
        layer = [op for op in fwd if f"layer {i} " in op.what and op.name in ("addmm", "relu")]
        assert sum(op.gpu_ns for op in layer) == pytest.approx(gpu.layer_ns(a, c, rm1.batch, "forward"))
    bwd = step.phase_ops(rm1, "b_bwd")
    a, c = rm1.layers("bottom")[2]
    layer = [op for op in bwd if "layer 2 " in op.what and op.name in ("threshold_backward", "mm", "sum")]
    assert sum(op.gpu_ns for op in layer) == pytest.approx(gpu.layer_ns(a, c, rm1.batch, "backward"))


def test_options_change_what_is_dispatched(gpu, i5, rm1):
    base = DlrmStep(StepModel(gpu, i5))
    ops = base.step_ops(rm1)
    new = DlrmStep(StepModel(gpu, i5), StepOptions(addmm_bias_epilogue=True, zero_grad_set_to_none=True,
                                                 foreach=True, cached_tril_indices=True)).step_ops(rm1)
    # cuBLASLt epilogue: no bias copy, except the one-column last layer
    assert sum(op.name == "copy_" and op.kind == "kernel" for op in new["b_fwd"]) == 0
    assert sum(op.name == "copy_" and "addmm" in op.what for op in new["t_mlp"]) == 1
    # set_to_none: no zero_ kernels, AccumulateGrad steals (no add_); zero_grad's Python stays
    assert not any(op.name in ("zero_", "add_", "requires_grad_") and "zero_grad" in op.what
                   for op in new["t_mlp"] + new["b_bwd"])
    assert sum(op.name == "grad = None" for op in new["t_mlp"]) == 12
    # foreach SGD: one dispatch, RM1's 17 M parameters in one multi-tensor launch
    assert [op.name for op in new["mlp_opt"]] == ["SGD.step"] + ["SGD tensor"] * 12 + ["_foreach_add_",
                                                                                         "multi_tensor_apply"]
    assert new["mlp_opt"][-1].gpu_ns == pytest.approx(sum(op.gpu_ns for op in ops["mlp_opt"]))
    # cached indices: the interaction no longer synchronises
    assert sum(op.sync for op in new["t_mlp"]) == 2
    # MSE: one kernel forward (+ mean), one backward
    mse = DlrmStep(StepModel(gpu, i5), StepOptions(loss="mse")).phase_ops(rm1, "t_mlp")
    assert "mse_loss" in [op.name for op in mse] and "binary_cross_entropy" not in [op.name for op in mse]
    with pytest.raises(ValueError, match="loss"):
        StepOptions(loss="hinge")
    with pytest.raises(ValueError, match="phase"):
        base.phase_ops(rm1, "embedding")


def test_foreach_launches_pack_chunks_and_tensors():
    assert _foreach_launches([65536 * 320], depth=2) == [65536 * 320]
    assert _foreach_launches([65536 * 320 + 1], depth=2) == [65536 * 320, 1]
    assert _foreach_launches([1] * 65, depth=2) == [64, 1]  # 64 tensors per two-list launch
    assert _foreach_launches([1] * 65, depth=1) == [65]


def test_the_host_model_sets_every_dispatch(gpu, rm1):
    """The prototype's soft core runs the same instructions (clock × IPC 52.9× slower)."""
    i5, rv = build_device("cpu/i5-9600k"), build_device("cpu/riscv-u200")
    fast, slow = DlrmStep(StepModel(gpu, i5)).phase_ops(rm1, "t_mlp"), DlrmStep(StepModel(gpu, rv)).phase_ops(rm1, "t_mlp")
    ratio = 3.7 / (0.1 * 0.7)
    for a, b in zip(fast, slow, strict=True):
        assert b.dispatch_ns == pytest.approx(ratio * a.dispatch_ns) and b.gpu_ns == a.gpu_ns


# ---- stream semantics ---------------------------------------------------------------------------------
def test_gpu_bound_phase_ends_at_its_first_launch_plus_its_kernels():
    """Host ahead: the GPU starts at the first dispatch + launch and never waits again."""
    ops = [kernel(100 * US, dispatch_ns=1 * US) for _ in range(10)]
    s = schedule(ops)
    assert s.gpu_end_ns == 1 * US + LAUNCH + 10 * 100 * US
    assert s.host_end_ns == 10 * US and s.gpu_busy_ns == 1000 * US
    starts = [o.stream_start_ns for o in s.ops]
    assert starts == [5 * US + i * 100 * US for i in range(10)]
    zero = [kernel(100 * US) for _ in range(10)]  # dispatch -> 0: the schedule is its bound
    assert schedule(zero).end_ns == schedule_bound_ns(zero) == LAUNCH + 1000 * US


def test_dispatch_bound_phase_ends_at_its_dispatch_plus_last_launch_and_kernel():
    """The GPU waits for each launch; the phase ends a launch and a kernel after the last dispatch."""
    ops = [kernel(1 * US, dispatch_ns=7 * US) for _ in range(10)]
    s = schedule(ops)
    assert s.end_ns == 10 * 7 * US + LAUNCH + 1 * US
    assert [o.stream_start_ns for o in s.ops] == [(i + 1) * 7 * US + LAUNCH for i in range(10)]
    # views and shape ops cost dispatch only
    views = [StepOp("view", "v", "python", "host", 7 * US)] * 3
    assert schedule(views).end_ns == schedule(views).host_end_ns == 21 * US and schedule(views).gpu_busy_ns == 0


@pytest.mark.parametrize("limit", ["dispatch", "gpu"])
def test_schedule_equals_its_bound_in_the_limits(limit):
    big, small = 1e6, 1.0
    d, g = (big, small) if limit == "dispatch" else (small, big)
    ops = [kernel(g, dispatch_ns=d) for _ in range(50)]
    t, b = schedule(ops).end_ns, schedule_bound_ns(ops)
    assert b <= t <= b * (1 + 1e-4)


def test_sync_points_make_the_host_wait():
    ops = [kernel(50 * US, dispatch_ns=1 * US), kernel(1 * US, dispatch_ns=1 * US, sync=True, sync_ns=5.5 * US),
           kernel(1 * US, dispatch_ns=1 * US)]
    s = schedule(ops)
    gpu_after_2 = 1 * US + LAUNCH + 50 * US + 1 * US
    assert s.ops[1].host_wait_ns == pytest.approx(gpu_after_2 - 2 * US)
    assert s.ops[2].dispatch_start_ns == gpu_after_2 + 5.5 * US  # waited, then paid the sync call
    assert s.ops[2].stream_start_ns == s.ops[2].dispatch_end_ns + LAUNCH  # the GPU idled meanwhile
    # explicit sync points (e.g. cudaStreamSynchronize in the software data path) and one at the end
    plain = [kernel(50 * US, dispatch_ns=1 * US), kernel(1 * US, dispatch_ns=1 * US)]
    ex = schedule(plain, sync_at=[0], sync_ns=5.5 * US)
    assert ex.ops[1].dispatch_start_ns == 1 * US + LAUNCH + 50 * US + 5.5 * US
    end = schedule(plain, sync_at_end=True, sync_ns=5.5 * US)
    assert end.host_end_ns == end.gpu_end_ns + 5.5 * US
    # the host and the GPU may start busy
    late = schedule(plain, host_free_ns=10 * US, gpu_free_ns=500 * US)
    assert late.ops[0].stream_start_ns == 500 * US and late.start_ns == 10 * US
    with pytest.raises(ValueError, match="sync_at"):
        schedule(plain, sync_at=[2])


def test_phase_syncs_wait_for_the_stream(model, rm1, step):
    """In t_mlp the loss read-back waits for every kernel before it (the host cannot run ahead)."""
    s = step.phase_schedule(rm1, "t_mlp")
    i = next(k for k, o in enumerate(s.ops) if o.op.name == "cpu")
    after = s.ops[i + 1]
    assert after.dispatch_start_ns >= max(o.stream_end_ns for o in s.ops[: i + 1] if o.stream_end_ns is not None)


def op_st(launch: float):
    return st.builds(
        lambda kind, d, g, sync: StepOp("x", "random", "cpp", kind, d, launch if kind == "kernel" else 0.0,
                                        g if kind != "host" else 0.0, sync, 5.5 * US if sync else 0.0),
        st.sampled_from(["kernel", "kernel", "copy", "host"]), st.floats(0, 20 * US),
        st.one_of(st.just(0.0), st.floats(0, 2000 * US)), st.booleans())


@settings(max_examples=300, deadline=None)
@given(ops=st.sampled_from([0.0, 3 * US, LAUNCH, 5.5 * US]).flatmap(lambda launch: st.lists(op_st(launch), min_size=1,
                                                                                          max_size=40)),
       host_free=st.floats(0, 100 * US), gpu_free=st.floats(0, 100 * US))
def test_schedule_between_bound_and_stated_factor(ops, host_free, gpu_free):
    """Domain: the kernels share one launch latency, every sync call costs at least it (5.5 µs), the
    stream starts with a kernel or syncs."""
    stream = [op for op in ops if op.on_stream]
    if stream and stream[0].kind != "kernel" and not any(op.sync for op in ops):
        launch = next((op.launch_ns for op in stream if op.kind == "kernel"), 0.0)
        ops = [kernel(1.0, launch_ns=launch), *ops]
    t = schedule(ops, host_free, gpu_free).end_ns
    b = schedule_bound_ns(ops, host_free, gpu_free)
    assert b <= t * (1 + 1e-9)
    assert t <= SCHEDULE_BOUND_FACTOR * b * (1 + 1e-9)


def test_every_phase_within_its_bound(model, step):
    for w in ("rm1", "rm2", "rm3", "rm4"):
        shapes = StepShapes.from_workload(load_workload(w))
        for phase in PHASES:
            ops = step.phase_ops(shapes, phase)
            t, b = model.schedule_ns(ops), model.bound_ns("schedule", ops)
            assert b <= t <= model.bound_factor("schedule") * b, (w, phase)


# ---- the batch-size rule (docs/design.md#workloads) with framework time ------------------------
def test_batch_for_the_bottom_forward_time(model, rm1, step):
    """RM1's bottom-MLP forward, from its first dispatch to its last kernel's end, about 0.6 ms."""
    b = step.batch_for_phase_time(rm1, "b_fwd", 0.6e6)
    assert step.phase_ns(rm1.with_batch(b), "b_fwd") >= 0.6e6 > step.phase_ns(rm1.with_batch(b - 1), "b_fwd")
    assert b == 359  # docs/devices-compute.md (367 before the measured framework costs); the workloads hold it
    s = step.phase_schedule(rm1.with_batch(b), "b_fwd")
    assert s.span_ns == s.gpu_end_ns  # the GPU finishes last: the phase ends with its last kernel
    with pytest.raises(ValueError, match="below"):
        step.batch_for_phase_time(rm1, "b_fwd", 1e12, max_batch=1024)
