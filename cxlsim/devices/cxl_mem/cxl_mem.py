"""A CXL memory device you can name (family ``cxl_mem``): a composite of presets -- link, controller
(a ``cxl_protocol`` preset), media (any memory-kind preset, ``media_count`` channels) and, for a
pooled device, a switch with ``host_ports_count`` host ports -- probed as Intel MLC probes memory.

A preset names its parts and overrides their parameters per part, with the same ``params:``
mechanism a platform file uses for a role, spelt ``<part>.params.<key>``::

    version: 1
    family: cxl_mem
    params:
      link: {value: cxl_link/cxl2-x8, source: "..."}
      controller: {value: cxl_protocol/asic, source: "..."}
      media: {value: dram/ddr4-2666, source: "..."}
      media.params.read_bw_GBps: {value: 31.5, source: "..."}

and ``cxlsim microbench cxl_mem/<name> --set link.params.lanes_count=16`` overrides one part's
parameter the same way. An unknown part key (``linc.params.x``), an unknown parameter of a part
(``link.params.lanes``) or a part of the wrong family is refused naming the file (or the option)
and the key.

Contract (units: time ns, data B, bandwidth GB/s; the API of :mod:`cxlsim.devices.base`). The
model, :class:`CxlMem`, holds its part models (``link``, ``controller``, ``switch`` or None) and the
media's validated preset (``media_preset``; the media *model* is built only on demand,
:meth:`CxlMem.media_model`, so that a composite builds without numba); ``path`` is the
:class:`~cxlsim.devices.fabric.cxl_path.FabricPath` of the same parts (one link, or link - switch -
link). Its timing is one model, :mod:`cxlsim.devices.cxl_mem.queueing` (host credits, each link
direction's server, the switch's egress arbitration, the device's read and write queues, the media
channels), over :meth:`CxlMem.fabric`; :meth:`CxlMem.read_line_ns` is that model's unloaded line
read, the same number the kind's microbenchmark (:func:`cxlsim.validate.cxl_mlc.microbench`, which
drives the model with MLC's load generators) reports as ``idle_latency_ns`` (JSON keys:
``docs/devices-fabric.md``, "CXL memory devices"). No bounded op; no energy of its own (its parts
have theirs, priced where a system uses them).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cxlsim.config.catalog import Preset
from cxlsim.config.params import (
    Param,
    ParamSet,
    PlausibilityWarning,
    Schema,
    relocated_warnings,
    unknown_key_message,
)
from cxlsim.devices.base import DeviceModel
from cxlsim.devices.cxl_mem.queueing import Fabric, crossing_over, fabric_of, idle_read_ns
from cxlsim.devices.fabric.interface import FabricPath
from cxlsim.devices.registry import DeviceFamily, family_kind, get_family, load_preset, register
from cxlsim.errors import ConfigError

#: The parts of a composite and the family (or ``kind:<kind>``) each must be of.
PARTS = {"link": "cxl_link", "controller": "cxl_protocol", "media": "kind:memory", "switch": "cxl_switch"}
NO_SWITCH = "none"


class _PartParam(Param):
    """One override of a part's parameter (``<part>.params.<key>``): any scalar here; the part's
    own schema checks it when the composite validates (:func:`_check_parts`)."""

    def coerce(self, value: Any, where: str, key: str) -> Any:
        if isinstance(value, (dict, list)) or value is None:
            raise ConfigError(where, key, f"expected a value for the part's parameter, got {value!r:.40}")
        return value


class _Declared(dict):
    """The declared parameters plus every well-formed part override key."""

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or _part_key(key) is not None

    def __missing__(self, key: str) -> Param:
        if _part_key(key) is None:
            raise KeyError(key)
        return _PartParam(key, object, "override of a part's parameter", default=None)


def _part_key(key: object) -> tuple[str, str] | None:
    """``(part, parameter)`` of a part override key ``<part>.params.<parameter>``, else None."""
    if not isinstance(key, str):
        return None
    bits = key.split(".")
    if len(bits) == 3 and bits[0] in PARTS and bits[1] == "params" and bits[2]:
        return bits[0], bits[2]
    return None


@dataclass(frozen=True)
class _CompositeSchema(Schema):
    """A schema whose keys are its declared parameters and ``<part>.params.<key>`` overrides."""

    def by_name(self) -> dict[str, Param]:
        return _Declared(super().by_name())

    def validate(self, values: Mapping[str, Any], sources: Mapping[str, str], where: str, prefix: str = "") -> ParamSet:
        for key in values:
            if "." in key and _part_key(key) is None:
                raise ConfigError(where, prefix + key, unknown_key_message(key, [f"{p}.params.<key>" for p in PARTS])
                                  + f" (a part override is <part>.params.<key>, parts: {', '.join(PARTS)})")

        def relocate(at: str, key: str) -> tuple[str, str]:  # a part's override: this device's key
            part = at.removesuffix(".params")
            if at.endswith(".params") and part in PARTS and key.startswith("params."):
                return where, f"{prefix}{part}.{key}"
            return at, key

        with relocated_warnings(relocate):
            return super().validate(values, sources, where, prefix)


def part_overrides(values: Mapping[str, Any], part: str) -> dict[str, Any]:
    """The ``<part>.params.<key>`` overrides of ``part`` in ``values``, as ``{key: value}``."""
    out = {}
    for key, value in values.items():
        pk = _part_key(key)
        if pk is not None and pk[0] == part:
            out[pk[1]] = value
    return out


def _load_part(values: Mapping[str, Any], part: str) -> Preset:
    name = values["switch" if part == "switch" else part]
    pre = load_preset(str(name), part_overrides(values, part) or None, overrides_where=f"{part}.params")
    want = PARTS[part]
    ok = pre.family == want or (want.startswith("kind:") and family_kind(pre.family) == want[5:])
    if not ok:
        raise ConfigError(part, "", f"{pre.name} is a {pre.family} device; the {part} part takes "
                          f"{want.replace('kind:', 'any ')}")
    return pre


def _check_parts(v: dict[str, Any]) -> tuple[str, str] | None:
    """Every part exists, is of its family, and takes its overrides (each error names its key)."""
    for part in PARTS:
        if part == "switch" and v["switch"] == NO_SWITCH:
            stray = part_overrides(v, "switch")
            if stray:
                return f"switch.params.{next(iter(stray))}", "overrides a switch but the device has none (switch: none)"
            continue
        try:
            _load_part(v, part)
        except ConfigError as exc:
            if exc.key.startswith("params."):
                return f"{part}.{exc.key}", exc.message
            return part, f"{v[part]}: {exc.message}"
    if v["switch"] == NO_SWITCH and v["host_ports_count"] > 1:
        return "host_ports_count", "more than one host port needs a switch (switch: none)"
    if v["switch"] == NO_SWITCH and v["devices_count"] > 1:
        return "devices_count", "more than one device behind the host port needs a switch (switch: none)"
    return None


SCHEMA = _CompositeSchema(
    "cxl_mem",
    (
        Param("link", str, "cxl_link preset of every link (host port, device link)"),
        Param("controller", str, "cxl_protocol preset of the device controller (its protocol times)"),
        Param("media", str, "memory-kind preset of one media channel (a DRAM channel, a PMEM module)"),
        Param("media_count", int, "media channels (modules) behind one device controller", default=1, minimum=1, maximum=64),
        Param("media_interleave_B", int, "interleaving of lines over channels and devices", default=4096, minimum=64),
        Param("switch", str, "cxl_switch preset between the host ports and the devices, or none (direct attach)", default=NO_SWITCH),
        Param("host_ports_count", int, "host ports (x-lane links to the switch) of a pooled device", default=1, minimum=1, maximum=16),
        Param("devices_count", int, "devices (each link + controller + media) behind the switch", default=1, minimum=1, maximum=16),
        Param("host_credits_count", int, "outstanding CXL.mem requests of one host root port (held issue -> completion)", minimum=1),
        Param("device_read_queue_count", int, "device controller's M2S Req (read) queue entries (held arrival -> data sent)", minimum=1),
        Param("device_write_queue_count", int, "device controller's M2S RwD (write) queue entries (held arrival -> media accept)", minimum=1),
        Param("controller_static_W", float, "power of the device's controller chip (CXL endpoint, DCOH, memory "
              "controllers and their PHYs; not the media, which a system prices as the role's modules), W, "
              "drawn for the whole batch wherever a system holds the device", minimum=0.0, maximum=100.0),
        Param("device_type", str, "CXL device type: 3 (memory expander) or 2 (with CXL.cache: cache_ops probed)", default="3", choices=("2", "3")),
    ),
    checks=(_check_parts,),
)


@dataclass
class CxlMem(DeviceModel):
    """A composite CXL memory device (module docstring)."""

    params: ParamSet
    link: Any
    controller: Any
    media_preset: Preset
    switch: Any = None
    _media: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        p = self.params
        self.media_count: int = p["media_count"]
        self.host_ports: int = p["host_ports_count"]
        self.devices: int = p["devices_count"]
        self.path = FabricPath([self.link, self.link], self.switch) if self.switch is not None else FabricPath([self.link])

    def media_model(self) -> Any:
        """The media model of one channel (built on first use: it loads the numba kernel)."""
        if self._media is None:
            self._media = get_family(self.media_preset.family).build(self.media_preset.params)
        return self._media

    def fabric(self, **changes: Any) -> Fabric:
        """The timing model's view of this device (:func:`~cxlsim.devices.cxl_mem.queueing.fabric_of`;
        ``changes`` replace its fields, for ablations)."""
        return fabric_of(self, **changes)

    def crossing(self) -> Any:
        """The host's path to this device's media as the media model takes it
        (:func:`~cxlsim.devices.cxl_mem.queueing.crossing_over`: the link's servers, the
        controller's protocol times and read and write queues)."""
        cp = self.controller.params
        return crossing_over(self.path, cp["host_protocol_ns"], cp["device_protocol_ns"],
                             self.params["device_read_queue_count"], self.params["device_write_queue_count"])

    def read_line_ns(self, pattern: str = "random") -> float:
        """Unloaded latency of one CXL.mem line read, ns: the timing model's closed form
        (:func:`~cxlsim.devices.cxl_mem.queueing.idle_read_ns`), equal to the microbenchmark's
        ``idle_latency_ns`` (pointer chase, ``pattern``) -- one idle latency per device."""
        return idle_read_ns(self.fabric(), pattern)


def build(params: ParamSet) -> CxlMem:
    """Load the parts (with their overrides) and build the composite; the media model waits."""
    with warnings.catch_warnings():  # the parts' values were checked when the composite loaded
        warnings.simplefilter("ignore", PlausibilityWarning)
        link = _load_part(params, "link")
        ctrl = _load_part(params, "controller")
        media = _load_part(params, "media")
        switch = None if params["switch"] == NO_SWITCH else _load_part(params, "switch")
    for key in params:  # the overrides reach their parts (read here, recorded)
        if _part_key(key) is not None:
            params[key]
    params["device_type"]
    return CxlMem(params, get_family("cxl_link").build(link.params), get_family("cxl_protocol").build(ctrl.params),
                  media, None if switch is None else get_family("cxl_switch").build(switch.params))


FAMILY = register(
    DeviceFamily(
        name="cxl_mem",
        doc="a CXL memory device: link + controller + media (+ switch when pooled), probed as Intel MLC does",
        schema=SCHEMA,
        build=build,
        kind="cxl_mem",
        energy=None,
    )
)
