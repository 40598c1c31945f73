"""Executors: where sweep points run. Implementations are named in the entry-point group
``cxlsim.executors`` (:data:`EXECUTORS`, a :class:`~cxlsim.plugins.Registry`; the built-ins
``serial``, ``process``, ``dask`` in cxlsim's pyproject.toml, a third party's in its own);
``--executor NAME`` picks one.

Contract: ``Executor.map(fn, items)`` yields ``(index, value)`` pairs as items finish, in any
order, where ``value`` is ``fn(items[index])``; ``fn`` must be a module-level function and items
picklable. If running an item fails (``fn`` raises, a worker process dies, the cluster goes away),
``value`` is the exception instead; the executor goes on with the other items, in every executor. ``close()``
releases workers and cancels what has not started; ``close(abort=True)`` (after an interrupt)
also stops what is running instead of waiting for it. Results must not depend on the executor:
points carry their seeds, and nothing in a point reads process state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from cxlsim.errors import InputError
from cxlsim.plugins import Registry


class Executor(Protocol):
    """Built as ``cls(workers=..., scheduler=...)``; ``takes_scheduler``: it connects to a
    ``--scheduler`` address (the others refuse one)."""

    name: str
    takes_scheduler: bool

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[tuple[int, Any]]: ...

    def close(self, abort: bool = False) -> None: ...


def _adopt(name: str, cls: Any) -> None:
    cls.name = name


#: The executors by name (``list(EXECUTORS)``: the names, nothing imported).
EXECUTORS = Registry("cxlsim.executors", "executor", _adopt)


def make_executor(name: str, workers: int | None = None, scheduler: str | None = None) -> Executor:
    """Build executor ``name``; ``workers`` defaults to the CPU count, ``scheduler`` is for dask."""
    if name not in EXECUTORS:
        raise InputError(f"--executor: {EXECUTORS.unknown_message(name)}")
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be >= 1, got {workers}")
    cls = EXECUTORS.get(name)
    if scheduler and not getattr(cls, "takes_scheduler", False):
        takes = [n for n in EXECUTORS if getattr(EXECUTORS.get(n), "takes_scheduler", False)]
        raise InputError(f"--scheduler needs an executor that connects to one (--executor {' or '.join(takes)})")
    return cls(workers=workers, scheduler=scheduler)


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


class SerialExecutor:
    """Every point in this process, one after the other."""

    takes_scheduler = False

    def __init__(self, workers: int | None = None, scheduler: str | None = None) -> None:
        self.workers = 1

    def map(self, fn, items):
        for i, item in enumerate(items):
            try:
                value = fn(item)
            except Exception as exc:  # like a pool's worker: the point fails, the others run
                value = exc
            yield i, value

    def close(self, abort: bool = False) -> None:
        pass


class ProcessExecutor:
    """A local pool of worker processes (``concurrent.futures``), started by a fork server so
    that workers never inherit the parent's threads."""

    takes_scheduler = False

    def __init__(self, workers: int | None = None, scheduler: str | None = None) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers or default_workers()
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        if ctx.get_start_method() == "forkserver":
            ctx.set_forkserver_preload(["cxlsim.api", "cxlsim.sweep.evaluate"])
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)

    def map(self, fn, items):
        from concurrent.futures import as_completed

        futures = {self._pool.submit(fn, item): i for i, item in enumerate(items)}
        for fut in as_completed(futures):
            try:
                yield futures[fut], fut.result()
            except Exception as exc:  # the worker died (BrokenProcessPool) or could not pickle
                yield futures[fut], exc

    def close(self, abort: bool = False) -> None:
        if abort:  # do not wait for running points: their results would be dropped anyway
            workers = list((getattr(self._pool, "_processes", None) or {}).values())
            self._pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers:
                proc.terminate()
        else:
            self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Points as tasks on a Dask distributed cluster: ``--scheduler tcp://host:8786`` connects to
    a running one (its workers need the same cxlsim installed), otherwise a local cluster of
    ``workers`` single-threaded processes listens on loopback only."""

    takes_scheduler = True

    def __init__(self, workers: int | None = None, scheduler: str | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise InputError("--executor dask needs Dask: pip install 'cxlsim[dask]'") from None
        import logging

        self._cluster = None
        if scheduler:
            try:
                self._client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
            self.workers = len(self._client.scheduler_info().get("workers", {})) or (workers or 1)
        else:
            self.workers = workers or default_workers()
            self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                         host="127.0.0.1", dashboard_address=None,
                                         silence_logs=logging.ERROR)
            self._client = Client(self._cluster)

    def map(self, fn, items):
        from dask.distributed import as_completed

        futures = self._client.map(fn, list(items), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in as_completed(futures):
            try:
                yield index[fut.key], fut.result()
            except Exception as exc:  # a worker was lost (KilledWorker) or the task could not run
                yield index[fut.key], exc
            finally:
                fut.release()

    def close(self, abort: bool = False) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
