"""Functional kernels: pure numba functions over numpy arrays and scalars.

Contract: every kernel is ``@njit(cache=True)`` (or :func:`cxlsim.kernels.jit.refcount_free_jit`,
the same without numba's reference counting, for kernels that allocate nothing), takes arrays and
scalars only (no simulator objects), carries its constants by name, and has a plain numpy reference
(``*_ref``) that the tests compare it with. Kernels that change a table do so in place and say so;
all others return new arrays. Kernels are serial, so their results are bit-reproducible for the
same inputs.

Modules (import the one you need; importing this package compiles nothing):

- :mod:`cxlsim.kernels.sorting` — stable LSD radix sort of non-negative int64 keys.
- :mod:`cxlsim.kernels.sampling` — keyed Feistel row permutation, bounded power-law ranks (the
  input generator's hot loop).
- :mod:`cxlsim.kernels.embedding` — embedding-bag lookup (gather + sum pool) and SGD update with
  duplicate rows accumulated in occurrence order.
- :mod:`cxlsim.kernels.access` — per-batch access analysis: unique global rows and multiplicity,
  rows shared with the previous batch, 256 B lines, controller histograms, read-after-write lines.
- :mod:`cxlsim.kernels.undo_log` — save rows to an undo log, restore them.
- :mod:`cxlsim.kernels.relaxed` — relaxed-lookup correction
  (docs/design.md#relaxed-embedding-lookup).
- :mod:`cxlsim.kernels.jit` — ``refcount_free_jit``: ``njit`` without reference counting.
- :mod:`cxlsim.kernels.ft` — failure-tolerance kernels of the cluster schemes (another module owner).
- :mod:`cxlsim.kernels.compile_cache` — where numba's compilation cache lives (a user folder when
  the installation is read-only) and the stderr line while kernels compile; set up on import.
"""

from cxlsim.kernels import compile_cache

compile_cache.install()
