"""cxlsim's version: the one place it is written (``pyproject.toml`` reads it from here).

Lowest layer (imports nothing): modules that record the version import it from here, not from the
root package, whose lazy ``cxlsim.simulate`` would otherwise make them depend on the API layer.
"""

__version__ = "0.1.0"
