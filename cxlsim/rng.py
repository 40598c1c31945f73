"""The one seeded random source: independent named streams derived from (seed, name).

Contract:

- :func:`stream` is a pure function of ``(seed, name)``: the same pair always gives a generator
  that draws the same numbers, in any process, on any platform numpy supports.
- Streams with different names are statistically independent; adding a new named stream never
  perturbs an existing one (no shared global state, no draw order between streams).
- The derivation is ``numpy.random.SeedSequence([seed, zlib.crc32(name.encode("utf-8"))])`` fed
  to ``numpy.random.default_rng`` (PCG64). It is fixed forever: changing it changes every seeded
  result (failure traces, access processes, FT numbers). It is the derivation the former
  former simpy ``Simulation.rng`` used, so results from before this module are bit-identical.

Name streams by their owner and purpose, dotted (``ft.failures.times``, ``ft.cpr.<label>``), so a
reader can find who draws from which stream.

This module sits in the lowest layer (beside :mod:`cxlsim.units` and :mod:`cxlsim.errors`): it
imports only numpy and the standard library.
"""

from __future__ import annotations

import zlib

import numpy as np


def stream_key(name: str) -> int:
    """The 32-bit key of stream ``name`` (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(name.encode("utf-8"))


def keyed(seed: int, *keys: int) -> np.random.SeedSequence:
    """The seed sequence of ``(seed, *keys)``: the one derivation every stream uses. Numbered
    streams (the workload generator's, the crash checker's) pass their fixed integer keys."""
    return np.random.SeedSequence([int(seed), *(int(k) for k in keys)])


def keyed_stream(seed: int, *keys: int) -> np.random.Generator:
    """Generator (PCG64) of :func:`keyed` ``(seed, *keys)``."""
    return np.random.default_rng(keyed(seed, *keys))


def stream(seed: int, name: str) -> np.random.Generator:
    """Independent generator for stream ``name`` of ``seed``; see the module contract."""
    return keyed_stream(seed, stream_key(name))
