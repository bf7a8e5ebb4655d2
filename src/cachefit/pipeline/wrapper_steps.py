"""Steps every mode of the compiler wrapper shares: running the real compiler (marked so
that it cannot call the wrapper again), naming outputs, preprocessing one source with its
dependency file, compiling a source the wrapper does not transform or a preprocessed unit
(the command from cachefit.frontend.unit_compile), rebuilding a link line around new
objects, and keeping a copy of a transformed unit in CACHEFIT_UNITS_DIR.

Profile mode (cachefit.pipeline.compiler_wrapper) and optimize mode
(cachefit.pipeline.optimize_wrapper) are built from these. Nothing here edits code or
decides what a mode does with a unit; files are written only where the caller says
(temporary directories, the user's outputs, CACHEFIT_UNITS_DIR through temp + rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cachefit.atomic_files import write_bytes_atomic
from cachefit.errors import ToolMissing
from cachefit.frontend.compiler_args import (
    CompilerCommand,
    Language,
    Source,
    dependency_options,
    preprocessed_x,
    select,
    unit_language,
    unit_suffix,
    x_name,
)
from cachefit.frontend.unit_compile import is_clang, preprocessed_compile_args

GUARD_ENV = "CACHEFIT_WRAPPER_ACTIVE"
UNITS_ENV = "CACHEFIT_UNITS_DIR"


@dataclass
class WrapperResult:
    """What one wrapper invocation ends with: the exit code and warnings to print."""

    returncode: int
    warnings: list[str] = field(default_factory=list)


def call(cmd: Sequence[str], env: Mapping[str, str],
         stderr_copy: list[bytes] | None = None) -> int:
    """Run the real compiler (marked so that it cannot call the wrapper again). With
    `stderr_copy`, its messages are also appended there (after being passed on)."""
    child_env = dict(env)
    child_env[GUARD_ENV] = "1"
    try:
        if stderr_copy is None:
            return subprocess.run(list(cmd), env=child_env, check=False).returncode
        proc = subprocess.run(list(cmd), env=child_env, check=False, stderr=subprocess.PIPE)
    except OSError as exc:
        raise ToolMissing(f"cannot run {cmd[0]}: {exc.strerror}") from exc
    if proc.stderr:
        sys.stderr.buffer.write(proc.stderr)
        sys.stderr.buffer.flush()
        stderr_copy.append(proc.stderr)
    return proc.returncode


def has_debug(args: Sequence[str]) -> bool:
    """Whether the flags ask for debug information (the last -g option wins)."""
    level = False
    for a in args:
        if a.startswith("-g"):
            level = a not in ("-g0", "-gno-record-gcc-switches") and not a.startswith("-gz")
    return level


def output_for(cmd: CompilerCommand, src: Source, tmpdir: Path, n: int) -> str:
    """Where the object (or assembly) of one source goes, as the driver would name it;
    a temporary object when the command links."""
    if cmd.action == "link":
        return str(tmpdir / f"{n}-{Path(src.path).stem}.o")
    if cmd.output and len(cmd.sources) == 1:
        return cmd.output
    suffix = ".s" if cmd.action == "assemble" else ".o"
    return Path(src.path).stem + suffix


def several_sources_one_output(cmd: CompilerCommand) -> bool:
    """`-c -o x.o a.c b.c`: the real compiler rejects it, so the wrapper lets it."""
    return cmd.action in ("compile", "assemble") and cmd.output is not None and \
        len(cmd.sources) > 1


def produces_no_code(cmd: CompilerCommand) -> bool:
    """Commands whose output does not depend on the layouts: queries, -E/-M/-MM,
    -fsyntax-only, and the invalid `-c -o x.o a.c b.c` (the real compiler's message)."""
    return cmd.action in ("query", "preprocess") or "-fsyntax-only" in cmd.args or \
        several_sources_one_output(cmd)


def dependency_args(cmd: CompilerCommand, src: Source, out: str) -> list[str]:
    """The -MD/-MMD/-MF/-MT options for preprocessing `src`, with the dependency file and
    target named as the driver would for the real object `out`."""
    deps = dependency_options(cmd)
    if not any(d in ("-MD", "-MMD") for d in deps):
        return []
    args = list(deps)
    # gcc and clang: `-o X` names the dependency file X minus suffix + .d, also when the
    # command links (the target is then the program); without -o, the source's stem
    if not any(d.startswith("-MF") for d in deps):
        if cmd.output and (cmd.action == "link" or len(cmd.sources) == 1):
            dfile = str(Path(cmd.output).with_suffix(".d"))
        else:
            dfile = Path(src.path).stem + ".d"
        args += ["-MF", dfile]
    if not any(d.startswith(("-MT", "-MQ")) for d in deps):
        if cmd.action == "link":
            target = cmd.output or Path(src.path).stem + ".o"
        else:
            target = out
        args += ["-MT", target]
    return args


def preprocess(compiler: Sequence[str], cmd: CompilerCommand, src: Source, out: str,
               dest: Path, env: Mapping[str, str], extra: Sequence[str] = ()) -> int:
    """Preprocess `src` with the user's flags into `dest`, writing the dependency file
    (naming the original source and headers, target `out`) when the command asks for one."""
    lang = unit_language(src)
    pp = [*compiler, *select(cmd, keep={"pp", "other"}), *dependency_args(cmd, src, out),
          *extra, "-E", "-x", lang, src.path, "-o", str(dest)]
    return call(pp, env)


def compile_unchanged(compiler: Sequence[str], cmd: CompilerCommand, src: Source, out: str,
                      env: Mapping[str, str], *, with_deps: bool = True,
                      stderr_copy: list[bytes] | None = None) -> int:
    """Compile one source as the driver would, with the user's flags (assembler and other
    languages, and C/C++ units the wrapper leaves alone); `with_deps=False` when the
    dependency file was already written while preprocessing."""
    final = "-S" if cmd.action == "assemble" else "-c"
    deps = dependency_args(cmd, src, out) if with_deps else []
    # nothing after the source is an input: a trailing `-x none` would only make clang warn
    # ("after last input file has no effect"), an error under -Werror
    args = [*select(cmd, keep={"pp", "other"}), *deps, "-x", x_name(src), src.path,
            final, "-o", out]
    return call([*compiler, *args], env, stderr_copy)


def compile_preprocessed(compiler: Sequence[str], cmd: CompilerCommand, lang: Language,
                         unit: Path, out: str, env: Mapping[str, str],
                         extra: Sequence[str] = (),
                         stderr_copy: list[bytes] | None = None,
                         source: str | None = None) -> int:
    """Compile a (transformed) preprocessed unit: the command of
    cachefit.frontend.unit_compile.preprocessed_compile_args, run here."""
    return call(preprocessed_compile_args(compiler, cmd, lang, unit, out, env, extra, source),
                env, stderr_copy)


def full_debug_args(compiler: Sequence[str], env: Mapping[str, str],
                    lang: Language) -> list[str]:
    """Options that make a C++ unit's DWARF define every class it uses whole.

    By default clang (constructor homing, vtable homing) and gcc (vtable homing) only
    declare a class in units other than the one holding its constructor or key function,
    and a class of a library without debug information (`std::condition_variable`) is
    then defined nowhere: the layout of a traced record with such a member could not be
    read from the program. Profile builds, and optimize builds that produce debug
    information, add these; they change the debug information only, not the code."""
    if lang != "c++":
        return []
    return ["-fstandalone-debug"] if is_clang(compiler, env) else ["-femit-class-debug-always"]


def link_args(cmd: CompilerCommand, objects: Mapping[int, str]) -> list[str]:
    """The link command's arguments with each compiled source replaced by its object and
    the options that only concerned compiling (-x, dependency options) left out."""
    args: list[str] = []
    for g in cmd.groups:
        first = cmd.args[g[0]]
        if g[0] in objects:
            args.append(objects[g[0]])
            continue
        if first == "-x" or (first.startswith("-x") and len(first) > 2):
            continue
        if first in ("-MD", "-MMD", "-MP", "-MG") or first in ("-MF", "-MT", "-MQ") or \
                first.startswith(("-MF", "-MT", "-MQ")):
            continue
        args.extend(cmd.args[i] for i in g)
    return args


def parse_args_for_unit(lang: Language, compiler_args: Sequence[str]) -> list[str]:
    """The clang arguments that parse a preprocessed unit of this command the way the
    compiler sees it (language, standard, target; defines are already expanded). No
    error limit: gcc's system headers may hold many errors for clang, which are skipped,
    and they must not make clang stop before the project's code."""
    from cachefit.trace.unit_instrument import libclang_flags
    return ["-x", preprocessed_x(lang), *libclang_flags(compiler_args), "-ferror-limit=0"]


def save_unit_copy(env: Mapping[str, str], src: Source, lang: Language, text: bytes,
                   compiler_args: Sequence[str], out: str, *,
                   static_filter: Mapping[str, int] | None = None) -> Path | None:
    """With CACHEFIT_UNITS_DIR set, keep `text` as `<stem>-<hash8>.i(i)` there, next to
    `<stem>-<hash8>.json` = {source, language, args[, static_filter]}; the hash names the
    source and the object, so a rebuild of the same unit replaces its copy. `static_filter`:
    {functions, instrumented}, the counts of issue 31's filter (`instrument = "auto"`).
    Returns the unit's path."""
    directory = env.get(UNITS_ENV)
    if not directory:
        return None
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    source = src.path if src.path == "-" else os.path.abspath(src.path)
    key = hashlib.sha256(f"{source}\0{os.path.abspath(out)}".encode()).hexdigest()[:8]
    stem = "stdin" if src.path == "-" else Path(src.path).stem
    unit = d / f"{stem}-{key}{unit_suffix(lang)}"
    meta: dict[str, object] = {"source": source, "language": lang,
                               "args": parse_args_for_unit(lang, compiler_args)}
    if static_filter is not None:
        meta["static_filter"] = dict(static_filter)
    write_bytes_atomic(unit, text)
    write_bytes_atomic(unit.with_suffix(".json"),
                       (json.dumps(meta, indent=2) + "\n").encode())
    return unit
