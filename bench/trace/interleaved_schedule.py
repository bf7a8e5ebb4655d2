"""Run timing jobs round-robin: every round runs each job once, in a shuffled order.

On a shared machine the load changes over seconds; timing all runs of one variant and
then all runs of the next lets a burst of load fall on one variant only. Interleaving
puts one run of every variant in each round, so the ratio of two variants can be taken
inside a round (bench/trace/round_stats.py). The order inside a round is shuffled with
a seeded generator (reproducible) so no variant always runs first or right after the
slow DHAT run. One untimed warm-up round comes first (page cache, lazy binding).
CPU time is the child's user + system time from wait4 (valgrind tools run in the child
process, so their own work is counted); wall time is measured around it.
Output is discarded into a null device (`null_device`): a private character device in
the work directory when it can be made, because on this shared machine /dev/null has been
replaced by a regular file (an atomic "write then rename" onto it), which turned DHAT's
`--dhat-out-file=/dev/null` into real writes and the empty input of start-up runs into
earlier runs' output. Every run checks that its null device is still a character device.
It runs only the commands it is given, and stops the benchmark (SystemExit) when one
fails or the null device is not one.
"""

from __future__ import annotations

import os
import random
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from round_stats import Sample


def is_null_device(path: Path) -> bool:
    """Whether `path` is the null character device (major 1, minor 3 on Linux)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3)


def null_device(work: Path) -> Path:
    """WORK/null, a private null device (made with mknod: needs root), else /dev/null when
    that is still the device; exits when neither is."""
    private = work / "null"
    if is_null_device(private):
        return private
    try:
        private.unlink(missing_ok=True)
        os.mknod(private, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        if is_null_device(private):
            return private
    except OSError:
        pass
    if is_null_device(Path("/dev/null")):
        return Path("/dev/null")
    sys.exit("/dev/null is not the null device (ls -l /dev/null) and no private one could "
             "be made; restore it: mknod -m 666 /dev/null.new c 1 3 && "
             "mv /dev/null.new /dev/null")


@dataclass(frozen=True)
class Job:
    """A command to time: its name in the results, argv, stdin file (None: the null
    device), environment, and the null device its output goes to."""

    name: str
    cmd: list[str]
    stdin: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    null: Path = Path(os.devnull)


def run_once(job: Job) -> Sample:
    """Run `job` once and return its wall and CPU seconds; exit if it fails."""
    if not is_null_device(job.null):
        sys.exit(f"{job.null} is no longer the null device; the timings would include "
                 "writing the output (see interleaved_schedule.py)")
    with open(job.stdin or job.null, "rb") as fin, open(job.null, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(job.cmd, stdin=fin, stdout=out, stderr=out,
                                env=job.env or None)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"failed ({code}): {job.name}: {' '.join(job.cmd)}")
    return Sample(wall=wall, cpu=usage.ru_utime + usage.ru_stime)


def round_orders(names: Sequence[str], reps: int, seed: int) -> list[list[str]]:
    """The order of the jobs in each of `reps` rounds: a seeded shuffle per round."""
    rng = random.Random(seed)
    orders = []
    for _ in range(reps):
        order = list(names)
        rng.shuffle(order)
        orders.append(order)
    return orders


def run_rounds(jobs: Sequence[Job], reps: int, seed: int, warmup: bool = True,
               runner: Callable[[Job], Sample] = run_once,
               progress: Callable[[str], None] | None = None) -> list[dict[str, Sample]]:
    """Time every job once per round for `reps` rounds; returns one {name: Sample} per
    round. With `warmup`, a first round is run and discarded."""
    by_name = {j.name: j for j in jobs}
    if len(by_name) != len(jobs):
        raise ValueError("job names must be unique")
    if warmup:
        for job in jobs:
            runner(job)
    rounds: list[dict[str, Sample]] = []
    for i, order in enumerate(round_orders([j.name for j in jobs], reps, seed)):
        rounds.append({name: runner(by_name[name]) for name in order})
        if progress is not None:
            progress(f"round {i + 1}/{reps}: {' '.join(order)}")
    return rounds
