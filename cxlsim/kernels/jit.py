"""``refcount_free_jit``: ``numba.njit`` for kernels that allocate nothing, without reference counting.

Numba counts references to every array a compiled function receives: each call of a helper that is
not inlined by LLVM, and each inlined helper whose argument copies its pruner cannot pair up, costs
one atomic increment and one atomic decrement per array argument. A kernel that passes ten state
arrays to a helper per access spends most of its time there (the media kernel spent 60–70 % of a
write-heavy stream in ``NRT_incref``/``NRT_decref``, measured with ``perf``). A function that
creates no arrays needs no counting, and numba's ``_nrt=False`` option turns it off; the results are
the same, only the bookkeeping goes.

Contract: decorate only functions that allocate no arrays (numba refuses to compile one that does)
and call only functions decorated the same way or inlined. Where a numba release lacks the option,
this is plain ``njit`` (same results, slower).
"""

from __future__ import annotations

from numba import njit


def _has_nrt_option() -> bool:
    try:
        from numba.core.cpu import CPUTargetOptions
    except ImportError:  # pragma: no cover - numba layout changed
        return False
    return hasattr(CPUTargetOptions, "_nrt")


_NO_REFCOUNT = {"_nrt": False} if _has_nrt_option() else {}


def refcount_free_jit(func=None, **options):
    """``njit(cache=True, **options)`` without reference counting (see module docstring); usable as
    ``@refcount_free_jit`` or ``@refcount_free_jit(inline="always")``."""
    options = {"cache": True, **_NO_REFCOUNT, **options}
    if func is None:
        return njit(**options)
    return njit(**options)(func)
