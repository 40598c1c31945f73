"""The DLRM batch dataflow shared by every system (docs/design.md#one-training-batch), as an op
graph per batch.

One function builds every system's graph from its pipeline settings; a :class:`Machine`
(:mod:`cxlsim.systems.machine`) says how long each step takes on that system's devices.

Steps of batch n (lane in brackets; the engine lane is ``ndp`` or ``host_cpu``):

- ``begin``      [batch]     barrier: the host starts batch n once batch n−1 is complete (below)
- ``config``     [cxl.io]    the host hands batch n's sparse indices and registers to the engine
                             (``host_cpu`` for software data movement: the host copies them)
- ``b_fwd``      [gpu]       bottom-MLP forward on the dense features
- ``lookup``     [engine]    embedding gather + sum-pool, streaming rows from the table memory
- ``correction`` [engine]    relaxed lookup only: add batch n−1's updates of shared rows
                             (docs/design.md#relaxed-embedding-lookup)
- ``pooled``     [mover]     pooled vectors engine → GPU (DCOH flush over CXL.cache, or software)
- ``t_mlp``      [gpu]       interaction + top MLP forward, loss, top MLP + interaction backward
- ``grads``      [mover]     embedding gradients GPU → engine, after the interaction backward
                             (``grads_handoff: after_interaction``) or after the bottom-MLP backward
                             (``after_backward``: the unmodified loop, where they exist when
                             ``loss.backward()`` returns)
- ``b_bwd``      [gpu]       bottom-MLP backward
- ``update``     [engine]    embedding SGD update, in place in the data region
- ``mlp_opt``    [gpu]       MLP optimizer step
- ``emb_log``    [ckpt]      undo: copy the rows batch n will update into the log region, set flag
- ``mlp_log``    [ckpt]      undo: pull MLP parameters from the GPU into the log region, set flag
                             (relaxed, with a second DMA channel: on lane ``ckpt_logic.mlp``)
- ``redo_mlp``   [ckpt MLP]  redo with ``redo_mlp_pull: with_optimizer``: pull the MLP parameters into
                             the record as soon as the optimizer step has produced them
                             (docs/design.md#redo-checkpoint)
- ``redo``       [agent]     redo: write updated rows (+ MLP parameters unless ``redo_mlp`` did) +
                             commit flag after both (docs/design.md#redo-checkpoint)

Batch completion (what ``begin`` of n+1 waits for): ``mlp_opt`` of n; ``update`` of n unless the
lookup is relaxed (the next lookup already ran); ``redo`` of n for redo persistence.
Undo logging (docs/design.md#batch-aware-undo-log): the checkpointing logic is an engine of its own;
with ``undo_log_start: lookup`` (default) it starts the embedding log once the lookup is done (the
CXL-MEM idle), with ``inputs`` as soon as the batch's indices are there and the previous update is
done (sharing the media with the lookup). The update waits for every device's embedding log only
(the paper's embedding logging, step 4); the optimizer step waits for the MLP log (it must not
overwrite parameters not yet logged); with two
DMA channels the two logs copy side by side.
Index hand-over: a device engine holds two batches' indices (double buffer), so the host hands
batch n over while batch n−1 runs, once batch n−2's slot is free (its update and redo record are
done); a host-CPU engine dispatches batch n's embedding ops when batch n begins (unless its
lookup is relaxed).
Relaxed (docs/design.md#relaxed-embedding-lookup, #relaxed-batch-aware-checkpoint): lookup n+1 runs
after emb_log n on the table before update n (update n waits for it: it must not overwrite rows the
relaxed lookup has yet to read), corrected once batch n's gradients arrive: by update n's pass as it
computes each row's change (``correction: fused``; the ``correction`` op only marks when the
corrected vectors are ready), by an adder bank of its own beside the update (``own_engine``, lane
``<engine>.corr``), or on the logic's lanes before the update (``serial``); MLP logging copies only
while the GPU runs ``t_mlp`` and spans batches. With one DMA channel the order emb_log → next lookup
→ MLP log on the CXL-MEM follows the
paper's Figure 12c; with two (``ckpt_logic.channels_count``) the MLP log has its own channel and
copies in every GPU window, concurrently with the embedding log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from cxlsim.config.params import ParamSet
from cxlsim.engine.executor import Executor, Op, OpOutcome
from cxlsim.systems import axes


def sfx(*index: int) -> str:
    """Name suffix of device (or device pair) ``index``: none for the first."""
    return "" if not any(index) else "".join(f".{i}" for i in index)

#: Categories of the steps every system runs (a persistence scheme declares its own, ``STEPS``).
CATEGORY = {
    "begin": "sync", "config": "transfer", "b_fwd": "b_mlp", "lookup": "embedding",
    "correction": "embedding", "pooled": "transfer", "t_mlp": "t_mlp", "grads": "transfer",
    "b_bwd": "b_mlp", "update": "embedding", "mlp_opt": "b_mlp", "allreduce": "transfer",
}


#: Among steps waiting for the same lane: the relaxed correction gates the next batch's top MLP,
#: so it goes before the previous batch's update.
PRIORITY = {"correction": -1}


class Machine(Protocol):
    """Durations of each step on one system's devices (see :mod:`cxlsim.systems.machine`)."""

    engine_lane: str
    mover_lane: str
    agent_lane: str
    mlp_log_lane: str

    def step(self, name: str, batch: int, start_ns: float, ex: Executor) -> OpOutcome: ...


@dataclass(frozen=True)
class Graph:
    """What an axis implementation adds its ops with, for one :func:`build_graph` call.

    ``add(name, n, lane, deps, holds=())`` adds op ``name`` of batch ``n``: ``deps`` are
    ``(op, batch)`` or ``(op, batch, "start")`` keys; its category is :data:`CATEGORY`'s or the
    one its implementation declares (``STEPS``). ``eng``, ``agent``, ``log_lane``, ``ckpt`` give
    device ``m``'s lanes; ``src(m)`` the GPU it pulls its MLP shard from; ``every(name, n, count)``
    the keys of ``name`` on every device of ``count``.
    """

    pipeline: ParamSet
    gpus: range
    mems: range
    add: Callable[..., None]
    eng: Callable[[int], str]
    agent: Callable[[int], str]
    log_lane: Callable[[int], str]
    ckpt: Callable[[int], str]
    src: Callable[[int], int]

    @staticmethod
    def every(name: str, n: int, count: range) -> list[tuple]:
        return [(name + sfx(i), n) for i in count]


def build_graph(ex: Executor, machine: Machine, pipeline: ParamSet, n_batches: int) -> None:
    """Add every batch's ops (0 … n_batches−1) to ``ex``; the persistence scheme and the
    correction (:mod:`cxlsim.systems.axes`) add theirs through a :class:`Graph`."""
    relaxed = pipeline.relaxed_lookup
    scheme = axes.of(pipeline, "persistence")
    correction = axes.of(pipeline, "correction") if relaxed else None
    categories = {**CATEGORY, **scheme.STEPS}
    grads_after = "t_mlp" if pipeline.grads_handoff == "after_interaction" else "b_bwd"
    G, M = getattr(machine, "gpus", 1), getattr(machine, "mems", 1)
    gpus, mems = range(G), range(M)
    sides = getattr(machine, "sides", None)
    cxl_movement = axes.of(pipeline, "data_movement").over_fabric
    engine_on_device = axes.of(pipeline, "embedding_engine").on_device
    lanes_of = getattr(machine, "transfer_lanes", lambda a, b: ())  # a single-device machine holds no links

    def eng(m: int) -> str:
        return sides[m].engine_lane if sides else machine.engine_lane

    def agent(m: int) -> str:
        return sides[m].agent_lane if sides else machine.agent_lane

    def log_lane(m: int) -> str:
        return sides[m].mlp_log_lane if sides else machine.mlp_log_lane

    def ckpt(m: int) -> str:
        return "ckpt_logic" + sfx(m)

    def src(m: int) -> int:  # the GPU a device pulls its MLP shard from
        return sides[m].source_gpu if sides else 0

    every = Graph.every

    def add(name: str, n: int, lane: str, deps: list[tuple], holds: tuple[str, ...] = ()) -> None:
        def work(start_ns: float, name=name, n=n) -> OpOutcome:
            return machine.step(name, n, start_ns, ex)

        base = name.split(".")[0]
        ex.add(Op(name, n, lane, categories[base], work, deps, label=f"{name} {n}", priority=PRIORITY.get(base, 0),
                  holds=holds))

    g = Graph(pipeline, gpus, mems, add, eng, agent, log_lane, ckpt, src)

    def move(name: str, n: int, m: int, g: int, deps: list[tuple], to_gpu: bool) -> None:
        pair = sfx(m, g)
        if not cxl_movement:
            add(name, n, machine.mover_lane, deps)
            return
        a, b = ("mem", m), ("gpu", g)
        holds = lanes_of(a, b) if to_gpu else lanes_of(b, a)
        add(name, n, machine.mover_lane + pair, deps, holds)

    for n in range(n_batches):
        p = n - 1
        begin_deps: list[tuple] = every("mlp_opt", p, gpus)
        if not relaxed:
            begin_deps += every("update", p, mems)
        begin_deps += scheme.begin_deps(g, n)
        add("begin", n, "batch", begin_deps)
        for m in mems:
            c = sfx(m)
            if relaxed or engine_on_device:
                config_deps = [("config" + c, p), ("update" + c, n - 2)] + scheme.slot_deps(g, n, m)
            else:
                config_deps = [("begin", n)]
            # the host posts the registers; a CXL device's CXL.io engine then DMAs the indices itself,
            # so devices take their indices side by side (software paths copy them on the host)
            add("config" + c, n, "cxl.io" + c if cxl_movement else "host_cpu", config_deps)
        for gi in gpus:
            add("b_fwd" + sfx(gi), n, "gpu" + sfx(gi), [("begin", n)])
        for m in mems:
            c = sfx(m)
            if relaxed:
                # batch n's lookup runs during batch n−1, after what the scheme does to the table
                # before update n−1 (undo: its embedding log), on the table as batch n−2's update left
                # it; batch 0 has no predecessor and runs at its begin
                lookup_deps = [("config" + c, n), ("update" + c, n - 2), ("lookup" + c, p)] + scheme.read_after(g, p, m)
                if n == 0:
                    lookup_deps.append(("begin", n))
                add("lookup" + c, n, eng(m), lookup_deps)
                correction.add_op(g, n, m)
                ready = ("correction" + c, n)
            else:
                add("lookup" + c, n, eng(m), [("config" + c, n), ("begin", n)])
                ready = ("lookup" + c, n)
            for gi in gpus:
                move("pooled" + sfx(m, gi), n, m, gi, [ready], True)
        for gi in gpus:
            add("t_mlp" + sfx(gi), n, "gpu" + sfx(gi), [("b_fwd" + sfx(gi), n)] + [("pooled" + sfx(m, gi), n) for m in mems])
            add("b_bwd" + sfx(gi), n, "gpu" + sfx(gi), [("t_mlp" + sfx(gi), n)])
            for m in mems:
                move("grads" + sfx(gi, m), n, m, gi, [(grads_after + sfx(gi), n)], False)
        for m in mems:
            c = sfx(m)
            update_deps: list[tuple] = [("grads" + sfx(gi, m), n) for gi in gpus] + [("update" + c, p)]
            if relaxed:
                update_deps.append(("lookup" + c, n + 1))  # write after read: the relaxed lookup reads the table first
            update_deps += scheme.update_deps(g, n)
            add("update" + c, n, eng(m), update_deps)
        all_reduce = getattr(machine, "system_gpus", G) > 1  # a reduced run's one GPU still all-reduces
        if all_reduce:
            holds: tuple[str, ...] = ()
            if cxl_movement:
                holds = machine.allreduce_lanes(lanes_of)
            add("allreduce", n, "fabric.allreduce" if cxl_movement else "host_cpu", every("b_bwd", n, gpus), holds)
        for gi in gpus:
            opt_deps: list[tuple] = [("allreduce", n)] if all_reduce else [("b_bwd", n)]
            opt_deps += scheme.opt_deps(g, n)
            add("mlp_opt" + sfx(gi), n, "gpu" + sfx(gi), opt_deps)
        scheme.add_ops(g, n)
