"""The ``embedding_engine`` axis: who runs the embedding lookup and update.

Contract: an implementation is built once per machine, ``cls(machine)``, and gives

- ``lane``: the op lane of its lookup and update (``<lane>.<device>`` per memory device);
- ``device``: the model whose ``update_table_order`` orders the update's rows;
- ``on_device`` (it sits on the memory device: indices are handed over to it, double-buffered),
  ``bounces`` (a software copy to or from it bounces through host memory), ``maps_storage`` (it
  reaches an SSD holding the tables as memory-mapped storage);
- :meth:`outstanding`: rows it keeps in flight;
- :meth:`lookup_compute_ns`, :meth:`update_compute_ns`: compute time (ns) of a batch's lookup and
  update on one device, charging its activity to ``ledger``;
- :meth:`config`: the ``config`` step (the host hands batch ``n``'s indices to device ``m``);
- :meth:`check_batch`: refuse a batch it cannot hold; :meth:`declare_unused`: skip unused parameters;
- ``roles(pipeline)`` (class level): the device roles it needs.
"""

from __future__ import annotations

from cxlsim.engine.executor import OpOutcome


class EmbeddingEngine:
    """Base of the embedding engines (module docstring)."""

    lane = ""
    on_device = False
    bounces = False
    maps_storage = False

    def __init__(self, machine) -> None:
        self.m = machine

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return []

    @property
    def device(self):
        raise NotImplementedError

    def outstanding(self) -> int:
        raise NotImplementedError

    def lookup_compute_ns(self, b, ledger) -> float:
        raise NotImplementedError

    def update_compute_ns(self, b, ledger) -> float:
        raise NotImplementedError

    def config(self, n: int, t: float, m: int) -> OpOutcome:
        return self.m.mover.config(n, t, m)

    def check_batch(self) -> None:
        """Refuse what this engine cannot run (none by default)."""

    def declare_unused(self) -> None:
        """Skip the role parameters this engine does not read (none by default)."""
