"""What each batch did: the one typed record that energy, reports, crash timelines and tests read.

The machine fills a :class:`BatchLedger` per batch while that batch's ops run (media traffic per
memory role, bytes per link path, the near-data and checkpointing logic's work, read-after-write
stalls, the relaxed MLP log's progress); :func:`batch_activity` joins it with the executor's
records (wall time, busy time per lane, the steps that ran) into one frozen :class:`BatchActivity`
per batch.

Attribution: a batch's *wall time* is from its ``begin`` to the next batch's; its *work* (busy
time, bytes, operations) is that of the ops tagged with its number, wherever they ran (with
relaxed lookup, batch n+1's lookup runs inside batch n's window). In steady state both give the
same average; warm-up batches are excluded by the caller.

An analytic model (``tpu-ps``, :mod:`cxlsim.systems.tpu_ps_run`) has no executor or ledger: it
records what each of its devices did directly, one :class:`~cxlsim.devices.base.Usage` per role
(:attr:`BatchActivity.usage`), and leaves the op-graph fields empty. The energy model prices a
role's usage through its family's hook whichever way it was recorded (:mod:`cxlsim.energy.model`).

Units: ns, bytes, counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from cxlsim.devices.base import Usage
from cxlsim.devices.memory.media import media_index as MI
from cxlsim.engine.executor import Executor
from cxlsim.engine.trace import Traffic

#: Steps that keep every host core busy when they run on ``host_cpu``: the embedding operations and
#: the host's redo copy issue their memory streams from every core (the timing model gives them
#: ``cores × line_fill_buffers`` outstanding requests). Other host steps (configuration, the
#: software data movement's memcpy, launch and synchronisation calls) hold one core.
ALL_CORE_STEPS = frozenset({"lookup", "update", "redo"})

#: Link paths the machine counts: ``pcie`` (bytes per PCIe leg), and ``cxl:<src>><dst>`` for the CXL
#: path between two endpoints (``host``, ``gpu<g>``, ``mem<m>``; wire bytes per link of that path).
PCIE = "pcie"
CXL_PREFIX = "cxl:"


def cxl_path_key(src: object, dst: object) -> str:
    """The ledger key of the CXL path from ``src`` to ``dst`` (``"host"``, ``("gpu", g)``, ``("mem", m)``)."""
    def name(ep: object) -> str:
        return ep if isinstance(ep, str) else f"{ep[0]}{ep[1]}"
    return f"{CXL_PREFIX}{name(src)}>{name(dst)}"


def cxl_path_endpoints(key: str) -> tuple[object, object]:
    """The endpoints of a :func:`cxl_path_key` (inverse)."""
    def ep(text: str) -> object:
        if text == "host":
            return "host"
        kind = text.rstrip("0123456789")
        return (kind, int(text[len(kind):]))
    src, dst = key[len(CXL_PREFIX):].split(">")
    return ep(src), ep(dst)


@dataclass
class MediaTraffic:
    """Bytes one memory role moved: media units read and written, bytes its requesters asked for,
    and the requests (accesses) they issued to it."""

    media_read_B: float = 0.0
    media_write_B: float = 0.0
    requested_B: float = 0.0
    accesses: int = 0


#: Entries of a statistics vector kept as the largest when two are added (the most, the capacities).
LARGEST = [MI.S_READ_MAX_NS, MI.S_WRITE_MAX_NS, MI.S_WQ_MAX, MI.S_PQ_MAX, MI.S_XR_MAX, MI.S_XW_MAX, MI.S_SLOTS,
           MI.S_WQ_CAP, MI.S_CROSSING, MI.S_XR_CAP, MI.S_XW_CAP]


@dataclass
class AccessStats:
    """What one step's accesses to one memory met (collected only when a run asks for
    statistics): ``vector`` is the media model's statistics vector (``media_index.S_*``), filled as
    it serves them: latency count, sum, most and histogram per read/write, requested bytes,
    requester slots, write queues, the fabric crossing's link and device queues, bank busy time,
    the capacities seen."""

    vector: np.ndarray = field(default_factory=lambda: np.zeros(MI.N_S))

    def add(self, other: AccessStats) -> None:
        """Add ``other``'s counts (the most and the capacities: the larger)."""
        keep = np.maximum(self.vector[LARGEST], other.vector[LARGEST])
        self.vector += other.vector
        self.vector[LARGEST] = keep


@dataclass
class LogicWork:
    """Operations of the memory device's logic in one batch."""

    pooled_vectors: int = 0  # vectors sum-pooled by the near-data logic (lookup)
    updated_rows: int = 0  # distinct rows the near-data logic updated
    gradient_vectors: int = 0  # gradient vectors it accumulated into them
    corrected_vectors: int = 0  # vectors added by the relaxed-lookup correction
    dma_B: float = 0.0  # bytes the checkpointing logic copied (logged rows, MLP parameters it pulled)


@dataclass
class BatchLedger:
    """Mutable per-batch accumulators the machine fills (see :class:`BatchActivity`)."""

    media: dict[str, MediaTraffic] = field(default_factory=dict)
    link_B: dict[str, float] = field(default_factory=dict)
    logic: LogicWork = field(default_factory=LogicWork)
    mlp_log_B: float = 0.0
    raw_stall_ns: float = 0.0
    raw_stall_count: int = 0
    cache_lookups: int = 0
    cache_hits: int = 0
    cache_writebacks: int = 0
    llc_lines: int = 0  # lines the host's last-level cache served or missed (every op through it)
    llc_hits: int = 0
    llc_lookup_lines: int = 0  # of which the embedding lookup's
    llc_lookup_hits: int = 0
    llc_writeback_B: float = 0.0  # bytes of dirty lines it evicted to the memory below
    mlp_log_gap_batches: int = 0
    gpu_kernel_ns: float = 0.0  # kernels and copies on the GPUs' streams
    host_dispatch_ns: float = 0.0  # the dispatching threads' busy time (framework dispatch and calls)
    #: statistics (a run that collects them; None: off, nothing below is filled): (memory key, step)
    #: -> what that step's accesses to that memory met; link path -> transfers charged to it
    access: dict[tuple[str, str], AccessStats] | None = None
    link_count: dict[str, int] | None = None

    @classmethod
    def collecting(cls) -> BatchLedger:
        """A ledger that also collects statistics (:attr:`access`, :attr:`link_count`)."""
        return cls(access={}, link_count={})

    def access_stats(self, key: str, step: str) -> AccessStats:
        """The statistics record of ``step``'s accesses to memory ``key`` (the ledger collects them)."""
        return self.access.setdefault((key, step), AccessStats())

    def traffic(self, role: str) -> MediaTraffic:
        return self.media.setdefault(role, MediaTraffic())

    def add_link(self, path: str, size_B: float) -> None:
        if path != PCIE and not path.startswith(CXL_PREFIX):
            raise ValueError(f"unknown link path {path!r}")
        self.link_B[path] = self.link_B.get(path, 0.0) + size_B
        if self.link_count is not None:
            self.link_count[path] = self.link_count.get(path, 0) + 1

    def tally(self) -> tuple[dict[str, float], dict[str, float], int]:
        """A snapshot for :meth:`charged_since`: bytes per link path, media bytes per memory role,
        rows the near-data logic pooled or updated."""
        return (dict(self.link_B), {k: t.media_read_B + t.media_write_B for k, t in self.media.items()},
                self.logic.pooled_vectors + self.logic.updated_rows)

    def charged_since(self, before: tuple[dict[str, float], dict[str, float], int], into: Traffic) -> Traffic:
        """Add to ``into`` what was charged to this ledger since :meth:`tally` gave ``before``."""
        links, media, rows = before
        for k, v in self.link_B.items():
            if v != links.get(k, 0.0):
                into.link_B[k] = into.link_B.get(k, 0.0) + v - links.get(k, 0.0)
        for k, t in self.media.items():
            v = t.media_read_B + t.media_write_B
            if v != media.get(k, 0.0):
                into.media_B[k] = into.media_B.get(k, 0.0) + v - media.get(k, 0.0)
        into.rows += self.logic.pooled_vectors + self.logic.updated_rows - rows
        return into


@dataclass(frozen=True)
class BatchActivity:
    """One batch's activity (module docstring for attribution; units ns, bytes, counts)."""

    batch: int
    wall_ns: float
    lane_busy_ns: Mapping[str, float]  # lane -> busy time of this batch's ops on it
    host_core_busy_ns: float  # host busy time weighted by the share of cores busy
    steps: frozenset[str]  # dataflow steps this batch ran
    media: Mapping[str, MediaTraffic]  # memory role -> traffic
    link_B: Mapping[str, float]  # link path -> bytes
    logic: LogicWork
    mlp_log_B: float  # MLP parameter bytes written to the log or redo record
    raw_stall_ns: float  # read-after-write stall of the batch's lookup
    raw_stall_count: int
    cache_hit_fraction: float | None  # host vector cache, None without one
    cache_writebacks: int
    mlp_log_gap_batches: int  # relaxed MLP log: embedding-log batch − MLP-log batch
    gpu_kernel_ns: float = 0.0  # stream busy time of the batch's GPU phases (every GPU)
    host_dispatch_ns: float = 0.0  # host time dispatching them (one core each; 0 when the GPU replays)
    #: identical groups this activity is one of (a symmetry-reduced run, :mod:`cxlsim.systems.symmetry`):
    #: the extensive quantities above are one group's; the system's are ``groups`` times them (the
    #: host's lane work excepted: the reduced run already times the host every group shares)
    groups: int = 1
    #: role -> what that role's devices did over the batch (count, busy time, bytes), where the model
    #: records it directly (an analytic model's devices; empty for the op-graph systems, whose usage
    #: the energy model reads from the fields above by each family's kind)
    usage: Mapping[str, Usage] = field(default_factory=dict)
    start_ns: float = 0.0  # when the batch began (ns on the run's clock)
    #: the host's last-level cache (:mod:`cxlsim.systems.host_llc`; all 0 without one): lines
    #: touched and hit by every op through it, by the embedding lookup, bytes written back below
    llc_lines: int = 0
    llc_hits: int = 0
    llc_lookup_lines: int = 0
    llc_lookup_hits: int = 0
    llc_writeback_B: float = 0.0
    #: statistics, where the run collected them (else empty): (memory key, step) -> what that
    #: step's accesses to that memory met; link path -> transfers charged to it; the host vector
    #: cache's lookups and hits (counts)
    access: Mapping[tuple[str, str], AccessStats] = field(default_factory=dict)
    link_count: Mapping[str, int] = field(default_factory=dict)
    cache_lookups: int = 0
    cache_hits: int = 0

    @classmethod
    def analytic(cls, batch: int, wall_ns: float, usage: Mapping[str, Usage], start_ns: float = 0.0,
                 lane_busy_ns: Mapping[str, float] | None = None, steps: frozenset[str] = frozenset()) -> BatchActivity:
        """An analytic model's batch: what its devices did (``usage``), its lanes' busy time and the
        work it ran; none of the op-graph records (media, links, memory-device logic, logs)."""
        return cls(batch=batch, wall_ns=wall_ns, lane_busy_ns=dict(lane_busy_ns or {}), host_core_busy_ns=0.0,
                   steps=steps, media={}, link_B={}, logic=LogicWork(), mlp_log_B=0.0, raw_stall_ns=0.0,
                   raw_stall_count=0, cache_hit_fraction=None, cache_writebacks=0, mlp_log_gap_batches=0,
                   usage=dict(usage), start_ns=start_ns)

    def compute_busy_ns(self) -> dict[str, float]:
        """Busy time of each compute role that ran work (role -> ns, summed over its devices): the
        GPUs' streams (``gpu_kernel_ns``) and the host's core-weighted time (``host_core_busy_ns``).
        A compute role absent here (``replay_host``: the host a replayed step was measured with) is
        no device of the system and draws no power."""
        return {"gpu": self.gpu_kernel_ns, "host_cpu": self.host_core_busy_ns}


def batch_activity(executor: Executor, ledgers: Mapping[int, BatchLedger], spans: Mapping[int, tuple[float, float]],
                   host_cores: int, host_threads: int, batches: Iterable[int], groups: int = 1) -> list[BatchActivity]:
    """Activity of each batch in ``batches``: ledger + executor records; ``spans[n]`` is batch
    ``n``'s (begin, next begin) in ns; ``groups``: :attr:`BatchActivity.groups` (every group's
    GPUs have their own dispatching threads on the host)."""
    threads = min(host_threads, host_cores)
    by_batch: dict[int, list] = {}
    for (name, n), rec in executor.records.items():
        if rec.end_ns == rec.end_ns:  # ran (records of ops skipped at the stop keep NaN)
            by_batch.setdefault(n, []).append((name, rec))
    out = []
    for n in batches:
        t0, t1 = spans[n]
        busy: dict[str, float] = {}
        core_ns = 0.0
        for name, rec in by_batch.get(n, []):
            d = rec.end_ns - rec.start_ns
            lane = rec.op.lane
            for held in (lane, *rec.op.holds):  # a transfer keeps every link of its path busy
                busy[held] = busy.get(held, 0.0) + d
            if lane == "host_cpu":
                core_ns += d * (threads if name in ALL_CORE_STEPS else 1) / host_cores
        led = ledgers.get(n, BatchLedger())
        core_ns += groups * led.host_dispatch_ns / host_cores
        out.append(BatchActivity(
            batch=n,
            wall_ns=t1 - t0,
            lane_busy_ns=busy,
            host_core_busy_ns=core_ns,
            steps=frozenset(name for name, _ in by_batch.get(n, [])),
            media={role: MediaTraffic(**vars(tr)) for role, tr in led.media.items()},
            link_B=dict(led.link_B),
            logic=LogicWork(**vars(led.logic)),
            mlp_log_B=led.mlp_log_B,
            raw_stall_ns=led.raw_stall_ns,
            raw_stall_count=led.raw_stall_count,
            cache_hit_fraction=(led.cache_hits / led.cache_lookups) if led.cache_lookups else None,
            cache_writebacks=led.cache_writebacks,
            mlp_log_gap_batches=led.mlp_log_gap_batches,
            gpu_kernel_ns=led.gpu_kernel_ns,
            host_dispatch_ns=led.host_dispatch_ns,
            groups=groups,
            start_ns=t0,
            llc_lines=led.llc_lines,
            llc_hits=led.llc_hits,
            llc_lookup_lines=led.llc_lookup_lines,
            llc_lookup_hits=led.llc_lookup_hits,
            llc_writeback_B=led.llc_writeback_B,
            access=dict(led.access or {}),
            link_count=dict(led.link_count or {}),
            cache_lookups=led.cache_lookups,
            cache_hits=led.cache_hits,
        ))
    return out
