"""Parameter declarations: each parameter is declared once, with type, unit, range and meaning.

A device family declares a :class:`Schema` (a list of :class:`Param`). Presets in
``devices/<family>/<name>.yaml`` give the values, each with a ``source:``; configurations override
fields. :meth:`Schema.validate` turns a raw mapping into a frozen :class:`ParamSet` or raises a
:class:`~cxlsim.errors.ConfigError` naming the file and key path.

Contract: the unit of a parameter is the suffix of its name (see :mod:`cxlsim.units`); values stay in
that unit inside a :class:`ParamSet`, and device models convert to base units where they use them.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from cxlsim.config.bounds import PLAUSIBLE_BY_UNIT
from cxlsim.errors import ConfigError
from cxlsim.units import unit_of

_REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    ``kind`` is ``float``, ``int``, ``bool``, ``str`` or ``tuple`` (a YAML list, each element of
    kind ``item``, a number kind, and bounded as a number is; kept as a tuple); ``minimum``/``maximum``
    bound numbers (inclusive unless ``exclusive_minimum``); ``choices`` restricts strings (a tuple, or a callable
    returning the names, for choices registered at run time such as a pipeline axis's
    implementations, :mod:`cxlsim.systems.axes`); ``plausible`` is the ``(low, high)`` range of a
    number beside its bounds (default: its unit's, :data:`cxlsim.config.bounds.PLAUSIBLE_BY_UNIT`):
    a value inside the bounds but outside it is accepted with a :class:`PlausibilityWarning`
    (0 never warns); a parameter with no
    ``default`` must be given by the preset. ``descriptive`` (a reason) marks a fact kept for the
    record that no model reads; every other parameter must reach timing or energy
    (:mod:`cxlsim.systems.reach`).
    """

    name: str
    kind: type
    doc: str
    default: Any = _REQUIRED
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    descriptive: str = ""
    item: type | None = None
    plausible: tuple[float, float] | None = None

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    @property
    def unit(self) -> str:
        return unit_of(self.name) or ""

    @property
    def plausible_range(self) -> tuple[float, float] | None:
        """``(low, high)`` of a plausible value: the declared range, else the unit's
        (:data:`~cxlsim.config.bounds.PLAUSIBLE_BY_UNIT`), else None (numbers only)."""
        if self.kind not in (int, float) and self.item not in (int, float):
            return None
        return self.plausible if self.plausible is not None else PLAUSIBLE_BY_UNIT.get(self.unit)

    def coerce(self, value: Any, where: str, key: str) -> Any:
        """Return ``value`` converted to this parameter's kind, or raise ConfigError."""
        kind = self.kind
        if kind is tuple:
            if self.item not in (int, float):
                raise TypeError(f"list parameter {self.name} needs item int or float, got {self.item!r}")
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise ConfigError(where, key, f"expected a list of numbers ({self.unit or 'no unit'}), got {value!r}")
            one = Param(self.name, self.item, self.doc, minimum=self.minimum, maximum=self.maximum,
                        exclusive_minimum=self.exclusive_minimum, plausible=self.plausible)
            return tuple(one.coerce(v, where, f"{key}[{i}]") for i, v in enumerate(value))
        if kind is bool:
            if isinstance(value, bool):
                return value
            raise ConfigError(where, key, f"expected true or false, got {value!r}")
        if kind in (int, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(where, key, f"expected a number ({self.unit or 'no unit'}), got {value!r}")
            if kind is int:
                if isinstance(value, float) and not value.is_integer():
                    raise ConfigError(where, key, f"expected a whole number, got {value!r}")
                value = int(value)
            else:
                value = float(value)
                if not math.isfinite(value):
                    raise ConfigError(where, key, f"expected a finite number, got {value!r}")
            if self.minimum is not None:
                if self.exclusive_minimum and value <= self.minimum:
                    raise ConfigError(where, key, f"must be > {self._bound(self.minimum)}, got {value!r}")
                if not self.exclusive_minimum and value < self.minimum:
                    raise ConfigError(where, key, f"must be >= {self._bound(self.minimum)}, got {value!r}")
            if self.maximum is not None and value > self.maximum:
                raise ConfigError(where, key, f"must be <= {self._bound(self.maximum)}, got {value!r}")
            plausible = self.plausible_range
            if plausible is not None and value != 0 and not plausible[0] <= value <= plausible[1]:
                warn(PlausibilityWarning(where, key, value, plausible, self.unit))
            return value
        if kind is str:
            if not isinstance(value, str):
                raise ConfigError(where, key, f"expected text, got {value!r}")
            choices = self.choices() if callable(self.choices) else self.choices
            if choices is not None and value not in choices:
                raise ConfigError(where, key, f"must be one of {', '.join(choices)}; got {value!r}")
            return value
        raise TypeError(f"unsupported parameter kind {kind!r} for {self.name}")

    def _bound(self, bound: float) -> str:
        """A bound as messages write it: exact for whole numbers (``9007199254740992``, not
        ``9.0072e+15``), else ``%g``."""
        return str(int(bound)) if float(bound).is_integer() and abs(bound) < 1e18 else f"{bound:g}"


def range_text(low: float, high: float, unit: str = "") -> str:
    """``0.01..1e+05 GB/s``: a plausible range as messages and listings write it."""
    return f"{low:g}..{high:g}" + (f" {unit}" if unit else "")


class PlausibilityWarning(UserWarning):
    """A value inside its parameter's bounds but outside its plausible range
    (:attr:`Param.plausible`): accepted, and said on one line naming the file or option (``where``),
    the key path, the value and the range. The command line prints it as ``warning: ...``."""

    def __init__(self, where: str, key: str, value: float, plausible: tuple[float, float], unit: str):
        self.where, self.key, self.value, self.plausible, self.unit = where, key, value, plausible, unit
        location = f"{where} {key}" if where.startswith("--") else (f"{where}: {key}" if key else where)
        super().__init__(f"{location}={value!r} is outside its plausible range {range_text(*plausible, unit)}")

    def __reduce__(self):
        return (PlausibilityWarning, (self.where, self.key, self.value, self.plausible, self.unit))


def warn(warning: PlausibilityWarning) -> None:
    """Issue ``warning`` (one place, so a filter or the command line's printer sees every one)."""
    warnings.warn(warning, stacklevel=1)


@contextmanager
def relocated_warnings(relocate: Callable[[str, str], tuple[str, str]]) -> Iterator[None]:
    """Issue the :class:`PlausibilityWarning` raised inside the block again, naming
    ``relocate(where, key)``: the input that gave the value, as a loader blames errors (a value
    validated under a placeholder file, an override under its preset's key path). Other warnings
    pass through unchanged; on an error the block's warnings are dropped."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PlausibilityWarning)
        yield
    for w in caught:
        m = w.message
        if isinstance(m, PlausibilityWarning):
            where, key = relocate(m.where, m.key)
            warn(PlausibilityWarning(where, key, m.value, m.plausible, m.unit))
        else:
            warnings.warn_explicit(m, w.category, w.filename, w.lineno)


class ParamSet(Mapping[str, Any]):
    """Validated, read-only parameter values with attribute access (``p.read_latency_ns``).

    ``sources`` maps each key to the provenance note of its value. Every value a model takes by
    attribute or by key (``p.x``, ``p["x"]``, ``p.get("x")``) is recorded in :attr:`reads`, so a run
    can prove which parameters reached it (:mod:`cxlsim.systems.reach`); iteration and
    :meth:`as_dict` (serialisation, listings) record nothing. A model or system that decides a
    parameter does not apply to it says so with :meth:`skip` and a reason (kept in
    :attr:`skipped`): the reach check accepts it, and an override of it is refused with that reason.
    """

    __slots__ = ("_values", "sources", "schema_name", "reads", "descriptive", "skipped")

    def __init__(self, values: dict[str, Any], sources: dict[str, str], schema_name: str,
                 descriptive: Mapping[str, str] | None = None):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "sources", dict(sources))
        object.__setattr__(self, "schema_name", schema_name)
        object.__setattr__(self, "reads", set())
        object.__setattr__(self, "descriptive", dict(descriptive or {}))  # name -> why no model reads it
        object.__setattr__(self, "skipped", {})

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._values[name]
        except KeyError:
            raise AttributeError(f"{self.schema_name} has no parameter {name!r}") from None
        self.reads.add(name)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ParamSet is read-only; use replace()")

    def __getitem__(self, key: str) -> Any:
        value = self._values[key]
        self.reads.add(key)
        return value

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def keys(self):
        return self._values.keys()

    def items(self):
        """(name, value) pairs, unrecorded (listings and serialisation)."""
        return self._values.items()

    def values(self):
        return self._values.values()

    def as_dict(self) -> dict[str, Any]:
        """A plain copy of the values, unrecorded (serialisation)."""
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ParamSet):
            return self._values == other._values
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ParamSet({self.schema_name}, {self._values!r})"

    def __reduce__(self):
        return (ParamSet, (self._values, self.sources, self.schema_name, self.descriptive))

    def skip(self, name: str, reason: str) -> None:
        """Record that ``name`` does not apply here (``reason``: why, one clause for messages)."""
        if name not in self._values:
            raise KeyError(f"{self.schema_name} has no parameter {name!r}")
        self.skipped.setdefault(name, reason)

    def unread(self) -> list[str]:
        """Parameters nothing has read so far, descriptive and skipped ones excepted, in
        declaration order."""
        return [k for k in self._values if k not in self.reads and k not in self.descriptive
                and k not in self.skipped]

    def replace(self, **changes: Any) -> ParamSet:
        """Return a copy with ``changes`` applied (not re-validated; for programmatic studies)."""
        values = {**self._values, **changes}
        sources = {**self.sources, **{k: "set programmatically" for k in changes}}
        return ParamSet(values, sources, self.schema_name, self.descriptive)


@dataclass(frozen=True)
class Schema:
    """A named set of parameters plus semantic checks across them.

    ``checks`` are callables taking the validated values dict and returning ``None`` or
    ``(key, message)`` describing an inconsistency.
    """

    name: str
    params: tuple[Param, ...]
    checks: tuple[Callable[[dict[str, Any]], tuple[str, str] | None], ...] = field(default=())

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"schema {self.name} declares {sorted(dup)} twice")

    def by_name(self) -> dict[str, Param]:
        return {p.name: p for p in self.params}

    def validate(
        self,
        values: Mapping[str, Any],
        sources: Mapping[str, str],
        where: str,
        prefix: str = "",
    ) -> ParamSet:
        """Check ``values`` against the schema: unknown keys, kinds, ranges, then ``checks``."""
        declared = self.by_name()
        out: dict[str, Any] = {}
        out_sources: dict[str, str] = {}
        for key, value in values.items():
            if key not in declared:
                raise ConfigError(where, prefix + key, unknown_key_message(key, declared))
            out[key] = declared[key].coerce(value, where, prefix + key)
            out_sources[key] = sources.get(key, "")
        for p in self.params:
            if p.name not in out:
                if p.required:
                    raise ConfigError(where, prefix + p.name, f"missing required parameter ({p.doc})")
                out[p.name] = p.default
                out_sources[p.name] = "schema default"
        for check in self.checks:
            problem = check(out)
            if problem is not None:
                key, message = problem
                raise ConfigError(where, prefix + key, message)
        return ParamSet(out, out_sources, self.name, {p.name: p.descriptive for p in self.params if p.descriptive})


def unknown_key_message(key: str, known: Iterable[str]) -> str:
    """'unknown key' with the closest known names, for one-line errors."""
    close = difflib.get_close_matches(str(key), [str(k) for k in known], n=2)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return f"unknown key{hint}"


def check_le(lo: str, hi: str) -> Callable[[dict[str, Any]], tuple[str, str] | None]:
    """A semantic check: parameter ``lo`` must not exceed parameter ``hi``."""

    def check(values: dict[str, Any]) -> tuple[str, str] | None:
        if values[lo] > values[hi]:
            return lo, f"must be <= {hi} ({values[lo]!r} > {values[hi]!r})"
        return None

    return check


def check_product_le(keys: tuple[str, ...], bound: float, of: str) -> Callable[[dict[str, Any]], tuple[str, str] | None]:
    """A semantic check: the product of parameters ``keys`` must not exceed ``bound``, the named
    bound (:mod:`cxlsim.config.bounds`) on ``of``; the largest factor is the key blamed."""

    def check(values: dict[str, Any]) -> tuple[str, str] | None:
        product = math.prod(values[k] for k in keys)
        if product > bound:
            return (max(keys, key=lambda k: values[k]),
                    f"{' × '.join(keys)} = {product:.3g}, above the bound of {bound:.3g} on {of} "
                    "(cxlsim/config/bounds.py)")
        return None

    return check
