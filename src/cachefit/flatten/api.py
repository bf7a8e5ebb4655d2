"""Flatten a class: on one translation unit (a source or a preprocessed `.ii` file) or on a
source tree described by `compile_commands.json`.

`flatten_unit(path, args, class_name)` is the library entry point the build step calls between
preprocessing and compilation; it returns a `FlattenResult` with the new text of every file it
touched and a report, and writes nothing. `FlattenResult.write()` writes the files atomically.
Before anything is returned, the flattened unit is parsed again: code that does not compile
is never handed out.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import clang.cindex as ci

from cachefit.edits import EditList, drop_contained, unified_diffs, write_all_atomic
from cachefit.errors import AmbiguousType, Location, TypeNotFound, UserError
from cachefit.flatten import cx
from cachefit.flatten.checks import check_outside
from cachefit.flatten.layout import dump_target
from cachefit.flatten.model import Hierarchy
from cachefit.flatten.problems import FlattenError, PreconditionFailed
from cachefit.flatten.state import Facts
from cachefit.flatten.transform import plan_unit
from cachefit.frontend.clang_parse import configure_libclang, language_args
from cachefit.frontend.clang_records import class_template_of, iter_records, qualified_decl_name
from cachefit.frontend.compile_db import CompileCommand, commands_for
from cachefit.input_files import require_file
from cachefit.model.type_names import key_matches


@dataclass
class FlattenResult:
    """The outcome of flattening: new contents of the touched files and a report."""

    target: str
    main_file: str
    originals: dict[str, bytes] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)
    report: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed_files(self) -> list[str]:
        return sorted(f for f, data in self.contents.items() if data != self.originals.get(f))

    def text(self, path: str | None = None) -> str:
        """The new text of `path` (default: the main file); unchanged files as they are."""
        p = os.path.abspath(path or self.main_file)
        for f, data in self.contents.items():
            if os.path.abspath(f) == p:
                return data.decode(errors="surrogateescape")
        for f, data in self.originals.items():
            if os.path.abspath(f) == p:
                return data.decode(errors="surrogateescape")
        with open(p, "rb") as fh:
            return fh.read().decode(errors="surrogateescape")

    def diff(self, cwd: str | None = None) -> str:
        return unified_diffs(self.originals, self.contents, cwd)

    def write(self) -> None:
        """Write every changed file (each through a temporary file and a rename)."""
        write_all_atomic({f: self.contents[f] for f in self.changed_files})


# ---- finding the class --------------------------------------------------------------------
def find_class(tu: ci.TranslationUnit, wanted: str, path: str) -> ci.Cursor:
    hits: dict[str, ci.Cursor] = {}
    names: set[str] = set()
    for e in iter_records(tu):
        if e.system:
            continue
        names.add(e.qualified)
        for n in (e.name, e.qualified):
            if key_matches(n, wanted):
                hits.setdefault(e.qualified, e.cursor)
    if len(hits) > 1:
        raise AmbiguousType(f"'{wanted}' matches {len(hits)} classes: {', '.join(sorted(hits))}",
                            "name one of them with its qualified name")
    template = class_template_of(tu, wanted) if not hits else None
    if template is not None:
        raise FlattenError(f"'{wanted}' is an instance of the class template "
                           f"{qualified_decl_name(template)}", "flatten a non-template class",
                           cx.presumed(template), code="unsupported-template-target")
    if not hits:
        close = [n for n in sorted(names) if n.lower() == wanted.lower()]
        close += [n for n in difflib.get_close_matches(wanted, sorted(names), n=5, cutoff=0.5)
                  if n not in close]
        raise TypeNotFound(f"no class named '{wanted}' in {path}",
                           ("did you mean: " + ", ".join(close)) if close else
                           "check the class name and the files given")
    cursor = next(iter(hits.values()))
    if cursor.kind not in cx.RECORD_KINDS:
        raise UserError(f"'{wanted}' is not a class", "name a class or struct")
    if cx.specialized_template(cursor) is not None:
        raise FlattenError(f"'{wanted}' is a template specialization",
                           "flatten a non-template class", cx.presumed(cursor),
                           code="unsupported-template-target")
    return cursor


def _parse(path: str, args: Sequence[str], unsaved: dict[str, bytes]) -> ci.TranslationUnit:
    """Parse a unit; errors inside system headers are tolerated (a preprocessed file from g++
    carries libstdc++ code that uses GCC-only attributes clang rejects), any other error is
    precondition 1."""
    files = [(f, d.decode(errors="surrogateescape")) for f, d in unsaved.items()]
    if not files:
        require_file(path)
    configure_libclang()
    try:
        # no error limit: errors in system headers are skipped below, and must not make
        # clang stop before the user's code
        tu = ci.Index.create().parse(path, args=[*language_args(path, list(args)),
                                                 "-ferror-limit=0"],
                                     unsaved_files=files)
    except ci.TranslationUnitLoadError as exc:
        raise PreconditionFailed(1, "invalid-cxx", f"libclang could not parse {path}",
                                 "check the file and the compiler arguments after '--'",
                                 Location(path)) from exc
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error
              and not (d.location.file is not None and d.location.is_in_system_header)]
    if errors:
        first = errors[0]
        details = [f"{cx.presumed(d.location)}: error: {d.spelling}" for d in errors[:5]]
        if len(errors) > 5:
            details.append(f"... and {len(errors) - 5} more errors")
        raise PreconditionFailed(1, "invalid-cxx",
                                 f"{path} does not compile: {first.spelling}",
                                 "fix the code (or pass the right compiler flags after '--'); "
                                 "flattening needs valid C++",
                                 cx.presumed(first.location) if first.location.file else
                                 Location(path), details)
    return tu


# ---- one translation unit ------------------------------------------------------------------
@dataclass
class _Prepared:
    """A parsed unit with its hierarchy, before any transformation decision."""

    path: str
    args: list[str]
    tu: ci.TranslationUnit
    src: cx.Source
    decl: ci.Cursor
    hierarchy: Hierarchy
    outside: object
    layout: object
    include_target: str | None


@dataclass
class _UnitPlan:
    edits: EditList
    report: dict
    warnings: list[str]
    src: cx.Source
    size_before: int
    hierarchy: Hierarchy
    facts: Facts


def _prepare_unit(path: str, args: Sequence[str], class_name: str,
                  unsaved: dict[str, bytes], include_target: str | None = None) -> _Prepared:
    tu = _parse(path, args, unsaved)
    decl = find_class(tu, class_name, path)
    src = cx.Source(tu, {cx.norm_path(f): d for f, d in unsaved.items()})
    h = Hierarchy(decl, src)
    outside = check_outside(h, tu)
    layout = None
    if not unsaved and (len(h.classes) > 1 or any(m.virtual for m in h.target.members)):
        layout = dump_target(path, args, h.target.key)
    return _Prepared(path, list(args), tu, src, decl, h, outside, layout, include_target)


def _run_prepared(p: _Prepared, seeds: Facts | None = None) -> _UnitPlan:
    plan = plan_unit(p.hierarchy, p.src, cx.norm_path(p.path), p.outside, p.layout,
                     p.include_target, seeds)
    return _UnitPlan(plan.edits, plan.report, plan.warnings, p.src, p.decl.type.get_size(),
                     p.hierarchy, plan.facts)


def _plan_unit(path: str, args: Sequence[str], class_name: str,
               unsaved: dict[str, bytes], include_target: str | None = None) -> _UnitPlan:
    return _run_prepared(_prepare_unit(path, args, class_name, unsaved, include_target))


def _apply(edits: EditList, src_by_file: dict[str, bytes]) -> dict[str, bytes]:
    merged = EditList(drop_contained(edits))
    return merged.apply(src_by_file)


def _measure(path: str, args: Sequence[str], class_name: str,
             contents: dict[str, bytes]) -> int:
    """Parse the flattened unit (it must compile) and return the class's sizeof."""
    try:
        tu = _parse(path, args, contents)
    except PreconditionFailed as exc:
        raise FlattenError("the flattened code does not compile",
                           "this is a bug in cachefit flatten: report it with the input",
                           exc.location, exc.details, code="internal-verify") from exc
    decl = find_class(tu, class_name, path)
    return decl.type.get_size()


def flatten_unit(path: str, args: Sequence[str], class_name: str, *,
                 unsaved: dict[str, bytes] | None = None, verify: bool = True,
                 include_target: str | None = None) -> FlattenResult:
    """Flatten `class_name` in the translation unit `path` (a source or a preprocessed file).

    `args` are the compiler arguments. Returns the new contents of every touched file; raises
    a `PreconditionFailed` (or another `CachefitError`) when the class cannot be flattened.
    """
    path = os.path.abspath(path)
    unsaved = dict(unsaved or {})
    up = _plan_unit(path, args, class_name, unsaved, include_target)
    originals = {f: up.src.data(f) for f in up.edits.files()}
    contents = _apply(up.edits, originals)
    result = FlattenResult(up.hierarchy.target.key, path, originals, contents, up.report,
                           up.warnings)
    result.report["sizeof_before"] = up.size_before
    result.report["files"] = result.changed_files
    if verify:
        after = _measure(path, args, up.hierarchy.target.key, {**unsaved, **contents})
        result.report["sizeof_after"] = after
    return result


# ---- a source tree through compile_commands.json -------------------------------------------
def _mentions(path: str, names: list[str]) -> bool:
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode(errors="replace")
    except OSError:
        return False
    return any(re.search(r"\b" + re.escape(n) + r"\b", text) for n in names)


def flatten_tree(build_dir: str, files: Sequence[str], class_name: str,
                 extra_args: Sequence[str] = (), verify: bool = True) -> FlattenResult:
    """Flatten `class_name` in every unit of `build_dir/compile_commands.json` (or `files`).

    Headers and sources that hold the hierarchy are rewritten; a unit that does not see the
    class but defines members of its base classes gets an #include of the class's header.
    """
    cmds: list[CompileCommand] = commands_for(build_dir, list(files))
    if not cmds:
        raise UserError(f"{build_dir}/compile_commands.json lists no unit",
                        "build the project once so the database is filled")
    return _flatten_units([(c.file, [*c.args, *extra_args]) for c in cmds], class_name,
                          verify, f"{build_dir}/compile_commands.json")


def flatten_files(files: Sequence[str], args: Sequence[str], class_name: str,
                  verify: bool = True) -> FlattenResult:
    """Flatten `class_name` in the translation units `files`, all parsed with `args`."""
    if len(files) == 1:
        return flatten_unit(files[0], args, class_name, verify=verify)
    return _flatten_units([(os.path.abspath(f), list(args)) for f in files], class_name,
                          verify, "the files given")


def _flatten_units(units: list[tuple[str, list[str]]], class_name: str, verify: bool,
                   where: str) -> FlattenResult:
    """Flatten in several units that share headers.

    Every unit that defines the class, or whose source names a class of the hierarchy (it
    then gets the class's header force-included, and an #include of it where needed), is
    planned; the facts one unit learns (renamed copies, empty base constructors) are given to
    all, until no unit learns anything new, so that they all compute the same edits of the
    shared headers. The edit lists are then merged (identical edits count once; different
    edits of the same bytes are a conflict).
    """
    prepared: list[_Prepared] = []
    first: _Prepared | None = None
    for path, args in units:
        try:
            first = _prepare_unit(path, args, class_name, {})
        except TypeNotFound:
            continue
        break
    if first is None:
        raise TypeNotFound(f"no unit of {where} defines '{class_name}'",
                           "check the class name, or list the files that use it")
    h = first.hierarchy
    t_header = cx.file_of(h.target.decl)
    names = [c.name for c in h.classes.values()]
    for path, args in units:
        if path == first.path:
            prepared.append(first)
            continue
        try:
            prepared.append(_prepare_unit(path, args, class_name, {}))
        except TypeNotFound:
            if _mentions(path, names) and t_header != cx.norm_path(path):
                prepared.append(_prepare_unit(path, ["-include", t_header, *args], class_name,
                                              {}, include_target=t_header))
    seeds = Facts()
    for _ in range(8):
        plans = [_run_prepared(p, seeds) for p in prepared]
        learned = False
        for up in plans:
            learned |= seeds.merge(up.facts)
        if not learned:
            break
    edits = EditList()
    originals: dict[str, bytes] = {}
    warnings: list[str] = []
    for up in plans:
        edits.extend(up.edits)
        for f in up.edits.files():
            originals.setdefault(f, up.src.data(f))
        warnings += [w for w in up.warnings if w not in warnings]
    contents = _apply(edits, originals)
    main = plans[prepared.index(first)]
    result = FlattenResult(h.target.key, t_header, originals, contents, main.report, warnings)
    result.report["sizeof_before"] = main.size_before
    result.report["files"] = result.changed_files
    result.report["units"] = [p.path for p in prepared]
    if verify:
        for p in prepared:
            size = _measure(p.path, p.args[2:] if p.include_target
                            else p.args, h.target.key, contents)
            if p is first:
                result.report["sizeof_after"] = size
    return result


__all__ = ["FlattenResult", "flatten_unit", "flatten_tree", "flatten_files", "find_class"]
