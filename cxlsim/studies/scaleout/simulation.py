"""The scale-out study's points, read from its sweeps' output (the sweeps run with ``cxlsim
sweep``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.errors import InputError
from cxlsim.studies.scaleout.settings import GPUS_PER_MEM_AT_SCALE, MAX_MEMS_ONE_LEVEL, scale_gpus


@dataclass(frozen=True)
class ScalePoint:
    """One finished point of the sweep (units: samples/s, J, ns)."""

    system: str
    workload: str
    gpus: int
    mems: int | None  # None: the system has no memory devices to count (pmem, tpu-ps)
    levels: int | None
    throughput_samples_per_s: float
    energy_J_per_batch: float | None
    samples_per_batch: float
    bottleneck: str | None
    bottleneck_utilisation: float | None
    platform: str | None = None  # the platform that filled the device roles (None: not recorded)

    @property
    def energy_per_sample_mJ(self) -> float | None:
        if self.energy_J_per_batch is None:
            return None
        return 1e3 * self.energy_J_per_batch / self.samples_per_batch

    @property
    def balanced(self) -> bool:
        return (self.mems is None or self.mems == min(self.gpus, MAX_MEMS_ONE_LEVEL)) and self.levels in (None, 1)

    @property
    def at_scale(self) -> bool:
        """A point of the study at scale (the package docstring)."""
        return self.gpus in scale_gpus() and (self.mems is None or self.mems * GPUS_PER_MEM_AT_SCALE == self.gpus)


def read_points(out: str | Path) -> list[ScalePoint]:
    """The finished points of a sweep folder (its ``points.jsonl``; the last record of a point wins)
    or of a sweep's ``results.csv``."""
    if str(out).endswith(".csv"):
        return _csv_points(Path(out))
    path = Path(out) / "points.jsonl"
    if not path.is_file():
        raise InputError(f"{out}: no points.jsonl (run `cxlsim sweep configs/sweeps/scale-out.yaml --out {out}`)")
    records: dict[str, Mapping[str, Any]] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"{path}: line {n} is not JSON") from None
        records[rec["id"]] = rec
    return [p for p in map(_point, records.values()) if p is not None]


def _csv_points(path: Path) -> list[ScalePoint]:
    import csv

    if not path.is_file():
        raise InputError(f"{path}: no such file")

    def num(v: str) -> int | None:
        return int(float(v)) if v not in ("", None) else None

    out = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if r.get("status") != "ok":
                continue
            thr, bt_s = float(r["throughput_samples_per_s"]), float(r["batch_time_ms"]) / 1e3
            energy = r.get("energy_J_per_batch")
            out.append(ScalePoint(r["system"], r["workload"], num(r.get("topology.gpus_count", "")) or 1,
                                  num(r.get("topology.cxl_mems_count", "")), num(r.get("devices.switch.levels", "")),
                                  thr, float(energy) if energy else None, thr * bt_s, None, None,
                                  r.get("platform") or None))
    return out


def _point(rec: Mapping[str, Any]) -> ScalePoint | None:
    if rec.get("status") != "ok" or not rec.get("result"):
        return None
    r, sw = rec["result"], rec["swept"]
    bt_s = r["batch_time_ms"]["mean"] / 1e3
    energy = r.get("energy_J_per_batch")
    bn = r.get("bottleneck") or {}
    return ScalePoint(
        system=sw["system"], workload=sw["workload"], gpus=int(sw.get("topology.gpus_count") or 1),
        mems=sw.get("topology.cxl_mems_count"), levels=sw.get("devices.switch.levels"),
        throughput_samples_per_s=float(r["throughput_samples_per_s"]),
        energy_J_per_batch=None if energy is None else float(energy["total"]),
        samples_per_batch=float(r["throughput_samples_per_s"]) * bt_s,
        bottleneck=bn.get("resource"), bottleneck_utilisation=bn.get("utilisation"),
        platform=r.get("platform") or sw.get("platform"))


def platforms_label(points: Iterable[ScalePoint]) -> str:
    """``platform P`` (or ``platforms P, Q``) of the points, in first-seen order; ``platform
    unrecorded`` when none says."""
    names = list(dict.fromkeys(p.platform for p in points if p.platform))
    if not names:
        return "platform unrecorded"
    return ("platform " if len(names) == 1 else "platforms ") + ", ".join(names)
