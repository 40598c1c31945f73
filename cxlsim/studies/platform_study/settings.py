"""What the platform study varies: its catalog sweep (systems, workloads, one platform), the
prototype's named assumptions and the paper's conclusions it tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cxlsim.errors import ConfigError
from cxlsim.sweep.lists import SweepLists, sweep_lists
from cxlsim.systems.config import load_system

#: The catalog sweep naming the study's systems, workloads and its one platform.
STUDY = "platform-study"
FACTORS = (0.5, 2.0)
BASELINE = "pmem"
#: The CXL systems whose speed-ups over :data:`BASELINE` the study reports.
CXL_SYSTEMS = ("cxl-d", "cxl-b", "cxl")
#: The systems :data:`CONCLUSIONS` and the speed-ups compare: the study's sweep must list them.
COMPARED = (BASELINE, "pcie", *CXL_SYSTEMS)


def study_lists() -> SweepLists:
    """The study's sweep (:data:`STUDY`): its systems (at least :data:`COMPARED`), workloads and one
    platform; :class:`~cxlsim.errors.ConfigError` naming the file and key otherwise."""
    lists = sweep_lists(STUDY, needs=("systems", "workloads", "platforms"))
    missing = [s for s in COMPARED if s not in lists.systems]
    if missing:
        raise ConfigError(lists.source, "base.systems", f"the study compares {', '.join(COMPARED)}: "
                          f"{', '.join(missing)} missing")
    if len(lists.platforms) != 1:
        raise ConfigError(lists.source, "base.set.platform", f"the study runs on one platform, got "
                          f"{', '.join(lists.platforms)}")
    return lists


@dataclass(frozen=True)
class Assumption:
    """A named assumption of the prototype: parameter ``key`` of preset ``preset`` (or, with
    ``count``, the module count of the roles holding that preset)."""

    name: str
    preset: str
    key: str
    what: str
    count: bool = False
    maximum: float | None = None
    #: the factors it is scaled by (an assumption with a second reading from a source adds the
    #: factor that gives it)
    factors: tuple[float, ...] = FACTORS
    #: the roles it is set on (empty: every role holding ``preset``)
    roles: tuple[str, ...] = ()
    #: a measured parameter is run at the readings of its sources instead of scaled: ``(label,
    #: ((key, value), ...))`` each, its variants then the labels (:meth:`variants`)
    readings: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    def variants(self) -> tuple[float | str, ...]:
        """Its variants: the readings' labels where it has readings, else the factors."""
        return tuple(label for label, _ in self.readings) or self.factors

    def sets(self, system: str, factor: float | str) -> list[tuple[str, Any]]:
        """The overrides that scale it by ``factor``, or set it to the reading labelled ``factor``,
        on ``system`` (none where it does not reach)."""
        cfg = load_system(system, [("platform", study_lists().platforms[0])])
        out: list[tuple[str, Any]] = []
        for role, dev in cfg.devices.items():
            if dev.preset.name != self.preset or (self.roles and role not in self.roles):
                continue
            if isinstance(factor, str):
                values = dict(self.readings)[factor]
                out += [(f"devices.{role}.params.{key}", value) for key, value in values]
                continue
            if self.count:
                out.append((f"devices.{role}.count", max(1, round(dev.count * factor))))
                continue
            v = dev.params[self.key] * factor
            if self.maximum is not None:
                v = min(v, self.maximum)
            out.append((f"devices.{role}.params.{self.key}", round(v) if isinstance(dev.params[self.key], int) else v))
        return out


#: The U200's PCIe 3.0 x16 raw rate per direction (16 lanes × 8 GT/s × 128/130 / 8), GB/s: the
#: measured DMA rates over it are the preset's efficiencies.
U200_RAW_GBPS = 16 * 8 * 128 / 130 / 8
ASSUMPTIONS = (
    Assumption("riscv_clock", "cpu/riscv-u200", "clock_GHz", "the RISC-V soft core's clock (100 MHz)"),
    Assumption("riscv_ipc", "cpu/riscv-u200", "software_ipc", "its IPC on host software (0.7)"),
    Assumption("riscv_mmio", "cpu/riscv-u200", "mmio_write_instructions", "its cost per MMIO register write (30)"),
    Assumption("u200_cxl_port_latency", "cxl_link/alveo-u200-gen3x16", "port_latency_ns",
               "the U200 CXL controller's port latency (62 ns)"),
    Assumption("u200_pcie_efficiency", "pcie/u200-gen3-x16", "h2d_efficiency_fraction",
               "the U200 PCIe DMA engine's efficiency per direction, measured ([xilinx-vitis-tutorials-281], "
               "[xilinx-xrt-pr2065]; the preset the midpoints, 9.44 GB/s host → card, 11.94 card → host): at each tool's reading",
               readings=(("xbutil validate 9.30/11.91 GB/s", (("h2d_efficiency_fraction", 9.30 / U200_RAW_GBPS),
                                                              ("d2h_efficiency_fraction", 11.91 / U200_RAW_GBPS))),
                         ("xbutil dmatest 9.58/11.96 GB/s", (("h2d_efficiency_fraction", 9.58 / U200_RAW_GBPS),
                                                             ("d2h_efficiency_fraction", 11.96 / U200_RAW_GBPS))))),
    Assumption("u200_pcie_dma_latency", "pcie/u200-gen3-x16", "dma_latency_ns", "its DMA latency (2 us)"),
    Assumption("ndp_outstanding", "ndp/alveo-u200", "outstanding_per_mc_count",
               "near-data logic: outstanding reads per memory controller (32)"),
    Assumption("ndp_adder_lanes", "ndp/alveo-u200", "adder_lanes",
               "near-data logic: fp32 adder lanes (64; pooling, gradient accumulation, the relaxed correction)"),
    Assumption("ckpt_read_outstanding", "ckpt_logic/alveo-u200", "read_outstanding_count",
               "checkpointing logic: outstanding DMA reads (32)"),
    Assumption("ckpt_write_outstanding", "ckpt_logic/alveo-u200", "write_outstanding_count",
               "checkpointing logic: outstanding DMA write bursts (32)"),
    Assumption("dcoh_occupancy", "cxl_protocol/fpga", "dcoh_occupancy_ns", "the FPGA DCOH's time per line (4 ns)"),
    Assumption("host_llc", "cpu/i5-9600k", "llc_capacity_B",
               "the i5-9600K's L3 given to table lines (9 MiB; ×0: no LLC, every host lookup reaches the media)",
               factors=(0.0, *FACTORS), roles=("host_cpu",)),
    Assumption("optane_modules", "pmem/optane-100", "count", "the 512 GB Optane split into modules (4)", count=True),
    Assumption("emulated_outstanding", "pmem/u200-emulated", "controller_outstanding_count",
               "the emulating DDR4 controller's requests in flight (16; ×0.25 = 4 is the reading of Table 2: "
               "its 0.1× DRAM write bandwidth is 4 × 256 B / 630 ns by Little's law)", factors=(0.25, *FACTORS)),
)


def _speedup(bt: dict[str, float], s: str) -> float:
    return bt[BASELINE] / bt[s]


#: The paper's comparisons, as predicates over one workload's batch times (ms) by system.
CONCLUSIONS: dict[str, tuple[str, Callable[[dict[str, float]], bool]]] = {
    "order": ("cxl <= cxl-b <= cxl-d <= pcie", lambda bt: bt["cxl"] <= bt["cxl-b"] <= bt["cxl-d"] <= bt["pcie"]),
    "cxl_beats_pmem": ("cxl faster than pmem", lambda bt: _speedup(bt, "cxl") > 1),
    "cxl_d_beats_pmem": ("cxl-d faster than pmem", lambda bt: _speedup(bt, "cxl-d") > 1),
    "cxl_d_beats_pcie": ("cxl-d faster than pcie (CXL.cache vs the software path)", lambda bt: bt["cxl-d"] < bt["pcie"]),
}


def label(variant: float | str) -> str:
    """A variant as the table names it: ``×2`` for a factor, the reading's label for a reading."""
    return variant if isinstance(variant, str) else f"×{variant:g}"
