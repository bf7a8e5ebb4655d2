"""`cachefit profile merge|show|import`: combine, print and convert profiles.

merge   sums the counts of identical sequences of several profiles into one;
show    prints the sequences of each type, heaviest first, with field names (or, with
        --json, the profile as readable JSON: version 2, or 3 with threads' sharing);
import  builds a profile from raw traces written by profile builds run outside
        `cachefit trace` (with CACHEFIT_TRACE_DIR set).
Only argument handling and printing live here; the work is in cachefit.trace.
"""

from __future__ import annotations

import argparse
import sys

from cachefit.cli.arg_checks import refuse_negative
from cachefit.errors import UserError

# The work's modules (cachefit.trace) are imported when an action runs, not by --help
# (issue 29).


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("profile", help="merge, show or import field-access profiles")
    sub = p.add_subparsers(dest="profile_command", metavar="ACTION")
    m = sub.add_parser("merge", help="sum the counts of several profiles")
    m.add_argument("profiles", nargs="+", metavar="PROFILE",
                   help="profiles to merge (any version, maybe gzipped); their layouts must agree")
    m.add_argument("-o", "--output", required=True, help="profile to write")
    m.set_defaults(func=run_merge)
    s = sub.add_parser("show", help="print sequences with field names, heaviest first")
    s.add_argument("profile", metavar="PROFILE",
                   help="the profile to show (any version, maybe gzipped)")
    s.add_argument("--type", action="append", dest="types", metavar="TYPE",
                   help="only this type (repeatable)")
    s.add_argument("--top", type=int, metavar="N", help="only the N heaviest sequences")
    s.add_argument("--json", action="store_true",
                   help="print the profile as readable JSON (format version 2, or 3 when it "
                        "has threads' sharing; every sequence spelled out; it loads as a "
                        "profile too)")
    s.set_defaults(func=run_show)
    i = sub.add_parser("import", help="build a profile from raw trace files or directories")
    i.add_argument("raw", nargs="+", metavar="RAW",
                   help="raw traces (cachefit-PID.raw files, or directories holding them)")
    i.add_argument("-o", "--output", required=True, help="profile to write")
    i.set_defaults(func=run_import)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def run_merge(args: argparse.Namespace) -> int:
    from cachefit.model.profile import load, save
    from cachefit.model.profile_merge import merge

    profiles = [load(p) for p in args.profiles]
    merged = merge(profiles, names=args.profiles)
    save(merged, args.output)
    print(f"cachefit: wrote {args.output}: {merged.invocations} invocations from "
          f"{len(profiles)} profiles", file=sys.stderr)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from cachefit.model.profile import dumps, load
    from cachefit.report.profile_show import render, select

    refuse_negative("--top", args.top,
                    "give the number of heaviest sequences to show (0 or more)")
    prof = load(args.profile)
    names = [prof.name_of(t) for t in args.types or ()]
    missing = [t for t, have in zip(args.types or (), names, strict=True) if have is None]
    if missing:
        raise UserError(f"{args.profile} has no type {missing[0]}",
                        f"traced types: {', '.join(sorted(prof.types)) or 'none'}")
    chosen = [n for n in names if n]
    if args.json:
        sys.stdout.write(dumps(select(prof, types=chosen, top=args.top), readable=True))
        return 0
    sys.stdout.write(render(prof, types=chosen, top=args.top, title=args.profile))
    return 0


def run_import(args: argparse.Namespace) -> int:
    from cachefit.model.profile import save
    from cachefit.trace.raw_trace import collect_raw_files, profile_from_raw

    prof = profile_from_raw(collect_raw_files(args.raw))
    save(prof, args.output)
    print(f"cachefit: wrote {args.output}: {prof.invocations} invocations", file=sys.stderr)
    return 0
