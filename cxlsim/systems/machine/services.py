"""The narrow interfaces the pipeline axes see of the machine.

An axis implementation (:mod:`cxlsim.axes`) is built with the machine (``self.m``) and may use only
what these protocols declare: facts about the run, the devices it drives, and four services —
memory, transfers, checkpoint and the batch ledger. Nothing private: the fabric's paths, endpoints,
trunk loads and the reduced run's trunk bookkeeping are services like the others.
``tests/systems/test_machine_services.py`` holds every attribute an axis reads of the machine to a member
declared here, and :class:`~cxlsim.systems.machine.TrainingMachine` to every protocol.

Contract (units in names, as everywhere): times are ns on the run's one clock, sizes bytes; a
service that moves data charges it to the ledger of the batch being served; endpoints are
``"host"``, ``("gpu", g)`` or ``("mem", m)``, the simulated ones (a reduced run maps them to the
whole system's with :meth:`TransferService.endpoint`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from cxlsim.engine.executor import OpOutcome


@runtime_checkable
class RunFacts(Protocol):
    """What the run is: workload shape per GPU, the pipeline settings, the devices' sides."""

    B: int  # samples per GPU
    T: int  # tables
    dim: int  # embedding dimension (elements)
    row_B: int  # bytes of a table row
    mlp_B: float  # MLP parameters as the checkpoint pulls and logs them, bytes
    workload: Any
    pipe: Any  # the pipeline settings (ParamSet)
    system_gpus: int  # GPUs of the whole system (a reduced run's included)
    reduction: Any  # the symmetry reduction, None in full detail
    sides: list  # one MemSide per simulated memory device
    log_base: int  # first byte of the log region


@runtime_checkable
class DeviceAccess(Protocol):
    """The device models the axes drive (pure timing models; None where the system has no such role),
    and the other axes' implementations an axis may ask."""

    cpu: Any
    gpu: Any
    pcie: Any
    cxl: Any
    ndp: Any
    ckpt: Any
    fabric: Any  # the simulated switch tree (None off the fabric)
    system_fabric: Any  # the whole system's switch tree
    engine: Any
    mover: Any
    agent: Any


@runtime_checkable
class MemoryService(Protocol):
    """Media streams and the batch's rows."""

    def batch(self, n: int, m: int = 0) -> Any: ...
    def rows_addr(self, rows: np.ndarray) -> np.ndarray: ...
    def serve(self, mem: Any, t_ns: float, addr_B: np.ndarray, size_B: Any, is_write: Any,
              outstanding: int | tuple[int, int]) -> Any: ...
    def in_segments(self, t: float, n_items: int, item_B: float, serve: Any, finish: Any) -> OpOutcome: ...
    def round_GiB(self, nbytes: float) -> int: ...


@runtime_checkable
class TransferService(Protocol):
    """Paths, copies and the fabric's accounting (full detail and its reduced-run twin)."""

    def path(self, src: Any, dst: Any) -> Any: ...
    def endpoint(self, ep: Any) -> Any: ...
    def copy_ns(self, nbytes: float, route: str) -> float: ...
    def count_link(self, path: str, nbytes: float) -> None: ...
    def transfer_tables(self, m: int) -> float: ...
    def system_ring(self) -> list: ...
    def trunk_load(self, a: Any, b: Any, phase: str) -> float: ...
    def record_trunk(self, phase: str, node: str, direction: str, ns: float) -> None: ...


@runtime_checkable
class CheckpointService(Protocol):
    """What a persistence scheme asks to write its logs and records."""

    def flag_ns(self, mem: Any) -> float: ...
    def copy_rows(self, side: Any, rows: np.ndarray, dst_base: int, t: float, outstanding: int | tuple[int, int],
                  read_source: bool = True) -> float: ...
    def write_mlp(self, side: Any, nbytes: float, base: int, t: float, pull_ns: float,
                  outstanding: int | tuple[int, int], count: bool = True) -> float: ...
    def pull_mlp_ns(self, nbytes: float, m: int = 0) -> float: ...
    def pull_in_segments(self, side: Any, nbytes: float, base: int, t: float, pull_ns: float, outstanding: Any,
                         finish: Any) -> OpOutcome: ...
    def ckpt_outstanding(self) -> int | tuple[int, int]: ...


@runtime_checkable
class LedgerService(Protocol):
    """The ledger of the batch being served (:mod:`cxlsim.systems.activity`)."""

    @property
    def ledger(self) -> Any: ...
    def restore_ledger(self, ledger: Any) -> None: ...


#: Every interface an axis may use, in the order the module docstring names them.
SERVICES = (RunFacts, DeviceAccess, MemoryService, TransferService, CheckpointService, LedgerService)


def declared_members() -> set[str]:
    """The names the axes may read of the machine: every protocol's members."""
    names: set[str] = set()
    for proto in SERVICES:
        names |= set(getattr(proto, "__annotations__", {}))
        names |= {k for k in vars(proto) if not k.startswith("_")}
    return names
