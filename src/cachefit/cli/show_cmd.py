"""`cachefit show TYPE`: print the real layout of a record (pahole-style or JSON)."""

from __future__ import annotations

import argparse
import json
import sys

from cachefit.cli.intermixed import add_intermixed_parser
from cachefit.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = add_intermixed_parser(
        sub, "show", help="print the layout of a struct/class/union",
        description="Print the layout of TYPE as the compiler lays it out: one line per member "
                    "with offset and size, holes, cache-line boundaries and totals. Sources come "
                    "from FILEs (compiler arguments after --), from a compile_commands.json (-p) "
                    "or from an ELF file's DWARF (--binary).",
        usage="cachefit show TYPE [FILE...] [-p BUILD_DIR] [--binary ELF] [--cache-line N] "
              "[--json] [-- ARGS...]")
    p.add_argument("type", metavar="TYPE", help="record name: tcb, ns::tcb, ring<int,16>")
    p.add_argument("files", metavar="FILE", nargs="*", help="source files to parse")
    p.add_argument("-p", dest="build_dir", help="directory holding compile_commands.json")
    p.add_argument("--binary", metavar="ELF", help="read the layout from DWARF in ELF")
    p.add_argument("--cache-line", type=int, default=64, metavar="N",
                   help="cache-line size in bytes (default 64)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here, not by --help (issue 29)
    from cachefit.frontend.record_source import load_record_for_cli
    from cachefit.report.layout_text import format_layout

    if args.cache_line <= 0 or args.cache_line & (args.cache_line - 1):
        raise UserError(f"--cache-line {args.cache_line} is not a power of two",
                        "use e.g. 64 or 128")
    rec = load_record_for_cli(args.type, args.files, args.build_dir, args.binary,
                              args.passthrough)
    if args.json:
        json.dump(rec.to_json(args.cache_line), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_layout(rec, args.cache_line))
    return 0
