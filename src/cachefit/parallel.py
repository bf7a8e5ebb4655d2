"""Run one function over many items in worker processes, results in the items' order.

`ordered_map(fn, items, jobs)` is what the code-base scans use to parse units in parallel
(`-j N`, default the number of CPUs): with `jobs` <= 1 or fewer than two items it runs in
this process, one item after the other; otherwise in `jobs` worker processes forked from a
clean server process (multiprocessing's *forkserver*: no libclang state, no threads of
this process are inherited; each worker takes this process's working directory and
environment). Results come back in the order of `items` whatever finished
first, so what the caller merges is the same for every N; the first item (in that order)
that raised re-raises its exception here and the other workers are stopped.

`fn`, the items and the results cross process boundaries: they must be picklable (plain
data, no clang objects). This module knows nothing about what the items are.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

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


def ordered_map(fn: Callable[[T], R], items: Sequence[T], jobs: int | None) -> Iterator[R]:
    """`fn(item)` for each item, in the items' order, with up to `jobs` processes."""
    n = default_jobs() if jobs is None else jobs
    workers = min(n, len(items))
    if workers <= 1:
        for item in items:
            yield fn(item)
        return
    context = multiprocessing.get_context("forkserver")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                               initializer=_enter, initargs=(os.getcwd(), dict(os.environ)))
    try:
        futures = [pool.submit(fn, item) for item in items]
        for fut in futures:
            yield fut.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
