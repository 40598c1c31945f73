"""MLP timing tables: the CSV format, the grid and the lookup
(docs/design.md#gpu-and-mlp-timing-tables). The model only reads tables; the generator is a tool
(:mod:`cxlsim.calibrate.gpu_table`)::

    python -m cxlsim.calibrate.gpu_table                       # gpu/rtx3090
    python -m cxlsim.calibrate.gpu_table --preset gpu/rtx3090 --out /tmp/t.csv

Without ``--out`` the table is written as ``<mlp_table_name>_mlp.csv`` beside the preset's YAML, in
the catalog root the preset was found in (:func:`cxlsim.config.catalog.catalog_roots`): in a source
checkout (editable install) that is the committed ``devices/gpu/``; for a preset of a
``$CXLSIM_PATH`` catalog, that catalog's ``devices/gpu/``. With an installed wheel, give ``--out``
(or put the preset in a ``$CXLSIM_PATH`` catalog) rather than writing into site-packages.

Format: ``#`` comment lines (generator command, cxlsim and model version, the parameter signature),
then a CSV header ``layer_in,layer_out,batch,fwd_ns,bwd_ns,roofline_fwd_ns,roofline_bwd_ns`` and one
row per (layer shape, batch). A *measured* table ``devices/gpu/<name>_mlp_measured.csv`` has the same
columns (roofline columns optional) and takes precedence over the generated one; a *generated* table
is used only if its signature matches the model's parameters (otherwise the formula is used, so
``--set`` overrides are never silently ignored). Catalog roots are searched as for presets
(``$CXLSIM_PATH`` shadows the shipped ``devices/``).

Lookup: exact on grid points; between batch grid points log-log interpolation (times are ~linear
in batch for large batches and the roofline is convex in log-log space, so interpolated values stay
above the bound); below/above the grid, the formula scaled by the table/formula ratio at the nearest
grid point; shapes not in the table return ``None`` (the caller uses the formula).
"""

from __future__ import annotations

import bisect
import csv
import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Version of the timing formula in :mod:`cxlsim.devices.compute.gpu`; bump it when the formula changes so
#: that stale generated tables stop matching.
#: 2: every split-K is a candidate (a GEMM's time never falls as K grows); 3: kernel times only (the
#: launch latency is the stream's, cxlsim.devices.compute.gpu_step), so kernel_launch_us is no formula input.
MODEL_VERSION = 3

COLUMNS = ("layer_in", "layer_out", "batch", "fwd_ns", "bwd_ns", "roofline_fwd_ns", "roofline_bwd_ns")
REQUIRED_COLUMNS = COLUMNS[:5]

#: Parameters that enter the timing formula (power and the table name do not).
FORMULA_PARAMS = (
    "peak_fp32_TFLOPps", "sm_count", "mem_bw_GBps", "mem_bw_efficiency_fraction",
    "gemm_peak_fraction", "gemm_tile_overhead_ns",
)


def _mlp(text: str) -> list[tuple[int, int]]:
    ws = [int(x) for x in text.split("-")]
    return list(zip(ws[:-1], ws[1:], strict=False))


def _interaction_width(tables: int, dim: int) -> int:
    """DLRM's top-MLP input: dim + C(tables + 1, 2) (dlrm_s_pytorch.py prepends it to --arch-mlp-top)."""
    n = tables + 1
    return dim + n * (n - 1) // 2


#: MLPs whose layer shapes the table holds: [kwon-micro23] Table 3 (RM1-RM4) and DLRM's Criteo
#: Kaggle configuration. Top MLPs appear both as written (first width = input) and, as DLRM itself
#: reads --arch-mlp-top, with the interaction output prepended as the input width.
TABLE_MLPS: dict[str, str] = {
    "RM1/RM2 bottom": "13-8192-2048-32",
    "RM3 bottom": "13-10240-4096-32",
    "RM4 bottom": "13-16384-2048-512-16",
    "RM1 top": "256-64-1",
    "RM2-RM4 top": "512-128-1",
    "RM1 top (DLRM input)": f"{_interaction_width(20, 32)}-256-64-1",
    "RM2 top (DLRM input)": f"{_interaction_width(80, 32)}-512-128-1",
    "RM3 top (DLRM input)": f"{_interaction_width(20, 32)}-512-128-1",
    "RM4 top (DLRM input)": f"{_interaction_width(52, 16)}-512-128-1",
    "Kaggle bottom": "13-512-256-64-16",
    "Kaggle top": f"{_interaction_width(26, 16)}-512-256-1",
}


def table_shapes() -> list[tuple[int, int]]:
    """Distinct (n_in, n_out) layer shapes of :data:`TABLE_MLPS`, sorted."""
    return sorted({shape for text in TABLE_MLPS.values() for shape in _mlp(text)})


#: Batch grid: powers of two 16 ... 65536 and the midpoints 1.5 x 2^k between them.
BATCH_GRID: tuple[int, ...] = tuple(sorted({2**k for k in range(4, 17)} | {3 * 2**k for k in range(3, 15)}))


def params_signature(params: Any) -> str:
    """Short hash of the formula parameters and :data:`MODEL_VERSION` (what a generated table is valid for)."""
    doc = {"model_version": MODEL_VERSION, **{k: params[k] for k in FORMULA_PARAMS}}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class MlpTable:
    """A loaded MLP timing table: per shape, sorted batches with forward/backward times (ns)."""

    path: str
    signature: str | None
    rows: dict[tuple[int, int], list[tuple[int, float, float]]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: str | Path) -> MlpTable:
        """Parse a table CSV (``#`` comments allowed); raise ConfigError on a malformed file."""
        from cxlsim.config.yamlio import decode_text
        from cxlsim.errors import ConfigError

        where = str(path)
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(where, "", f"cannot read ({exc.strerror or exc})") from None
        lines = decode_text(data, where).splitlines()
        signature = None
        for line in lines:
            if line.startswith("# signature:"):
                signature = line.split(":", 1)[1].strip()
        body = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
        reader = csv.DictReader(body)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(where, "", f"missing column(s) {', '.join(missing)}")
        table = cls(where, signature)
        for lineno, rec in enumerate(reader, start=2):
            try:
                key = (int(rec["layer_in"]), int(rec["layer_out"]))
                row = (int(rec["batch"]), float(rec["fwd_ns"]), float(rec["bwd_ns"]))
            except (TypeError, ValueError):
                raise ConfigError(where, f"row {lineno}", "expected integers layer_in, layer_out, batch and numbers fwd_ns, bwd_ns") from None
            if row[0] < 1 or not (row[1] > 0 and row[2] > 0 and math.isfinite(row[1] + row[2])):
                raise ConfigError(where, f"row {lineno}", "batch must be >= 1 and times positive")
            table.rows.setdefault(key, []).append(row)
        for key, rs in table.rows.items():
            rs.sort()
            if len({r[0] for r in rs}) != len(rs):
                raise ConfigError(where, f"layer {key[0]}x{key[1]}", "duplicate batch rows")
        return table

    def lookup(
        self, n_in: int, n_out: int, batch: int, direction: str, formula: Callable[[int, int, int, str], float]
    ) -> float | None:
        """Time (ns) of a layer from the table, or None if the shape is absent (see module doc)."""
        rs = self.rows.get((n_in, n_out))
        if not rs:
            return None
        col = 1 if direction == "forward" else 2
        batches = [r[0] for r in rs]
        i = bisect.bisect_left(batches, batch)
        if i < len(rs) and batches[i] == batch:
            return rs[i][col]
        if i == 0 or i == len(rs):
            edge = rs[0] if i == 0 else rs[-1]
            ratio = edge[col] / formula(n_in, n_out, edge[0], direction)
            return ratio * formula(n_in, n_out, batch, direction)
        (b0, *t0), (b1, *t1) = rs[i - 1], rs[i]
        y0, y1 = t0[col - 1], t1[col - 1]
        w = (math.log(batch) - math.log(b0)) / (math.log(b1) - math.log(b0))
        return math.exp(math.log(y0) + w * (math.log(y1) - math.log(y0)))


def find_table(name: str, measured: bool) -> Path | None:
    """Path of ``gpu/<name>_mlp[_measured].csv`` in the catalog roots (later roots shadow), or None."""
    if not name:
        return None
    from cxlsim.config.catalog import catalog_roots

    found = None
    suffix = "_mlp_measured.csv" if measured else "_mlp.csv"
    for root in catalog_roots("devices"):
        candidate = root / "gpu" / f"{name}{suffix}"
        if candidate.is_file():
            found = candidate
    return found
