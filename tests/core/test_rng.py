"""The one seeded random source (cxlsim.rng): a pure, fixed function of (seed, stream name)."""

from __future__ import annotations

import zlib

import numpy as np

from cxlsim.rng import stream, stream_key


def test_derivation_is_the_documented_one():
    expected = np.random.default_rng(np.random.SeedSequence([7, zlib.crc32(b"ft.failures.times")]))
    assert stream_key("ft.failures.times") == zlib.crc32(b"ft.failures.times")
    assert np.array_equal(stream(7, "ft.failures.times").random(16), expected.random(16))


def test_pinned_values():
    # fixed forever: a change here changes every seeded result (failure traces, FT numbers)
    assert stream(7, "ft.failures.times").integers(0, 2**32, size=3).tolist() == [2778805155, 2802022935, 2685455252]
    assert stream(0, "x").random() == 0.8018812680339334


def test_pure_and_independent():
    assert np.array_equal(stream(3, "a").random(8), stream(3, "a").random(8))
    assert not np.array_equal(stream(3, "a").random(8), stream(3, "b").random(8))
    assert not np.array_equal(stream(3, "a").random(8), stream(4, "a").random(8))
    # drawing from one stream does not perturb another
    a = stream(3, "a")
    a.random(1000)
    assert np.array_equal(stream(3, "b").random(8), stream(3, "b").random(8))


def test_ft_does_not_use_the_simpy_engine():
    import ast
    import pathlib

    import cxlsim.ft

    for path in pathlib.Path(cxlsim.ft.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("cxlsim.engine"), path
