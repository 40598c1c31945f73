"""Every key's set is in range (cxlsim.kernels.vector_cache): the kernel's double-precision quotient
is corrected by one step either way, so a hash that is a multiple of the set count (or one below,
one above) still lands in ``[0, n_sets)``, and on the set the integer arithmetic gives."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cxlsim.kernels.vector_cache import HASH_MULTIPLIER, MAX_ROW, _set_of, set_of_ref, sets_of


def _hash(key: int) -> int:
    """The dividend the set is taken of: ``(key × HASH_MULTIPLIER mod 2**64) >> 20``."""
    return ((key * int(HASH_MULTIPLIER)) % 2**64) >> 20


def _edge_set_counts(x: int, quotients: int) -> list[int]:
    """Set counts that put the dividend ``x`` at a quotient edge: ``x = q·n``, ``x = q·n − 1``
    (``x + 1 = q·n``) and ``x = q·n + 1``, for small ``q``."""
    out = []
    for q in range(1, quotients + 1):
        for target in (x, x + 1, x - 1):
            if target > 0 and target % q == 0:
                out.append(target // q)
    return [n for n in out if n >= 1]


@settings(max_examples=300, deadline=None)
@given(key=st.integers(0, MAX_ROW))
@example(key=0)
@example(key=MAX_ROW)
@example(key=MAX_ROW - 1)
@example(key=2**30)
def test_every_keys_set_is_in_range_at_quotient_edges(key):
    x = _hash(key)
    counts = _edge_set_counts(x, 64)
    for n_sets in counts:
        s = _set_of(key, n_sets)
        assert 0 <= s < n_sets and s == set_of_ref(key, n_sets)
    small = [n for n in counts if n <= 2**31 - 1]  # the cache's set counts (an int32 index)
    for n_sets in small:
        sets, ok = sets_of(np.array([key], np.int64), n_sets)
        assert ok and 0 <= sets[0] < n_sets


def test_keys_whose_hash_is_a_multiple_of_the_set_count_near_two_to_the_31():
    """Keys just below ``MAX_ROW`` with the set count a divisor of their hash (and its neighbours)."""
    checked = 0
    for key in range(MAX_ROW - 2000, MAX_ROW + 1):
        x = _hash(key)
        for n_sets in _edge_set_counts(x, 8):
            assert 0 <= _set_of(key, n_sets) < n_sets
            checked += 1
    assert checked > 2000
