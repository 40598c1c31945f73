"""The ``data_movement`` axis: how pooled vectors, gradients, indices and the all-reduce move.

Contract: an implementation is built once per machine, ``cls(machine)``, and gives

- ``lane``: the lane of its transfers (``<lane>.<mem>.<gpu>`` per device pair on a fabric);
- ``over_fabric``: its transfers hold the link directions of their path (:meth:`transfer_lanes`);
- :meth:`config`: the hand-over of batch ``n``'s indices to device ``m``'s engine;
- :meth:`move`: one transfer of ``nbytes`` from ``src`` to ``dst`` starting at ``t`` (ns), charging
  its link bytes; :meth:`move_class`: a reduced run's transfer as ``(total_ns, [(link, bytes)])``;
- :meth:`ring_step_ns`: one all-reduce ring step of ``size_B`` per GPU (ns);
  :meth:`count_ring_edge`: charge one ring edge's bytes over ``steps`` steps;
- :meth:`declare_unused`; ``roles(pipeline)`` (class level): the device roles it needs.
"""

from __future__ import annotations

from cxlsim.engine.executor import OpOutcome


class DataMover:
    """Base of the data movers (module docstring)."""

    lane = ""
    over_fabric = False

    def __init__(self, machine) -> None:
        self.m = machine

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return []

    def config(self, n: int, t: float, m: int) -> OpOutcome:
        raise NotImplementedError

    def move(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        raise NotImplementedError

    def move_class(self, nbytes: float, src, dst) -> tuple[float, list[tuple[str, float]]]:
        raise NotImplementedError

    def transfer_lanes(self, src, dst) -> tuple[str, ...]:
        return ()

    def ring_step_ns(self, size_B: float) -> float:
        raise NotImplementedError

    def count_ring_edge(self, src, dst, steps: int, shard_B: float) -> None:
        raise NotImplementedError

    def declare_unused(self) -> None:
        """Skip the role parameters this mover does not read (none by default)."""
