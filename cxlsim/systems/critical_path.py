"""Attribute each batch's time to the operations on its critical path (paper Figure 11 categories).

A batch spans from its begin op's start to the next batch's begin op's start. Walking back from the
next batch's begin op, each op was released by its ``gate`` (the dependency that ended last, a
dependency's start, or the lane's previous holder); the gate's busy interval, clipped to the batch
span, is charged to the gate's category. Consecutive gates touch, so the charges sum to the batch
time exactly; anything not explained by a gate (never expected) is charged to ``idle``.

Contract: :func:`breakdown` returns ``{category: ns}`` over ``CATEGORIES + ("idle",)`` summing to
the batch time, plus the ordered list of ops on the path.
"""

from __future__ import annotations

from cxlsim.engine.executor import OpKey, OpRecord

CATEGORIES = ("b_mlp", "t_mlp", "transfer", "embedding", "checkpoint")


def breakdown(records: dict[OpKey, OpRecord], begin: OpKey, next_begin: OpKey) -> tuple[dict[str, float], list[OpKey]]:
    t0 = records[begin].start_ns
    t1 = records[next_begin].start_ns
    charges = {c: 0.0 for c in CATEGORIES}
    charges["idle"] = 0.0
    path: list[OpKey] = []
    key = next_begin
    t = t1  # the instant whose cause we are explaining
    guard = 0
    while t > t0 and guard < 10_000:
        guard += 1
        rec = records[key]
        gate = rec.gate
        if gate is None:
            charges["idle"] += t - t0
            break
        kind, pred = gate
        prec = records[pred]
        if kind == "start":  # released by a start: explain that start instead
            key = pred
            t = min(t, prec.start_ns)
            continue
        # the predecessor's interval ends where this op became free to start
        seg_end = min(t, prec.end_ns)
        if prec.end_ns < t:  # a gap nothing explains (should not happen): idle
            charges["idle"] += t - max(prec.end_ns, t0)
        seg_start = max(prec.start_ns, t0)
        if seg_end > seg_start:
            cat = prec.op.category
            charges[cat if cat in charges else "idle"] += seg_end - seg_start
            path.append(pred)
        key = pred
        t = prec.start_ns
    return charges, list(reversed(path))
