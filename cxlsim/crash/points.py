"""Crash instants: every protocol step boundary of one batch, then instants drawn over the run.

Points ``0 … B−1`` are the boundaries of batch ``N // 2``: the start and end of each of its ops and
the issue and acknowledgement of each of its flag and deletion writes. The rest are seeded draws:
half uniform over the run, half inside the flight window of a write (a category — in-place data,
log/record content, flag or deletion line — then a write of it, then an instant between its issue and
acknowledgement), so that torn writes are exercised as often as quiet instants.
With several CXL-MEMs the boundaries are followed by the instants where the devices' flags of a
batch disagree (:func:`split_windows`: one device's log is flagged, another's not yet — the
global persistence rule's case): the first device's acknowledgement and the window's midpoint, for
every batch.
The torn-write choice of a point depends only on the seed and its instant (:func:`point_key`), so a
point replays alone (``--replay``).
"""

from __future__ import annotations

import numpy as np

from cxlsim.crash import image as im
from cxlsim.crash.kernels import mix64
from cxlsim.crash.timeline import Timeline
from cxlsim.rng import keyed_stream

STREAM_POINTS = 20


def point_key(seed: int, t_ns: float) -> np.uint64:
    """The torn-write key of a crash at ``t_ns``."""
    bits = np.array([t_ns], np.float64).view(np.uint64)[0]
    return np.uint64(mix64(np.uint64(mix64(np.uint64(seed))) ^ bits))


def boundaries(tl: Timeline, ev: im.Events, batch: int) -> np.ndarray:
    """Sorted distinct instants: each op of ``batch`` starts and ends; its flags/deletions issue/ack."""
    inst = [t for (name, n), span in tl.spans.items() if n == batch for t in span]
    lines = np.isin(ev.kind, (im.FLAG, im.DELETE)) & (ev.step_batch[ev.step] == batch)
    inst += list(ev.issue[lines]) + list(ev.ack[lines])
    return np.unique(np.asarray(inst, np.float64))


def end_ns(tl: Timeline, ev: im.Events) -> float:
    return max(tl.end_ns, float(ev.ack.max()) if len(ev) else 0.0)


def split_windows(proto) -> np.ndarray:
    """``(k, 2)`` windows ``[first ack, last ack)`` where the flags of one batch's embedding logs
    (or MLP logs completed at one batch) are durable on some CXL-MEMs and not yet on others; empty
    for one device. ``proto`` is a :class:`~cxlsim.crash.protocols.Protocol`."""
    ev = proto.events
    if len(proto.mems) < 2:
        return np.zeros((0, 2))
    acks: dict[tuple[int, bool], dict[int, float]] = {}
    for e in np.flatnonzero(ev.kind == im.FLAG):
        d = proto.mem_of_region(int(ev.region[e]))
        mlp = int(ev.addr[e]) >= proto.mems[d].mlp_flag_addr(0)
        acks.setdefault((int(ev.step_batch[ev.step[e]]), mlp), {})[d] = float(ev.ack[e])
    out = [(min(a.values()), max(a.values())) for _, a in sorted(acks.items())
           if len(a) == len(proto.mems) and max(a.values()) > min(a.values())]
    return np.asarray(out, np.float64).reshape(-1, 2)


def crash_instants(tl: Timeline, ev: im.Events, n_points: int, seed: int, proto=None) -> np.ndarray:
    """``n_points`` crash instants (ns), in point-index order (see module docstring); ``proto``
    (several CXL-MEMs) adds the instants of :func:`split_windows`."""
    b = boundaries(tl, ev, tl.n_batches // 2)
    if proto is not None:
        w = split_windows(proto)
        b = np.concatenate([b, w[:, 0], w.mean(axis=1)])
    if n_points <= b.size:
        return b[:n_points]
    rng = keyed_stream(seed, STREAM_POINTS)
    rest = n_points - b.size
    uniform = rng.uniform(0.0, end_ns(tl, ev), rest - rest // 2)
    cats = [np.flatnonzero(ev.kind == im.DATA), np.flatnonzero(ev.kind == im.LOG),
            np.flatnonzero(ev.kind == im.FLAG), np.flatnonzero(ev.kind == im.DELETE)]
    cats = [c for c in cats if c.size]
    inside = np.empty(rest // 2)
    for i in range(inside.size):
        c = cats[int(rng.integers(len(cats)))]
        e = c[int(rng.integers(c.size))]
        inside[i] = rng.uniform(ev.issue[e], ev.ack[e])
    return np.concatenate([b, uniform, inside])
