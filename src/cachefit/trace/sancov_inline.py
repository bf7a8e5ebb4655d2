"""How to compile a unit for the clang backend with the per-access first checks inlined.

clang's sanitizer-coverage pass runs after the optimizer's inliner, so every instrumented
load and store stays a call of __sanitizer_cov_loadN/storeN, and the call (with the
registers it clobbers) costs more than the check it makes. This module gives the
commands that compile an instrumented unit in two steps instead of one (the compiler
wrapper runs them):
  1. the usual instrumented compile, but to LLVM bitcode (`-c -emit-llvm`);
  2. that bitcode compiled again with the same flags and no instrumentation, with
     runtime/inline/cf_sancov_inline.c (built once per compiler, target and code model
     (-fPIC, -fPIE, -mcmodel=...) into the cache directory as bitcode) linked in by
     `-Xclang -mlink-bitcode-file`: its callbacks are C99 inline
     definitions (`available_externally`), so the optimizer inlines the "outside every
     object / no invocation active" test and only accesses inside a registered range call
     the runtime. Step 2 also loads the pass plugin of cachefit.trace.pass_plugin when
     it can be built, which makes a run of checks through one base pointer in a basic
     block one check (the same records).
The output is an ordinary object (or assembly) file with no extra symbols. When the
compiler or the flags do not allow this (not clang, LTO, other instrumentation that step 2
would apply twice, or CACHEFIT_INLINE_CHECKS=0), it gives the one usual command.
It does so too, with a warning, for a unit with a huge instrumented function (more than
MAX_INLINE_FUNCTION cursors, as unit_instrument counts them): step 2 re-optimizes the
whole unit, and in a function with thousands of inlined checks LLVM's GVN and machine
CSE take time quadratic in their number, as the checks all load the same few globals
(SQLite's amalgamation, whose sqlite3VdbeExec and yy_reduce are giant switches: step 2
took 13 minutes where the plain compile takes 22 s). The profile is the same either way:
the two steps change how the checks are called, not which accesses are instrumented.
It never edits sources, never changes what is instrumented, and leaves no file
half-written; the only compiles it runs are the callbacks' bitcode's and (through
pass_plugin) the plugin's, into the cache.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachefit.cache_files import CacheWrites, build_cached, cache_dir
from cachefit.errors import UserError
from cachefit.frontend.compiler_args import CompilerCommand, Language, preprocessed_x, select
from cachefit.frontend.unit_compile import (
    macro_warning_args,
    main_file_args,
    preprocessed_compile_args,
)
from cachefit.trace import pass_plugin
from cachefit.trace.runtime_build import runtime_dir

INLINE_SOURCE = "inline/cf_sancov_inline.c"
# Flags that make step 2 wrong or useless: instrumentation passes it would run a second
# time, and outputs that are not object code.
_FALLBACK_PREFIXES = ("-flto", "-fembed-bitcode", "-fsanitize=", "-fprofile-",
                      "-fcoverage-mapping", "-fxray-instrument", "-finstrument-functions",
                      "-emit-llvm", "-save-temps", "-fsave-optimization-record",
                      "-fsanitize-coverage")
_TARGET_PREFIXES = ("-m32", "-m64", "-mx32", "--target=")
# The unit's code model, which the inline bitcode must share: cf_sancov_inline.c tests
# __PIC__/__PIE__ to keep the preserve_most call out of shared-library code (issue 26).
_CODE_MODEL_FLAGS = frozenset(("-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pic",
                               "-fno-PIE", "-fno-pie"))
_CODE_MODEL_PREFIXES = ("-mcmodel=",)
# Cursors in one instrumented function above which the checks are not inlined (zlib's
# inflate has 5,400; sqlite3VdbeExec 21,600, and a 14,700-cursor switch of field accesses
# took 50 s in step 2 for 0.2 s in step 1).
MAX_INLINE_FUNCTION = 10_000


@dataclass(frozen=True)
class InlineStep:
    """How to compile with inlined checks: the bitcode to link in, or why not."""

    bitcode: Path | None
    reason: str = ""
    warning: str = ""       # a reason to tell the user about


def enabled(env: Mapping[str, str]) -> bool:
    """CACHEFIT_INLINE_CHECKS=0 turns the two-step compile off (for measurements)."""
    return env.get("CACHEFIT_INLINE_CHECKS", "1").strip().lower() not in ("0", "no", "false",
                                                                          "off")


def _target_flags(flags: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i, a in enumerate(flags):
        if a.startswith(_TARGET_PREFIXES):
            out.append(a)
        elif a == "-target" and i + 1 < len(flags):
            out += [a, flags[i + 1]]
    return out


def _code_model_flags(flags: Sequence[str]) -> list[str]:
    """The unit's -fPIC/-fPIE/-fno-pic/-fno-pie/-mcmodel= flags, in their order (the last
    one of each kind wins, as for the unit)."""
    return [a for a in flags if a in _CODE_MODEL_FLAGS or a.startswith(_CODE_MODEL_PREFIXES)]


def inline_bitcode(compiler: Sequence[str], flags: Sequence[str], env: Mapping[str, str],
                   writes: CacheWrites | None = None) -> Path:
    """The callbacks' inline definitions as bitcode for this compiler, target and code
    model (cached per those flags; with `writes`, built for this command alone when the
    cache cannot be written)."""
    src = runtime_dir() / INLINE_SOURCE
    if not src.is_file():
        raise UserError(f"the cachefit runtime file {src} is missing",
                        "set CACHEFIT_RUNTIME_DIR to the runtime/ directory")
    # Target and code model: a -fPIC unit gets bitcode built with -fPIC (__PIC__ defined).
    target = _target_flags(flags) + _code_model_flags(flags)
    h = hashlib.sha256(src.read_bytes())
    h.update(" ".join([*compiler, *target]).encode())

    def compile_bitcode(out: Path) -> None:
        # No LLVM passes: the optimizer would drop the available_externally bodies.
        proc = subprocess.run([*compiler, *target, "-x", "c", "-std=c11", "-O2", "-Xclang",
                               "-disable-llvm-passes", "-emit-llvm", "-c", str(src), "-o",
                               str(out)], capture_output=True, text=True, check=False,
                              env=dict(env))
        if proc.returncode != 0:
            raise UserError(f"building {src.name} with {compiler[0]} failed",
                            "set CACHEFIT_INLINE_CHECKS=0 to compile without inlined "
                            "checks", details=proc.stderr.splitlines()[:5])

    return build_cached(cache_dir() / "runtime-inline" / f"{h.hexdigest()[:16]}.bc",
                        compile_bitcode, writes)


def plan(compiler: Sequence[str], flags: Sequence[str], env: Mapping[str, str],
         writes: CacheWrites | None = None,
         largest_function: tuple[str, int] = ("", 0)) -> InlineStep:
    """Whether this unit can be compiled in two steps, and with which bitcode
    (`largest_function`: UnitReport.largest_function of the unit)."""
    if not enabled(env):
        return InlineStep(None, "CACHEFIT_INLINE_CHECKS=0")
    for a in flags:
        if a.startswith(_FALLBACK_PREFIXES):
            return InlineStep(None, f"{a} is in the flags")
    name, size = largest_function
    if size > MAX_INLINE_FUNCTION:
        why = (f"{name} is too big for inlined access checks ({size} AST cursors, more "
               f"than {MAX_INLINE_FUNCTION}: the optimizer would take time quadratic in "
               "their number); this unit calls the runtime for every access (a slower "
               "traced run, the same profile)")
        return InlineStep(None, why, why)
    return InlineStep(inline_bitcode(compiler, flags, env, writes))


def compile_commands(compiler: Sequence[str], cmd: CompilerCommand, lang: Language,
                     unit: Path, out: str, env: Mapping[str, str], extra: Sequence[str],
                     tmpdir: Path, source: str | None = None,
                     writes: CacheWrites | None = None,
                     largest_function: tuple[str, int] = ("", 0),
                     warnings: list[str] | None = None) -> list[list[str]]:
    """The compiler commands (to run in order, stopping at the first that fails) that
    compile the preprocessed, instrumented `unit` to `out` (`extra` holds the
    sanitizer-coverage flags): the two steps with the first checks inlined when possible
    (the bitcode between them is a temporary file in `tmpdir`), else the one command of a
    preprocessed unit (cachefit.frontend.unit_compile). `writes`: see inline_bitcode;
    `largest_function` and `warnings`: see plan, which may give a warning to append there.
    The caller runs the commands."""
    flags = select(cmd, keep={"other"})
    step = plan(compiler, flags, env, writes, largest_function)
    if step.warning and warnings is not None:
        warnings.append(f"{source or unit}: {step.warning}")
    if step.bitcode is None:
        return [preprocessed_compile_args(compiler, cmd, lang, unit, out, env, extra, source)]
    final = "-S" if cmd.action == "assemble" else "-c"
    fd, bc = tempfile.mkstemp(dir=tmpdir, suffix=".bc")
    os.close(fd)
    first = [*compiler, *flags, *extra, *main_file_args(compiler, env, source, unit),
             *macro_warning_args(compiler, env), "-c",
             "-emit-llvm", "-x", preprocessed_x(lang),
             str(unit), "-o", bc]
    plain_extra = [a for a in extra if not a.startswith("-fsanitize-coverage")]
    coalesce = pass_plugin.plugin_args(compiler, env, warnings, writes)   # runs as one check
    second = [*compiler, *flags, *plain_extra, *coalesce, "-Wno-unused-command-line-argument",
              final, "-x", "ir", bc, "-Xclang", "-mlink-bitcode-file", "-Xclang", str(step.bitcode),
              "-o", out]
    return [first, second]
