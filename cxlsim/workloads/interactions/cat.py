"""``cat``: concatenation (DLRM's ``--arch-interaction-op=cat``): ``R = cat([x] + ly)``, the bottom
MLP's output followed by every pooled vector; output ``dense + tables·dim``, no parameters and no
arithmetic beyond the copy. Its backward is views (``CatBackward``'s narrows): no kernels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cxlsim.units import FP32_B
from cxlsim.workloads.interactions.interface import InteractionBase, Kernel, Stream, check_direction
from cxlsim.workloads.interactions.registry import register


@register
@dataclass(frozen=True)
class Cat(InteractionBase):
    """The concatenation interaction (module docstring)."""

    name: ClassVar[str] = "cat"

    def output_width(self) -> int:
        return self.input_width

    def kernels(self, batch: int, direction: str) -> list[Kernel]:
        check_direction(direction)
        if direction == "forward":
            return [Stream("cat_concat", 2.0 * FP32_B * batch * self.input_width)]
        return []

    def forward_ops(self, step: Any) -> None:
        n, w = self.n_vectors, self.input_width
        step.cat_kernels("cat", f"interaction: R = cat([x] + ly) of {n} inputs", "python", n,
                         FP32_B * step.shapes.batch * w)

    def backward_ops(self, step: Any) -> None:
        step.node("CatBackward0", "interaction backward: R = cat([x] + ly)")
        for _ in range(self.n_vectors):
            step.host_op("narrow", "interaction backward: CatBackward of R, one input's slice (view)", "cpp")

    def torch_module(self, torch: Any) -> Any:
        class CatInteraction(torch.nn.Module):
            def forward(self, x: Any, ly: list[Any]) -> Any:
                return torch.cat([x] + ly, dim=1)

        return CatInteraction()
