"""The machine's transfers: the host's configuration of a batch, pooled vectors and gradients
between CXL-MEMs and GPUs, the all-reduce, software copies over PCIe, and the fabric's contention:
the lanes a transfer holds in full detail (:meth:`TransferServices.transfer_lanes`, from
:mod:`cxlsim.systems.topology`) beside their reduced-run twin, the trunk load of a transfer class
(:meth:`TransferServices.trunk_load`, :class:`~cxlsim.systems.symmetry.SystemFabric`) and the trunks
busy as full detail would count them (:meth:`TransferServices.trunk_busy_ns`)."""

from __future__ import annotations

from cxlsim.engine.executor import OpOutcome
from cxlsim.systems.scale import partial_sums_per_sample
from cxlsim.systems.symmetry import group_ring_edges
from cxlsim.units import FP32_B

CONFIG_REGISTERS = 4


class TransferServices:
    """Transfers between the machine's endpoints (``"host"``, ``("gpu", g)``, ``("mem", m)``) and their
    fabric accounting.

    A part of :class:`~cxlsim.systems.machine.TrainingMachine` (which holds the state it reads);
    its public methods are what the pipeline axes may call (:mod:`cxlsim.systems.machine.services`)."""

    def copy_ns(self, nbytes: float, route: str) -> float:
        """A software copy of ``nbytes`` over the ``pcie`` role by this system's host, ns: direct in
        a direction (``"h2d"``, ``"d2h"``), or bounced through host memory (``"d2h2d"``) with its
        legs in sequence or overlapped chunk by chunk (``pipeline.bounce``;
        :meth:`~cxlsim.devices.fabric.pcie.PcieLink.memcpy_ns`)."""
        chunk_B = self.pcie.params.bounce_chunk_B if route == "d2h2d" and self.pipe.bounce == "chunked" else 0
        return self.pcie.memcpy_ns(nbytes, route, self.cpu, chunk_B)

    def count_link(self, path: str, nbytes: float) -> None:
        """Accounting, no timing effect: ``nbytes`` on link ``path`` in the batch being served
        (``pcie``, or :func:`~cxlsim.systems.activity.cxl_path_key` of the path's endpoints)."""
        self._ledger.add_link(path, nbytes)

    def path(self, src, dst):
        """The CXL path between two endpoints (``"host"``, ``("gpu", g)``, ``("mem", m)``): in a
        reduced run, between their system counterparts (:meth:`endpoint`) on the full tree."""
        return self.system_fabric.path(self.endpoint(src), self.endpoint(dst))

    def endpoint(self, ep):
        """The system endpoint of a simulated one (itself in full detail)."""
        return self.reduction.full(ep) if self.reduction else ep

    def _config(self, n, t, ex, m=0):
        """The host hands batch ``n``'s indices to device ``m``'s engine: the engine's own
        dispatch, or the mover's hand-over."""
        return self.engine.config(n, t, m)

    def pooled_B_of(self, m: int) -> float:
        """Bytes of pooled vectors (or of their gradients) between device ``m`` and one GPU: one
        fp32 vector per sample and table whose rows ``m`` holds."""
        return self.B * self.transfer_tables(m) * self.dim * FP32_B

    def transfer_tables(self, m: int) -> float:
        """Pooled vectors per sample device ``m`` sends each GPU (in the full system, when reduced):
        one per table it holds whole; row-sharded, one per table whose bag has a row on it, in
        expectation ``T (1 − E[(1 − 1/M)^K])`` over the bag's draws ``K`` (``(1 − 1/M)^L`` for fixed
        bags of ``L``; :meth:`~cxlsim.workloads.catalog.Workload.bag_draws_pmf`), rows scattered
        over the devices by the inputs' bijection; named approximation: draws independent and
        uniform over the devices; a bag with no row on a device gives no partial sum to send. A
        bag's de-duplication drops only rows it already has, so it leaves the event unchanged."""
        tables = self.reduction.tables_per_mem if self.reduction else self.sides[m].tables_count
        M = self.system_mems
        if self.placement is None and self.reduction is None:
            return float(tables)
        return partial_sums_per_sample(self.workload, tables, M, self.cfg.topology.tables_policy)

    def _move(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        if self.reduction is not None:
            return self._move_class(nbytes, t, src, dst)
        return self.mover.move(nbytes, t, src, dst)

    def _move_class(self, nbytes: float, t: float, src, dst) -> OpOutcome:
        """A reduced run's transfer ``src → dst``: the ``groups`` transfers of the system it stands
        for (:meth:`~cxlsim.systems.symmetry.Reduction.represented`), as the mover times them
        (:meth:`~cxlsim.axes.data_movement.DataMover.move_class`), computed once per transfer."""
        key = (src, dst, nbytes)
        if key not in self._transfers:
            self._transfers[key] = self.mover.move_class(nbytes, src, dst)
        total, counts = self._transfers[key]
        for path_key, size_B in counts:
            self.count_link(path_key, size_B)
        return OpOutcome(t + total)

    def _pooled(self, n, t, ex, m=0, g=0):
        return self._move(self.pooled_B_of(m), t, ("mem", m), ("gpu", g))

    def _grads(self, n, t, ex, g=0, m=0):
        return self._move(self.pooled_B_of(m), t, ("gpu", g), ("mem", m))

    def transfer_lanes(self, src, dst) -> tuple[str, ...]:
        """The link directions a transfer from ``src`` to ``dst`` holds (none off the fabric)."""
        return self.mover.transfer_lanes(src, dst)

    def allreduce_lanes(self, lanes_of) -> tuple[str, ...]:
        """The link directions the all-reduce holds: its ring's; a reduced run's ring is the whole
        system's, which crosses every GPU's link both ways, so it holds its group's GPU links (the
        all-reduce then waits, as in full detail, for the transfers on them to drain)."""
        lanes = {lane for a, b in self.ring() for lane in lanes_of(a, b)}
        if self.reduction is not None and self.fabric is not None and self.mover.over_fabric:
            for g in range(self.gpus):
                own = f"link.dev{self.fabric.leaf[('gpu', g)]}."
                lanes |= {lane for m in range(self.mems) for a, b in ((("gpu", g), ("mem", m)), (("mem", m), ("gpu", g)))
                          for lane in lanes_of(a, b) if lane.startswith(own)}
        return tuple(sorted(lanes))

    def ring(self) -> list[tuple[tuple, tuple]]:
        """The all-reduce ring: GPU g sends to GPU g + 1 (mod G)."""
        return [(("gpu", g), ("gpu", (g + 1) % self.gpus)) for g in range(self.gpus)]

    def system_ring(self) -> list[tuple[tuple, tuple]]:
        """The whole system's all-reduce ring (the simulated one in full detail)."""
        return [(("gpu", g), ("gpu", (g + 1) % self.system_gpus)) for g in range(self.system_gpus)]

    def allreduce_step_ns(self, size_B: float) -> float:
        """One ring step: every GPU sends ``size_B`` to its neighbour at once, as the mover times
        it (:meth:`~cxlsim.axes.data_movement.DataMover.ring_step_ns`), computed once per size."""
        if size_B not in self._ar_step:
            self._ar_step[size_B] = self.mover.ring_step_ns(size_B)
        return self._ar_step[size_B]

    def _allreduce(self, n, t, ex):
        """Ring all-reduce of the MLP gradients over the GPUs: 2 (G − 1) steps of 1/G of them each
        (reduce-scatter, then all-gather), each step's additions streamed by the receiving GPU. A
        reduced run charges the ledger the ring edges leaving its GPUs."""
        G = self.system_gpus
        shard_B = self.mlp_grad_B / G
        steps = 2 * (G - 1)
        add_ns = 3 * shard_B / (self.gpu.params.mem_bw_GBps * self.gpu.params.mem_bw_efficiency_fraction)
        edges = group_ring_edges(self.reduction) if self.reduction else self.ring()
        for src, dst in edges:
            self.mover.count_ring_edge(src, dst, steps, shard_B)
        self._allreduce_ns = steps * self.allreduce_step_ns(shard_B) + (G - 1) * add_ns
        return OpOutcome(t + self._allreduce_ns)

    def trunk_busy_ns(self) -> dict[str, float]:
        """A reduced run's trunks, which it does not simulate, busy per batch as full detail counts
        them (a lane is busy while an op holds it): each phase's ``n_ℓ`` transfers for their whole
        time (:meth:`~cxlsim.systems.symmetry.SystemFabric.counts`), and the all-reduce for its
        whole time on every trunk its ring crosses. Empty in full detail."""
        if self.reduction is None or self._sysfab is None or not self.mover.over_fabric:
            return {}
        busy: dict[str, float] = {}
        for phase in ("pooled", "grads"):
            seen = [ns for (ph, _, _), ns in self._trunk_ns.items() if ph == phase]
            if not seen:
                continue
            for (node, direction), n in self._sysfab.counts(phase).items():
                ns = self._trunk_ns.get((phase, node, direction), sum(seen) / len(seen))
                if n:
                    busy[f"link.{node}.{direction}"] = busy.get(f"link.{node}.{direction}", 0.0) + n * ns
        ring = {lane for a, b in self.system_ring() for lane in self.system_fabric.lanes(a, b)
                if not lane.startswith("link.dev")}
        for lane in ring:
            busy[lane] = busy.get(lane, 0.0) + self._allreduce_ns
        return busy

    def trunk_load(self, a, b, phase: str) -> float:
        """A reduced run: how many times as long as alone the system transfer ``a → b`` of ``phase``
        (``"pooled"``/``"grads"``) takes while every group's traffic shares its trunks
        (:meth:`~cxlsim.systems.symmetry.SystemFabric.load`)."""
        return self._sysfab.load(a, b, phase)

    def record_trunk(self, phase: str, node: str, direction: str, ns: float) -> None:
        """A reduced run: keep one ``phase`` transfer's time alone on the trunk ``(node, direction)``
        for :meth:`trunk_busy_ns`."""
        self._trunk_ns[(phase, node, direction)] = ns
