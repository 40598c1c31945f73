"""Address geometry: byte address and global unit to module, local unit and bank.

Split out of :mod:`cxlsim.devices.memory.media.media_kernel` (see its docstring for the mechanism).
"""

from __future__ import annotations

from cxlsim.devices.memory.media.media_index import (
    I_BANKS,
    I_CHUNK_SH,
    I_INTERLEAVE,
    I_MOD_SH,
    I_MODULES,
    I_POW2,
    I_UNIT,
)
from cxlsim.kernels.jit import refcount_free_jit


@refcount_free_jit
def _locate(a, unit, interleave, modules, banks):
    """(module, bank) of the unit holding byte address ``a``."""
    chunk = a // interleave
    m = chunk % modules
    local = (chunk // modules) * (interleave // unit) + (a % interleave) // unit
    return m, local, local % banks


@refcount_free_jit(inline="always")
def _where(g, ip):
    """(module, local unit, bank) of global unit ``g``: shifts and masks when the geometry
    parameters are powers of two (the same values as :func:`_locate`, with fewer divisions)."""
    mode = ip[I_POW2]
    if mode > 0:
        sh = ip[I_CHUNK_SH]
        chunk = g >> sh
        if mode == 1:
            m = chunk & (ip[I_MODULES] - 1)
            row = chunk >> ip[I_MOD_SH]
        else:
            m = chunk % ip[I_MODULES]
            row = chunk // ip[I_MODULES]
        local = (row << sh) | (g & ((1 << sh) - 1))
        return m, local, local & (ip[I_BANKS] - 1)
    return _locate(g * ip[I_UNIT], ip[I_UNIT], ip[I_INTERLEAVE], ip[I_MODULES], ip[I_BANKS])


@refcount_free_jit(inline="always")
def _chunk(g, ip):
    """Interleave chunk of global unit ``g`` (its module is the chunk modulo the module count)."""
    if ip[I_POW2] > 0:
        return g >> ip[I_CHUNK_SH]
    return (g * ip[I_UNIT]) // ip[I_INTERLEAVE]


@refcount_free_jit(inline="always")
def _cyc(first, k, modules):
    """The ``k``-th module of a cyclic range starting at module ``first``."""
    m = first + k
    return m - modules if m >= modules else m


def pow2_geometry(unit, interleave, modules, banks):
    """``(I_POW2, I_CHUNK_SH, I_MOD_SH, I_UNIT_SH)`` for the integer parameter vector."""
    def is_pow2(x):
        return x > 0 and x & (x - 1) == 0
    per = interleave // unit
    if all(is_pow2(int(x)) for x in (unit, interleave, banks)) and interleave % unit == 0:
        mode = 1 if is_pow2(int(modules)) else 2
        mod_sh = int(modules).bit_length() - 1 if mode == 1 else 0
        return mode, int(per).bit_length() - 1, mod_sh, int(unit).bit_length() - 1
    return 0, 0, 0, 0
