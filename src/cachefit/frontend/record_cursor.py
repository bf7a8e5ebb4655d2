"""Find the cursor of a record definition by name in a parsed unit, and its identity (USR).

The rewriter needs the definition's cursor (for extents and tokens), not only the layout
model; names are matched like `cachefit show` matches them (qualified, partially qualified or
through a typedef). Errors for unknown or ambiguous names come from the front end's
`find_record`, so they read the same everywhere. It neither reads layouts nor edits text.
"""

from __future__ import annotations

from collections.abc import Sequence

import clang.cindex as ci

from cachefit.errors import AmbiguousType, Location, UnsafeTransformation, UserError
from cachefit.frontend.clang_records import (
    class_template_of,
    find_record,
    iter_records,
    qualified_decl_name,
)
from cachefit.frontend.clang_util import location
from cachefit.model.type_names import key_matches


def find_record_cursor(tu: ci.TranslationUnit, wanted: str, path: str,
                       args: Sequence[str]) -> ci.Cursor:
    """The definition cursor of the record `wanted` (UserError if absent or ambiguous)."""
    hits: dict[str, ci.Cursor] = {}
    for e in iter_records(tu):
        if key_matches(e.name, wanted) or key_matches(e.qualified, wanted):
            hits.setdefault(e.cursor.get_usr() or e.qualified, e.cursor)
    if len(hits) > 1:
        names = sorted({_qualified(c) for c in hits.values()})
        raise AmbiguousType(f"'{wanted}' matches {len(hits)} records: {', '.join(names)}",
                            "name one of them with its qualified name")
    if hits:
        return next(iter(hits.values()))
    template = class_template_of(tu, wanted)
    if template is not None:
        raise UnsafeTransformation(
            f"'{wanted}' is an instance of the class template "
            f"{qualified_decl_name(template)}; cachefit reorders plain records only (a new "
            "member order in the template would apply to every instance)",
            "trace, show and report it as it is; to reorder it, reorder the template's "
            "members by hand", location(template) or Location(path))
    find_record(tu, wanted, path, args)  # raises TypeNotFound with the closest names
    raise UserError(f"'{wanted}' names a template instantiation",
                    "reorder the members of a class template by hand, or of a plain record",
                    Location(path))


def _qualified(c: ci.Cursor) -> str:
    return c.type.get_canonical().spelling


def record_usr(cursor: ci.Cursor) -> str:
    """A name for the record that is the same in every unit (libclang's USR)."""
    return cursor.get_usr() or _qualified(cursor)


def is_record_type(t: ci.Type, usr: str) -> bool:
    """Whether `t` (after typedefs and cv-qualifiers) is the record with `usr`."""
    decl = t.get_canonical().get_declaration()
    return decl is not None and decl.get_usr() == usr
