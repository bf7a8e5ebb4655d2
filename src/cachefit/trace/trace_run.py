"""Run a command whose programs are profile builds and gather their traces into a profile.

`cachefit trace -- COMMAND` runs COMMAND (a program or a script running it several
times) with CACHEFIT_TRACE_DIR pointing at a fresh directory, where every profile-build
process writes its raw trace at exit; the raw traces are then merged into one profile.
It does not print; the CLI reports the result.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.atomic_files import make_output_dir
from cachefit.errors import Interrupted, Location, UserError
from cachefit.interrupts import held
from cachefit.model.profile import Profile
from cachefit.scratch import scratch_directory
from cachefit.trace.raw_trace import collect_raw_files, profile_from_raw


@dataclass
class TraceResult:
    profile: Profile
    returncode: int
    raw_files: list[Path]
    seconds: float


def written_line(output: str | Path, result: TraceResult) -> str:
    """The one line a trace run ends with: the profile written and what it holds."""
    prof = result.profile
    kinds = sum(len(t.sequences) for t in prof.types.values())
    return (f"cachefit: wrote {output}: {prof.invocations} invocations, "
            f"{len(prof.types)} type{'s' if len(prof.types) != 1 else ''}, "
            f"{kinds} distinct sequence{'s' if kinds != 1 else ''} ({result.seconds:.2f} s)")


def trace_command(command: Sequence[str], *, raw_dir: Path | None = None,
                  env: Mapping[str, str] | None = None,
                  limits: Mapping[str, int] | None = None,
                  keep_on_interrupt: Path | None = None) -> TraceResult:
    """Run `command`, then build the profile from the raw traces its processes wrote.

    Interrupted (Ctrl-C), the raw traces of the processes that finished are kept: in
    `raw_dir` when given, else moved to a new directory `keep_on_interrupt` (numbered
    `.2`, `.3`, ... when it exists; a directory of the system's temporary directory when
    None or when it cannot be created), and `Interrupted` names it (exit 130). The traces
    processes were writing when they were stopped (`cachefit-PID.raw.tmp`) are removed."""
    if not command:
        raise UserError("no command to trace", "use: cachefit trace -o PROFILE -- COMMAND...")
    child_env = dict(os.environ if env is None else env)
    with scratch_directory("cachefit-trace-") as tmp:
        directory = (raw_dir or Path(tmp)).resolve()
        make_output_dir(directory, "choose another --keep-raw DIR")
        for stale in directory.glob("cachefit-*.raw"):
            stale.unlink()
        child_env["CACHEFIT_TRACE_DIR"] = str(directory)
        for key, value in (limits or {}).items():
            child_env[f"CACHEFIT_{key.upper()}"] = str(value)
        start = time.monotonic()
        try:
            proc, files, profile = _run(command, child_env, directory)
        except KeyboardInterrupt:
            # subprocess.run has waited for the command (killed after 0.25 s)
            interrupted = _keep_finished(directory, raw_dir is None, keep_on_interrupt)
            if interrupted is None:
                raise
            raise interrupted from None
        seconds = time.monotonic() - start
        profile.metadata["commands"] = [list(command)]
        overhead = dict(profile.metadata.get("overhead", {}))
        overhead["command_seconds"] = round(seconds, 6)
        profile.metadata["overhead"] = overhead
        kept = list(files) if raw_dir is not None else []
        return TraceResult(profile, proc.returncode, kept, seconds)


def _run(command: Sequence[str], env: dict[str, str], directory: Path
         ) -> tuple[subprocess.CompletedProcess[bytes], list[Path], Profile]:
    """Run `command`, then merge the raw traces it left in `directory`."""
    try:
        proc = subprocess.run(list(command), env=env, check=False)
    except OSError as exc:
        raise _cannot_run(command[0], exc) from exc
    files = collect_raw_files([directory])
    if not files:
        raise UserError(
            f"`{' '.join(command)}` wrote no trace",
            "build the program with CACHEFIT_MODE=profile (cachefit cc/c++) and make sure "
            "it exits normally", )
    return proc, files, profile_from_raw(files)


def _keep_finished(directory: Path, move: bool, move_to: Path | None) -> Interrupted | None:
    """After an interrupt: the raw traces in `directory` kept (in it, or when `move`, moved
    to a new directory named after `move_to`), and the error naming where; None when there
    is none.
    A second interrupt here is held (cachefit.interrupts) so no trace is half moved."""
    with held():
        for partial in directory.glob("cachefit-*.raw.tmp"):
            partial.unlink(missing_ok=True)
        files = collect_raw_files([directory])
        if not files:
            return None
        kept = directory
        if move:
            kept = _new_dir(move_to)
            for f in files:
                shutil.move(f, kept / f.name)
    n = len(files)
    return Interrupted(
        f"interrupted; the raw traces of the {n} process{'es' if n != 1 else ''} that "
        f"finished are in {kept}",
        f"`cachefit profile import {kept} -o PROFILE` makes a profile of them")


def _new_dir(wanted: Path | None) -> Path:
    """A new directory: `wanted`, else `wanted.2`, `wanted.3`, ...; one in the system's
    temporary directory when `wanted` is None or cannot be created."""
    if wanted is not None:
        for n in range(1, 1000):
            candidate = wanted if n == 1 else wanted.with_name(f"{wanted.name}.{n}")
            try:
                candidate.mkdir()
                return candidate
            except FileExistsError:
                continue
            except OSError:
                break
    return Path(tempfile.mkdtemp(prefix="cachefit-raw-traces-"))


def _cannot_run(program: str, exc: OSError) -> UserError:
    """The traced command is the user's: a wrong one is a user error (exit 2)."""
    where = Location(program)
    if os.path.isdir(program):
        return UserError("is a directory, not a program", "name the program to trace", where)
    if isinstance(exc, FileNotFoundError):
        return UserError("command not found",
                         "check the path (or PATH) of the program to trace", where)
    return UserError(f"cannot run it: {exc.strerror}",
                     "check that it is an executable program", where)
