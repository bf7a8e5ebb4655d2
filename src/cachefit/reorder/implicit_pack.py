"""Whether the compiler attached an implicit layout attribute (`#pragma pack`) to a record.

`#pragma pack(N)` gives each record defined under it an implicit attribute (clang's
MaxFieldAlignmentAttr) that libclang only shows when a unit is parsed with
CXTranslationUnit_VisitImplicitAttributes, and then without a kind or a location of its
own. Usually the pack shows in the layout (record_rules checks that first); a record-level
`aligned` attribute can hide it, so this re-parses the unit with that option and looks at
the record's implicit attributes. It reads only, and is only asked when needed (a parse).
"""

from __future__ import annotations

from collections.abc import Sequence

import clang.cindex as ci

from cachefit.frontend.clang_parse import configure_libclang, language_args
from cachefit.frontend.clang_records import iter_records

# CXTranslationUnit_VisitImplicitAttributes (clang-c/Index.h); the bindings do not name it.
_VISIT_IMPLICIT_ATTRIBUTES = 0x2000


def has_implicit_layout_attribute(path: str, args: Sequence[str], usr: str) -> bool:
    """Whether the record with `usr`, defined in unit `path`, carries an implicit attribute
    (on a record: `#pragma pack`, or the rarer `#pragma ms_struct`/`options align`)."""
    configure_libclang()
    options = (_VISIT_IMPLICIT_ATTRIBUTES |
               ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
    try:
        tu = ci.Index.create().parse(path, args=language_args(path, args), options=options)
    except ci.TranslationUnitLoadError:
        return False   # the unit parsed before; the compiler check after rewriting remains
    for entry in iter_records(tu):
        if entry.cursor.get_usr() != usr:
            continue
        return any(c.kind == ci.CursorKind.UNEXPOSED_ATTR and c.location.file is None
                   for c in entry.cursor.get_children())
    return False
