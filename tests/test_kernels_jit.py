"""refcount_free_jit: same results as njit, no reference counting where numba offers the option."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import cxlsim.devices.media_kernel as K
from cxlsim.kernels.jit import _NO_REFCOUNT, refcount_free_jit


def _ring_sum(a, b, k):
    """A helper-heavy loop over several arrays (what reference counting made slow)."""
    s = 0.0
    for i in range(k):
        s += _pick(a, b, i)
    return s


def _pick_py(a, b, i):
    return a[i % a.shape[0]] * b[(i * 7) % b.shape[0]]


_pick = refcount_free_jit(_pick_py)


def test_same_result_as_python_and_njit():
    a, b = np.arange(5.0), np.linspace(0.0, 1.0, 11)
    expected = 0.0
    for i in range(1000):
        expected += _pick_py(a, b, i)
    assert refcount_free_jit(_ring_sum, cache=False)(a, b, 1000) == expected
    assert njit(_ring_sum)(a, b, 1000) == expected


@pytest.mark.skipif(not _NO_REFCOUNT, reason="this numba has no _nrt option")
def test_allocating_function_is_refused():
    @refcount_free_jit(cache=False)
    def allocates(n):
        return np.empty(n)

    with pytest.raises(TypingError):
        allocates(3)


@pytest.mark.skipif(not _NO_REFCOUNT, reason="this numba has no _nrt option")
def test_media_kernel_compiled_without_reference_counting():
    """The media kernel and the helpers it calls out of line carry no reference counting."""
    for fn in (K.serve_kernel, K.pend_slot, K._drain_idle, K._drain_unit, K._drain_first_call, K.flush_posted):
        assert fn.targetoptions.get("_nrt") is False, fn
