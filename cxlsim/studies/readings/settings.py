"""What the readings study runs: its catalog sweep (systems, workloads, platform), the readings the
paper leaves open and the headline claims."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cxlsim.sweep.lists import SweepLists, sweep_lists
from cxlsim.systems.config import SystemConfig, load_system

STUDY = "readings"
EMULATED = "pmem/u200-emulated"
Sets = list[tuple[str, Any]]


def study_lists() -> SweepLists:
    return sweep_lists(STUDY, needs=("systems", "workloads", "platforms"))


def study_config(system: str) -> SystemConfig:
    return load_system(system, [("platform", study_lists().platforms[0])])


def _emulated(cfg: SystemConfig) -> bool:
    dev = cfg.devices.get("table_memory")
    return dev is not None and dev.preset.name == EMULATED


def _host_engine(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["embedding_engine"] == "host_cpu"


def _undo(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["persistence"] == "undo"


def _cached(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["vector_cache_GB"] > 0


def _persists(cfg: SystemConfig) -> bool:
    return cfg.pipeline is not None and cfg.pipeline["persistence"] != "none"


def _when(pred: Callable[[SystemConfig], bool], sets: Sets) -> Callable[[SystemConfig], Sets]:
    return lambda cfg: list(sets) if pred(cfg) else []


def _always(cfg: SystemConfig) -> bool:
    return True


#: The emulated PMEM as the audited revision read it: Optane's 256 B XPLine, its write-combining
#: buffer and read-modify-write, three 256 B units per channel (docs/devices-media.md).
AUDITED_EMULATED_UNIT: Sets = [
    ("devices.table_memory.params.access_unit_B", 256),
    ("devices.table_memory.params.parallel_units_count", 3),
    ("devices.table_memory.params.bank_read_occupancy_ns", 0.0),
    ("devices.table_memory.params.wcb_entries", 64),
    ("devices.table_memory.params.read_modify_write", True),
]


@dataclass(frozen=True)
class Reading:
    """A reading the paper leaves open: the overrides giving the audited revision's reading on a
    system (``audited``) and those giving the other reading (``other``); both empty where it does
    not reach the system, and empty for whichever is cxlsim's default."""

    name: str
    what: str
    audited: Callable[[SystemConfig], Sets]
    other: Callable[[SystemConfig], Sets]


READINGS = (
    Reading("bags: DLRM benchmark", "bags of max(1, round(r x 80)) distinct rows (the DLRM benchmark's generator: "
            "bag_size dlrm_uniform, bag_dedup) instead of 80 rows",
            lambda c: [], _when(_always, [("workload_overrides.bag_size", "dlrm_uniform"),
                                          ("workload_overrides.bag_dedup", True)])),
    Reading("MLP width: fp16", "the MLP parameters logged and checkpointed as fp16 instead of fp32",
            lambda c: [], _when(_persists, [("workload_overrides.mlp_param_width", "fp16")])),
    Reading("emulated energy: as emulated", "the emulated PMEM priced as the Optane it emulates instead of DDR4",
            _when(_emulated, [("energy.emulated_media", "as_built")]), lambda c: []),
    Reading("log start: lookup", "cxl-b's embedding log starts after the lookup instead of with its inputs",
            _when(_undo, [("pipeline.undo_log_start", "inputs")]), lambda c: []),
    Reading("vector cache: steady", "ssd's vector cache in steady state instead of empty",
            _when(_cached, [("pipeline.vector_cache_start", "empty")]), lambda c: []),
    Reading("emulated unit: 64 B", "the emulated PMEM's access unit is the DDR4 controller's 64 B burst "
            "instead of Optane's 256 B XPLine", _when(_emulated, AUDITED_EMULATED_UNIT), lambda c: []),
    Reading("host LLC", "the i5-9600K's 9 MB L3 in front of the host's table memory",
            _when(_host_engine, [("devices.host_cpu.params.llc_capacity_B", 0)]), lambda c: []),
)


def column_sets(column: str, cfg: SystemConfig) -> Sets:
    """The overrides of ``column`` (``audited``, a reading's name, or ``defaults``) on ``cfg``."""
    if column == "defaults":
        return []
    out: Sets = []
    for r in READINGS:
        out += r.other(cfg) if r.name == column else r.audited(cfg)
    return out


def columns() -> list[str]:
    return ["audited", *(r.name for r in READINGS), "defaults"]


def _geo(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _ratio(res: dict, num: str, den: str, key: str, workloads: Sequence[str]) -> float:
    return _geo([res[w][num][key] / res[w][den][key] for w in workloads])


@dataclass(frozen=True)
class Claim:
    """A headline claim: the paper's value (text) and cxlsim's under one column's results."""

    name: str
    paper: str
    value: Callable[[dict, Sequence[str]], float]
    unit: str = "×"


def _ex_ckpt(r: dict) -> float:
    return r["batch_ms"] - r["checkpoint_ms"]


CLAIMS = (
    Claim("cxl vs pmem speed-up (geomean)", "5.2×", lambda res, ws: _ratio(res, "pmem", "cxl", "batch_ms", ws)),
    Claim("cxl energy vs pmem (geomean)", "0.24× (76 % saving)",
          lambda res, ws: _ratio(res, "cxl", "pmem", "energy_J", ws)),
    Claim("cxl-d vs pcie speed-up (geomean)", "1.23× (23 % faster)",
          lambda res, ws: _ratio(res, "pcie", "cxl-d", "batch_ms", ws)),
    Claim("cxl vs cxl-b speed-up (geomean)", "1.14× (14 % faster)",
          lambda res, ws: _ratio(res, "cxl-b", "cxl", "batch_ms", ws)),
    Claim("cxl-b's gain over cxl-d, RM1 (ms)", "1.6 ms (Figure 12)",
          lambda res, ws: res["rm1"]["cxl-d"]["batch_ms"] - res["rm1"]["cxl-b"]["batch_ms"] if "rm1" in res
          else float("nan"), "ms"),
    Claim("pmem vs ssd, checkpoint excluded (RM1, RM2 geomean)", "949×",
          lambda res, ws: _geo([_ex_ckpt(res[w]["ssd"]) / _ex_ckpt(res[w]["pmem"]) for w in ("rm1", "rm2") if w in res])
          if any(w in res for w in ("rm1", "rm2")) else float("nan")),
    Claim("dram energy vs pmem (RM1, RM2 geomean)", "> 1 (DRAM consumes more)",
          lambda res, ws: _geo([res[w]["dram"]["energy_J"] / res[w]["pmem"]["energy_J"] for w in ("rm1", "rm2") if w in res])
          if any(w in res for w in ("rm1", "rm2")) else float("nan")),
)
