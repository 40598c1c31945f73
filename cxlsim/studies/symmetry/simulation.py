"""The symmetry check's runs: full detail against the reduction at one point."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from cxlsim.api import simulate
from cxlsim.studies.symmetry.settings import settings


def kind(resource: str | None) -> str | None:
    """A resource's kind: its name less a trailing device number (``ndp.3`` → ``ndp``); a link's,
    less its direction and which link of its level (``link.s2.2.up`` → ``link.s2``, a trunk below
    level 2; ``link.dev4.down`` → ``link.dev``, a device's link)."""
    if resource is None:
        return None
    if resource.startswith("link."):
        resource = re.sub(r"^link\.dev\d+", "link.dev", re.sub(r"\.(up|down)$", "", resource))
    return re.sub(r"(\.\d+)+$", "", resource)


@dataclass(frozen=True)
class Comparison:
    system: str
    workload: str
    gpus: int
    mems: int
    full_ms: float
    reduced_ms: float
    full_bottleneck: str | None
    reduced_bottleneck: str | None
    full_s: float
    reduced_s: float
    platform: str | None = None  # the platform that filled the device roles

    @property
    def error(self) -> float:
        """Relative error of the reduced batch time (reduced / full − 1)."""
        return self.reduced_ms / self.full_ms - 1

    @property
    def throughput_error(self) -> float:
        return self.full_ms / self.reduced_ms - 1

    @property
    def same_bottleneck(self) -> bool:
        return kind(self.full_bottleneck) == kind(self.reduced_bottleneck)


def compare(system: str, workload: str, gpus: int, mems: int, batches: int = 2, warmup: int = 1,
            seed: int = 1) -> Comparison:
    """Full detail against the reduction at one point (the package docstring)."""
    out = {}
    for sym in ("off", "on"):
        t0 = time.perf_counter()
        d = simulate(system, workload, batches=batches, warmup=warmup, seed=seed, trace=False,
                     sets=settings(gpus, mems, sym)).to_dict()
        out[sym] = (d["batch_time_ms"]["mean"], (d["bottleneck"] or {}).get("resource"), time.perf_counter() - t0)
        platform = d.get("platform")
    (f_ms, f_b, f_s), (r_ms, r_b, r_s) = out["off"], out["on"]
    return Comparison(system, workload, gpus, mems, f_ms, r_ms, f_b, r_b, f_s, r_s, platform)
