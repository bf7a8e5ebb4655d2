"""Apply a layout plan to one preprocessed translation unit: flatten the plan's classes,
then give each planned record its member order.

`mentioned_names` is the cheap textual pre-filter (which plan names occur as words in
the preprocessed text); it only decides which names are worth handing to libclang. The
decision whether a unit defines a class and how to change it is libclang's, through
`cachefit.flatten.flatten_unit` and `reorder_unit` (the analysis of the unit, the
decision for the plan's order, cachefit.reorder.decide.check_order, and the rewrite,
cachefit.rewrite.apply_order). Errors
(refusals, constraint violations) are re-pointed from the temporary unit file to the
original source and line. A unit whose record of a planned name has other fields than the
plan's order (another record of that name, another configuration) keeps its order, with a
warning. A plan record keyed by a definition, `dict@path:line` (issue 27: two records
with one tag in one program), applies only to the unit's `dict` defined there, and one
keyed by a layout fingerprint, `dict@50fc03a7`, to the `dict` with that layout
(cachefit.pipeline.definition_keys); units defining another `dict` keep theirs silently.
The module works on a file in a directory the caller owns and returns the new text; it
never compiles or writes anywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cachefit.errors import CachefitError, Location, TypeNotFound
from cachefit.frontend.compiler_args import Language
from cachefit.model.layout_plan import LayoutPlan
from cachefit.model.type_names import split_definition
from cachefit.pipeline.definition_keys import KeyTest, cursor_fingerprint, key_test


@dataclass
class TransformResult:
    """The unit's text after the plan, and what was applied to it."""

    text: bytes
    flattened: list[str] = field(default_factory=list)
    reordered: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.flattened or self.reordered)


def _word(name: str) -> str:
    """The identifier that must occur in a unit that uses `name` (`ns::tcb<int>` -> tcb,
    `dict@deps/dict.h:55` -> dict)."""
    base = split_definition(name)[0].split("<", 1)[0]
    return base.rsplit("::", 1)[-1].strip()


def mentioned_names(text: bytes, names: Sequence[str]) -> list[str]:
    """The names whose last identifier occurs as a whole word in `text` (a filter only)."""
    out = []
    for n in names:
        w = _word(n)
        if w and re.search(rb"(?<![A-Za-z0-9_])" + re.escape(w.encode()) + rb"(?![A-Za-z0-9_])",
                           text):
            out.append(n)
    return out


def original_location(text: bytes, loc: Location, lmap: Any = None) -> Location:
    """Map a line of the preprocessed unit `text` to the file and line its line markers
    name (`lmap`: the unit's `LineMap`, made here if not given); `loc` itself when they
    name none."""
    from cachefit.trace.unit_instrument import LineMap
    if loc.line <= 0:
        return loc
    offset = 0
    for _ in range(loc.line - 1):
        nl = text.find(b"\n", offset)
        if nl < 0:
            return loc
        offset = nl + 1
    mapped: Location = (lmap or LineMap(text)).location(offset + max(loc.col - 1, 0))
    return mapped if mapped.file != "<preprocessed>" else loc


def _repoint(exc: CachefitError, unit: Path, text: bytes, source: str) -> None:
    """Make an error about the temporary unit name the original source and line."""
    unit_s = str(unit)
    if exc.location is None:
        exc.location = Location(source)
    elif exc.location.file in (unit_s, str(unit.resolve())):
        exc.location = original_location(text, exc.location)
    exc.what = exc.what.replace(unit_s, source)
    exc.details = [d.replace(unit_s, source) for d in exc.details]
    # the hints speak of `cachefit reorder` options; a build takes them from the plan
    exc.todo = exc.todo.replace("pass --fix-initializers",
                                'set "fix_initializers": true in the layout plan')


def reorder_unit(path: str, args: Sequence[str], type_name: str, new_order: Sequence[str], *,
                 fix_initializers: bool = False,
                 expected_size: int | None = None,
                 padding: Mapping[str, int] | None = None,
                 definition: KeyTest | None = None) -> dict[str, str] | None:
    """The preprocessed unit `path` with `type_name`'s fields declared in `new_order`:
    {path: new text} and any other file the change touched. The checks are those of
    `cachefit reorder` restricted to the unit: refusals (packed, ABI, raw I/O, positional
    initialisers unless fixed), the constraints the order must honour, and the compiler's
    layout of the result (order, alignment, sizeof when `expected_size` is given, and the
    offsets and sizes that `static_assert`s in the unit pin). `padding` (field -> bytes,
    the plan's) declares a padding member right before each such field; `expected_size`
    includes it. Raises
    `UnsafeTransformation` (nothing to use) when the unit rules the order out, and
    `OtherFields` when the unit's record has other fields than the order names. With
    `definition` (the test of a plan key `name@path:line` or `name@FINGERPRINT`), None
    when the unit's definition of the record is not the key's (another record of that
    name: left alone)."""
    from cachefit.reorder.analysis import analyse
    from cachefit.reorder.decide import check_order
    from cachefit.reorder.scan_pool import ScanOptions
    from cachefit.rewrite.apply_order import apply_order
    # one preprocessed unit, whose object the build's own cache keeps: no scan cache
    a = analyse(type_name, [(path, list(args))], build_time=True,
                scan_options=ScanOptions(jobs=1, cache=False))
    if definition is not None and not _defined_at(path, a.cursor, definition):
        return None
    decision = check_order(a, new_order, fix_initializers=fix_initializers, padding=padding)
    # byte boundaries are checked by `cachefit reorder` only, as before the one rewrite
    applied = apply_order(a, decision.order, barriers=decision.barriers,
                          padding=decision.padding, fix_initializers=fix_initializers,
                          expected_size=expected_size, byte_boundaries=False)
    new = applied.contents[path] if path in applied.contents else \
        applied.originals.get(path) or Path(path).read_bytes()
    out = {path: new.decode("utf-8", errors="surrogateescape")}
    for f, data in applied.contents.items():
        out[f] = data.decode("utf-8", errors="surrogateescape")
    return out


def _defined_at(path: str, cursor: Any, definition: KeyTest) -> bool:
    """Whether the record definition `cursor` of the preprocessed unit `path` is the one
    `definition` names: at its place, by the unit's line markers, and by its layout where
    the place does not tell (cachefit.pipeline.definition_keys)."""
    loc = cursor.location
    if loc.file is None:
        return False
    text = Path(path).read_bytes()
    orig = original_location(text, Location(str(loc.file.name), loc.line, loc.column))
    return definition.matches(orig.file, orig.line, lambda: cursor_fingerprint(cursor))


def apply_plan(text: bytes, lang: Language, plan: LayoutPlan, parse_args: Sequence[str],
               unit: Path, source: str, *, reorder: bool = True) -> TransformResult:
    """Flatten (C++ only) and, when `reorder`, reorder the records of the plan that the
    unit defines. `unit` is a scratch file path (its suffix says the language) the caller
    owns; `source` names the original file in errors."""
    result = TransformResult(text)
    names = mentioned_names(text, plan.type_names)
    if not names:
        return result
    unit.write_bytes(text)
    current = text
    args = list(parse_args)
    try:
        if lang == "c++":
            from cachefit.flatten import flatten_unit
            for cls in plan.flatten:
                if cls not in names:
                    continue
                try:
                    flat = flatten_unit(str(unit), args, cls)
                except TypeNotFound:
                    continue        # libclang: the unit does not define the class
                new = flat.text(str(unit)).encode("utf-8", errors="surrogateescape")
                result.warnings.extend(flat.warnings)
                if new != current:
                    current = new
                    unit.write_bytes(current)
                    result.flattened.append(cls)
        if reorder:
            from cachefit.reorder.decide import OtherFields
            # names whose record a definition key reordered: the new layout could pass
            # another key's test (its fingerprint is no longer the old one)
            defined: set[str] = set()
            for name, rec in plan.records.items():
                if name not in names:
                    continue
                plain = split_definition(name)[0]
                if plain in defined:
                    continue        # reordered by its own key: no other key's record now
                try:
                    out = reorder_unit(str(unit), args, plain, list(rec.order),
                                       fix_initializers=plan.fix_initializers,
                                       expected_size=rec.expected_size,
                                       padding=rec.padding,
                                       definition=key_test(name, plan.records))
                except TypeNotFound:
                    continue        # libclang: the unit does not define the record
                except OtherFields as exc:
                    # Not the planned record: every unit that shares a record declares
                    # the same fields (or the program is broken already), so the units
                    # declaring these fields all keep their order and stay consistent.
                    _repoint(exc, unit, current, source)
                    where = f"{exc.location}: " if exc.location else ""
                    result.warnings.append(f"{where}{exc.what}; compiled as declared "
                                           "(the layout plan does not apply to it)")
                    continue
                if out is None:
                    continue        # the unit's record of that name is defined elsewhere
                new = out[str(unit)].encode("utf-8", errors="surrogateescape")
                if new != current:
                    current = new
                    unit.write_bytes(current)
                result.reordered.append(name)
                if plain != name:
                    defined.add(plain)
    except CachefitError as exc:
        _repoint(exc, unit, current, source)
        raise
    result.text = current
    return result
