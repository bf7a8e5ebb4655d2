"""Records of a C/C++ translation unit as `cachefit.model.Record`s, via libclang.

Finds a record by (qualified, partially qualified or template-instantiation) name, and reads
its layout from the compiler: field offsets from libclang's record layout, base offsets and
vtable pointers from clang's layout dump (record_layout_dump). Nothing is recomputed here.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import clang.cindex as ci

from cachefit.errors import AmbiguousType, Location, TypeNotFound, UserError
from cachefit.frontend.clang_parse import parse_unit
from cachefit.frontend.record_layout_dump import dump_record
from cachefit.model import Base, Field, Record, SourceExtent, UnnamedBitfield
from cachefit.model.type_names import key_matches, type_key, without_kind_keywords

CK = ci.CursorKind
RECORD_KINDS = {CK.STRUCT_DECL: "struct", CK.CLASS_DECL: "class", CK.UNION_DECL: "union",
                CK.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION: "class"}
_CONTAINERS = {CK.TRANSLATION_UNIT, CK.NAMESPACE, CK.LINKAGE_SPEC, CK.STRUCT_DECL,
               CK.CLASS_DECL, CK.UNION_DECL, CK.UNEXPOSED_DECL}
PROBE_TYPEDEF = "__cachefit_probe_t"


@dataclass(frozen=True)
class RecordEntry:
    """A record definition (or a typedef naming one) found in a unit."""

    name: str            # the name this entry answers to (qualified)
    qualified: str       # the record's own qualified name
    cursor: ci.Cursor    # the record's definition
    system: bool


def type_name(t: ci.Type) -> str:
    """The compiler's qualified spelling of a record type, without the C kind keyword."""
    return without_kind_keywords(t.get_canonical().spelling)


def _is_anonymous_name(name: str) -> bool:
    return "(unnamed" in name or "(anonymous" in name and "namespace)" not in name


def qualified_decl_name(cursor: ci.Cursor) -> str:
    """`ns::outer::name` of a declaration, from its semantic parents."""
    parts = []
    c = cursor
    while c is not None and c.kind != CK.TRANSLATION_UNIT:
        if c.spelling and c.kind != CK.LINKAGE_SPEC:
            parts.append(c.spelling)
        c = c.semantic_parent
    return "::".join(reversed(parts))


def iter_records(tu: ci.TranslationUnit) -> Iterator[RecordEntry]:
    """Every record definition and typedef-to-record of the unit, outside function bodies."""
    stack = [tu.cursor]
    while stack:
        cur = stack.pop()
        for child in cur.get_children():
            kind = child.kind
            if kind in RECORD_KINDS and child.is_definition():
                qn = type_name(child.type)
                if not _is_anonymous_name(qn):
                    yield RecordEntry(qn, qn, child, child.location.is_in_system_header)
            elif kind in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL):
                target = child.underlying_typedef_type.get_canonical()
                decl = target.get_declaration()
                if decl.kind in RECORD_KINDS and decl.is_definition():
                    yield RecordEntry(qualified_decl_name(child), type_name(target), decl,
                                      child.location.is_in_system_header)
            if kind in _CONTAINERS:
                stack.append(child)


def iter_class_templates(tu: ci.TranslationUnit) -> Iterator[ci.Cursor]:
    stack = [tu.cursor]
    while stack:
        cur = stack.pop()
        for child in cur.get_children():
            if child.kind == CK.CLASS_TEMPLATE:
                yield child
            if child.kind in _CONTAINERS:
                stack.append(child)


def class_template_of(tu: ci.TranslationUnit, wanted: str) -> ci.Cursor | None:
    """The class template whose instance `wanted` names (`ring<int,16>` -> the definition
    of `ring`), when the unit defines one; None for a name without template arguments."""
    if "<" not in wanted:
        return None
    head = wanted.split("<", 1)[0]
    return next((t for t in iter_class_templates(tu)
                 if t.is_definition() and key_matches(qualified_decl_name(t), head)), None)


def _extent(cursor: ci.Cursor) -> SourceExtent | None:
    ext = cursor.extent
    if ext.start.file is None:
        return None
    return SourceExtent(ext.start.file.name, ext.start.line, ext.start.column,
                        ext.end.line, ext.end.column)


def _access(cursor: ci.Cursor) -> str:
    spec = cursor.access_specifier
    if spec in (ci.AccessSpecifier.PROTECTED, ci.AccessSpecifier.PRIVATE):
        return spec.name.lower()
    return "public"


def explicit_alignment(cursor: ci.Cursor) -> int:
    """The value of an `aligned(N)`/`alignas(N)` written on a member with a literal N
    (0 when there is none, or when N is not a literal)."""
    best = 0
    for child in cursor.get_children():
        if child.kind == CK.ALIGNED_ATTR:
            tokens = list(child.get_tokens())
            if [t.spelling for t in tokens] in (["alignas"], ["_Alignas"]):
                # The attribute's extent covers only the keyword: read `(N)` after it.
                span = ci.SourceRange.from_locations(child.extent.start, cursor.extent.end)
                tokens = list(cursor.translation_unit.get_tokens(extent=span))[:4]
                if [t.spelling for t in tokens[1:4:2]] != ["(", ")"]:
                    tokens = []
            for tok in tokens:
                if tok.kind == ci.TokenKind.LITERAL and tok.spelling.isdigit():
                    best = max(best, int(tok.spelling))
    return best


def _type_size_align(t: ci.Type) -> tuple[int, int]:
    size, align = t.get_size(), t.get_align()
    if size < 0 and t.kind in (ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY,
                               ci.TypeKind.DEPENDENTSIZEDARRAY):
        size, align = 0, t.element_type.get_align()
    return max(size, 0), max(align, 1)


def _fields(record_type: ci.Type, base_bits: int, anon: str | None,
            anon_access: str | None = None) -> Iterator[Field]:
    for fc in record_type.get_fields():
        off = fc.get_field_offsetof()
        if off < 0:
            raise UserError(f"libclang gives no offset for field '{fc.spelling}' of "
                            f"{type_name(record_type)}",
                            "the record is incomplete or dependent: name an instantiation")
        bits = base_bits + off
        decl = fc.type.get_canonical().get_declaration()
        if decl.kind in RECORD_KINDS and (not fc.spelling or _is_anonymous_name(fc.spelling)):
            # An anonymous struct/union member: its fields are members of this record.
            # (libclang 19 spells the implicit field like its type, "(anonymous ...)".)
            loc = fc.location
            tag = f"(anonymous {RECORD_KINDS[decl.kind]} at line {loc.line}:{loc.column})"
            # Its members have the access of the anonymous member's declaration (they are
            # public within it: [class.union.anon]).
            yield from _fields(fc.type.get_canonical(), bits, anon or tag,
                               anon_access or _access(fc))
            continue
        if fc.is_bitfield() and not fc.spelling:
            continue  # an unnamed bit-field is padding, not a member
        size, align = _type_size_align(fc.type)
        if any(c.kind == CK.PACKED_ATTR for c in fc.get_children()):
            align = 1  # a packed member: only an aligned attribute raises it again
        align = max(align, explicit_alignment(fc))
        access = anon_access or _access(fc)
        if fc.is_bitfield():
            yield Field(fc.spelling, fc.type.spelling, bits // 8, size, align, access,
                        bits, fc.get_bitfield_width(), _extent(fc), anon)
        else:
            yield Field(fc.spelling, fc.type.spelling, bits // 8, size, align, access,
                        None, None, _extent(fc), anon)


def _unnamed_bitfields(record_type: ci.Type) -> list[UnnamedBitfield]:
    """The record's own unnamed bit-fields, where the compiler put them, each with the
    named field declared right before it."""
    out: list[UnnamedBitfield] = []
    last: str | None = None
    for fc in record_type.get_fields():
        if fc.is_bitfield() and not fc.spelling:
            size, align = _type_size_align(fc.type)
            out.append(UnnamedBitfield(fc.type.spelling, fc.get_field_offsetof(),
                                       fc.get_bitfield_width(), size, align, last))
            continue
        decl = fc.type.get_canonical().get_declaration()
        if decl.kind in RECORD_KINDS and (not fc.spelling or _is_anonymous_name(fc.spelling)):
            inner = [f.name for f in _fields(fc.type.get_canonical(), 0, "anonymous")]
            last = inner[-1] if inner else last
        else:
            last = fc.spelling
    return out


def _is_dynamic_candidate(decl: ci.Cursor) -> bool:
    """Whether the record may have bases or a vtable pointer (then ask the layout dump)."""
    if decl.type.get_num_template_arguments() > 0:
        return True  # an implicit instantiation shows libclang no base specifiers or methods
    for child in decl.get_children():
        if child.kind == CK.CXX_BASE_SPECIFIER:
            return True
        if child.kind in (CK.CXX_METHOD, CK.DESTRUCTOR) and child.is_virtual_method():
            return True
    return False


def _base_types(decl: ci.Cursor, found: dict[str, ci.Type]) -> None:
    for child in decl.get_children():
        if child.kind == CK.CXX_BASE_SPECIFIER:
            t = child.type.get_canonical()
            name = type_name(t)
            if name not in found:
                found[name] = t
                _base_types(t.get_declaration(), found)


def _is_cxx(tu: ci.TranslationUnit, decl: ci.Cursor) -> bool:
    return decl.kind == CK.CLASS_DECL or any(
        c.kind in (CK.CXX_BASE_SPECIFIER, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
                   CK.CXX_ACCESS_SPEC_DECL) for c in decl.get_children())


def record_from_cursor(decl: ci.Cursor, path: str, args: Sequence[str]) -> Record:
    """The model of the record defined at `decl`, in the unit of `path` parsed with `args`."""
    rtype = decl.type.get_canonical()
    name = type_name(rtype)
    size, align = rtype.get_size(), rtype.get_align()
    if size < 0:
        raise UserError(f"{name} has no layout (incomplete or dependent type)",
                        "name a complete type or a template instantiation such as ring<int,16>",
                        _location(decl))
    kind = RECORD_KINDS.get(decl.kind, "struct")
    fields = list(_fields(rtype, 0, None))
    bases: list[Base] = []
    vptr = None
    if _is_dynamic_candidate(decl):
        dumped = dump_record(path, args, name, nameable="(anonymous" not in name)
        if dumped is not None:
            types: dict[str, ci.Type] = {}
            _base_types(decl, types)
            for b in dumped.bases:
                bt = types.get(b.name) or next(
                    (t for n, t in types.items() if type_key(n) == type_key(b.name)), None)
                bsize = bt.get_size() if bt is not None else b.size
                bases.append(Base(b.name, b.offset, max(bsize, 0), b.virtual, b.empty))
            vptr = min(dumped.vptr_offsets) if dumped.vptr_offsets else None
    return Record(name=name, kind=kind, size=size, align=align, fields=fields, bases=bases,
                  vptr_offset=vptr, extent=_extent(decl),
                  unnamed_bitfields=_unnamed_bitfields(rtype))


def _location(cursor: ci.Cursor) -> Location | None:
    loc = cursor.location
    return Location(loc.file.name, loc.line, loc.column) if loc.file else None


def _instantiate(path: str, args: Sequence[str], spelled: str) -> ci.Cursor | None:
    """Parse a probe that includes `path` and names `spelled`; its record declaration."""
    probe = os.path.join(os.path.dirname(os.path.abspath(path)), "__cachefit_probe__.cpp")
    text = (f'#include "{os.path.abspath(path)}"\n'
            f"typedef {spelled} {PROBE_TYPEDEF};\n"
            f'static_assert(sizeof({PROBE_TYPEDEF}) > 0, "");\n')
    clean_args = [a for a in args if a not in ("-x", "c", "c++")]
    try:
        tu = parse_unit(probe, ["-x", "c++", *clean_args], unsaved=[(probe, text)])
    except UserError:
        return None
    for child in tu.cursor.get_children():
        if child.kind == CK.TYPEDEF_DECL and child.spelling == PROBE_TYPEDEF:
            decl = child.underlying_typedef_type.get_canonical().get_declaration()
            if decl.kind in RECORD_KINDS:
                return decl
    return None


def find_record(tu: ci.TranslationUnit, wanted: str, path: str,
                args: Sequence[str]) -> Record:
    """The record called `wanted` in the unit (errors name the closest names or all matches)."""
    entries = list(iter_records(tu))
    hits: dict[str, RecordEntry] = {}
    for e in entries:
        if key_matches(e.name, wanted) or key_matches(e.qualified, wanted):
            hits.setdefault(e.qualified, e)
    if len(hits) > 1:
        names = sorted(hits)
        raise AmbiguousType(f"'{wanted}' matches {len(names)} records: {', '.join(names)}",
                            "name one of them with its qualified name")
    if hits:
        entry = next(iter(hits.values()))
        return record_from_cursor(entry.cursor, path, args)
    if "<" in wanted:
        head = wanted.split("<", 1)[0].strip()
        candidates = [wanted]
        for tmpl in iter_class_templates(tu):
            qn = qualified_decl_name(tmpl)
            if key_matches(qn, head) and type_key(qn) != type_key(head):
                candidates.append(qn + wanted[len(head):].lstrip())
        for spelled in candidates:
            decl = _instantiate(path, args, spelled)
            if decl is not None:
                return record_from_cursor(decl, path, args)
    names = sorted({e.name for e in entries if not e.system} |
                   {e.qualified for e in entries if not e.system})
    exc = TypeNotFound(f"no record named '{wanted}' in {path}",
                       _suggestion(wanted, names, "this unit"))
    exc.names = names
    raise exc


def _suggestion(wanted: str, names: Sequence[str], where: str) -> str:
    short = {n.rsplit("::", 1)[-1]: n for n in names}
    close = difflib.get_close_matches(wanted, list(names), n=5, cutoff=0.5)
    close += [short[s] for s in difflib.get_close_matches(wanted, list(short), n=5, cutoff=0.5)
              if short[s] not in close]
    return ("did you mean: " + ", ".join(close[:5])) if close else \
        f"no record of a similar name in {where}; check the spelling and the files given"


def not_found_in_any(wanted: str, misses: Sequence[TypeNotFound]) -> TypeNotFound:
    """One error for a name none of several units defines, with the closest names of all
    of them (one unit: its own error)."""
    if len(misses) == 1:
        return misses[0]
    names = sorted({n for m in misses for n in m.names})
    return TypeNotFound(f"no record named '{wanted}' in any of the {len(misses)} units",
                        _suggestion(wanted, names, "these units"))


def load_record(path: str, args: Sequence[str], wanted: str) -> Record:
    """Parse `path` and return the record `wanted` from it."""
    tu = parse_unit(path, args, keep_bodies=False)
    return find_record(tu, wanted, path, args)
