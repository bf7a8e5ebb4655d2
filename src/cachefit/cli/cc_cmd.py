"""`cachefit cc ARGS` / `cachefit c++ ARGS`: the drop-in compiler (use as CC/CXX).

main() hands the compiler arguments verbatim to `run_wrapper`; the mode (plain, profile,
optimize) and the real compiler come from CACHEFIT_MODE/CACHEFIT_CC/CACHEFIT_CXX or
cachefit.toml. `main_cc` / `main_cxx` are the console scripts `cachefit-cc` and
`cachefit-c++` (one executable path, for CMake's CMAKE_C_COMPILER/CMAKE_CXX_COMPILER).
This module only prints the wrapper's warnings (cachefit.cli.main prints errors and
handles interrupts); the work is in cachefit.build.compiler_wrapper, imported when a
compile runs, so that the console scripts import nothing an interrupt could break.
"""

from __future__ import annotations

import argparse
import sys


def run_wrapper(name: str, args: list[str]) -> int:
    from cachefit.build.compiler_wrapper import run
    result = run("c++" if name == "c++" else "c", list(args))
    for w in result.warnings:
        print(f"cachefit: warning: {w}", file=sys.stderr)
    return result.returncode


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name in ("cc", "c++"):
        p = subparsers.add_parser(
            name, help=f"drop-in {'C++' if name == 'c++' else 'C'} compiler "
                       "(CACHEFIT_MODE=plain|profile|optimize)",
            description="All arguments go to the real compiler. In profile mode the build is "
                        "instrumented for `cachefit trace`; in optimize mode the layout plan "
                        "(CACHEFIT_LAYOUTS) is applied to each preprocessed unit and objects "
                        "are cached; see docs/cachefit-toml.md.")
        p.add_argument("compiler_args", nargs=argparse.REMAINDER)
        p.set_defaults(func=lambda args, n=name: run_wrapper(n, args.compiler_args))


def _script(name: str) -> int:
    from cachefit.cli.main import main  # its errors, exit codes and interrupts
    return main([name, *sys.argv[1:]])


def main_cc() -> int:
    """`cachefit-cc ARGS`: the same as `cachefit cc ARGS`."""
    return _script("cc")


def main_cxx() -> int:
    """`cachefit-c++ ARGS`: the same as `cachefit c++ ARGS`."""
    return _script("c++")
