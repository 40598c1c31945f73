"""The ``persistence`` axis: how a system makes each batch durable (docs/design.md#persistence).

Contract of a scheme (a :class:`Persistence` subclass registered as ``persistence: <name>``):

Configuration (class level, from the pipeline ``ParamSet`` ``p``):
  ``persists``; :meth:`checkpoint_role` (the role its checkpoint lives on, or None);
  :meth:`roles` (roles it needs beyond the agent's and the MLP pull's); `check_pipeline` (refuse or
  skip pipeline settings, naming ``where``); :meth:`checkpoint_B` (bytes of its checkpoint area on
  a workload, provisioned on :meth:`checkpoint_role`); :meth:`spreads_mlp_log` (its MLP log spans
  batches); :meth:`period_batches` (its schedule's period in batches, the sampling unit).
Dataflow (class level, a :class:`~cxlsim.systems.dataflow.Graph` ``g``): :attr:`STEPS` (its step
  names → category); dependencies it adds to the shared steps: :meth:`begin_deps` (what batch n's
  begin waits for), :meth:`slot_deps` (device m's index slot of batch n), :meth:`read_after`
  (what a relaxed lookup of batch n+1 waits for after batch n), :meth:`update_deps`,
  :meth:`opt_deps`; :meth:`add_ops` adds its own steps of batch n.
Timing (an instance, ``cls(machine)``, built once): :meth:`steps` maps its step names to timing
  functions ``(batch, start_ns, ex, device=0) -> OpOutcome``; they serve streams through the
  machine's checkpoint services (``copy_rows``, ``write_mlp``, ``pull_in_segments``,
  ``flag_ns``) and charge the batch's ledger (its energy activity: media bytes, link bytes, the
  logic's DMA bytes, ``mlp_log_B``).
Crash (class level, :mod:`cxlsim.crash`): :meth:`crash_check` (refuse a campaign it does not
  cover), :meth:`build_protocol` ``(cfg, ref, tl, devices, bug)`` (with the media models of the
  system's device graph ``devices``: its persistent layout, initial image and timed write events, a
  :class:`~cxlsim.crash.protocols.Protocol` whose attributes state the invariant the checker holds
  it to) and :meth:`plan` (recovery from a durable image: a
  :class:`~cxlsim.crash.recovery.RecoveryPlan`); :attr:`COMMIT_STEP` (the step whose end commits a
  batch, if any). Both live in the scheme's own folder (``redo/crash.py``, ``undo/crash.py``,
  ``cnr/crash.py``, imported by the hooks when a campaign asks), built from the
  shared machinery of :mod:`cxlsim.crash.protocols` (:class:`~cxlsim.crash.protocols.Protocol`,
  :class:`~cxlsim.crash.protocols.MemLog`, flag lines, ``timed`` / ``delete_line`` /
  ``update_events`` write events, ``snapshot_image``) and :mod:`cxlsim.crash.recovery`
  (``committed_records``); the checker and campaign in :mod:`cxlsim.crash` ask the scheme, never
  its name.

Home: a scheme with more than one level keeps them in one folder (``cnr/``, ``undo/``, ``redo/``):
its ``scheme.py`` (the class: all of the above), ``crash.py`` (its protocol), its cluster-level ft
scheme (``ft.py``, :mod:`cxlsim.ft.schemes`'s contract) and what only it needs. Each part is one entry-point line in pyproject.toml
(``cxlsim.axes.persistence``, ``cxlsim.ft_schemes``); the layers below (:mod:`cxlsim.crash`,
:mod:`cxlsim.ft`) find them through those registries at run time, never by import
(docs/extending.md, "A new persistence scheme").
"""

from __future__ import annotations

from typing import Any

from cxlsim.errors import InputError


class Persistence:
    """Base of the persistence schemes (module docstring)."""

    persists = True
    STEPS: dict[str, str] = {}
    COMMIT_STEP: str | None = None

    def __init__(self, machine) -> None:
        self.m = machine

    # -- configuration ---------------------------------------------------------------------------
    @classmethod
    def checkpoint_role(cls, p) -> str | None:
        return p.checkpoint_on if cls.persists else None

    @classmethod
    def roles(cls, p) -> list[str]:
        return [p.checkpoint_on] if cls.persists else []

    @classmethod
    def check_pipeline(cls, p, where: str) -> None:
        """Skip the pipeline keys this scheme does not read; refuse settings it cannot run."""

    @classmethod
    def spreads_mlp_log(cls, p) -> bool:
        """Is its MLP log copied in windows over several batches (the crash timeline then takes
        each device's copied fractions and the MLP log gap from the run)? None by default."""
        return False

    @classmethod
    def period_batches(cls, p) -> int:
        """Batches after which its schedule repeats (a checkpoint every k batches: k). Batches
        inside a period differ by design, so a run's interval is taken over whole periods
        (:mod:`cxlsim.systems.sampling`). 1 by default: every batch does the same work."""
        return 1

    @classmethod
    def checkpoint_B(cls, workload, p) -> float:
        return 0.0

    # -- dataflow -----------------------------------------------------------------------------
    @classmethod
    def begin_deps(cls, g, n: int) -> list[tuple]:
        return []

    @classmethod
    def slot_deps(cls, g, n: int, m: int) -> list[tuple]:
        return []

    @classmethod
    def read_after(cls, g, n: int, m: int) -> list[tuple]:
        return []

    @classmethod
    def update_deps(cls, g, n: int) -> list[tuple]:
        return []

    @classmethod
    def opt_deps(cls, g, n: int) -> list[tuple]:
        return []

    @classmethod
    def add_ops(cls, g, n: int) -> None:
        """Add this scheme's steps of batch ``n`` (none by default)."""

    # -- timing -------------------------------------------------------------------------------
    def steps(self) -> dict[str, Any]:
        return {}

    def declare_unused(self) -> None:
        """Skip the role parameters this scheme does not read (none by default)."""

    # -- crash --------------------------------------------------------------------------------
    @classmethod
    def crash_check(cls, cfg, bug: str | None, mems: int) -> None:
        raise InputError(f"system {cfg.name!r}: persistence {cls.name!r} has no functional crash protocol")

    @classmethod
    def build_protocol(cls, cfg, ref, tl, devices, bug: str | None):
        raise NotImplementedError

    @classmethod
    def plan(cls, img, proto):
        raise NotImplementedError
