"""refcount_free_jit: same results as njit, no reference counting where numba offers the option."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import cxlsim.devices.memory.media.media_kernel as K
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


# ------------------------------------------------------------------ cached kernels keyed on their sources
def _kernel_modules():
    """Every cxlsim module that defines jitted functions (found by the decorators in its source)."""
    import importlib
    from pathlib import Path

    root = Path(K.__file__).resolve().parents[3]  # cxlsim/ (the kernel: cxlsim/devices/memory/media/)
    names = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if "@njit" in text or "@refcount_free_jit" in text or "= refcount_free_jit(" in text:
            rel = path.relative_to(root.parent).with_suffix("")
            names.append(".".join(rel.parts))
    return [importlib.import_module(n) for n in names if not n.endswith("kernels.jit")]


def test_every_cached_kernel_is_keyed_on_the_modules_it_compiles_in():
    """Each cached jitted function of cxlsim keys its compilation on its sources (numba's own key
    is the function's file only), and those include the module of every jitted function it
    reaches and of every global it reads from the package."""
    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    from cxlsim.kernels.compile_cache import SourceKeyedCache, kernel_sources

    kernels = [(m, v) for m in _kernel_modules() for v in vars(m).values()
               if isinstance(v, Dispatcher) and v.py_func.__module__ == m.__name__]
    assert sum(isinstance(d._cache, SourceKeyedCache) for _, d in kernels) > 60
    for module, d in kernels:
        name = f"{module.__name__}.{d.py_func.__name__}"
        assert isinstance(d._cache, SourceKeyedCache | NullCache), name  # cached: keyed; or not cached at all
        sources = set(kernel_sources(d.py_func))
        assert module.__name__ in sources
        for ref in d.py_func.__code__.co_names:
            value = d.py_func.__globals__.get(ref)
            if isinstance(value, Dispatcher):
                assert value.py_func.__module__ in sources, (name, ref)
                assert set(kernel_sources(value.py_func)) <= sources, (name, ref)
    media = set(kernel_sources(K.serve_kernel.py_func))
    assert {f"cxlsim.devices.memory.media.media_{m}" for m in ("queue", "pending", "wcb", "geometry", "slots", "index")} <= media
