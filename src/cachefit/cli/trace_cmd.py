"""`cachefit trace [-o PROFILE] -- COMMAND...`: run a profile build and write its profile.

Parses the command line, runs cachefit.trace.trace_run and reports what was written,
with notes on the runtime's memory guards that fired (what was lost, which setting to
raise; cachefit.trace.raw_trace.guard_notes, issue 26) and on traced types whose objects
were not found (the allocation sites the build saw, cachefit.trace.alloc_sites). The exit
status is the traced command's, so scripts see its failures. Interrupted, it keeps the raw
traces of the processes that finished (in --keep-raw DIR, else in PROFILE.raw/) and says
where (exit 130).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cachefit.cli.arg_checks import refuse_negative
from cachefit.errors import UserError

# The most objects per invocation the runtime accepts (runtime/src/cf_core.c; [trace]
# max_objects is checked against the same bound, cachefit.model.project_config).
MAX_OBJECTS = 32767

# The work's modules are imported when the command runs, not by --help (issue 29).

def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "trace", help="run a profile build and write the field-access profile",
        description="Run COMMAND (a profile build made with CACHEFIT_MODE=profile cachefit cc, "
                    "or a script running it) and merge the traces of all its processes into "
                    "one profile.",
        usage="cachefit trace [-o PROFILE] [--keep-raw DIR] [--keep-raw-on-interrupt DIR] "
              "[--qemu] -- COMMAND...")
    p.add_argument("-o", "--output", default="cachefit-profile.json",
                   help="profile to write (.json, or .json.gz to compress); "
                        "default %(default)s")
    p.add_argument("--keep-raw", metavar="DIR",
                   help="write the per-process raw traces into DIR and keep them")
    p.add_argument("--keep-raw-on-interrupt", metavar="DIR",
                   help="when interrupted, keep the raw traces of the processes that "
                        "finished in the new directory DIR (default PROFILE.raw; with "
                        "--keep-raw, they stay there)")
    p.add_argument("--max-accesses", type=int, metavar="N",
                   help="longest invocation kept as a literal access sequence per type; "
                        "longer ones are summaries (overrides cachefit.toml)")
    p.add_argument("--max-objects", type=int, metavar="N",
                   help="most objects of one invocation that are recorded; the accesses "
                        "to more are left out and counted (overrides cachefit.toml)")
    p.add_argument("--qemu", action="store_true",
                   help="trace an unmodified binary in QEMU instead (docs/qemu-tracing.md)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cachefit.atomic_files import check_output
    from cachefit.model.profile import save
    from cachefit.trace.trace_run import trace_command, written_line

    refuse_negative("--max-accesses", args.max_accesses,
                    "give the longest sequence to keep per type and invocation")
    refuse_negative("--max-objects", args.max_objects,
                    "give the most objects one invocation may touch")
    if args.max_objects and args.max_objects > MAX_OBJECTS:
        raise UserError(f"--max-objects {args.max_objects} is more than the runtime accepts "
                        f"({MAX_OBJECTS})", f"give 1 to {MAX_OBJECTS}")
    check_output(args.output)           # before the workload runs, not after
    if args.qemu:
        return run_qemu(args)
    limits = {}
    if args.max_accesses:
        limits["max_accesses"] = args.max_accesses
    if args.max_objects:
        limits["max_objects"] = args.max_objects
    result = trace_command(args.passthrough,
                           raw_dir=Path(args.keep_raw) if args.keep_raw else None,
                           limits=limits,
                           keep_on_interrupt=Path(args.keep_raw_on_interrupt
                                                  or f"{args.output}.raw"))
    save(result.profile, args.output)
    prof = result.profile
    print(written_line(args.output, result), file=sys.stderr)
    if prof.invocations == 0:
        print("cachefit: note: no entry function ran; check [trace] entry in cachefit.toml",
              file=sys.stderr)
    from cachefit.trace.raw_trace import guard_notes
    for note in guard_notes(prof):
        print(f"cachefit: note: {note}", file=sys.stderr)
    if prof.invocations:
        from cachefit.trace.alloc_sites import missed_notes
        for note in missed_notes(prof):
            print(f"cachefit: note: {note}", file=sys.stderr)
    if result.returncode != 0:
        print(f"cachefit: note: the traced command exited with status {result.returncode}",
              file=sys.stderr)
    return result.returncode


def run_qemu(args: argparse.Namespace) -> int:
    """Delegate to the QEMU backend (cachefit.trace.qemu_backend), same profile format."""
    from cachefit.errors import UserError
    from cachefit.model.project_config import load_config
    try:
        from cachefit.trace.qemu_backend import trace_qemu
    except ImportError as exc:
        raise UserError("the QEMU backend is not available") from exc
    if not args.passthrough:
        raise UserError("no command to trace", "use: cachefit trace --qemu -o P -- COMMAND...")
    config = load_config()
    data = dict(config.raw)
    if args.max_accesses or args.max_objects:
        trace = dict(data.get("trace", {}))
        qemu = dict(trace.get("qemu", {}))
        if args.max_accesses:
            qemu["max_accesses"] = args.max_accesses
        if args.max_objects:
            qemu["max_objects"] = args.max_objects
        trace["qemu"] = qemu
        data["trace"] = trace
    trace_qemu(list(args.passthrough), data, args.output)
    print(f"cachefit: wrote {args.output} (qemu backend)", file=sys.stderr)
    return 0
