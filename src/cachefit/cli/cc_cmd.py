"""`cachefit cc ARGS` / `cachefit c++ ARGS`: the drop-in compiler (use as CC/CXX).

main() hands the compiler arguments verbatim to `run_wrapper`; the mode (plain, profile,
optimize) and the real compiler come from CACHEFIT_MODE/CACHEFIT_CC/CACHEFIT_CXX or
cachefit.toml. `main_cc` / `main_cxx` are the console scripts `cachefit-cc` and
`cachefit-c++` (one executable path, for CMake's CMAKE_C_COMPILER/CMAKE_CXX_COMPILER).
`--help` (or `-h`) as the only argument prints cachefit's help (`usage`), not the real
compiler's.
This module only prints the wrapper's warnings (cachefit.cli.main prints errors and
handles interrupts); the work is in cachefit.pipeline.compiler_wrapper, imported when a
compile runs, so that the console scripts import nothing an interrupt could break.
"""

from __future__ import annotations

import argparse
import sys

HELP_OPTIONS = ("--help", "-h")
"""`cachefit cc --help` (the only argument) prints cachefit's help, not the compiler's."""


def usage(name: str) -> str:
    """The help of `cachefit cc` / `cachefit c++` (and `cachefit-cc` / `cachefit-c++`)."""
    cxx = name == "c++"
    lang, var, key = ("C++", "CXX", "cxx") if cxx else ("C", "CC", "cc")
    cmake = "CXX" if cxx else "C"
    return f"""\
usage: cachefit {name} COMPILER-ARGS...   (also: cachefit-{name} COMPILER-ARGS...)

cachefit's drop-in {lang} compiler: use it as {var} (make {var}="cachefit {name}", or
cmake -DCMAKE_{cmake}_COMPILER=cachefit-{name}). Every argument goes to the real compiler;
cachefit's mode decides what happens around it.

modes (CACHEFIT_MODE, else [build] mode in cachefit.toml, else plain):
  plain      run the real compiler with the arguments unchanged
  profile    instrument the [trace] types and entry functions of each unit, and link the
             tracing runtime, so that `cachefit trace -- PROGRAM` records a profile
  optimize   apply the layout plan (CACHEFIT_LAYOUTS or [build] layouts) to each
             preprocessed unit, without changing the sources; objects are cached

environment:
  CACHEFIT_MODE            plain, profile or optimize
  CACHEFIT_{var:<15} the real compiler (default: [build] {key}, else {name}; may start
                           with a launcher such as ccache)
  CACHEFIT_CONFIG          the project file (default: cachefit.toml here or in a parent)
  CACHEFIT_LAYOUTS         the layout plan of optimize builds
  CACHEFIT_UNITS_DIR       keep each transformed unit in this directory
  CACHEFIT_CACHE_DIR       cache directory (default: ~/.cache/cachefit)
  CACHEFIT_CACHE           0 turns the object cache of optimize builds off
  CACHEFIT_CACHE_MAX_SIZE  size limit of the object cache (default: 5G)
  CACHEFIT_INLINE_CHECKS   0 turns the inlined access checks of clang profile builds off
  CACHEFIT_RUNTIME_DIR     another tracing runtime source tree

The real compiler's own help: run it directly (`{name} --help`).
More: docs/cachefit-toml.md (modes, profile and optimize builds), docs/layout-plan.md,
docs/cache.md; `cachefit build --help` runs the whole pipeline in one command.
"""


def run_wrapper(name: str, args: list[str]) -> int:
    if len(args) == 1 and args[0] in HELP_OPTIONS:
        sys.stdout.write(usage(name))
        return 0
    from cachefit.pipeline.compiler_wrapper import run
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
        p.add_argument("compiler_args", nargs=argparse.REMAINDER, metavar="ARGS",
                       help="the compiler's arguments, passed on as they are")
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
