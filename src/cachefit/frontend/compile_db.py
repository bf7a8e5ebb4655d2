"""Compiler arguments for a source file, from `compile_commands.json` (like clang-tidy's `-p`).

Turns a build's recorded command line into the arguments libclang needs to parse the same
unit: drops the compiler, outputs, dependency-file options and the input itself, and makes
include paths absolute (libclang has no working directory of its own). It does not parse code.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from cachefit.errors import UserError

# Options whose value is the next argument and which do not affect parsing.
_DROP_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ", "-dumpdir", "-dumpbase", "-dumpbase-ext"}
_DROP = {"-c", "-S", "-E", "-MD", "-MMD", "-M", "-MM", "-MP", "-MG", "-pipe"}
# Options whose value is a path, given as the next argument or glued on.
_PATH_OPTS = ("-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "--sysroot",
              "-isysroot")


@dataclass(frozen=True)
class CompileCommand:
    """One unit of a build: its file (absolute) and the parse arguments for it."""

    file: str
    directory: str
    args: list[str]


def absolute_args(args: list[str], directory: str) -> list[str]:
    """Make the paths of include-like options absolute, relative to `directory`."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in _PATH_OPTS and i + 1 < len(args):
            out += [a, os.path.normpath(os.path.join(directory, args[i + 1]))]
            i += 2
            continue
        opt = next((o for o in sorted(_PATH_OPTS, key=len, reverse=True)
                    if a.startswith(o) and len(a) > len(o)), None)
        if opt is not None:
            value = a[len(opt):]
            sep = "=" if value.startswith("=") else ""
            out.append(opt + sep + os.path.normpath(os.path.join(directory, value[len(sep):])))
        else:
            out.append(a)
        i += 1
    return out


def parse_args_from_command(argv: list[str], file: str, directory: str) -> list[str]:
    """The parse arguments of one recorded compiler invocation `argv`."""
    args: list[str] = []
    target = os.path.normpath(os.path.join(directory, file))
    i = 1  # argv[0] is the compiler
    while i < len(argv):
        a = argv[i]
        if a in _DROP_WITH_VALUE:
            i += 2
            continue
        if a in _DROP or a.startswith("-Wp,-M"):
            i += 1
            continue
        if not a.startswith("-") and os.path.normpath(os.path.join(directory, a)) == target:
            i += 1
            continue
        args.append(a)
        i += 1
    return absolute_args(args, directory)


def load_compile_db(build_dir: str) -> list[CompileCommand]:
    """All units of `build_dir/compile_commands.json` (or of the file itself, if given)."""
    path = Path(build_dir)
    if path.is_dir():
        path = path / "compile_commands.json"
    if not path.is_file():
        raise UserError(f"no compile_commands.json in '{build_dir}'",
                        "point -p at the build directory that holds it "
                        "(CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; make: use bear)")
    try:
        entries = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}",
                        "regenerate it with your build system") from exc
    commands: list[CompileCommand] = []
    for e in entries:
        directory = e.get("directory", ".")
        argv = e.get("arguments") or shlex.split(e.get("command", ""))
        file = os.path.normpath(os.path.join(directory, e["file"]))
        commands.append(CompileCommand(file, directory,
                                       parse_args_from_command(argv, e["file"], directory)))
    return commands


def commands_for(build_dir: str, files: list[str]) -> list[CompileCommand]:
    """The units for `files` (every unit of the build when `files` is empty)."""
    db = load_compile_db(build_dir)
    if not files:
        return db
    by_file = {c.file: c for c in db}
    chosen: list[CompileCommand] = []
    for f in files:
        key = os.path.normpath(os.path.abspath(f))
        if key not in by_file:
            raise UserError(f"{f} is not in {build_dir}/compile_commands.json",
                            "name a source file that the build compiles")
        chosen.append(by_file[key])
    return chosen
