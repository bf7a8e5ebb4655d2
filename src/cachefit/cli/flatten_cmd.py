"""`cachefit flatten CLASS`: turn a class hierarchy into one flat class (paper 001, §3)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from cachefit.cli.intermixed import add_intermixed_parser
from cachefit.errors import UserError

# The work's modules are imported when the command runs, not by --help (issue 29).
if TYPE_CHECKING:
    from cachefit.flatten.api import FlattenResult


def register(sub: argparse._SubParsersAction) -> None:
    p = add_intermixed_parser(
        sub, "flatten", help="turn a class hierarchy into one flat class",
        description="Copy the inherited members of CLASS into CLASS, drop overridden "
                    "functions and shadowed members, 'virtual' and the base classes; code "
                    "that uses CLASS does not change. Works on a translation unit (FILE), a "
                    "preprocessed file (.i/.ii) or a source tree (-p BUILD_DIR with "
                    "compile_commands.json). Refuses, with the precondition that failed and "
                    "where, when the hierarchy cannot be flattened transparently. By default "
                    "prints the transformed main file; nothing is written without -o or "
                    "--in-place.",
        usage="cachefit flatten CLASS [FILE...] [-p BUILD_DIR] [-o OUT | --in-place | --diff] "
              "[--json] [-- ARGS...]")
    p.add_argument("cls", metavar="CLASS", help="the most derived class: tcb, ns::tcb")
    p.add_argument("files", metavar="FILE", nargs="*",
                   help="translation units (sources or preprocessed .i/.ii files)")
    p.add_argument("-p", dest="build_dir", help="directory holding compile_commands.json")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", dest="output", metavar="OUT",
                     help="write the transformed file to OUT (one changed file only)")
    out.add_argument("--in-place", action="store_true",
                     help="rewrite the changed files in place (atomically)")
    out.add_argument("--diff", action="store_true",
                     help="print a unified diff that `git apply` accepts")
    p.add_argument("--json", action="store_true",
                   help="print a JSON report (classes removed, members copied, functions "
                        "devirtualised, sizeof before and after)")
    p.set_defaults(func=run)


def _flatten(args: argparse.Namespace) -> FlattenResult:
    from cachefit.flatten.api import flatten_files, flatten_tree

    if args.build_dir:
        return flatten_tree(args.build_dir, args.files, args.cls, args.passthrough)
    if not args.files:
        raise UserError("no source given", "name FILEs, or -p BUILD_DIR")
    return flatten_files(args.files, args.passthrough, args.cls)


def _shown_file(result: FlattenResult) -> str:
    changed = result.changed_files
    main = os.path.abspath(result.main_file)
    if not changed or main in map(os.path.abspath, changed) or len(changed) > 1:
        return result.main_file
    return changed[0]


def run(args: argparse.Namespace) -> int:
    from cachefit.edits import display_path, write_atomic

    result = _flatten(args)
    changed = result.changed_files
    for w in result.warnings:
        print(f"cachefit: warning: {w}", file=sys.stderr)
    diff = result.diff() if args.diff else None
    if args.output:
        target = os.path.abspath(result.main_file) if not changed else None
        if len(changed) > 1:
            raise UserError(f"flattening changes {len(changed)} files: "
                            + ", ".join(display_path(f) for f in changed),
                            "use --in-place or --diff instead of -o")
        target = changed[0] if changed else result.main_file
        write_atomic(args.output, result.text(target).encode(errors="surrogateescape"))
    elif args.in_place:
        result.write()
    if args.json:
        report = dict(result.report)
        report["files"] = [display_path(f) for f in changed]
        report["warnings"] = result.warnings
        if diff is not None:
            report["diff"] = diff
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if diff is not None:
        sys.stdout.write(diff)
        return 0
    if args.output or args.in_place:
        for f in changed:
            print(f"cachefit: flattened {result.target}: wrote "
                  f"{args.output if args.output else display_path(f)}", file=sys.stderr)
        return 0
    shown = _shown_file(result)
    sys.stdout.write(result.text(shown))
    others = [f for f in changed if os.path.abspath(f) != os.path.abspath(shown)]
    if others:
        print("cachefit: note: flattening also changes "
              + ", ".join(display_path(f) for f in others)
              + "; use --diff or --in-place to see or apply all changes", file=sys.stderr)
    elif shown != result.main_file:
        print(f"cachefit: note: the hierarchy is in {display_path(shown)}; printed that file",
              file=sys.stderr)
    return 0
