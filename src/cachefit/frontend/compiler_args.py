"""Classify a gcc/clang command line: what it does, its sources, output and option kinds.

The compiler wrapper uses this to split `cc ... a.c b.c -o prog` into per-source compile
steps and a link step, and to know which options only matter to the preprocessor or the
linker; the trace stage uses it to pick the flags of an instrumented unit. It understands
the option syntax of gcc and clang drivers (options with separate values, joined forms,
`-x LANG` both ways, response files); it does not run anything.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cachefit.errors import UserError

Action = Literal["link", "compile", "assemble", "preprocess", "query"]

# Options whose value is the next argument (when not joined).
SEPARATE = {
    "-o", "-x", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
    "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-imultilib", "-MF", "-MT",
    "-MQ", "-L", "-l", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xclang", "-aux-info",
    "--param", "-u", "-z", "-T", "-arch", "-target", "-mllvm", "-include-pch", "-A",
    "-dumpbase", "-dumpdir", "-e", "--sysroot", "-B",
}
# Options that only the preprocessor uses (dropped when compiling preprocessed text).
PREPROCESSOR_SEPARATE = {"-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
                         "-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
                         "-isysroot", "-imultilib", "-Xpreprocessor", "-include-pch", "-A",
                         "-MF", "-MT", "-MQ"}
PREPROCESSOR_JOINED_PREFIXES = ("-I", "-D", "-U", "-Wp,", "-isystem", "-iquote", "-idirafter",
                                "-imacros", "-include", "-isysroot", "-MF", "-MT", "-MQ")
PREPROCESSOR_FLAGS = {"-nostdinc", "-nostdinc++", "-undef", "-C", "-CC", "-P", "-H", "-dD",
                      "-dM", "-dN", "-dI", "-MD", "-MMD", "-MP", "-MG", "-trigraphs"}
DEPENDENCY_FLAGS = {"-MD", "-MMD", "-MP", "-MG"}
DEPENDENCY_SEPARATE = {"-MF", "-MT", "-MQ"}
# Options that only the linker uses (dropped from compile-only steps).
LINKER_SEPARATE = {"-L", "-l", "-Xlinker", "-u", "-z", "-T", "-e"}
LINKER_JOINED_PREFIXES = ("-L", "-l", "-Wl,")
LINKER_FLAGS = {"-shared", "-static", "-static-libgcc", "-static-libstdc++", "-pie", "-no-pie",
                "-rdynamic", "-nostdlib", "-nostartfiles", "-nodefaultlibs", "-s", "-r",
                "-pthread-link-only"}
QUERY_FLAGS = {"--version", "-v", "-###", "-dumpversion", "-dumpfullversion", "-dumpmachine",
               "-dumpspecs", "--help", "-print-search-dirs", "-print-libgcc-file-name"}
QUERY_PREFIXES = ("-print-", "--print-", "--help=")

C_SUFFIXES = {".c"}
CXX_SUFFIXES = {".cc", ".cpp", ".cxx", ".c++", ".C", ".CPP", ".cp"}
PREPROCESSED = {".i": "c", ".ii": "c++"}
ASM_SUFFIXES = {".s", ".S", ".sx"}
OTHER_SOURCE_SUFFIXES = {".m", ".mm", ".M", ".f", ".f90", ".F", ".F90", ".go", ".d", ".h",
                         ".hh", ".hpp", ".H"}

Lang = Literal["c", "c++", "c-cpp-output", "c++-cpp-output", "assembler", "other"]
_X_LANGS: dict[str, Lang] = {
    "c": "c", "c++": "c++", "cpp-output": "c-cpp-output", "c-cpp-output": "c-cpp-output",
    "c++-cpp-output": "c++-cpp-output", "assembler": "assembler",
    "assembler-with-cpp": "assembler",
}


Language = Literal["c", "c++"]


@dataclass(frozen=True)
class Source:
    """One input file the driver would compile, with its position in the arguments."""

    index: int
    path: str
    lang: Lang

    @property
    def is_c_family(self) -> bool:
        return self.lang in ("c", "c++", "c-cpp-output", "c++-cpp-output")

    @property
    def is_cxx(self) -> bool:
        return self.lang in ("c++", "c++-cpp-output")


@dataclass
class CompilerCommand:
    """A parsed driver command line."""

    args: list[str]
    action: Action
    sources: list[Source] = field(default_factory=list)
    output: str | None = None
    output_index: int | None = None     # index of "-o" (or of the joined "-oFILE")
    # Indices of arguments that belong together (option + separate value).
    groups: list[tuple[int, ...]] = field(default_factory=list)
    shared: bool = False
    relocatable: bool = False
    x_lang_given: bool = False

    @property
    def is_link(self) -> bool:
        return self.action == "link"


def unit_language(src: Source) -> Language:
    return "c++" if src.is_cxx else "c"


def x_name(src: Source) -> str:
    """The driver's `-x` name for a source's language."""
    if src.lang == "assembler":
        return "assembler-with-cpp" if Path(src.path).suffix in (".S", ".sx") else "assembler"
    return {"c": "c", "c++": "c++", "c-cpp-output": "cpp-output",
            "c++-cpp-output": "c++-cpp-output"}.get(src.lang, "none")


def preprocessed_x(lang: Language) -> str:
    """The driver's `-x` name for a preprocessed unit of `lang`."""
    return "c++-cpp-output" if lang == "c++" else "cpp-output"


def unit_suffix(lang: Language) -> str:
    """The file suffix of a preprocessed unit of `lang`."""
    return ".ii" if lang == "c++" else ".i"


def expand_response_files(args: list[str], depth: int = 0) -> list[str]:
    """Replace `@file` arguments by the file's words (as gcc and clang do)."""
    out: list[str] = []
    for a in args:
        if a.startswith("@") and len(a) > 1 and Path(a[1:]).is_file() and depth < 8:
            try:
                words = shlex.split(Path(a[1:]).read_text())
            except (OSError, ValueError) as exc:
                raise UserError(f"cannot read response file {a[1:]}: {exc}") from exc
            out.extend(expand_response_files(words, depth + 1))
        else:
            out.append(a)
    return out


def _lang_of(path: str, forced: Lang | None) -> Lang | None:
    if forced is not None:
        return forced
    suffix = Path(path).suffix
    if suffix in C_SUFFIXES:
        return "c"
    if suffix in CXX_SUFFIXES:
        return "c++"
    if suffix in PREPROCESSED:
        return "c-cpp-output" if PREPROCESSED[suffix] == "c" else "c++-cpp-output"
    if suffix in ASM_SUFFIXES:
        return "assembler"
    if suffix in OTHER_SOURCE_SUFFIXES:
        return "other"
    return None


def parse_command(argv: list[str]) -> CompilerCommand:
    """Parse driver arguments (without the compiler name)."""
    args = expand_response_files(list(argv))
    action: Action = "link"
    saw_c = saw_s = saw_e = saw_m_only = False
    sources: list[Source] = []
    output: str | None = None
    output_index: int | None = None
    groups: list[tuple[int, ...]] = []
    forced: Lang | None = None
    x_given = False
    shared = relocatable = query = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in SEPARATE and i + 1 < len(args):
            value = args[i + 1]
            groups.append((i, i + 1))
            if a == "-o":
                output, output_index = value, i
            elif a == "-x":
                x_given = True
                forced = None if value == "none" else _X_LANGS.get(value, "other")
            i += 2
            continue
        groups.append((i,))
        if a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            output, output_index = a[2:], i
        elif a.startswith("-x") and len(a) > 2:
            x_given = True
            forced = None if a[2:] == "none" else _X_LANGS.get(a[2:], "other")
        elif a == "-c":
            saw_c = True
        elif a == "-S":
            saw_s = True
        elif a == "-E":
            saw_e = True
        elif a in ("-M", "-MM"):
            saw_m_only = True
        elif a == "-shared":
            shared = True
        elif a == "-r":
            relocatable = True
        elif a in QUERY_FLAGS or a.startswith(QUERY_PREFIXES):
            query = True
        elif a == "-" or not a.startswith("-"):
            lang = _lang_of(a, forced) if a != "-" else (forced or "other")
            if lang is not None:
                sources.append(Source(i, a, lang))
        i += 1
    if query and not sources:
        action = "query"
    elif saw_e or saw_m_only:
        action = "preprocess"
    elif saw_s:
        action = "assemble"
    elif saw_c:
        action = "compile"
    else:
        action = "link"
    return CompilerCommand(args=args, action=action, sources=sources, output=output,
                           output_index=output_index, groups=groups, shared=shared,
                           relocatable=relocatable, x_lang_given=x_given)


def _option_kind(args: list[str], group: tuple[int, ...]) -> str:
    """'pp', 'link', 'deps', 'output', 'action', 'x' or 'other' for one option group."""
    a = args[group[0]]
    if a == "-o" or (a.startswith("-o") and len(a) > 2 and not a.startswith("--")):
        return "output"
    if a in ("-c", "-S", "-E"):
        return "action"
    if a == "-x" or (a.startswith("-x") and len(a) > 2):
        return "x"
    if a in DEPENDENCY_FLAGS or a in DEPENDENCY_SEPARATE or a.startswith(("-MF", "-MT", "-MQ")):
        return "deps"
    if len(group) == 2:
        if a in PREPROCESSOR_SEPARATE:
            return "pp"
        if a in LINKER_SEPARATE:
            return "link"
        return "other"
    if a in PREPROCESSOR_FLAGS or a.startswith(PREPROCESSOR_JOINED_PREFIXES):
        return "pp"
    if a in LINKER_FLAGS or a.startswith(LINKER_JOINED_PREFIXES):
        return "link"
    return "other"


def select(cmd: CompilerCommand, *, keep: set[str], drop_inputs: bool = True) -> list[str]:
    """The option arguments whose kind is in `keep` ('pp', 'link', 'deps', 'other', 'x');
    source and other input files are dropped when `drop_inputs`."""
    source_idx = {s.index for s in cmd.sources}
    out: list[str] = []
    for g in cmd.groups:
        a = cmd.args[g[0]]
        is_input = len(g) == 1 and (a == "-" or not a.startswith("-"))
        if is_input:
            if not drop_inputs and g[0] not in source_idx:
                out.append(a)
            continue
        if _option_kind(cmd.args, g) in keep:
            out.extend(cmd.args[i] for i in g)
    return out


def link_inputs(cmd: CompilerCommand) -> list[tuple[int, str]]:
    """Non-source inputs (objects, archives, libraries) with their positions."""
    source_idx = {s.index for s in cmd.sources}
    return [(g[0], cmd.args[g[0]]) for g in cmd.groups
            if len(g) == 1 and not cmd.args[g[0]].startswith("-") and g[0] not in source_idx]


def dependency_options(cmd: CompilerCommand) -> list[str]:
    """The -MD/-MMD/-MF/-MT/-MQ/-MP/-MG options as given."""
    out: list[str] = []
    for g in cmd.groups:
        if _option_kind(cmd.args, g) == "deps":
            out.extend(cmd.args[i] for i in g)
    return out
