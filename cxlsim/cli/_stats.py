"""The statistics options ``run``, ``reproduce`` and ``sweep`` share (``--stats``, ``--stats-file``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cxlsim.errors import ConfigError


def add_stats_options(p: argparse.ArgumentParser, per_run: bool = True) -> None:
    """``--stats`` and ``--stats-file`` (``per_run``: one run; else one file per run in the output folder)."""
    p.add_argument("--stats", action="store_true",
                   help="collect the statistics dump as the models run (busy fractions, requests, bytes, GB/s, "
                        "latency percentiles, queue occupancy, hit fractions, RAW stalls, log and checkpoint bytes; "
                        "docs/stats.md): printed as tables, and under the key stats of --json")
    if per_run:
        p.add_argument("--stats-file", metavar="FILE.yaml",
                       help="write the statistics dump as YAML to FILE (implies collecting it); compare two with "
                            "cxlsim stats diff A.yaml B.yaml")


def wants_stats(args: argparse.Namespace) -> bool:
    """Whether the command was asked to collect statistics."""
    return bool(getattr(args, "stats", False) or getattr(args, "stats_file", None))


def check_stats_file(args: argparse.Namespace) -> None:
    """Refuse a ``--stats-file`` that cannot be written, before anything is simulated."""
    path = getattr(args, "stats_file", None)
    if path is None:
        return
    p = Path(path)
    if not p.name or p.is_dir():
        raise ConfigError("--stats-file", "", f"{path} is a folder, expected a file name such as stats.yaml")
    if not p.parent.is_dir():
        raise ConfigError("--stats-file", "", f"{path}: folder {p.parent} does not exist")


def with_stats(points) -> tuple:
    """``points`` (sweep points) that each collect the statistics dump."""
    from dataclasses import replace

    return tuple(replace(p, stats=True) for p in points)


def write_point_stats(records, out: str | Path) -> Path | None:
    """Write each record's statistics dump to ``out/stats/<point id>.yaml``; returns the folder
    (None where no record holds one)."""
    from cxlsim.reports.stats import write_stats

    held = [r for r in records if r is not None and r.get("stats")]
    if not held:
        return None
    folder = Path(out) / "stats"
    folder.mkdir(parents=True, exist_ok=True)
    for r in held:
        write_stats(r["stats"], folder / f"{r['id']}.yaml")
    return folder
