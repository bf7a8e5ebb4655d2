"""`cachefit` entry point: dispatches to one module per subcommand and prints errors.

Each command module in COMMANDS provides `register(subparsers)` (adds its parser and sets
`func`) and the function it sets. Only this module prints `CachefitError`s and picks exit codes.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from cachefit import __version__
from cachefit.errors import CachefitError

# One line per command module; a module that is not there yet is simply not offered.
COMMANDS = [
    "cachefit.cli.show_cmd",
    "cachefit.cli.flatten_cmd",
    "cachefit.cli.trace_cmd",
    "cachefit.cli.profile_cmd",
    "cachefit.cli.cc_cmd",
    "cachefit.cli.reorder_cmd",
    "cachefit.cli.build_cmd",
    "cachefit.cli.report_cmd",
    "cachefit.cli.cache_cmd",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cachefit",
        description="Profile-guided cache-line layout of C and C++ records.")
    parser.add_argument("--version", action="version", version=f"cachefit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def split_passthrough(argv: list[str]) -> tuple[list[str], list[str]]:
    """Split `argv` at the first `--`: cachefit's own arguments, then compiler arguments."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `cachefit cc ARGS` / `cachefit c++ ARGS` take the compiler's arguments verbatim.
    if argv and argv[0] in ("cc", "c++"):
        try:
            from cachefit.cli import cc_cmd
        except ModuleNotFoundError:
            print("cachefit: error: the compiler wrapper is not available", file=sys.stderr)
            return 2
        try:
            return cc_cmd.run_wrapper(argv[0], argv[1:])
        except CachefitError as exc:
            print(exc.render(), file=sys.stderr)
            return exc.exit_code
    own, passthrough = split_passthrough(argv)
    parser = build_parser()
    args = parser.parse_args(own)
    args.passthrough = passthrough
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except CachefitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        print(f"cachefit: error: cachefit {args.command} ran out of memory; give it more "
              "memory or a smaller problem (fewer files, a smaller record)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
