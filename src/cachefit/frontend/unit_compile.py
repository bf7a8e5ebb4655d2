"""The command line that compiles a preprocessed unit as its original source is compiled.

A unit written out by `-E` (and then edited: instrumented, flattened, reordered) is
compiled with the user's flags minus the preprocessor's, the linker's and the dependency
options, as the driver's `-x` language of a preprocessed unit, and with the flags that keep
what preprocessing loses: the original source's main-file name and the warnings the
compiler judges from macros. Those flags differ between clang and gcc, so the compiler is
asked which it is (`--version`, once per command). The compiler wrapper and the trace
stage both build their compile steps from these. This module builds argument lists; it
runs no compile and writes no file.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from cachefit.errors import ToolMissing
from cachefit.frontend.compiler_args import CompilerCommand, Language, preprocessed_x, select


def preprocessed_compile_args(compiler: Sequence[str], cmd: CompilerCommand, lang: Language,
                              unit: Path, out: str, env: Mapping[str, str],
                              extra: Sequence[str] = (),
                              source: str | None = None) -> list[str]:
    """The command (compiler included) that compiles the preprocessed `unit` to `out` with
    `cmd`'s flags minus the preprocessor's, the linker's and the dependency options, then
    `extra`. With `source` (the original file) and clang, the unit keeps the original's
    main-file name, which clang puts in the profile names of internal-linkage functions:
    the profile and optimize builds of one source then agree, and PGO data applies to
    `static` functions too."""
    final = "-S" if cmd.action == "assemble" else "-c"
    naming = [*main_file_args(compiler, env, source, unit), *macro_warning_args(compiler, env)]
    return [*compiler, *select(cmd, keep={"other"}), *extra, *naming, final, "-x",
            preprocessed_x(lang), str(unit), "-o", out]


def main_file_args(compiler: Sequence[str], env: Mapping[str, str],
                   source: str | None, unit: Path) -> list[str]:
    """clang flags that give the temporary `unit` the original source's main-file name,
    and its debug information the source's path. clang names the unit's compilation unit
    (DW_AT_name, the line table's file 0) `<unit's directory>/<main-file name>`, a random
    temporary path, which made two builds of the same unit differ; `-ffile-prefix-map`
    maps that directory to the source's, so the name is the plain compile's (`src/a.c`)
    and the same inputs give the same bytes. gcc takes the name from the unit's line
    markers, and clang does too without a main-file name (`-` read from stdin)."""
    if source and source != "-" and is_clang(compiler, env):
        directory = os.path.dirname(source)
        mapped = directory + "/" if directory else ""
        return ["-Xclang", "-main-file-name", "-Xclang", Path(source).name,
                f"-ffile-prefix-map={unit.absolute().parent}/={mapped}"]
    return []


def macro_warning_args(compiler: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """Warnings the compiler judges from what preprocessing removes, off for a unit
    compiled from preprocessed text (they warned where the plain build does not, an
    error with -Werror). clang leaves -Wparentheses-equality (in -Wall) out inside macro
    expansions, which the text no longer marks: Lua 5.4.4's `if (luai_numeq(a, b))` is
    `if (((a)==(b)))` there (26 warnings on lvm.c and lcode.c). gcc's
    -Wimplicit-fallthrough (in -Wextra) accepts a `/* FALLTHROUGH */` comment, which is
    gone (Lua's lgc.c). Keeping comments (`-E -C`) would make a comment edit in a header
    miss the object cache for every unit that includes it."""
    return ["-Wno-parentheses-equality"] if is_clang(compiler, env) \
        else ["-Wno-implicit-fallthrough"]


_clang_cache: dict[str, bool] = {}


def is_clang(compiler: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether the real compiler is clang (its `--version` says so); cached per command."""
    key = "\0".join(compiler)
    if key not in _clang_cache:
        try:
            out = subprocess.run([*compiler, "--version"], capture_output=True, text=True,
                                 env=dict(env), check=False).stdout
        except OSError as exc:
            raise ToolMissing(f"cannot run {compiler[0]}: {exc.strerror}") from exc
        _clang_cache[key] = "clang" in out.lower()
    return _clang_cache[key]
