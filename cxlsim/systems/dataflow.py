"""The DLRM batch dataflow shared by every system (SPEC §1.3), as an op graph per batch.

One function builds every system's graph from its pipeline settings; a :class:`Machine`
(:mod:`cxlsim.systems.machine`) says how long each step takes on that system's devices.

Steps of batch n (lane in brackets; the engine lane is ``ndp`` or ``host_cpu``):

- ``begin``      [batch]     barrier: the host starts batch n once batch n−1 is complete (below)
- ``config``     [host_cpu]  the host hands batch n's sparse indices and registers to the engine
- ``b_fwd``      [gpu]       bottom-MLP forward on the dense features
- ``lookup``     [engine]    embedding gather + sum-pool, streaming rows from the table memory
- ``correction`` [engine]    relaxed lookup only: add batch n−1's updates of shared rows (SPEC §3.3)
- ``pooled``     [mover]     pooled vectors engine → GPU (DCOH flush over CXL.cache, or software)
- ``t_mlp``      [gpu]       interaction + top MLP forward, loss, top MLP + interaction backward
- ``grads``      [mover]     embedding gradients GPU → engine
- ``b_bwd``      [gpu]       bottom-MLP backward
- ``update``     [engine]    embedding SGD update, in place in the data region
- ``mlp_opt``    [gpu]       MLP optimizer step
- ``emb_log``    [ckpt]      undo: copy the rows batch n will update into the log region, set flag
- ``mlp_log``    [ckpt]      undo: pull MLP parameters from the GPU into the log region, set flag
                             (relaxed, with a second DMA channel: on lane ``ckpt_logic.mlp``)
- ``redo``       [agent]     redo: write updated rows + MLP parameters + commit flag (SPEC §3.1)

Batch completion (what ``begin`` of n+1 waits for): ``mlp_opt`` of n; ``update`` of n unless the
lookup is relaxed (the next lookup already ran); ``redo`` of n for redo persistence.
Undo logging (SPEC §3.2) starts when the engine's lookup is done (the CXL-MEM is idle) after the
previous update; the update waits for the embedding log and (unless the MLP log is relaxed) the MLP
log, the optimizer step for the MLP log; with two DMA channels the two logs copy side by side.
Index hand-over: a device engine holds two batches' indices (double buffer), so the host hands
batch n over while batch n−1 runs, once batch n−2's slot is free (its update and redo record are
done); a host-CPU engine dispatches batch n's embedding ops when batch n begins (unless its
lookup is relaxed).
Relaxed (SPEC §3.3/§3.4): lookup n+1 runs after emb_log n on the table before update n (update n
waits for it: it must not overwrite rows the relaxed lookup has yet to read), corrected once batch
n's gradients arrive; MLP logging copies only while the GPU runs ``t_mlp`` and spans
batches. With one DMA channel the order emb_log → next lookup → MLP log on the CXL-MEM follows the
paper's Figure 12c; with two (``ckpt_logic.channels_count``) the MLP log has its own channel and
copies in every GPU window, concurrently with the embedding log.
"""

from __future__ import annotations

from typing import Protocol

from cxlsim.config.params import ParamSet
from cxlsim.engine.executor import Executor, Op, OpOutcome

CATEGORY = {
    "begin": "sync", "config": "transfer", "b_fwd": "b_mlp", "lookup": "embedding",
    "correction": "embedding", "pooled": "transfer", "t_mlp": "t_mlp", "grads": "transfer",
    "b_bwd": "b_mlp", "update": "embedding", "mlp_opt": "b_mlp", "emb_log": "checkpoint",
    "mlp_log": "checkpoint", "redo": "checkpoint",
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
    eng, mov, agent = machine.engine_lane, machine.mover_lane, machine.agent_lane

    def add(name: str, n: int, lane: str, deps: list[tuple]) -> None:
        def work(start_ns: float, name=name, n=n) -> OpOutcome:
            return machine.step(name, n, start_ns, ex)

        ex.add(Op(name, n, lane, CATEGORY[name], work, deps, label=f"{name} {n}", priority=PRIORITY.get(name, 0)))

    for n in range(n_batches):
        p = n - 1
        begin_deps: list[tuple] = [("mlp_opt", p)]
        if not relaxed:
            begin_deps.append(("update", p))
        if redo:
            begin_deps.append(("redo", p))
        add("begin", n, "batch", begin_deps)
        if relaxed or eng != "host_cpu":
            config_deps = [("config", p), ("update", n - 2)] + ([("redo", n - 2)] if redo else [])
        else:
            config_deps = [("begin", n)]
        add("config", n, "host_cpu", config_deps)
        add("b_fwd", n, "gpu", [("begin", n)])
        if relaxed:
            # batch n's lookup runs during batch n−1, after that batch's embedding log, on the table
            # as batch n−2's update left it; batch 0 has no predecessor and runs at its begin
            lookup_deps = [("config", n), ("update", n - 2), ("lookup", p), ("emb_log", p)]
            if n == 0:
                lookup_deps.append(("begin", n))
            add("lookup", n, eng, lookup_deps)
            add("correction", n, eng, [("lookup", n), ("grads", p)])
            add("pooled", n, mov, [("correction", n)])
        else:
            add("lookup", n, eng, [("config", n), ("begin", n)])
            add("pooled", n, mov, [("lookup", n)])
        add("t_mlp", n, "gpu", [("b_fwd", n), ("pooled", n)])
        add("grads", n, mov, [("t_mlp", n)])
        add("b_bwd", n, "gpu", [("t_mlp", n)])
        update_deps: list[tuple] = [("grads", n), ("update", p)]
        if relaxed:
            update_deps.append(("lookup", n + 1))  # write after read: the relaxed lookup reads the table first
        if undo:
            update_deps.append(("emb_log", n))
            if not pipeline.relaxed_mlp_log:
                # SPEC §3.2: the update writes in place once both logs of the batch are flagged
                # (without the MLP log, a crash in the update would leave the MLP a batch behind)
                update_deps.append(("mlp_log", n))
        add("update", n, eng, update_deps)
        opt_deps: list[tuple] = [("b_bwd", n)]
        if undo and not pipeline.relaxed_mlp_log:
            opt_deps.append(("mlp_log", n))
        add("mlp_opt", n, "gpu", opt_deps)
        if undo:
            emb_deps = [("lookup", n), ("update", p)]
            if not pipeline.relaxed_mlp_log:
                emb_deps.append(("mlp_log", p))  # its slot is batch n−2's: free once batch n−1's log is whole
            add("emb_log", n, "ckpt_logic", emb_deps)
            if pipeline.relaxed_mlp_log and machine.mlp_log_lane != "ckpt_logic":
                # a DMA channel of its own: copy during batch n's GPU window whatever the
                # embedding log is doing (the two share the media, served in time order)
                add("mlp_log", n, machine.mlp_log_lane, [("t_mlp", n, "start"), ("mlp_log", p)])
            elif pipeline.relaxed_mlp_log:
                log_deps = [("t_mlp", n, "start"), ("emb_log", n), ("mlp_log", p)]
                if relaxed:
                    log_deps.append(("lookup", n + 1))
                add("mlp_log", n, "ckpt_logic", log_deps)
            elif machine.mlp_log_lane != "ckpt_logic":
                # its own DMA channel: copies beside the embedding log from the end of the lookup
                add("mlp_log", n, machine.mlp_log_lane, [("lookup", n), ("mlp_opt", p)])
            else:
                add("mlp_log", n, "ckpt_logic", [("emb_log", n), ("mlp_opt", p)])
        if redo:
            add("redo", n, agent, [("update", n), ("mlp_opt", n)])
