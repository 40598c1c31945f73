"""Crash instants: every protocol step boundary of one batch, then instants drawn over the run.

Points ``0 … B−1`` are the boundaries of batch ``N // 2``: the start and end of each of its ops and
the issue and acknowledgement of each of its flag and deletion writes. The rest are seeded draws:
half uniform over the run, half inside the flight window of a write (a category — in-place data,
log/record content, flag or deletion line — then a write of it, then an instant between its issue and
acknowledgement), so that torn writes are exercised as often as quiet instants.
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


def crash_instants(tl: Timeline, ev: im.Events, n_points: int, seed: int) -> np.ndarray:
    """``n_points`` crash instants (ns), in point-index order (see module docstring)."""
    b = boundaries(tl, ev, tl.n_batches // 2)
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
