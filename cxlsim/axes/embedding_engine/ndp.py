"""``embedding_engine: ndp``: the near-data logic beside the table memory (lookup, pooling, update)."""

from __future__ import annotations

import math

from cxlsim.axes.embedding_engine import EmbeddingEngine
from cxlsim.errors import InputError
from cxlsim.systems.scale import scratchpad_KiB


class NearData(EmbeddingEngine):
    """The ``ndp`` role's logic: its ports' requests in flight, its pooling and update adders."""

    lane = "ndp"
    on_device = True
    bounces = True  # a PCIe card: device → host → device

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return ["ndp"]

    @property
    def device(self):
        return self.m.ndp

    def outstanding(self) -> int:
        """The per-port limit on each of its memory-controller ports."""
        p = self.m.ndp.params
        return p.outstanding_per_mc_count * p.memory_controllers_count

    def lookup_compute_ns(self, b, ledger) -> float:
        ledger.logic.pooled_vectors += b.n_indices
        return self.m.ndp.pool_ns(b.n_indices, self.m.dim)

    def update_compute_ns(self, b, ledger) -> float:
        ledger.logic.updated_rows += b.n_unique
        ledger.logic.gradient_vectors += b.n_indices
        return self.m.ndp.update_ns(b.n_unique, self.m.dim, b.n_indices)

    def check_batch(self) -> None:
        """The near-data logic holds a batch's pooled vectors in its scratchpad until they are
        flushed to the GPUs (the ``ndp`` preset's sizing); spilling them to the memory is not
        modelled, so a batch that does not fit is refused."""
        m = self.m
        bags = max(math.ceil(m.B * m.system_gpus * m.transfer_tables(side.index)) for side in m.sides)
        need_B = m.ndp.scratchpad_B(bags, m.dim)
        if not m.ndp.scratchpad_fits(bags, m.dim):
            fix = scratchpad_KiB(need_B, m.ndp.params.scratchpad_KiB)
            raise InputError(
                f"devices.ndp.params.scratchpad_KiB: {m.ndp.params.scratchpad_KiB:g} KiB cannot hold a batch's "
                f"pooled vectors ({need_B / 1024:.0f} KiB: {bags} bags × {m.dim} fp32 on one device); "
                f"spilling them is not modelled: --set devices.ndp.params.scratchpad_KiB={fix:g} (or leave it "
                "unset: it then follows from the topology), or reduce the batch")

    def declare_unused(self) -> None:
        cpu = self.m.cpu.params
        why = "the embeddings run on the near-data logic (pipeline.embedding_engine: ndp)"
        for key in ("clock_GHz", "line_fill_buffers_count", "lookup_cycles_per_element",
                    "update_cycles_per_element", "per_vector_overhead_cycles", "update_table_order"):
            cpu.skip(key, why)
        if self.m.agent is None or not self.m.agent.uses_host_lines:
            cpu.skip("cache_line_B", "the host neither streams rows nor writes the persistent flags here")
