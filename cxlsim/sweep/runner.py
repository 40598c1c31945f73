"""Running points on an executor, and resumable sweeps.

``run_sweep`` keeps ``DIR/points.jsonl``: one JSON record per finished point, appended (and
flushed) the moment the point finishes, keyed by the point id (a hash of what it simulates).
A re-run with the same ``DIR`` skips every point whose latest record succeeded and runs the rest
(failed points are retried). ``results.csv``/``results.json`` are rewritten at the end, and also
when the sweep is interrupted, from the records of the spec's points. If the output cannot be
written (a full disk, a folder made read-only), the sweep stops, the points already in
``points.jsonl`` stay there, and :func:`run_sweep` raises one :class:`OSError` naming the file and
saying how many points are kept (the command line prints it as one line, exit status 1).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cxlsim.errors import InputError
from cxlsim.provenance import git_revision, provenance
from cxlsim.sweep.evaluate import evaluate
from cxlsim.sweep.executors import Executor, make_executor
from cxlsim.sweep.progress import Progress
from cxlsim.sweep.results import results_document, write_results
from cxlsim.sweep.spec import Point, SweepSpec

POINTS_FILE = "points.jsonl"


def execute(points: Sequence[Point], executor: Executor, progress: Progress | None = None,
            fn: Callable[[Point], dict[str, Any]] = evaluate) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(index, record)`` as points finish; a point the executor could not run (``fn``
    raised, its worker died) becomes an error record (``error_kind`` ``"input"`` for an
    :class:`~cxlsim.errors.InputError`, else ``"executor"``), so one bad point never stops the others."""

    for i, value in executor.map(fn, list(points)):
        if isinstance(value, BaseException):
            p = points[i]
            value = {"id": p.id, "point": p.to_dict(), "swept": dict(p.swept), "status": "error",
                     "error": f"{type(value).__name__}: {value}",
                     "error_kind": "input" if isinstance(value, InputError) else "executor",
                     "result": None, "timeline": None, "wall_s": None, **provenance()}
        if progress is not None:
            progress.advance(value["status"] == "ok", points[i].describe(), value.get("compile_s") or 0.0)
        yield i, value


@dataclass
class SweepOutcome:
    records: list[dict[str, Any]]   # in spec order
    ran: int                        # points simulated in this call
    reused: int                     # points taken from an earlier run
    stale_revisions: list[str]      # git revisions of reused points that differ from this one
    json_path: Path
    csv_path: Path

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["status"] != "ok"]


def load_done(out: Path) -> dict[str, dict[str, Any]]:
    """Latest record per point id from ``out/points.jsonl`` (a torn last line is ignored)."""
    done: dict[str, dict[str, Any]] = {}
    path = out / POINTS_FILE
    if not path.is_file():
        return done
    with path.open("rb") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):  # a torn or damaged line: run it again
                continue
            if isinstance(rec, dict) and "id" in rec:
                done[rec["id"]] = rec
    return done


def run_sweep(spec: SweepSpec, out: str | Path, executor: str = "process", workers: int | None = None,
              scheduler: str | None = None, fresh: bool = False, progress: bool = True) -> SweepOutcome:
    """Run ``spec``'s points not already done in ``out``; write ``out/results.{csv,json}``."""

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; name a folder (results.csv, results.json and points.jsonl go there)")
    out.mkdir(parents=True, exist_ok=True)
    log = out / POINTS_FILE
    if fresh and log.exists():
        log.unlink()
    done = load_done(out)
    records: list[dict[str, Any] | None] = []
    todo: list[int] = []
    for i, p in enumerate(spec.points):
        rec = done.get(p.id)
        if rec is not None and rec.get("status") == "ok":
            records.append(rec)
        else:
            records.append(None)
            todo.append(i)
    reused = len(spec.points) - len(todo)
    revision = git_revision()
    stale = sorted({r["git_revision"] for r in records if r is not None and r.get("git_revision") != revision})
    ex = make_executor(executor, workers, scheduler) if todo else None
    bar = Progress(len(todo), "points", enabled=progress, workers=ex.workers if ex is not None else 1)
    aborted = True
    failure: OSError | None = None
    try:
        if ex is not None:
            try:
                with log.open("a", encoding="utf-8") as fh:
                    if fh.tell() and not log.read_bytes().endswith(b"\n"):
                        fh.write("\n")  # close a line torn by an interrupted run
                    for j, rec in execute([spec.points[i] for i in todo], ex, bar):
                        append_record(fh, rec)
                        records[todo[j]] = rec
            except OSError as exc:  # the log cannot be written (full disk, permissions): stop here
                failure = exc
        aborted = failure is not None
    finally:
        if ex is not None:
            ex.close(abort=aborted)
        bar.close()
        finished = [dict(r, index=i) for i, r in enumerate(records) if r is not None]
        doc = results_document(finished, name=spec.name, description=spec.description, spec=spec.source,
                               document=spec.document, axes=spec.axes, executor=executor)
        try:
            jpath, cpath = write_results(out, finished, doc, spec.axes)
        except OSError as exc:
            failure = failure or exc
    if failure is not None:
        raise output_error(failure, log, sum(r is not None for r in records))
    return SweepOutcome(finished, len(todo), reused, stale, jpath, cpath)


def append_record(fh: Any, rec: dict[str, Any]) -> None:
    """Append one record to the open points log and force it to disk (the resume guarantee)."""
    fh.write(json.dumps(rec, separators=(",", ":")) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def output_error(exc: OSError, log: Path, finished: int) -> OSError:
    """The one-line I/O error a failed sweep ends with (the CLI prints it, exit status 1): the file,
    the reason, and where the finished points are kept."""
    kept = (f"{finished} finished point(s) are kept in {log}; run the same command again to resume"
            if log.is_file() else "no point was recorded")
    return OSError(exc.errno, f"{exc.strerror or exc}; {kept}", exc.filename or str(log))
