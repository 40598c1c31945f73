"""Upper bounds on what one run may be asked to hold or do, checked at load.

Contract: a request beyond a bound is refused before anything is allocated or simulated, with a
one-line :class:`~cxlsim.errors.ConfigError` naming the file (or option) and the key that sets the
size, the amount and the bound. The bounds are named assumptions, not physics: each keeps a run
within what one workstation holds (memory) and finishes in minutes (time); change them here, with
their reasons, if your machine or study needs more.
"""

from __future__ import annotations

from cxlsim.errors import ConfigError

#: assumption (named): at most 2.5e8 embedding lookups simulated in one run (all batches, all GPUs):
#: the index streams of a run hold a few int64 arrays of that length (2 GB each at the bound). The
#: paper's largest run, RM2 over 23 batches (20 measured, 2 warm-up, 1 closing), is 5.7e7.
MAX_RUN_LOOKUPS = 250_000_000

#: assumption (named): at most 1e5 embedding tables in one workload: production recommendation
#: models have hundreds to about a thousand (Meta's DLRM papers), and the table layout holds a few
#: arrays per table.
MAX_TABLES = 100_000

#: assumption (named): at most 256 modules in one memory role of one device, configured or
#: provisioned by capacity: above any one server (a two-socket host has 32 DIMM slots, a 2U NVMe
#: chassis 24 bays) or memory device; more data needs more devices (``topology.cxl_mems_count``).
MAX_MODULES_PER_ROLE = 256

#: assumption (named): at most 1e5 simulated events (interruptions and checkpoints, all schemes
#: together) in one failure-tolerance scenario: the event simulator handles about 3e3 per second
#: on one core (measured: side-by-side with mtbf_h 0.1, 1.5e4 events in 5.7 s), so a run stays
#: under a minute.
MAX_FT_EVENTS = 100_000

#: assumption (named): at most 2**16 entries of state in one memory module's model, counted as
#: the media state holds them: its banks, write-queue slots, write-combining-buffer entries, posted
#: writes (banks × write-queue slots with read priority) and controller slots
#: (:func:`cxlsim.devices.memory.interleave.module_state_entries`). Real modules hold a few hundred
#: (Optane: 64 XPBuffer entries, 64 write-queue slots; DDR4: 16 banks × 64 posted writes); at the
#: bound, a role of ``MAX_MODULES_PER_ROLE`` modules holds 2**24 entries of at most 32 B, about
#: 0.5 GB, and a batch takes about a minute (measured: 256 modules of 82,000 entries, cxl on rm1).
MAX_MODULE_STATE_ENTRIES = 2**16

#: assumption (named): at most 2**16 accesses in flight from one requester (a CPU's cores × line
#: fill buffers, a near-data engine's controllers × requests, a DMA channel): the detailed media
#: model keeps one slot per access in flight. Real requesters hold tens to hundreds (i5-9600K:
#: 6 × 12); NVMe's deepest queue holds 65,536 commands.
MAX_OUTSTANDING_REQUESTS = 2**16

#: Largest seed accepted, everywhere a seed is read (a flag, a system or scenario file, a sweep
#: spec, ``--set seed=``): numpy's seed sequences take any non-negative integer, but results files
#: store seeds as JSON numbers, exact up to 2**53.
MAX_SEED = 2**53


def check_bound(where: str, key: str, amount: float, bound: float, what: str, of: str) -> None:
    """Refuse ``amount`` of ``what`` (set by ``key`` of ``where``) above ``bound``, the bound on
    ``of`` (e.g. "modules in one device")."""
    if amount > bound:
        raise ConfigError(where, key, f"{what}: {amount:.3g}, above the bound of {bound:.3g} on {of} "
                          "(cxlsim/config/bounds.py)")



#: Plausible ranges, beside the hard bounds (stated in docs/reference.md, which prints this).
PLAUSIBLE_ASSUMPTION = """Assumption (named, stated once): a value is plausible when some built or
published device, system or workload has reached it, widened 10x on either side. A value outside
its plausible range but inside its bounds is accepted with a one-line warning naming the file or
option, the key and the range (a typo such as GB/s given in B/s, or ns given in s); outside the
bounds it stays an error. Zero never warns where the bounds allow it: throughout the schemas 0
means "none" or "disabled"."""

#: By unit, for every parameter whose key name ends in that unit and that declares no range of its
#: own (:attr:`cxlsim.config.params.Param.plausible`): (low, high).
PLAUSIBLE_BY_UNIT: dict[str, tuple[float, float]] = {
    "GB/s": (0.01, 1e5),
    "ns": (0.01, 1e8),
    "µs": (1e-5, 1e5),
    "GB": (1e-4, 1e6),
    "GiB": (1e-4, 1e6),
}

#: Samples per batch per accelerator.
PLAUSIBLE_BATCH_SIZE = (1, 655_360)
#: Lookups in one bag (one sample's lookups in one table).
PLAUSIBLE_BAG_SIZE = (1, 1_000)
#: Embedding tables in one model.
PLAUSIBLE_TABLES = (1, 10_000)
#: A CPU's cores and hardware threads.
PLAUSIBLE_CPU_CORES = (1, 1_920)
PLAUSIBLE_CPU_THREADS = (1, 3_840)
#: A GPU's streaming multiprocessors.
PLAUSIBLE_GPU_SMS = (1, 1_440)

#: What reached each end of each range, before widening (the reference page lists them).
PLAUSIBLE_REACHED: dict[str, tuple[tuple[float, float], str]] = {
    "bandwidth (GB/s)": (PLAUSIBLE_BY_UNIT["GB/s"], "a PCIe 1.0 lane or a hard disk (0.1 to 0.25 GB/s) to a "
                         "Blackwell GPU's HBM3e (8 TB/s)"),
    "latency (ns)": (PLAUSIBLE_BY_UNIT["ns"], "an SRAM access or a 3 GHz cycle (0.3 ns) to a hard disk's seek (10 ms)"),
    "latency (µs)": (PLAUSIBLE_BY_UNIT["µs"], "the same span as ns"),
    "capacity or data size (GB, GiB)": (PLAUSIBLE_BY_UNIT["GB"], "a CPU core's 1 MB L2 cache to a 61.44 TB NVMe SSD"),
    "batch size (samples per accelerator)": (PLAUSIBLE_BATCH_SIZE, "MLPerf DLRM-DCNv2's largest global batch, 65,536"),
    "bag size (lookups per bag)": (PLAUSIBLE_BAG_SIZE, "MLPerf DLRM-DCNv2's largest multi-hot bag, 100"),
    "embedding tables": (PLAUSIBLE_TABLES, "about a thousand in production models (Meta's DLRM papers)"),
    "CPU cores": (PLAUSIBLE_CPU_CORES, "AMD EPYC 9965, 192 cores"),
    "CPU hardware threads": (PLAUSIBLE_CPU_THREADS, "AMD EPYC 9965, 384 threads"),
    "GPU streaming multiprocessors": (PLAUSIBLE_GPU_SMS, "NVIDIA's full GH100, 144"),
}
