"""The machine's GPU phases: the PyTorch eager step's ops dispatched by each GPU's host thread and
run on its stream, or a measured step replayed (:class:`GpuPhases`)."""

from __future__ import annotations

from cxlsim.engine.executor import Executor, OpOutcome
from cxlsim.systems.dataflow import sfx


class GpuPhases:
    """The GPU phases of a batch (``b_fwd``, ``t_mlp``, ``b_bwd``, ``mlp_opt``).

    A part of :class:`~cxlsim.systems.machine.TrainingMachine` (which holds the state it reads);
    its public methods are what the pipeline axes may call (:mod:`cxlsim.systems.machine.services`)."""

    def _b_fwd(self, n, t, ex, g=0):
        return self._phase("b_fwd", n, t, ex, g)

    def _t_mlp(self, n, t, ex, g=0):
        return self._phase("t_mlp", n, t, ex, g)

    def _b_bwd(self, n, t, ex, g=0):
        return self._phase("b_bwd", n, t, ex, g)

    def _mlp_opt(self, n, t, ex, g=0):
        return self._phase("mlp_opt", n, t, ex, g)

    def _inputs_ready_ns(self, name: str, n: int, ex: Executor) -> float:
        """When op ``(name, n)``'s inputs other than its own GPU's phases were ready (ns): the
        dispatching thread runs ahead of the stream, not ahead of data from elsewhere."""
        ready = 0.0
        for dep in ex.ops[(name, n)].deps:
            key = (dep[0], dep[1])
            rec = ex.record(key)
            if rec is None or dep[0].split(".")[0] in self.phase_ops:
                continue
            ready = max(ready, rec.start_ns if len(dep) > 2 and dep[2] == "start" else rec.end_ns)
        return ready

    def _phase(self, phase: str, n: int, t: float, ex: Executor, g: int) -> OpOutcome:
        """One GPU phase of batch ``n`` on GPU ``g``, its stream free from ``t``: the step model's
        schedule (module docstring), its dispatches and kernels on the trace."""
        name = phase + sfx(g)
        if self.replay_host is not None:
            sch, shift = self._replayed[phase], t
        else:
            host_free = max(self._host_free[g], self._inputs_ready_ns(name, n, ex))
            sch, shift = self.step_model.schedule(self.phase_ops[phase], host_free, t), 0.0
            self._host_free[g] = sch.host_end_ns
            self._ledger.host_dispatch_ns += sch.host_busy_ns
        self._ledger.gpu_kernel_ns += sch.gpu_busy_ns
        trace = ex.trace
        if trace.enabled:
            host_lane = ("replay_host" if self.replay_host is not None else "host_cpu") + ".dispatch" + sfx(g)
            for op, a, b in sch.dispatch_intervals():
                trace.record(host_lane, a + shift, b + shift, op, n, "dispatch")
            for op, a, b in sch.stream_intervals():
                trace.record("gpu" + sfx(g) + ".stream", a + shift, b + shift, op, n, "kernel")
        end = shift + sch.end_ns if self.replay_host is not None else sch.end_ns
        return OpOutcome(max(t, end))
