"""``persistence: none``: nothing is made durable (the dram baseline, and any system run without
persistence)."""

from __future__ import annotations

from cxlsim.axes.persistence import Persistence
from cxlsim.errors import InputError


class NoPersistence(Persistence):
    persists = False

    @classmethod
    def check_pipeline(cls, p, where: str) -> None:
        for key in ("checkpoint_on", "checkpoint_agent", "mlp_pull"):
            p.skip(key, "persistence is none")

    @classmethod
    def crash_check(cls, cfg, bug, mems) -> None:
        raise InputError(f"system {cfg.name!r} does not persist (pipeline.persistence: none); nothing to crash-test")
