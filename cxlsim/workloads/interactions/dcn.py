"""``dcn``: DCN-v2's low-rank cross network (Wang et al. 2021, "DCN V2", eq. 1 with the low-rank
mixture of one expert; torchrec ``LowRankCrossNet``), the interaction of MLPerf's DLRM-DCNv2.

Input ``x0 = cat([x] + ly)`` of ``W = dense + tables·dim`` elements per sample; ``cross_layers``
layers of rank ``r = cross_rank``::

    x_{l+1} = x0 ⊙ (U_l (V_l x_l) + b_l) + x_l        V_l: [r, W], U_l: [W, r], b_l: [W]

output ``W`` elements (the top MLP's input). Parameters ``2·W·r + W`` per layer, in torchrec's
order (every ``U`` -- its ``W_kernels`` --, every ``V``, every bias). Per layer the forward runs two
GEMMs (``[B,W]x[W,r]``, ``[B,r]x[r,W]``) and three elementwise kernels (bias add, ``⊙ x0``,
``+ x_l``), as PyTorch eager runs torchrec's ``forward``; the backward four GEMMs (each weight's
gradient and the input's), two products (``g ⊙ x0``, ``g ⊙ h``), the bias gradient's reduction and
the sums of the gradients that reach ``x_l`` and ``x0`` twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cxlsim.config.params import Param
from cxlsim.units import FP32_B
from cxlsim.workloads.interactions.interface import (
    Gemm,
    InteractionBase,
    Kernel,
    Stream,
    check_direction,
)
from cxlsim.workloads.interactions.registry import register


@register
@dataclass(frozen=True)
class Dcn(InteractionBase):
    """The DCN-v2 low-rank cross network (module docstring)."""

    layers: int = 0
    rank: int = 0

    name: ClassVar[str] = "dcn"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("cross_layers", int, "cross layers of the DCN-v2 interaction (interaction: dcn; 0: not a dcn)",
              default=0, minimum=0),
        Param("cross_rank", int, "low-rank dimension r of each DCN-v2 cross layer (interaction: dcn; 0: not a dcn)",
              default=0, minimum=0),
    )

    @classmethod
    def build(cls, tables: int, dim: int, dense: int, values: Any = None) -> Dcn:
        v = values or {}
        return cls(int(tables), int(dim), int(dense), int(v.get("cross_layers", 0)), int(v.get("cross_rank", 0)))

    def problem(self) -> tuple[str, str] | None:
        if self.layers < 1:
            return "cross_layers", "the dcn interaction needs at least one cross layer"
        if self.rank < 1:
            return "cross_rank", "the dcn interaction needs a rank of at least 1"
        return None

    def output_width(self) -> int:
        return self.input_width

    def parameter_tensors(self) -> tuple[tuple[str, int], ...]:
        w, r, n = self.input_width, self.rank, range(self.layers)
        return (*((f"dcn.W{i}", w * r) for i in n), *((f"dcn.V{i}", r * w) for i in n),
                *((f"dcn.bias{i}", w) for i in n))

    def kernels(self, batch: int, direction: str) -> list[Kernel]:
        check_direction(direction)
        b, w, r = batch, self.input_width, self.rank
        act = FP32_B * b * w
        if direction == "forward":
            out: list[Kernel] = [Stream("dcn_concat", 2.0 * act)]
            for i in range(self.layers):
                out += [Gemm(f"dcn{i}_v", b, r, w, weights=True), Gemm(f"dcn{i}_u", b, w, r, weights=True),
                        Stream(f"dcn{i}_bias", 2.0 * act + FP32_B * w, b * w),
                        Stream(f"dcn{i}_x0", 3.0 * act, b * w), Stream(f"dcn{i}_residual", 3.0 * act, b * w)]
            return out
        out = []
        for i in reversed(range(self.layers)):
            out += [Stream(f"dcn{i}_grad_h", 3.0 * act, b * w), Stream(f"dcn{i}_grad_x0", 3.0 * act, b * w),
                    Stream(f"dcn{i}_grad_bias", act + FP32_B * w, b * w),
                    Gemm(f"dcn{i}_grad_u", w, r, b), Gemm(f"dcn{i}_grad_uv", b, r, w),
                    Gemm(f"dcn{i}_grad_v", r, w, b), Gemm(f"dcn{i}_grad_x", b, w, r),
                    Stream(f"dcn{i}_sum_x", 3.0 * act, b * w), Stream(f"dcn{i}_sum_x0", 3.0 * act, b * w)]
        return out

    def forward_ops(self, step: Any) -> None:
        b, w, r, n = step.shapes.batch, self.input_width, self.rank, self.n_vectors
        act = FP32_B * b * w
        step.cat_kernels("cat", f"interaction: x0 = cat([x] + ly) of {n} inputs", "python", n, act)
        for i in range(self.layers):
            tag = f"interaction: cross layer {i}"
            step.host_op("linear", f"{tag}: F.linear(x_l, V) (no bias)")
            step.host_op("t", f"{tag}: V^T (view)", "cpp")
            step.host_op("matmul", f"{tag}: linear without bias -> matmul", "cpp")
            step.kernel("mm", f"{tag}: [B,{w}]x[{w},{r}]", "cpp", step.model.gemm_ns(b, r, w))
            step.host_op("linear", f"{tag}: F.linear(., U) (no bias)")
            step.host_op("t", f"{tag}: U^T (view)", "cpp")
            step.host_op("matmul", f"{tag}: linear without bias -> matmul", "cpp")
            step.kernel("mm", f"{tag}: [B,{r}]x[{r},{w}]", "cpp", step.model.gemm_ns(b, w, r))
            step.kernel("add", f"{tag}: + b_l (broadcast)", "python", step.elementwise_ns(2 * act + FP32_B * w))
            step.kernel("mul", f"{tag}: x0 ⊙ (.)", "python", step.elementwise_ns(3 * act))
            step.kernel("add", f"{tag}: + x_l", "python", step.elementwise_ns(3 * act))

    def backward_ops(self, step: Any) -> None:
        b, w, r, n = step.shapes.batch, self.input_width, self.rank, self.n_vectors
        act = FP32_B * b * w
        for i in reversed(range(self.layers)):
            tag = f"interaction backward: cross layer {i}"
            step.node("AddBackward0", f"{tag}: + x_l (the gradient passes to both)")
            step.node("MulBackward0", f"{tag}: x0 ⊙ h")
            step.kernel("mul", f"{tag}: dh = g ⊙ x0", "cpp", step.elementwise_ns(3 * act))
            step.kernel("mul", f"{tag}: dx0 += g ⊙ h", "cpp", step.elementwise_ns(3 * act))
            step.node("AddBackward0", f"{tag}: + b_l")
            step.kernel("sum", f"{tag}: bias gradient, sum_to_size of the broadcast", "cpp",
                        step.elementwise_ns(act + FP32_B * w))
            step.accumulate_grad(f"{tag} bias", w)
            for mat, m_in, m_out in (("U", r, w), ("V", w, r)):
                step.node("MmBackward0", f"{tag}: F.linear(., {mat})")
                step.host_op("t", f"{tag}: MmBackward, {mat} (view)", "cpp")
                step.kernel("mm", f"{tag}: d input = dY {mat}, [B,{m_out}]x[{m_out},{m_in}]", "cpp",
                            step.model.gemm_ns(b, m_in, m_out))
                step.host_op("t", f"{tag}: MmBackward, X^T (view)", "cpp")
                step.kernel("mm", f"{tag}: d{mat}^T = X^T dY, [{m_in},B]x[B,{m_out}]", "cpp",
                            step.model.gemm_ns(m_in, m_out, b))
                step.node("TBackward0", f"{tag}: {mat}^T")
                step.host_op("t", f"{tag}: TBackward (view)", "cpp")
                step.accumulate_grad(f"{tag} {mat}", w * r)
            step.kernel("add", f"{tag}: x_l's two gradients summed (engine input buffer)", "cpp",
                        step.elementwise_ns(3 * act))
            step.kernel("add", f"{tag}: x0's gradients summed (engine input buffer)", "cpp",
                        step.elementwise_ns(3 * act))
        step.node("CatBackward0", "interaction backward: x0 = cat([x] + ly)")
        for _ in range(n):
            step.host_op("narrow", "interaction backward: CatBackward of x0, one input's slice (view)", "cpp")

    def torch_module(self, torch: Any) -> Any:
        """torchrec's ``LowRankCrossNet`` over ``cat([x] + ly)`` (xavier-normal kernels, zero bias)."""
        nn, w, r, layers = torch.nn, self.input_width, self.rank, self.layers

        class LowRankCrossNet(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.W_kernels = nn.ParameterList(
                    [nn.Parameter(nn.init.xavier_normal_(torch.empty(w, r))) for _ in range(layers)])
                self.V_kernels = nn.ParameterList(
                    [nn.Parameter(nn.init.xavier_normal_(torch.empty(r, w))) for _ in range(layers)])
                self.bias = nn.ParameterList([nn.Parameter(torch.zeros(w)) for _ in range(layers)])

            def forward(self, x: Any, ly: list[Any]) -> Any:
                x0 = torch.cat([x] + ly, dim=1)
                xl = x0
                for i in range(layers):
                    xv = nn.functional.linear(xl, self.V_kernels[i])
                    xw = nn.functional.linear(xv, self.W_kernels[i])
                    xl = x0 * (xw + self.bias[i]) + xl
                return xl

        return LowRankCrossNet()
