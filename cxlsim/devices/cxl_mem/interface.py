"""What a family of the composite ``cxl_mem`` kind must provide (a CXL memory device: a media
preset behind a controller, a link and, when pooled, a switch).

Derived from what uses it (``cxlsim microbench``, the validation checks, the platforms that name
its parts): its part models, the path a line crosses and the line read over it. Its families build
their parts through the registry and the other kinds' interfaces only (:mod:`cxlsim.devices.fabric.interface`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["CxlMemory"]


@runtime_checkable
class CxlMemory(Protocol):
    """A composite CXL memory device (kind ``cxl_mem``).

    Contract: (units: ns, B, GB/s) ``params``; its parts as models: ``link``
    (:class:`~cxlsim.devices.fabric.interface.CxlLinkModel`), ``controller``
    (:class:`~cxlsim.devices.fabric.interface.ProtocolController`), ``switch``
    (:class:`~cxlsim.devices.fabric.interface.Switch` or None) and the media's validated
    ``media_preset``; ``path``: the :class:`~cxlsim.devices.fabric.interface.FabricPath` a line
    crosses; ``media_model()`` the media model of one channel (built on demand: it loads the numba
    kernel); ``read_line_ns(pattern)`` ≥ the path's latency: one line read through the controller.
    """

    params: Any
    link: Any
    controller: Any
    switch: Any
    media_preset: Any
    path: Any

    def media_model(self) -> Any: ...
    def read_line_ns(self, pattern: str = "random") -> float: ...
