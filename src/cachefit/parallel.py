"""Run one function over many items in worker processes, results in the items' order.

What the code-base scans use to parse units in parallel (`-j N`, default the number of
CPUs). `ordered_map(fn, items, jobs)` yields `fn(item)` for each item in the items' order;
`WorkerPool` is the same with the submissions in the caller's hands (it can hand work over
when the workers run out of it). With `jobs` <= 1, or fewer than two items, everything runs
in this process, each item when its result is asked for; otherwise in worker processes
forked from a clean server process (multiprocessing's *forkserver*: no libclang state and
no threads of this process are inherited; each worker takes this process's working
directory and environment). Results are taken in the order the caller asks for them,
whatever finished first, so what the caller merges is the same for every N, and the first
item (in that order) that raised re-raises its exception here; the other workers are
stopped. Ctrl-C is this process's alone: the server and the workers run with SIGINT
blocked, and an interrupt here terminates them.

`fn`, the items and the results cross process boundaries: they must be picklable (plain
data, no clang objects). This module knows nothing about what the items are.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any, Generic, TypeVar

from cachefit.interrupts import held

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """The number of CPUs this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _enter(cwd: str, env: dict[str, str]) -> None:
    """A worker starts in the caller's working directory with the caller's environment
    (the server process it is forked from keeps those of its own start)."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)


class Pending(Generic[R]):
    """A submitted item: `result()` waits for it (or, without workers, computes it)."""

    def __init__(self, future: Future[R] | None, call: Callable[[], R] | None) -> None:
        self._future = future
        self._call = call

    def done(self) -> bool:
        return self._future is None or self._future.done()

    def result(self) -> R:
        if self._future is not None:
            return self._future.result()
        assert self._call is not None
        return self._call()


class WorkerPool:
    """Up to `jobs` worker processes (None: one per CPU) for about `items` items; no
    process at all when that makes fewer than two, or when the fork server cannot start."""

    def __init__(self, jobs: int | None, items: int) -> None:
        n = default_jobs() if jobs is None else jobs
        self.workers = min(n, items)
        self._pending: list[Pending[Any]] = []
        self._executor: ProcessPoolExecutor | None = None
        if self.workers > 1:
            context = multiprocessing.get_context("forkserver")
            try:
                _start_server_without_sigint()
            except OSError:
                # The server's socket lives in TMPDIR; a long TMPDIR makes its path too long
                # for AF_UNIX (108 bytes). The same results come from this process alone.
                self.workers = 1
                return
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=context, initializer=_enter,
                initargs=(os.getcwd(), dict(os.environ)))

    @property
    def parallel(self) -> bool:
        return self._executor is not None

    def submit(self, fn: Callable[[T], R], item: T) -> Pending[R]:
        if self._executor is None:
            return Pending(None, lambda: fn(item))
        with held():    # a worker being started is not left to find its pool gone
            p: Pending[R] = Pending(self._executor.submit(fn, item), None)
        self._pending.append(p)
        return p

    def idle(self) -> bool:
        """True when the workers have finished everything submitted to them."""
        return all(p.done() for p in self._pending)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._executor is not None:
            if kind is not None and issubclass(kind, KeyboardInterrupt):
                # the workers do not see Ctrl-C: stop them rather than wait for their items
                processes = getattr(self._executor, "_processes", None) or {}
                for process in list(processes.values()):
                    process.terminate()
            self._executor.shutdown(wait=True, cancel_futures=True)


def _start_server_without_sigint() -> None:
    """Start multiprocessing's fork server (once per process) with SIGINT blocked, which
    it and the workers forked from it inherit: Ctrl-C goes to the whole process group, and
    a server or worker interrupted while it imports or waits for work prints a traceback;
    this process alone handles it, and stops the workers (`__exit__`). A Ctrl-C meanwhile
    is delivered here when SIGINT is unblocked."""
    from multiprocessing import forkserver, resource_tracker
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        # the server starts the resource tracker first, which unblocks SIGINT after it
        # started it: started here, the tracker is running when the server starts
        resource_tracker.ensure_running()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def ordered_map(fn: Callable[[T], R], items: Sequence[T], jobs: int | None) -> Iterator[R]:
    """`fn(item)` for each item, in the items' order, with up to `jobs` processes."""
    with WorkerPool(jobs, len(items)) as pool:
        pending = [pool.submit(fn, item) for item in items]
        for p in pending:
            yield p.result()
