"""`cachefit cache --stats | --clear | --json`: inspect or empty the optimize-mode object cache
(`--clear` also empties the scan cache of `cachefit reorder`).

Only argument handling and printing live here; the cache itself (location, counters,
eviction) is cachefit.pipeline.unit_cache (docs/cache.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("cache", help="show the statistics of the object cache or clear it",
                              description="The content cache of optimize-mode builds "
                                          "(docs/cache.md). Location: "
                                          "$CACHEFIT_CACHE_DIR/objects.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--stats", action="store_true", help="print hits, misses, size (default)")
    g.add_argument("--clear", action="store_true", help="remove every cached object and "
                                                        "scan result, reset the counters")
    p.add_argument("--json", action="store_true", help="with --stats: print JSON")
    p.set_defaults(func=run_cache)


def run_cache(args: argparse.Namespace) -> int:
    # imported here, not by --help (issue 29)
    from cachefit.pipeline.unit_cache import UnitCache
    from cachefit.reorder import scan_cache

    cache = UnitCache.from_env(os.environ)
    if args.clear:
        n = cache.clear()
        print(f"cachefit: removed {n} cached object{'s' if n != 1 else ''} from "
              f"{cache.directory}", file=sys.stderr)
        n = scan_cache.clear()
        print(f"cachefit: removed {n} scan result{'s' if n != 1 else ''} from "
              f"{scan_cache.default_root()}", file=sys.stderr)
        return 0
    st = cache.stats()
    if args.json:
        print(json.dumps({"directory": str(st.directory), "enabled": st.enabled,
                          "hits": st.hits, "misses": st.misses, "damaged": st.damaged,
                          "objects": st.entries,
                          "size": st.size, "max_size": st.max_size}, indent=2))
    else:
        print("\n".join(st.lines()))
    return 0
