"""cxlsim: a cycle-approximate model of failure-tolerant DLRM training on PMEM disaggregated over CXL.

Python API (docs/commands.md): ``cxlsim.devices.build_device("pmem/optane-100")`` gives a device model
usable on its own; ``cxlsim.load_config`` and ``cxlsim.simulate`` run whole systems.
"""

from cxlsim.version import __version__

__all__ = ["__version__", "load_config", "simulate"]


def __getattr__(name):  # lazy: importing cxlsim stays cheap (no numba compilation at import)
    if name in ("simulate", "load_config"):
        from cxlsim import api

        return getattr(api, name)
    raise AttributeError(name)
