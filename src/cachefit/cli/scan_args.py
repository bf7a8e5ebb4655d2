"""The options of commands that scan the whole code base: `-j N` and `--no-scan-cache`.

Adds the two options to a parser, turns them into `ScanOptions` (reorder.scan_pool) and
words the one summary line about a scan. It parses nothing and runs nothing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from cachefit.errors import UserError

# Imported when used, not by the parsers' --help (issue 29).
if TYPE_CHECKING:
    from cachefit.reorder.analysis import Analysis
    from cachefit.reorder.scan_pool import ScanOptions


def add_scan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="parse units in N worker processes (default: the number of CPUs; "
                        "the result is the same for every N)")
    p.add_argument("--no-scan-cache", action="store_true",
                   help="parse every unit, neither reading nor writing the scan cache "
                        "(also CACHEFIT_SCAN_CACHE=0)")


def scan_options(args: argparse.Namespace) -> ScanOptions:
    from cachefit.reorder.scan_pool import ScanOptions

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"-j {args.jobs}: the number of jobs must be at least 1", "use e.g. -j 4")
    return ScanOptions(jobs=args.jobs, cache=not args.no_scan_cache)


def scan_summary(a: Analysis) -> str:
    from cachefit.parallel import default_jobs

    parsed, cached = a.scan_counts
    jobs = a.scan_options.jobs or default_jobs()
    return (f"scan: {parsed + cached} unit{'s' if parsed + cached != 1 else ''}, "
            f"{parsed} parsed, {cached} from the scan cache (-j {jobs})")
