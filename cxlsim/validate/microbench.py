"""The microbenchmark of a device family: the family's own hook, or the tool that characterises
every family of its kind or capability (the tools sit above the models: a model never imports them).

A family's :attr:`~cxlsim.devices.registry.DeviceFamily.microbench` is used when it has one (an
analytic characterisation the model computes itself: links, switches, protocol controllers, GPU,
CPU, logic). The families that share a model of their kind are characterised by this package's
tools instead, chosen by what the family declares, never by its name: a family with the ``media``
capability by :func:`cxlsim.validate.media_bench.microbench` (``serve`` on generated streams), a
family of the ``cxl_mem`` kind by :func:`cxlsim.validate.cxl_mlc.microbench` (MLC-style probes of
a queueing model). ``cxlsim microbench`` and the validation checks (:mod:`cxlsim.validate.checks`)
both ask :func:`microbench_of`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cxlsim.devices.registry import DeviceFamily

Microbench = Callable[[Any, Mapping[str, Any]], dict[str, Any]]


def _media(model: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    from cxlsim.validate import media_bench

    return media_bench.microbench(model, options)


def _cxl_mem(model: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    from cxlsim.validate import cxl_mlc

    return cxl_mlc.microbench(model, options)


#: The tool of the families declaring a capability (:data:`cxlsim.devices.registry.CAPABILITIES`).
BY_CAPABILITY: dict[str, Microbench] = {"media": _media}
#: The tool of the families of a kind (:data:`cxlsim.devices.registry.KINDS`).
BY_KIND: dict[str, Microbench] = {"cxl_mem": _cxl_mem}


def microbench_of(family: DeviceFamily) -> Microbench | None:
    """The microbenchmark of ``family`` (module docstring), or None when it has none."""
    if family.microbench is not None:
        return family.microbench
    for capability, tool in BY_CAPABILITY.items():
        if capability in family.capabilities:
            return tool
    return BY_KIND.get(family.kind)
