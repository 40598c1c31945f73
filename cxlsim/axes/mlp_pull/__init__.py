"""The ``mlp_pull`` axis: how MLP parameters travel from a GPU to the checkpoint.

Contract: an implementation is built once per machine (only for a persisting pipeline),
``cls(machine)``, and gives ``by_device`` (the device pulls them itself, so a DMA agent counts the
bytes), :meth:`pull_ns` (ns to bring ``nbytes`` to memory device ``m``) and :meth:`count`
(charge the link bytes of one pull); ``roles(pipeline)`` (class level): the roles it needs.
"""

from __future__ import annotations


class MlpPull:
    """Base of the MLP pulls (module docstring)."""

    by_device = False

    def __init__(self, machine) -> None:
        self.m = machine

    @classmethod
    def roles(cls, pipeline) -> list[str]:
        return []

    def pull_ns(self, nbytes: float, m: int) -> float:
        raise NotImplementedError

    def count(self, side, nbytes: float) -> None:
        raise NotImplementedError

    def declare_unused(self) -> None:
        """Skip the role parameters this pull does not read (none by default)."""
