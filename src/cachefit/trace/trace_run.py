"""Run a command whose programs are profile builds and gather their traces into a profile.

`cachefit trace -- COMMAND` runs COMMAND (a program or a script running it several
times) with CACHEFIT_TRACE_DIR pointing at a fresh directory, where every profile-build
process writes its raw trace at exit; the raw traces are then merged into one profile.
It does not print; the CLI reports the result.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.atomic_files import make_output_dir
from cachefit.errors import Location, UserError
from cachefit.trace.profile_format import Profile
from cachefit.trace.raw_trace import collect_raw_files, profile_from_raw


@dataclass
class TraceResult:
    profile: Profile
    returncode: int
    raw_files: list[Path]
    seconds: float


def trace_command(command: Sequence[str], *, raw_dir: Path | None = None,
                  env: Mapping[str, str] | None = None,
                  limits: Mapping[str, int] | None = None) -> TraceResult:
    """Run `command`, then build the profile from the raw traces its processes wrote."""
    if not command:
        raise UserError("no command to trace", "use: cachefit trace -o PROFILE -- COMMAND...")
    child_env = dict(os.environ if env is None else env)
    with tempfile.TemporaryDirectory(prefix="cachefit-trace-") as tmp:
        directory = (raw_dir or Path(tmp)).resolve()
        make_output_dir(directory, "choose another --keep-raw DIR")
        for stale in directory.glob("cachefit-*.raw"):
            stale.unlink()
        child_env["CACHEFIT_TRACE_DIR"] = str(directory)
        for key, value in (limits or {}).items():
            child_env[f"CACHEFIT_{key.upper()}"] = str(value)
        start = time.monotonic()
        try:
            proc = subprocess.run(list(command), env=child_env, check=False)
        except OSError as exc:
            raise _cannot_run(command[0], exc) from exc
        seconds = time.monotonic() - start
        files = collect_raw_files([directory])
        if not files:
            raise UserError(
                f"`{' '.join(command)}` wrote no trace",
                "build the program with CACHEFIT_MODE=profile (cachefit cc/c++) and make sure "
                "it exits normally", )
        profile = profile_from_raw(files)
        profile.metadata["commands"] = [list(command)]
        overhead = dict(profile.metadata.get("overhead", {}))
        overhead["command_seconds"] = round(seconds, 6)
        profile.metadata["overhead"] = overhead
        kept = list(files) if raw_dir is not None else []
        return TraceResult(profile, proc.returncode, kept, seconds)


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
