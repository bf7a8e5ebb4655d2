"""The trace step's child process: `python -m cachefit.pipeline.workload_trace PROFILE KEPT
-- COMMAND...` runs COMMAND under the trace stage and writes its profile to PROFILE.

`cachefit build` traces the workload through this entry point of the trace stage
(`cachefit.trace.trace_run.trace_command`) in a child process rather than by calling it
in its own process, for two reasons: the workload's output and the trace's go to the
step's log (trace/workload.log) while the parent's terminal keeps its live display, and a
Ctrl-C reaches the child like any build command, which then has the build commands' grace
to stop (cachefit.pipeline.pipeline) while its own interrupt handling keeps the raw traces
of the workload's processes that finished, in KEPT (exit 130, saying where on stderr).

It says what it wrote, or its error, on stderr (the log), and exits with the traced
command's status (2 on an error). It parses no options: it is not the CLI, and the
pipeline is its only caller.
"""

import _signal
import os
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Until `main` handles interrupts: exit 130 at once (nothing is written yet)."""
    os._exit(130)


if __name__ == "__main__" and \
        _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _interrupted_while_starting)

USAGE = "python -m cachefit.pipeline.workload_trace PROFILE KEPT -- COMMAND..."


def main(argv: list[str]) -> int:
    """Trace `argv`'s command into its profile; the exit code (see the module doc)."""
    import signal

    from cachefit import interrupts
    from cachefit.errors import CachefitError
    try:
        interrupts.install(replacing=_interrupted_while_starting)
        return _trace(argv)
    except KeyboardInterrupt:
        return 130
    except CachefitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # the process exits now
        interrupts.uninstall(signal.SIG_IGN)


def _trace(argv: list[str]) -> int:
    from pathlib import Path

    from cachefit.atomic_files import check_output
    from cachefit.errors import UserError
    from cachefit.model.profile import save
    from cachefit.trace.trace_run import trace_command, written_line

    if len(argv) < 4 or argv[2] != "--":
        raise UserError("the trace step's child needs a profile, a directory and a command",
                        f"use: {USAGE}")
    output, kept, command = argv[0], Path(argv[1]), argv[3:]
    check_output(output)            # before the workload runs, not after
    result = trace_command(command, keep_on_interrupt=kept)
    save(result.profile, output)
    print(written_line(output, result), file=sys.stderr)
    if result.returncode != 0:
        print(f"cachefit: note: the traced command exited with status {result.returncode}",
              file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
