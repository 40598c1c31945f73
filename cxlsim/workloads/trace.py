"""Embedding-access traces: recorded (indices, offsets) per table, read as the run's input stream.

Layout (``.npz``, or ``.pt`` holding a dict of tensors with the same keys; docs/workloads.md):

- ``batch_size``: scalar, samples per batch as recorded;
- ``t{k}_indices`` (``k = 0 … tables − 1``): table ``k``'s local row ids, every bag of every
  batch one after another (batch 0's bags, then batch 1's …), any integer dtype, ``≥ 0``;
- ``t{k}_offsets`` (``samples + 1``, from 0, non-decreasing, ending at ``len(t{k}_indices)``: FBGEMM's
  offsets of the whole sequence of bags) **or** ``t{k}_lengths`` (``samples``, each ``≥ 0``, summing to
  ``len(t{k}_indices)``: TorchRec's lengths), one of the two per table;
- ``rows`` (optional, ``tables`` values ``≥ 1``): each table's row count; without it a table has
  ``max(t{k}_indices) + 1`` rows;
- ``version`` (optional): 1.

Every table has the same number of bags (``samples``), a multiple of ``batch_size``; no other key is
accepted. A run takes the workload's batch size in samples at a time (the trace's ``batch_size``
unless the workload's is overridden, and ``gpus × batch_size`` for a data-parallel system's global
batch): batch ``n`` is samples ``[n·B, (n + 1)·B)`` of every table. A trace is not wrapped: a run
that needs more batches than it holds is refused (:class:`~cxlsim.errors.ConfigError` naming the
file and ``batch_size``). Dense features are drawn from the seed's dense stream, as the generator
draws them (a trace holds none).

Contract: :func:`read_trace` returns a validated :class:`Trace` or raises ``ConfigError(path, key,
...)`` (exit 2); :func:`trace_batches` yields :class:`~cxlsim.workloads.generator.Batch` objects of
the same form the generator yields, so every consumer of the stream takes either source.
"""

from __future__ import annotations

import importlib
import os
import re
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cxlsim.errors import ConfigError
from cxlsim.rng import keyed_stream
from cxlsim.workloads.generator import STREAM_DENSE, Batch, dense_batch

#: File suffixes a trace may have: NumPy's archive, or a torch-saved dict of tensors (needs torch).
SUFFIXES = (".npz", ".pt")
#: The layout's version (the optional ``version`` key).
VERSION = 1
_TABLE_KEY = re.compile(r"t(0|[1-9]\d*)_(indices|offsets|lengths)")


@dataclass(frozen=True)
class Trace:
    """A validated trace (module docstring): per table its indices (int64) and its bags'
    ``offsets`` (``samples + 1``, int64, from 0), the rows of every table, the recorded batch size."""

    path: str
    batch_size: int
    indices: tuple[np.ndarray, ...]
    offsets: tuple[np.ndarray, ...]
    rows: tuple[int, ...]

    @property
    def tables(self) -> int:
        return len(self.indices)

    @property
    def samples(self) -> int:
        """Bags per table over the whole trace."""
        return int(self.offsets[0].size - 1)

    def batches(self, batch_size: int | None = None) -> int:
        """Whole batches of ``batch_size`` samples (default the recorded one) the trace holds."""
        return self.samples // (batch_size or self.batch_size)

    @property
    def max_bag_sizes(self) -> tuple[int, ...]:
        """Each table's largest bag (at least 1: the workload's bound on a bag)."""
        return tuple(max(1, int(np.diff(o).max(initial=0))) for o in self.offsets)


def _load_arrays(path: Path) -> dict[str, Any]:
    """The file's arrays by key (``.npz``; ``.pt`` through torch, imported only for it)."""
    where = str(path)
    if not path.is_file():
        raise ConfigError(where, "", "no such trace file")
    if path.suffix == ".pt":
        try:
            torch = importlib.import_module("torch")
        except ImportError:
            raise ConfigError(where, "", "a .pt trace needs torch (pip install 'cxlsim[measure]'); "
                              "or save it as .npz (docs/workloads.md)") from None
        try:
            doc = torch.load(where, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is the user's input
            raise ConfigError(where, "", f"not a torch-saved dict of tensors ({type(exc).__name__})") from None
        if not isinstance(doc, Mapping):
            raise ConfigError(where, "", f"expected a dict of tensors, got {type(doc).__name__}")
        return {str(k): (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)) for k, v in doc.items()}
    if path.suffix != ".npz":
        raise ConfigError(where, "", f"a trace is a {' or '.join(SUFFIXES)} file")
    try:
        z = np.load(where, allow_pickle=False)
        if not hasattr(z, "files"):  # a bare .npy array
            raise ValueError("one array, not an archive of named arrays")
        with z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ConfigError(where, "", f"not a readable .npz archive ({exc})") from None


def _integers(where: str, key: str, a: Any, ndim: int) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != ndim or not np.issubdtype(a.dtype, np.integer):
        shape = "a scalar" if ndim == 0 else "a 1-D array"
        raise ConfigError(where, key, f"expected {shape} of integers, got dtype {a.dtype} shape {a.shape}")
    return a.astype(np.int64)


def parse_trace(where: str, arrays: Mapping[str, Any]) -> Trace:
    """Validate ``arrays`` (the file's keys; module docstring) into a :class:`Trace`."""
    tables: dict[int, dict[str, Any]] = {}
    for key, value in arrays.items():
        m = _TABLE_KEY.fullmatch(key)
        if m:
            tables.setdefault(int(m.group(1)), {})[m.group(2)] = value
        elif key not in ("batch_size", "rows", "version"):
            raise ConfigError(where, key, "unknown key (expected batch_size, rows, version, t{k}_indices and "
                              "t{k}_offsets or t{k}_lengths)")
    if "version" in arrays and int(_integers(where, "version", arrays["version"], 0)) != VERSION:
        raise ConfigError(where, "version", f"unsupported trace layout version (this cxlsim reads {VERSION})")
    if "batch_size" not in arrays:
        raise ConfigError(where, "batch_size", "missing: the samples per batch as recorded")
    bsz = int(_integers(where, "batch_size", arrays["batch_size"], 0))
    if bsz < 1:
        raise ConfigError(where, "batch_size", f"must be >= 1, got {bsz}")
    if not tables:
        raise ConfigError(where, "t0_indices", "missing: a trace has at least one table")
    n_tables = max(tables) + 1
    indices, offsets = [], []
    for k in range(n_tables):
        got = tables.get(k, {})
        if "indices" not in got:
            raise ConfigError(where, f"t{k}_indices", f"missing (tables 0 … {n_tables - 1} are present)")
        idx = _integers(where, f"t{k}_indices", got["indices"], 1)
        if "offsets" in got and "lengths" in got:
            raise ConfigError(where, f"t{k}_lengths", f"give t{k}_offsets or t{k}_lengths, not both")
        if "offsets" in got:
            key = f"t{k}_offsets"
            off = _integers(where, key, got["offsets"], 1)
            if off.size == 0 or off[0] != 0:
                raise ConfigError(where, key, "must start at 0 (samples + 1 values)")
            step = np.diff(off)
            if step.size and step.min() < 0:
                at = int(np.argmax(step < 0))
                raise ConfigError(where, key, f"not monotone: offsets[{at + 1}] = {off[at + 1]} < offsets[{at}] = {off[at]}")
            if off[-1] != idx.size:
                raise ConfigError(where, key, f"ends at {off[-1]}, but t{k}_indices has {idx.size} values")
        elif "lengths" in got:
            key = f"t{k}_lengths"
            lengths = _integers(where, key, got["lengths"], 1)
            if lengths.size and lengths.min() < 0:
                raise ConfigError(where, key, f"a negative length at bag {int(np.argmax(lengths < 0))}")
            if int(lengths.sum()) != idx.size:
                raise ConfigError(where, key, f"sum to {int(lengths.sum())}, but t{k}_indices has {idx.size} values")
            off = np.zeros(lengths.size + 1, np.int64)
            np.cumsum(lengths, out=off[1:])
        else:
            raise ConfigError(where, f"t{k}_offsets", f"missing: give t{k}_offsets or t{k}_lengths")
        if idx.size and idx.min() < 0:
            raise ConfigError(where, f"t{k}_indices", f"a negative row id at position {int(np.argmax(idx < 0))}")
        if off.size != (offsets[0].size if offsets else off.size):
            raise ConfigError(where, key, f"{off.size - 1} bags, but table 0 has {offsets[0].size - 1}: every table "
                              "has one bag per sample")
        indices.append(idx)
        offsets.append(off)
    samples = offsets[0].size - 1
    if samples == 0 or samples % bsz:
        raise ConfigError(where, "batch_size", f"{samples} bags per table is not a whole number (>= 1) of batches "
                          f"of {bsz}")
    if "rows" in arrays:
        rows = _integers(where, "rows", arrays["rows"], 1)
        if rows.size != n_tables:
            raise ConfigError(where, "rows", f"{rows.size} values for {n_tables} tables")
        for k, (n, idx) in enumerate(zip(rows.tolist(), indices, strict=True)):
            if n < 1:
                raise ConfigError(where, "rows", f"rows[{k}] = {n}: a table has at least one row")
            if idx.size and int(idx.max()) >= n:
                at = int(np.argmax(idx >= n))
                raise ConfigError(where, f"t{k}_indices", f"row {int(idx[at])} at position {at} is out of range of "
                                  f"rows[{k}] = {n}")
        table_rows = tuple(int(n) for n in rows.tolist())
    else:
        for k, idx in enumerate(indices):
            if idx.size == 0:
                raise ConfigError(where, f"t{k}_indices", "empty: its rows cannot be inferred; give `rows`")
        table_rows = tuple(int(idx.max()) + 1 for idx in indices)
    for a in (*indices, *offsets):
        a.setflags(write=False)
    return Trace(where, bsz, tuple(indices), tuple(offsets), table_rows)


_CACHE: dict[tuple, Trace] = {}


def trace_identity(path: str | os.PathLike) -> tuple | None:
    """``(absolute path, size, modification time in ns)`` of a trace file; None without a path or a
    readable file."""
    if not path:
        return None
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        return None
    return (str(p.resolve()), st.st_size, st.st_mtime_ns)


def read_trace(path: str | os.PathLike) -> Trace:
    """The validated trace at ``path`` (module docstring). The latest file read is kept (a run loads
    its workload more than once), keyed by :func:`trace_identity`."""
    p = Path(path)
    key = trace_identity(p)
    if key is not None and key in _CACHE:
        return _CACHE[key]
    trace = parse_trace(str(p), _load_arrays(p))
    _CACHE.clear()
    if key is not None:
        _CACHE[key] = trace
    return trace


def workload_values(trace: Trace, tables: int, batch_size: int | None) -> dict[str, Any]:
    """The workload parameters a trace sets (``rows_profile``/``table_rows``, ``bag_size``/
    ``table_bag_sizes``, ``lookups_per_table``, ``bag_dedup``, and ``batch_size`` unless
    ``batch_size`` is given); refuses a table count other than the workload's ``tables``."""
    if trace.tables != tables:
        key = f"t{min(trace.tables, tables)}_indices"
        raise ConfigError(trace.path, key, f"the trace has {trace.tables} tables, the workload tables={tables}")
    bags = trace.max_bag_sizes
    return {"rows_profile": "per_table", "table_rows": trace.rows, "bag_size": "per_table",
            "table_bag_sizes": bags, "lookups_per_table": max(bags), "bag_dedup": False,
            "batch_size": trace.batch_size if batch_size is None else batch_size}


def trace_batches(workload: Any, seed: int = 0, n: int | None = None, dense: bool = True) -> Iterator[Batch]:
    """``workload``'s input batches from its trace (``params.trace``), ``batch_size`` samples each,
    as :func:`~cxlsim.workloads.generator.batches` yields them (module docstring); ``n`` batches, or
    until the trace ends if None. Asking for a batch past the trace's end raises ConfigError."""
    p = workload.params
    trace = read_trace(p.trace)
    bsz, tables = int(p.batch_size), trace.tables
    have = trace.batches(bsz)
    if n is not None and n > have:
        raise _short(trace, bsz, n)
    rng_dense = keyed_stream(seed, STREAM_DENSE)
    number = 0
    while n is None or number < n:
        if number >= have:
            raise _short(trace, bsz, number + 1)
        lo_s, hi_s = number * bsz, (number + 1) * bsz
        offsets = np.empty((tables, bsz + 1), np.int64)
        parts = []
        for t in range(tables):
            o = trace.offsets[t][lo_s:hi_s + 1]
            np.subtract(o, o[0], out=offsets[t])
            parts.append(trace.indices[t][o[0]:o[-1]])
        starts = np.zeros(tables + 1, np.int64)
        np.cumsum([a.size for a in parts], out=starts[1:])
        flat = np.concatenate(parts)
        for a in (flat, starts, offsets):
            a.setflags(write=False)
        feats = dense_batch(rng_dense, bsz, p.dense_features) if dense else None
        yield Batch(number, flat, starts, offsets, feats)
        number += 1


def check_trace_length(workload: Any, n: int) -> None:
    """Refuse (ConfigError naming the trace and ``batch_size``) a run of ``n`` batches of ``workload``
    that its trace does not hold; nothing to check without a trace."""
    if workload.params.trace:
        trace = read_trace(workload.params.trace)
        if trace.batches(int(workload.params.batch_size)) < n:
            raise _short(trace, int(workload.params.batch_size), n)


def _short(trace: Trace, batch_size: int, need: int) -> ConfigError:
    return ConfigError(trace.path, "batch_size", f"the trace holds {trace.batches(batch_size)} batch(es) of "
                       f"{batch_size} samples ({trace.samples} samples), the run needs {need} (warm-up, measured and the one "
                       "that closes the last); a trace is not wrapped: "
                       "run fewer batches or record a longer trace")


def write_trace(path: str | os.PathLike, batches: Iterator[Batch], rows: tuple[int, ...] | None = None) -> Path:
    """Write ``batches`` (one batch size, the same tables) to ``path`` (``.npz``) in the layout
    :func:`read_trace` reads (``t{k}_offsets``; ``rows`` if given); returns the path."""
    p = Path(path)
    if p.suffix != ".npz":
        raise ConfigError(str(p), "", "traces are written as .npz")
    idx: list[list[np.ndarray]] = []
    sizes: list[list[np.ndarray]] = []
    bsz = None
    for b in batches:
        if bsz is None:
            bsz = b.batch_size
            idx = [[] for _ in range(b.tables)]
            sizes = [[] for _ in range(b.tables)]
        for t in range(b.tables):
            idx[t].append(b.table(t))
            sizes[t].append(np.diff(b.offsets[t]))
    if bsz is None:
        raise ConfigError(str(p), "", "no batches to write")
    out: dict[str, np.ndarray] = {"version": np.int64(VERSION), "batch_size": np.int64(bsz)}
    for t in range(len(idx)):
        out[f"t{t}_indices"] = np.concatenate(idx[t]).astype(np.int64)
        lengths = np.concatenate(sizes[t])
        off = np.zeros(lengths.size + 1, np.int64)
        np.cumsum(lengths, out=off[1:])
        out[f"t{t}_offsets"] = off
    if rows is not None:
        out["rows"] = np.asarray(rows, np.int64)
    with open(p, "wb") as f:  # np.savez would append .npz to a name without it
        np.savez(f, **out)
    return p
