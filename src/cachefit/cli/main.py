"""`cachefit` entry point: dispatches to one module per subcommand and prints errors.

Each command module in COMMANDS provides `register(subparsers)` (adds its parser and sets
`func`) and the function it sets; a command module imports the modules doing its work
when it runs, so that `cachefit --help` (which builds every parser) stays quick, and
`--version` builds none. Only this module prints `CachefitError`s and picks exit codes.
An interrupt (Ctrl-C) exits 130 without a traceback at any moment, including while the
command modules are imported (see cachefit.cli), so this module imports nothing else
before `main` runs.
"""

from __future__ import annotations

import argparse
import sys

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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command in COMMANDS, or, when `command` is one of them (the
    module of command C is cachefit.cli.C_cmd), of that command alone: only its module is
    imported (`reorder` and `build` load OR-Tools, half a second that `trace`, `show` or
    `cache` do not need). Help and usage read the same either way."""
    import importlib

    from cachefit import __version__
    parser = argparse.ArgumentParser(
        prog="cachefit",
        description="Profile-guided cache-line layout of C and C++ records.")
    parser.add_argument("--version", action="version", version=f"cachefit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    only = [name for name in COMMANDS if name == f"cachefit.cli.{command}_cmd"]
    for name in only or COMMANDS:
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
    """Run `cachefit ARGS` (also the `cachefit-cc`/`cachefit-c++` scripts); the exit code.
    An interrupt is exit code 130, also when an extension module being imported turned it
    into an ImportError (ortools' "initialization failed"), and also in libclang's
    callbacks, which would swallow it (cachefit.interrupts, installed for every command)."""
    import signal

    from cachefit import interrupts
    from cachefit.cli import interrupted_while_starting
    script = signal.getsignal(signal.SIGINT) is interrupted_while_starting
    try:
        # not swallowed by libclang's callbacks (cachefit.interrupts)
        interrupts.install(replacing=interrupted_while_starting)
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if _caused_by_interrupt(exc):
            return 130
        raise
    finally:
        if script:      # the process exits now: an interrupt changes nothing any more
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        interrupts.uninstall(signal.SIG_IGN if script else signal.default_int_handler)


def _chosen_parser(parser: argparse.ArgumentParser,
                   args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)command `args` chose (`cachefit profile merge`'s), else
    `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return _chosen_parser(chosen, args)
    return parser


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _main(argv: list[str]) -> int:
    from cachefit.errors import CachefitError
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
    if own[:1] == ["--version"]:
        # What argparse's version action prints, without importing every command module
        # (issue 29).
        from cachefit import __version__
        print(f"cachefit {__version__}")
        return 0
    parser = build_parser(own[0] if own and not own[0].startswith("-") else None)
    args, extra = parser.parse_known_args(own)
    if extra:       # with the usage of the command given, not of `cachefit` itself
        _chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    args.passthrough = passthrough
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except CachefitError as exc:
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except MemoryError:
        print(f"cachefit: error: cachefit {args.command} ran out of memory; give it more "
              "memory or a smaller problem (fewer files, a smaller record)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
