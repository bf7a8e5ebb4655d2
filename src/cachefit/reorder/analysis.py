"""Everything `cachefit reorder` must know before choosing an order, in one `Analysis`.

Finds the record's definition in the units (files with arguments, or compile_commands.json),
reads its member list (rewrite.member_units) and its layout from the compiler, and collects
constraints and refusals from the definition itself (record_rules), the project file
(project_config) and the whole code base (code_scan, run over every unit in parallel and
cached by scan_pool; a definition of the record in another file that some unit sees
instead, other_definitions; bytes of the record's memory used through untyped pointers,
untyped_memory). `refuse_if_needed` raises the first
refusal with its location. A type named by one definition, `dict@path:line` (issue 27: two
records with one tag in one program), is analysed with a `defined_at` test from the
caller: the definition is the first unit's whose `dict` passes it, and the units defining
another `dict` are not scanned for it (their uses are another record's). It does not
choose an order or edit anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import clang.cindex as ci

from cachefit.errors import Location, UnsafeTransformation, UserError
from cachefit.frontend.clang_records import record_from_cursor
from cachefit.frontend.clang_util import location
from cachefit.frontend.compile_db import commands_for
from cachefit.frontend.ctor_init_lists import InitList
from cachefit.frontend.member_units import RecordBody, read_body
from cachefit.frontend.record_cursor import record_usr
from cachefit.model import Record
from cachefit.model.project_config import ReorderConfig, load_reorder_config
from cachefit.model.type_names import plain_type_name, split_definition
from cachefit.reorder import scan_pool
from cachefit.reorder.code_scan import ScanResult, is_cxx
from cachefit.reorder.constraints import OrderConstraint, Refusal, contradictions
from cachefit.reorder.init_lists import InitSite
from cachefit.reorder.other_definitions import definition_site, duplicate_refusal, namesakes
from cachefit.reorder.record_rules import record_constraints, record_refusals
from cachefit.reorder.scan_pool import ScanOptions
from cachefit.reorder.untyped_memory import untyped_constraints

Unit = tuple[str, list[str]]
DefinedAt = Callable[[str, Location], bool]
"""Whether the record definition a unit (its path) has at a place (as the front end names
it: the kept unit's file and line) is the one a definition key names."""


def units_for(files: Sequence[str], build_dir: str | None, args: Sequence[str]) -> list[Unit]:
    """The units to analyse: FILEs with `args`, or units of BUILD_DIR (all when no FILE)."""
    if build_dir:
        return [(c.file, [*c.args, *args]) for c in commands_for(build_dir, list(files))]
    if not files:
        raise UserError("no source given", "name FILEs, or -p BUILD_DIR")
    return [(os.path.abspath(f), list(args)) for f in files]


def unique_units(units: Sequence[Unit]) -> list[Unit]:
    """`units` without repeats (the first of each): a unit listed twice with the same parse
    arguments is one unit. libevent's CMake build compiles each source into two libraries
    with the same flags, and compile_commands.json has both entries (their outputs differ,
    not the parse); the scan parsed the first and then failed on the second."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out: list[Unit] = []
    for path, args in units:
        if (path, tuple(args)) not in seen:
            seen.add((path, tuple(args)))
            out.append((path, list(args)))
    return out


@dataclass
class Analysis:
    """The record, where it is written, and what the code base needs from its order."""

    type_name: str
    record: Record
    cursor: ci.Cursor
    tu: ci.TranslationUnit
    unit: Unit                       # the unit the definition was found in
    units: list[Unit]
    body: RecordBody
    usr: str
    cxx: bool
    constraints: list[OrderConstraint] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    init_sites: list[InitSite] = field(default_factory=list)
    ctor_lists: list[InitList] = field(default_factory=list)
    config: ReorderConfig = field(default_factory=ReorderConfig)
    scan_options: ScanOptions = field(default_factory=ScanOptions)
    # from the scan: the files each unit read, by (path, arguments); units parsed and
    # answered from the scan cache
    unit_files: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = \
        field(default_factory=dict)
    scan_counts: tuple[int, int] = (0, 0)
    warnings: list[str] = field(default_factory=list)   # e.g. namesakes in other files

    @property
    def file(self) -> str:
        return self.body.file

    @property
    def type_spelling(self) -> str:
        """How to name the record in C/C++ code (for generated asserts)."""
        s = self.cursor.type.get_canonical().spelling
        if "(unnamed" in s or "(anonymous" in s:
            return plain_type_name(self.type_name)
        return s


def analyse(type_name: str, units: list[Unit], *, offsets_header: str | None = None,
            scan: bool = True, build_time: bool = False,
            scan_options: ScanOptions | None = None,
            stage: Callable[[str], None] | None = None,
            defined_at: DefinedAt | None = None) -> Analysis:
    """Find the record and collect every constraint and refusal (see the module doc).
    `scan_options`: worker processes and the scan cache (default: one process per CPU,
    cache on). `stage` is told the stage starting ("scanning 12 units"), for a display.
    `type_name` may be a definition key (`dict@path:line`) when `defined_at` is given: the
    record is its plain name's definition that passes `defined_at`."""
    say = stage or (lambda _what: None)
    options = scan_options or ScanOptions()
    cache = options.open_cache()
    units = unique_units(units)
    plain = plain_type_name(type_name) if defined_at is not None else type_name
    say(f"finding {type_name} in {_count(len(units), 'unit')}")
    accept, keep = _definition_filters(defined_at)
    unit, tu, cursor, parsed = scan_pool.find_definition(
        units, plain, cache, accept=accept,
        elsewhere=f"at {split_definition(type_name)[1]}" if defined_at is not None else "")
    path, args = unit
    if cursor.location.is_in_system_header:
        raise UnsafeTransformation(f"{type_name} is defined in a system header",
                                   "only records of your own code can be reordered",
                                   Location(cursor.location.file.name, cursor.location.line))
    record = record_from_cursor(cursor, path, args)
    if record.kind == "union":
        raise UserError(f"{record.name} is a union; its members share storage, so their "
                        "order does not change the layout", "name a struct or class",
                        location(cursor))
    file = cursor.extent.start.file.name
    with open(file, "rb") as fh:
        text = fh.read()
    body = read_body(tu, cursor, text)
    config = load_reorder_config()
    a = Analysis(type_name, record, cursor, tu, unit, list(units), body, record_usr(cursor),
                 is_cxx(path, args), config=config, scan_options=options)
    a.refusals += record_refusals(cursor, record, body, config, type_name, build_time,
                                  unit=unit)
    a.constraints += record_constraints(record, body)
    if scan:
        header = body.units[0].macro if body.units and body.units[0].kind == "macro" else None
        say(f"scanning {_count(len(units), 'unit')}")
        result: ScanResult = scan_pool.scan_code(
            units, a.usr, record, record.name, header_macro=header,
            offsets_header=offsets_header, parsed=parsed, jobs=options.jobs, cache=cache,
            keep=keep)
        a.unit_files = result.unit_files
        a.scan_counts = (result.parsed, result.cached)
        a.constraints += result.constraints
        a.constraints += untyped_constraints(result.flow, record, a.constraints)
        target = definition_site(cursor, path)
        twin = duplicate_refusal(target, result.definitions, record.name) \
            if target is not None else None
        a.refusals += [twin] if twin is not None else []
        if target is not None:
            a.warnings += namesakes(target, result.definitions, record.name)
        a.refusals += result.refusals
        a.init_sites = result.init_sites
        a.ctor_lists = result.ctor_lists
    return a


def _definition_filters(defined_at: DefinedAt | None
                        ) -> tuple[scan_pool.Accept | None, scan_pool.Keep | None]:
    """For `defined_at`: which unit's definition is the record (`accept`), and which units'
    scan results count (`keep`: those that define no record of the name, or define it
    there)."""
    if defined_at is None:
        return None, None
    test = defined_at

    def accept(unit: Unit, cursor: ci.Cursor) -> bool:
        loc = cursor.location
        return loc.file is not None and \
            test(unit[0], Location(loc.file.name, loc.line, loc.column))

    def keep(unit: Unit, result: ScanResult) -> bool:
        return not result.definitions or \
            any(test(unit[0], site.location) for site in result.definitions)

    return accept, keep


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def refuse_if_needed(a: Analysis, fix_initializers: bool) -> None:
    """Raise the first refusal (with how many more there are), if any."""
    if a.refusals:
        raise a.refusals[0].error(len(a.refusals) - 1)
    problems = contradictions(a.constraints)
    if problems:
        raise UnsafeTransformation(f"the order constraints of {a.record.name} contradict each "
                                   f"other: {problems[0]}",
                                   "nothing can be reordered safely; see --json for the "
                                   "constraints", a.body.units[0].location if a.body.units
                                   else None)
    sites = [s for s in a.init_sites if not (fix_initializers and s.fixable)]
    if sites:
        s = sites[0]
        more = len(sites) - 1
        details = [f"and {more} more initialiser{'s' if more > 1 else ''} like it"] if more \
            else []
        if not s.fixable:
            raise UnsafeTransformation(
                f"an initialiser of {a.record.name} depends on the member order and cannot "
                f"be rewritten automatically: {s.why_not}",
                "rewrite it by hand with designators or a constructor", s.location, details)
        what = ("C++ designated initialisers must follow the declaration order"
                if s.kind == "designated" else
                "aggregate initialisation by position depends on the member order")
        raise UnsafeTransformation(f"{what} ({a.record.name})",
                                   "pass --fix-initializers to rewrite such initialisers, or "
                                   "write them with designators", s.location, details)
