"""The DLRM batch dataflow shared by every system (SPEC §1.3), as an op graph per batch.

One function builds every system's graph from its pipeline settings; a :class:`Machine`
(:mod:`cxlsim.systems.machine`) says how long each step takes on that system's devices.

Steps of batch n (lane in brackets; the engine lane is ``ndp`` or ``host_cpu``):

- ``begin``      [batch]     barrier: the host starts batch n once batch n−1 is complete (below)
- ``config``     [cxl.io]    the host hands batch n's sparse indices and registers to the engine
                             (``host_cpu`` for software data movement: the host copies them)
- ``b_fwd``      [gpu]       bottom-MLP forward on the dense features
- ``lookup``     [engine]    embedding gather + sum-pool, streaming rows from the table memory
- ``correction`` [engine]    relaxed lookup only: add batch n−1's updates of shared rows (SPEC §3.3)
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
                             the record as soon as the optimizer step has produced them (SPEC §3.1)
- ``redo``       [agent]     redo: write updated rows (+ MLP parameters unless ``redo_mlp`` did) +
                             commit flag after both (SPEC §3.1)

Batch completion (what ``begin`` of n+1 waits for): ``mlp_opt`` of n; ``update`` of n unless the
lookup is relaxed (the next lookup already ran); ``redo`` of n for redo persistence.
Undo logging (SPEC §3.2): the checkpointing logic is an engine of its own; with ``undo_log_start:
inputs`` it starts the embedding log as soon as the batch's indices are there and the previous
update is done (sharing the media with the lookup), with ``lookup`` once the lookup is done. The
update waits for every device's embedding log only (the paper's embedding logging, step 4); the
optimizer step waits for the MLP log (it must not overwrite parameters not yet logged); with two
DMA channels the two logs copy side by side.
Index hand-over: a device engine holds two batches' indices (double buffer), so the host hands
batch n over while batch n−1 runs, once batch n−2's slot is free (its update and redo record are
done); a host-CPU engine dispatches batch n's embedding ops when batch n begins (unless its
lookup is relaxed).
Relaxed (SPEC §3.3/§3.4): lookup n+1 runs after emb_log n on the table before update n (update n
waits for it: it must not overwrite rows the relaxed lookup has yet to read), corrected once batch
n's gradients arrive: by update n's pass as it computes each row's change (``correction: fused``;
the ``correction`` op only marks when the corrected vectors are ready), by an adder bank of its
own beside the update (``own_engine``, lane ``<engine>.corr``), or on the logic's lanes before
the update (``serial``); MLP logging copies only while the GPU runs ``t_mlp`` and spans
batches. With one DMA channel the order emb_log → next lookup → MLP log on the CXL-MEM follows the
paper's Figure 12c; with two (``ckpt_logic.channels_count``) the MLP log has its own channel and
copies in every GPU window, concurrently with the embedding log.
"""

from __future__ import annotations

from typing import Protocol

from cxlsim.config.params import ParamSet
from cxlsim.engine.executor import Executor, Op, OpOutcome


def sfx(*index: int) -> str:
    """Name suffix of device (or device pair) ``index``: none for the first."""
    return "" if not any(index) else "".join(f".{i}" for i in index)

CATEGORY = {
    "begin": "sync", "config": "transfer", "b_fwd": "b_mlp", "lookup": "embedding",
    "correction": "embedding", "pooled": "transfer", "t_mlp": "t_mlp", "grads": "transfer",
    "b_bwd": "b_mlp", "update": "embedding", "mlp_opt": "b_mlp", "emb_log": "checkpoint",
    "mlp_log": "checkpoint", "redo": "checkpoint", "redo_mlp": "checkpoint", "allreduce": "transfer",
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


def build_graph(ex: Executor, machine: Machine, pipeline: ParamSet, n_batches: int) -> None:
    """Add every batch's ops (0 … n_batches−1) to ``ex``."""
    relaxed = pipeline.relaxed_lookup
    undo = pipeline.persistence == "undo"
    redo = pipeline.persistence == "redo"
    redo_mlp_early = redo and pipeline.redo_mlp_pull == "with_optimizer"
    log_at_inputs = undo and pipeline.undo_log_start == "inputs"
    correction = pipeline.correction if relaxed else None
    grads_after = "t_mlp" if pipeline.grads_handoff == "after_interaction" else "b_bwd"
    G, M = getattr(machine, "gpus", 1), getattr(machine, "mems", 1)
    gpus, mems = range(G), range(M)
    sides = getattr(machine, "sides", None)
    cxl_movement = machine.mover_lane != "host_cpu"
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

    def every(name: str, n: int, count: range) -> list[tuple]:
        return [(name + sfx(i), n) for i in count]

    def add(name: str, n: int, lane: str, deps: list[tuple], holds: tuple[str, ...] = ()) -> None:
        def work(start_ns: float, name=name, n=n) -> OpOutcome:
            return machine.step(name, n, start_ns, ex)

        base = name.split(".")[0]
        ex.add(Op(name, n, lane, CATEGORY[base], work, deps, label=f"{name} {n}", priority=PRIORITY.get(base, 0),
                  holds=holds))

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
        if redo:
            begin_deps += every("redo", p, mems)
        add("begin", n, "batch", begin_deps)
        for m in mems:
            c = sfx(m)
            if relaxed or eng(m) != "host_cpu":
                config_deps = [("config" + c, p), ("update" + c, n - 2)] + ([("redo" + c, n - 2)] if redo else [])
            else:
                config_deps = [("begin", n)]
            # the host posts the registers; a CXL device's CXL.io engine then DMAs the indices itself,
            # so devices take their indices side by side (software paths copy them on the host)
            add("config" + c, n, "cxl.io" + c if cxl_movement else "host_cpu", config_deps)
        for g in gpus:
            add("b_fwd" + sfx(g), n, "gpu" + sfx(g), [("begin", n)])
        for m in mems:
            c = sfx(m)
            if relaxed:
                # batch n's lookup runs during batch n−1, after that batch's embedding log, on the
                # table as batch n−2's update left it; batch 0 has no predecessor and runs at its begin
                lookup_deps = [("config" + c, n), ("update" + c, n - 2), ("lookup" + c, p), ("emb_log" + c, p)]
                if n == 0:
                    lookup_deps.append(("begin", n))
                add("lookup" + c, n, eng(m), lookup_deps)
                if correction == "fused":  # update n−1's pass adds the changes: ready when it ends
                    add("correction" + c, n, eng(m) + ".corr", [("lookup" + c, n), ("update" + c, p)])
                else:
                    add("correction" + c, n, eng(m) + ".corr" if correction == "own_engine" else eng(m),
                        [("lookup" + c, n)] + [("grads" + sfx(g, m), p) for g in gpus])
                ready = ("correction" + c, n)
            else:
                add("lookup" + c, n, eng(m), [("config" + c, n), ("begin", n)])
                ready = ("lookup" + c, n)
            for g in gpus:
                move("pooled" + sfx(m, g), n, m, g, [ready], True)
        for g in gpus:
            add("t_mlp" + sfx(g), n, "gpu" + sfx(g), [("b_fwd" + sfx(g), n)] + [("pooled" + sfx(m, g), n) for m in mems])
            add("b_bwd" + sfx(g), n, "gpu" + sfx(g), [("t_mlp" + sfx(g), n)])
            for m in mems:
                move("grads" + sfx(g, m), n, m, g, [(grads_after + sfx(g), n)], False)
        for m in mems:
            c = sfx(m)
            update_deps: list[tuple] = [("grads" + sfx(g, m), n) for g in gpus] + [("update" + c, p)]
            if relaxed:
                update_deps.append(("lookup" + c, n + 1))  # write after read: the relaxed lookup reads the table first
            if undo:
                # SPEC §3.2, §12 (the paper's embedding logging, step 4): once the batch's embedding
                # log is flagged on every device the update writes in place; it does not wait for the
                # MLP log (recovery then takes the MLP from the previous MLP log, still present)
                update_deps += every("emb_log", n, mems)
            add("update" + c, n, eng(m), update_deps)
        all_reduce = getattr(machine, "system_gpus", G) > 1  # a reduced run's one GPU still all-reduces
        if all_reduce:
            holds: tuple[str, ...] = ()
            if cxl_movement:
                holds = tuple(sorted({lane for a, b in machine.ring() for lane in lanes_of(a, b)}))
            add("allreduce", n, "fabric.allreduce" if cxl_movement else "host_cpu", every("b_bwd", n, gpus), holds)
        for g in gpus:
            opt_deps: list[tuple] = [("allreduce", n)] if all_reduce else [("b_bwd", n)]
            if undo and not pipeline.relaxed_mlp_log:
                opt_deps += every("mlp_log", n, mems)
            add("mlp_opt" + sfx(g), n, "gpu" + sfx(g), opt_deps)
        if undo:
            for m in mems:
                c, s_ = sfx(m), sfx(src(m))
                emb_deps = [("config" + c, n) if log_at_inputs else ("lookup" + c, n), ("update" + c, p)]
                if not pipeline.relaxed_mlp_log:
                    emb_deps.append(("mlp_log" + c, p))  # its slot is batch n−2's: free once batch n−1's log is whole
                add("emb_log" + c, n, ckpt(m), emb_deps)
                if pipeline.relaxed_mlp_log and log_lane(m) != ckpt(m):
                    # a DMA channel of its own: copy during batch n's GPU window whatever the
                    # embedding log is doing (the two share the media, served in time order)
                    add("mlp_log" + c, n, log_lane(m), [("t_mlp" + s_, n, "start"), ("mlp_log" + c, p)])
                elif pipeline.relaxed_mlp_log:
                    log_deps = [("t_mlp" + s_, n, "start"), ("emb_log" + c, n), ("mlp_log" + c, p)]
                    if relaxed:
                        log_deps.append(("lookup" + c, n + 1))
                    add("mlp_log" + c, n, ckpt(m), log_deps)
                elif log_lane(m) != ckpt(m):
                    # its own DMA channel: copies beside the embedding log once batch n−1's optimizer
                    # step has produced the parameters (and log n−1 is whole: its slot is n−2's), or
                    # from the end of the lookup
                    start = [("emb_log" + c, p)] if log_at_inputs else [("lookup" + c, n)]
                    add("mlp_log" + c, n, log_lane(m), start + [("mlp_opt" + s_, p)])
                else:
                    add("mlp_log" + c, n, ckpt(m), [("emb_log" + c, n), ("mlp_opt" + s_, p)])
        if redo:
            for m in mems:
                c = sfx(m)
                redo_deps = [("update" + c, n), ("mlp_opt" + sfx(src(m)), n)]
                if redo_mlp_early:
                    # the MLP part from the optimizer step on, beside the update; the record's rows and
                    # commit flag after the update, the flag also after the MLP part (its planned end)
                    add("redo_mlp" + c, n, log_lane(m), [("mlp_opt" + sfx(src(m)), n), ("redo" + c, p)])
                    redo_deps.append(("redo_mlp" + c, n, "start"))
                add("redo" + c, n, agent(m), redo_deps)
