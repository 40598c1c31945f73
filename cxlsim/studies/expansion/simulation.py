"""The experiment's passes on the ``spr-cxl`` devices (:mod:`cxlsim.studies.expansion`).

A pass, sampled: ``SAMPLE_QUERIES`` queries, each of ``1 + Poisson(L − 1)`` rows drawn uniformly
(reading) from the table; the threads' misses as one closed loop of ``threads × fill buffers``
lines in flight. Each row is ``LINES_PER_ROW`` lines read;
a query's result, written with ordinary stores, is an ownership read and a write-back of its lines.
A row read hits the LLC with the probability of its share of the table (uniform rows, reading),
served at the LLC's rate. Each tier's accesses (by page: near pages of every near + far in DDR5)
are served by the tier's model: the DDR5 node's two channels, the expander's media behind its
crossing, each with its share of the loop by Little's law on the tiers' idle latencies
(:func:`~cxlsim.systems.tiering.loop_shares`). Core time: the host preset's lookup cost for the rows on ``threads`` cores. The pass
takes the longest of the tiers, the LLC hits and the cores (overlapped: an out-of-order core
keeps its misses in flight while it adds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cxlsim.devices.memory.media.media import AccessStream
from cxlsim.studies.expansion import settings as S
from cxlsim.systems.config import load_system
from cxlsim.systems.graph import DeviceGraph, build_devices
from cxlsim.systems.tiering import interleaved, loop_shares

LINE_B = 64


@dataclass(frozen=True)
class Point:
    threads: int
    ratio: tuple[int, int]
    query_length: int
    throughput_qps: float
    near_share: float  # of the memory accesses, on DDR5
    bound: str  # what set the pass time: ddr, cxl, llc, cores


def devices() -> DeviceGraph:
    """The platform's devices through the system's object graph (one build)."""
    cfg = load_system(S.SYSTEM, [("platform", S.PLATFORM), ("pipeline.table_placement", "interleave")])
    return build_devices(cfg)


@dataclass(frozen=True)
class Queries:
    rows: np.ndarray  # every query's rows, concatenated
    query_of: np.ndarray  # the query each row belongs to
    n: int


def queries(length: int, n: int = S.SAMPLE_QUERIES, seed: int = S.SEED) -> Queries:
    rng = np.random.default_rng([seed, length])
    sizes = 1 + rng.poisson(max(0.0, length - 1.0), n)
    rows = rng.integers(0, S.TABLE_ROWS, int(sizes.sum()))
    return Queries(rows, np.repeat(np.arange(n), sizes), n)


def _line_accesses(base_B: int, index: np.ndarray, lines: int) -> np.ndarray:
    """The first line address of each item (``S.ROW_B`` each from ``base_B``): a row spanning
    ``lines`` lines starts ``(lines - 4) × 32`` B into its first line (5: 32 B off alignment)."""
    offset = (lines - S.ROW_B // LINE_B) * (LINE_B // 2)
    return (base_B + index * S.ROW_B + offset) // LINE_B * LINE_B


def point(g: DeviceGraph, q: Queries, threads: int, ratio: tuple[int, int], length: int) -> Point:
    cpu = g["host_cpu"]
    near_w, far_w = ratio
    lines = S.LINES_PER_ROW
    table_B = S.TABLE_ROWS * S.ROW_B
    results_base = (table_B // S.PAGE_B + 1) * S.PAGE_B
    rng = np.random.default_rng([S.SEED, threads, near_w, length])
    llc_B = cpu.params.llc_capacity_B * S.LLC_SHARE
    hit = rng.random(q.rows.size) < min(1.0, llc_B / table_B)
    misses = q.rows[~hit]
    # in query order: the rows a query reads, then its result's ownership read and write-back
    order = np.argsort(np.concatenate([q.query_of[~hit], np.arange(q.n), np.arange(q.n)]), kind="stable")
    addr = np.concatenate([_line_accesses(0, misses, lines), _line_accesses(results_base, np.arange(q.n), lines),
                           _line_accesses(results_base, np.arange(q.n), lines)])[order]
    write = np.concatenate([np.zeros(misses.size + q.n, bool), np.ones(q.n, bool)])[order]
    page = addr // S.PAGE_B
    near = interleaved(page, near_w, far_w)
    size = lines * LINE_B
    in_flight = threads * cpu.params.line_fill_buffers_count // lines
    ends = {"llc": cpu.llc_hit_ns(int(hit.sum()) * lines) * cpu.params.cores_count / threads,
            "cores": cpu.lookup_compute_ns(q.rows.size, S.DIM, threads=threads)}
    tiers = (("ddr", near), ("cxl", ~near))
    device = g.attached["table_memory"]
    lat = [g["host_dram"].read_latency_ns("random"),
           g["table_memory"].read_latency_ns("random") + device.crossing().added_ns(size)]
    shares = loop_shares(in_flight, [int(sel.sum()) for _, sel in tiers], lat)
    for (tier, sel), out in zip(tiers, shares, strict=True):
        k = int(sel.sum())
        if not k:
            continue
        stream = AccessStream.of(np.zeros(k), addr[sel], size, write[sel])
        if tier == "ddr":
            model, role = g["host_dram"], g.config.devices["host_dram"]
            state = model.new_state(role.count, role.interleave_B)
            res = model.serve(stream, state, out, role.count, role.interleave_B, per_access=False)
        else:
            role = g.config.devices["table_memory"]
            model = g["table_memory"]
            state = model.new_state(role.count, role.interleave_B)
            res = model.serve(stream, state, out, role.count, role.interleave_B, per_access=False,
                              crossing=device.crossing())
        ends[tier] = res.done_ns
    bound = max(ends, key=ends.get)
    return Point(threads, ratio, length, q.n / (ends[bound] * 1e-9), float(near.mean()), bound)


def run(query_lengths: Sequence[int] = S.QUERY_LENGTHS, threads: Sequence[int] = S.THREADS,
        ratios: Sequence[tuple[int, int]] = S.RATIOS, progress: Callable[[str], None] | None = None) -> list[Point]:
    g = devices()
    out = []
    for length in query_lengths:
        q = queries(length)
        for ratio in ratios:
            for t in threads:
                out.append(point(g, q, t, ratio, length))
            if progress is not None:
                progress(f"L={length} {ratio[0]}:{ratio[1]}: " + " ".join(f"{p.throughput_qps / 1e6:.2f}" for p in out[-len(threads):]) + " M queries/s")
    return out
