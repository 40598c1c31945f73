"""The DCN-v2 cross network's elementwise kernels (cxlsim.workloads.interactions.dcn): each cross
layer's bias add, ``x0 ⊙ (.)`` and residual add move activations of the network's width ``W`` (the
rank only sizes the GEMMs' inner dimension), as the forward's operators and its kernel list both say."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cxlsim.units import FP32_B
from cxlsim.workloads.interactions import get


class _Step:
    """Records the kernels ``forward_ops`` issues; an elementwise kernel's time is its bytes."""

    def __init__(self, batch: int) -> None:
        self.shapes = SimpleNamespace(batch=batch)
        self.model = SimpleNamespace(gemm_ns=lambda m, n, k: -1.0)
        self.kernels: list[tuple[str, float]] = []

    def cat_kernels(self, name, what, caller, n_inputs, size_B):
        self.kernels.append((name, 2 * size_B))

    def host_op(self, *args):
        pass

    def kernel(self, name, what, caller, ns):
        self.kernels.append((name, ns))

    def elementwise_ns(self, size_B):
        return float(size_B)


@settings(max_examples=40, deadline=None)
@given(tables=st.integers(1, 30), dim=st.integers(1, 64), dense=st.integers(1, 64), layers=st.integers(1, 4),
       rank=st.integers(1, 600), batch=st.integers(1, 256))
def test_a_dcns_elementwise_bytes_follow_the_width(tables, dim, dense, layers, rank, batch):
    d = get("dcn").build(tables, dim, dense, {"cross_layers": layers, "cross_rank": rank})
    w = dense + tables * dim
    assert d.input_width == w
    step = _Step(batch)
    d.forward_ops(step)
    act = FP32_B * batch * w
    elementwise = [(name, b) for name, b in step.kernels if name in ("add", "mul")]
    assert elementwise == [("add", 2 * act + FP32_B * w), ("mul", 3 * act), ("add", 3 * act)] * layers
    # the same bytes as the interaction's kernel list (its analytic twin), the concatenation included
    streams = [k.size_B for k in d.kernels(batch, "forward") if k.kind == "stream"]
    assert [b for _, b in step.kernels if b >= 0] == pytest.approx(streams, rel=1e-12)
