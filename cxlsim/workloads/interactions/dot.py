"""``dot``: DLRM's dot interaction (facebookresearch/dlrm ``interact_features`` with
``--arch-interaction-op=dot``, ``arch_interaction_itself`` False), the interaction of RM1-RM4.

``T = cat([x] + ly)`` viewed ``[B, n, d]`` (``n = tables + 1`` vectors; the bottom MLP's output
must have ``d = dim`` elements), ``Z = bmm(T, T^T)``, the strict lower triangle's ``C(n, 2)`` pairs
gathered with Python-list indices, ``R = cat([x, Zflat])``: output ``C(n, 2) + d``; no parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cxlsim.units import FP32_B, TORCH_INDEX_B
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
class Dot(InteractionBase):
    """The dot interaction (module docstring)."""

    name: ClassVar[str] = "dot"

    @property
    def pairs(self) -> int:
        """Distinct pairs of vectors (the strict lower triangle DLRM keeps)."""
        return self.n_vectors * (self.n_vectors - 1) // 2

    def problem(self) -> tuple[str, str] | None:
        if self.dense != self.dim:
            return "bottom_mlp", f"output width {self.dense} must equal dim={self.dim} (dot interaction)"
        return None

    def output_width(self) -> int:
        return self.pairs + self.dense

    def kernels(self, batch: int, direction: str) -> list[Kernel]:
        """forward: batched GEMM Z = T T^T ([n,d] x [d,n] per sample), gather of the n(n-1)/2 strict
        lower triangle, concatenation with the dense vector. backward: scatter of the gradient into
        [n,n], batched GEMM dT = (dZ + dZ^T) T (symmetrised in the same pass), split back to vectors."""
        check_direction(direction)
        n, d, b = self.n_vectors, self.dim, batch
        pairs = self.pairs
        out_B = FP32_B * b * (pairs + d)
        if direction == "forward":
            return [
                Gemm("int_bmm", n, n, d, count=b),
                Stream("int_gather", FP32_B * b * n * n + FP32_B * b * pairs),
                Stream("int_concat", 2.0 * out_B),
            ]
        return [
            Stream("int_scatter", FP32_B * b * pairs + FP32_B * b * n * n),
            Gemm("int_bmm_grad", n, d, n, count=b, extra_B=FP32_B * b * n * n),
            Stream("int_split", 2.0 * FP32_B * b * n * d),
        ]

    def forward_ops(self, step: Any) -> None:
        o = step.options
        b, d, n, pairs = step.shapes.batch, self.dim, self.n_vectors, self.pairs
        step.cat_kernels("cat", f"interaction: T = cat([x] + ly) of {n} inputs", "python", n, FP32_B * b * n * d)
        step.host_op("view", f"interaction: T.view(B, {n}, {d})")
        step.host_op("transpose", "interaction: T^T (view)")
        step.kernel("bmm", f"interaction: Z = bmm(T, T^T), {b} x [{n},{d}]x[{d},{n}]", "python",
                    step.model.gemm_ns(n, n, d, count=b))
        if not o.cached_tril_indices:
            step.host_op("list comprehension", f"interaction: li, lj as Python lists ({2 * pairs} elements)", "host",
                         step.model.python_elements_ns(2 * pairs))
            step.host_op("tensor", "interaction: torch.tensor(li) on the CPU", "python_no_grad")
            step.host_op("tensor", "interaction: torch.tensor(lj) on the CPU", "python_no_grad")
        step.host_op("index", "interaction: Zflat = Z[:, li, lj] (advanced indexing)")
        if not o.cached_tril_indices:
            for which in ("li", "lj"):
                step.to_device("to", f"interaction: index moves CPU {which} to the GPU, H2D", "cpp",
                               TORCH_INDEX_B * pairs, "h2d")
        step.kernel("index", f"interaction: gather {pairs} pairs per sample", "cpp",
                    step.elementwise_ns(2 * FP32_B * b * pairs + 2 * TORCH_INDEX_B * pairs))
        step.cat_kernels("cat", "interaction: R = cat([x, Zflat])", "python", 2, FP32_B * b * self.output_width())

    def backward_ops(self, step: Any) -> None:
        b, d, n, pairs = step.shapes.batch, self.dim, self.n_vectors, self.pairs
        step.node("CatBackward0", "interaction backward: R = cat([x, Zflat])")
        for _ in range(2):
            step.host_op("narrow", "interaction backward: CatBackward of R, one input's slice (view)", "cpp")
        step.node("IndexBackward0", "interaction backward: Zflat = Z[:, li, lj]")
        step.kernel("new_zeros", f"interaction backward: IndexBackward's zero [B,{n},{n}]", "cpp",
                    step.elementwise_ns(FP32_B * b * n * n))
        step.host_op("_index_put_impl_", "interaction backward: index_put_(accumulate=True)", "cpp")
        step.kernel("index_put_", "interaction backward: linear index of the pairs (nested)", "cpp",
                    step.elementwise_ns(3 * TORCH_INDEX_B * pairs))
        step.kernel("sort", "interaction backward: radix sort of the pair indices (nested)", "cpp",
                    step.elementwise_ns(4 * 2 * TORCH_INDEX_B * pairs))
        step.kernel("index_put_", "interaction backward: scatter-add of the pairs' gradients (nested)", "cpp",
                    step.elementwise_ns(3 * FP32_B * b * pairs + TORCH_INDEX_B * pairs))
        step.node("BmmBackward0", "interaction backward: Z = bmm(T, T^T)")
        step.host_op("transpose", "interaction backward: BmmBackward, T^T (view)", "cpp")
        step.kernel("bmm", f"interaction backward: dT = bmm(dZ, T), {b} x [{n},{n}]x[{n},{d}]", "cpp",
                    step.model.gemm_ns(n, d, n, count=b))
        step.host_op("transpose", "interaction backward: BmmBackward, T^T (view)", "cpp")
        step.kernel("bmm", f"interaction backward: d(T^T) = bmm(T^T, dZ), {b} x [{d},{n}]x[{n},{n}]", "cpp",
                    step.model.gemm_ns(d, n, n, count=b))
        step.node("TransposeBackward0", "interaction backward: T^T")
        step.host_op("transpose", "interaction backward: TransposeBackward (view)", "cpp")
        step.kernel("add", "interaction backward: T's two gradients summed (engine input buffer)", "cpp",
                    step.elementwise_ns(3 * FP32_B * b * n * d))
        step.node("ViewBackward0", "interaction backward: T.view(B, n, d)")
        step.host_op("view", "interaction backward: ViewBackward (view)", "cpp")
        step.node("CatBackward0", "interaction backward: T = cat([x] + ly)")
        for _ in range(n):
            step.host_op("narrow", "interaction backward: CatBackward of T, one input's slice (view)", "cpp")
        step.kernel("add", "interaction backward: x's two gradients summed (engine input buffer)", "cpp",
                    step.elementwise_ns(3 * FP32_B * b * d))

    def torch_module(self, torch: Any) -> Any:
        """``interact_features`` of dlrm_s_pytorch.py, verbatim (its Python-list tril indices)."""

        class DotInteraction(torch.nn.Module):
            def forward(self, x: Any, ly: list[Any]) -> Any:
                (batch_size, d) = x.shape
                T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
                Z = torch.bmm(T, torch.transpose(T, 1, 2))
                _, ni, nj = Z.shape
                offset = 0  # arch_interaction_itself False
                li = torch.tensor([i for i in range(ni) for j in range(i + offset)])
                lj = torch.tensor([j for i in range(nj) for j in range(i + offset)])
                Zflat = Z[:, li, lj]
                return torch.cat([x] + [Zflat], dim=1)

        return DotInteraction()
