"""`cachefit report PROFILE`: lines touched before/after/lower bound and the heaviest
sequences in the terminal, and with `--html OUT` one self-contained HTML file with paper
000's Figure 4 per type and a per-field heat map (docs/report.md).

Only argument handling and printing live here; the work is in cachefit.report.
It must not compute figures or render anything itself.
"""

from __future__ import annotations

import argparse
import sys

from cachefit.cli.arg_checks import refuse_negative
from cachefit.errors import UserError


def _power_of_two(flag: str, value: int | None) -> None:
    if value is not None and (value <= 0 or value & (value - 1)):
        raise UserError(f"{flag} {value} is not a power of two", "use e.g. 8 or 64")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="lines touched before/after a reorder, as text and HTML",
        description="Report, per traced type of PROFILE, the heaviest access sequences with "
                    "field names and the cache lines touched per invocation before and "
                    "after reordering (the layout plan's order, or the optimizer's), with a "
                    "lower bound; --html writes paper 000's Figure 4 and a field heat map.",
        usage="cachefit report PROFILE [--type T] [--html OUT] [--layouts PLAN] [--top N] "
              "[--object-align N] [--cache-line N] [--binary ELF] [--optimized-binary ELF] "
              "[--time-limit S]")
    p.add_argument("profile", metavar="PROFILE", help="profile written by `cachefit trace`")
    p.add_argument("--type", action="append", dest="types", metavar="T", default=[],
                   help="only this type (repeatable)")
    p.add_argument("--html", metavar="OUT", help="also write a self-contained HTML report")
    p.add_argument("--layouts", metavar="PLAN",
                   help="layout plan (docs/layout-plan.md) whose orders are 'after'")
    p.add_argument("--top", type=int, default=4, metavar="N",
                   help="heaviest sequences shown and drawn (default 4)")
    p.add_argument("--object-align", type=int, metavar="N",
                   help="alignment of objects in memory (default: the record's; 64 = "
                        "objects start on a cache line)")
    p.add_argument("--cache-line", type=int, metavar="N",
                   help="cache-line size in bytes (default: the profile's)")
    p.add_argument("--binary", metavar="ELF",
                   help="read the traced layout from this ELF's DWARF (default: the "
                        "profile's programs)")
    p.add_argument("--optimized-binary", metavar="ELF",
                   help="read the new layout from this ELF's DWARF instead of predicting it")
    p.add_argument("--time-limit", type=float, default=5.0, metavar="S",
                   help="optimizer time limit per type when no plan gives the order "
                        "(default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here: the report loads the layout optimizer, which other commands skip.
    from cachefit.report.report_files import ReportOptions, render_reports, write_atomic

    refuse_negative("--top", args.top,
                    "give the number of heaviest sequences to show per type (0 or more)")
    _power_of_two("--cache-line", args.cache_line)
    _power_of_two("--object-align", args.object_align)
    opts = ReportOptions(types=tuple(args.types), plan_path=args.layouts,
                         binary=args.binary, optimized_binary=args.optimized_binary,
                         top=args.top, object_align=args.object_align,
                         cache_line=args.cache_line, time_limit=args.time_limit)
    text, html, _ = render_reports(args.profile, opts)
    if args.html:
        write_atomic(args.html, html)
        print(f"cachefit: wrote {args.html}", file=sys.stderr)
    sys.stdout.write(text)
    return 0
