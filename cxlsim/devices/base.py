"""The one API every device family follows, and the types it shares.

Contract (units: time ns, data B, bandwidth GB/s == B/ns, power W, energy J; every family):

* **Parameters.** A model is built from its family's validated parameters, ``model.params`` (a
  :class:`~cxlsim.config.params.ParamSet`); it reads them there and nowhere else, and it never looks
  another preset up: what it works with (a link, a switch, a medium) is passed in as a model.
* **Times** come from methods named ``*_ns``; they are pure functions of their arguments (and of an
  explicit state object where a device has state: a media state, a DCOH directory) and return
  floats in ns.
* **Costs** are one type, :class:`Cost` ``(time_ns, size_B, energy_J)``, from methods named
  ``*_cost``: the time of the operation, the bytes it moves (each family says which bytes: media
  bytes, wire bytes, bytes copied) and its dynamic energy.
* **Bounds.** For every detailed method ``<op>_ns(*args)`` that has an analytic twin (latency +
  size / bandwidth, no efficiency loss), ``model.bound_ns("<op>", *args)`` returns it, with the
  same arguments, and ``type(model).BOUNDED_OPS`` lists those ops. ``model.bound_factor(op)`` is
  the stated factor: ``bound_ns(op, *a) <= <op>_ns(*a) <= bound_factor(op) * bound_ns(op, *a)``
  (a constant or a function of the parameters; each family states its domain).
* **Bytes** are named ``*_B`` everywhere (arguments, attributes, fields).
* **Energy lives on the models.** ``static_energy_J(wall_ns, count=1)``: background / idle /
  static power of ``count`` devices over ``wall_ns``, where the family has static power; dynamic
  energy per operation or per byte comes from ``*_cost`` methods or from methods named
  ``*_energy_J`` (each family's docstring lists them). A family's one energy hook
  (:attr:`cxlsim.devices.registry.DeviceFamily.energy`) prices a :class:`Usage` with them into an
  :class:`Energy`: the system's energy model calls nothing else. A family with static power (and
  active power above it) subclasses :class:`PoweredModel`, names its power parameters and prices only
  its own dynamic terms; :func:`powered_energy` is then its hook.
* **No engine.** Models hold no simulation state and import no simulation engine; contention and
  queueing are the op-graph executor's (:mod:`cxlsim.engine.executor`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cxlsim.units import PJ, watts_over


@dataclass(frozen=True)
class Cost:
    """Result of a ``*_cost`` call: time (ns), bytes moved (B), dynamic energy (J)."""

    time_ns: float
    size_B: float = 0.0
    energy_J: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.time_ns + other.time_ns, self.size_B + other.size_B, self.energy_J + other.energy_J)


@dataclass(frozen=True)
class Usage:
    """What ``count`` identical devices of one role did over ``wall_ns``: the one input of a family's
    energy hook. Each hook reads the fields of its kind and says which; the rest stay 0.

    Units: ns, bytes, counts. ``busy_ns`` is summed over the devices (compute: kernel or core time);
    ``read_B`` / ``write_B`` are media bytes and ``requested_B`` the bytes requesters asked for
    (memory); ``moved_B`` bytes through the device (a link's wire bytes, a switch's forwarded bytes,
    a DMA engine's copies, a NIC's traffic); ``ops`` operation counts by name and ``dim`` the elements
    per vector they work on (logic)."""

    wall_ns: float
    count: int = 1
    busy_ns: float = 0.0
    read_B: float = 0.0
    write_B: float = 0.0
    requested_B: float = 0.0
    moved_B: float = 0.0
    ops: Mapping[str, float] = field(default_factory=dict)
    dim: int = 0


@dataclass(frozen=True)
class Energy:
    """A family energy hook's answer (J): static (background / idle power × wall time), active (power
    above idle × busy time), dynamic (per byte or per operation)."""

    static_J: float = 0.0
    active_J: float = 0.0
    dynamic_J: float = 0.0


def check_non_negative(**values: float) -> None:
    """Raise ``ValueError`` naming the first argument that is negative (request sizes, counts)."""
    for key, v in values.items():
        if v < 0:
            raise ValueError(f"{key} must be >= 0, got {v!r}")


def static_energy_J(power_W: float, wall_ns: float, count: int = 1) -> float:
    """Energy (J) of ``count`` devices drawing ``power_W`` each over ``wall_ns``."""
    check_non_negative(wall_ns=wall_ns, count=count)
    return watts_over(power_W * count, wall_ns)


def bit_energy_J(size_B: float, pJ_per_bit: float) -> float:
    """Energy (J) of ``size_B`` bytes at ``pJ_per_bit`` (a link's wire bytes, a switch's forwarded bytes)."""
    return size_B * 8 * pJ_per_bit * PJ


class DeviceModel:
    """Base of the family models: the op-indexed bound (see the module contract).

    A family lists its bounded ops in ``BOUNDED_OPS`` and implements, for each op, a private
    ``_bound_<op>(*args)`` taking the arguments of ``<op>_ns`` and ``_bound_factor(op)``.
    """

    BOUNDED_OPS: ClassVar[tuple[str, ...]] = ()
    params: Any

    def _check_op(self, op: str) -> None:
        if op not in self.BOUNDED_OPS:
            ops = ", ".join(self.BOUNDED_OPS) or "none"
            raise ValueError(f"{type(self).__name__} has no bound for op {op!r} (bounded ops: {ops})")

    def bound_ns(self, op: str, *args: Any, **kwargs: Any) -> float:
        """Analytic bound (ns) of ``<op>_ns(*args, **kwargs)``."""
        self._check_op(op)
        return getattr(self, f"_bound_{op}")(*args, **kwargs)

    def bound_factor(self, op: str) -> float:
        """Stated factor: ``<op>_ns(*a) <= bound_factor(op) * bound_ns(op, *a)``."""
        self._check_op(op)
        return self._bound_factor(op)

    def _bound_factor(self, op: str) -> float:  # pragma: no cover - every bounded family overrides it
        raise NotImplementedError


class PoweredModel(DeviceModel):
    """A device drawing static power whenever it is up and, where the family has one, active power
    while busy. A family names the parameters (W per device) and adds its dynamic terms.

    ``STATIC_POWER_PARAM``: the static (idle, background) power; ``ACTIVE_POWER_PARAM``: the power
    while busy (``None``: the family has no active term). :meth:`dynamic_energy_J` prices what is
    the family's own (per byte, per operation) and says which :class:`Usage` fields it reads.
    """

    STATIC_POWER_PARAM: ClassVar[str]
    ACTIVE_POWER_PARAM: ClassVar[str | None] = None

    def static_energy_J(self, wall_ns: float, count: int = 1) -> float:
        """Static energy (J) of ``count`` devices over ``wall_ns`` (``STATIC_POWER_PARAM`` W each)."""
        return static_energy_J(self.params[self.STATIC_POWER_PARAM], wall_ns, count)

    def active_energy_J(self, busy_ns: float) -> float:
        """Energy (J) above static while busy ``busy_ns`` (summed over devices):
        ``ACTIVE_POWER_PARAM − STATIC_POWER_PARAM`` W."""
        if self.ACTIVE_POWER_PARAM is None:
            raise TypeError(f"{type(self).__name__} has no active power")
        return watts_over(self.params[self.ACTIVE_POWER_PARAM] - self.params[self.STATIC_POWER_PARAM], busy_ns)

    def dynamic_energy_J(self, use: Usage) -> float:
        """The family's dynamic energy (J) of ``use``: none unless the family prices some."""
        return 0.0


def powered_energy(model: PoweredModel, use: Usage) -> Energy:
    """The energy hook of a :class:`PoweredModel` family: static power of ``use.count`` devices over
    ``use.wall_ns``, active power over ``use.busy_ns`` (families with active power) and the family's
    :meth:`~PoweredModel.dynamic_energy_J`."""
    active = 0.0 if model.ACTIVE_POWER_PARAM is None else model.active_energy_J(use.busy_ns)
    return Energy(static_J=model.static_energy_J(use.wall_ns, use.count), active_J=active,
                  dynamic_J=model.dynamic_energy_J(use))
