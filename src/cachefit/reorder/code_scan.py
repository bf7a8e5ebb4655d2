"""Scan one parsed unit for uses of the record that depend on member order.

`scan_unit` walks a unit's AST once (reorder.scan_pool parses the units, in parallel, and
caches the results), handing each use of the record to the detectors: memory ranges and
raw I/O (memory_uses), pointer casts and conversions to `void *` (pointer_casts),
initialiser lists (init_lists), inline assembly and asserted offsets (asm_uses), asserted
sizes (asserted_size), C++ constructors and default member initialisers that read other
members (those members must stay before), unions with the record as a member
(union_overlays: the common initial sequence with another struct member is pinned, a byte
array overlaying it refused), other records that start with the same macro-declared
header, where each unit sees the record's definition (other_definitions), and the facts
about untyped pointers that untyped_memory joins over the whole code base.
`merge_results` joins the units' results in unit order, deduplicated. Results are plain
data (no clang objects). It never parses, edits or chooses an order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import clang.cindex as ci

from cachefit.frontend.clang_parse import language_args
from cachefit.frontend.clang_util import (
    CAST_KINDS,
    CK,
    PAREN_LIST_INIT_ID,
    children,
    kind_of,
    location,
)
from cachefit.frontend.ctor_init_lists import InitList, find_list
from cachefit.model import Record
from cachefit.reorder.asm_uses import (
    Macro,
    asm_refusal,
    static_assert_pin,
)
from cachefit.reorder.asserted_size import static_assert_size
from cachefit.reorder.constraints import OrderConstraint, Refusal, dedupe
from cachefit.reorder.inactive_code import positional_lists, record_names
from cachefit.reorder.init_lists import InitSite, classify_list, elided_site
from cachefit.reorder.memory_uses import MemoryUses
from cachefit.reorder.offset_forms import OffsetEvaluator
from cachefit.reorder.other_definitions import DefinitionSite, definition_site
from cachefit.reorder.pointer_casts import cast_constraint, implicit_void_constraint
from cachefit.reorder.union_overlays import union_overlays
from cachefit.reorder.untyped_memory import FlowCollector, FlowFacts

_RECORDS = {CK.STRUCT_DECL, CK.UNION_DECL, CK.CLASS_DECL}
# Declarations whose array type's size may be a pre-C11 static assertion.
_ARRAY_DECLS = (CK.VAR_DECL, CK.PARM_DECL, CK.FIELD_DECL, CK.TYPEDEF_DECL)


@dataclass
class ScanResult:
    """What the code base needs from the order, and what rules reordering out."""

    constraints: list[OrderConstraint] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    init_sites: list[InitSite] = field(default_factory=list)
    ctor_lists: list[InitList] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    definitions: list[DefinitionSite] = field(default_factory=list)
    # byte arrays overlaying the record in a union (their refusals), and the member names
    # the code uses: such an array is refused only when it is named somewhere
    overlays: list[tuple[str, Refusal]] = field(default_factory=list)
    member_names: set[str] = field(default_factory=set)
    # untyped pointers, for untyped_memory's whole-code-base step (analysis runs it)
    flow: FlowFacts = field(default_factory=FlowFacts)
    # set by the scan of the whole code base (scan_pool): the files each unit read, by
    # (path, arguments), and how many units were parsed and how many came from the cache
    unit_files: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = \
        field(default_factory=dict)
    parsed: int = 0
    cached: int = 0


def is_cxx(path: str, args: Sequence[str]) -> bool:
    full = language_args(path, args)
    for i, a in enumerate(full):
        if a == "-x" and i + 1 < len(full):
            return full[i + 1].startswith("c++")
        if a.startswith("-x") and len(a) > 2:
            return a[2:].startswith("c++")
    return False


class _UnitScan:
    def __init__(self, tu: ci.TranslationUnit, usr: str, record: Record, name: str,
                 cxx: bool, header_macro: str | None, asm_headers: set[str],
                 offsets_header: str | None, out: ScanResult) -> None:
        self.tu = tu
        self.usr = usr
        self.record = record
        self.name = name
        self.cxx = cxx
        self.header_macro = header_macro
        self.asm_headers = asm_headers
        self.offsets_header = offsets_header
        self.out = out
        offsets = {f.name: f.offset for f in record.fields}
        sizes = {f.name: max(f.end - f.offset, f.size if not f.is_bitfield else 0)
                 for f in record.fields}
        self.ev = OffsetEvaluator(usr, offsets, self.is_record)
        self.mem = MemoryUses(self.ev, name, offsets, sizes, record.size,
                              {f.name: f.align for f in record.fields})
        self.order = {f.name: i for i, f in enumerate(record.fields)}
        self.record_type: ci.Type | None = None
        self._macros: list[Macro] | None = None
        self.flow = FlowCollector(self.is_record, record)

    @property
    def macros(self) -> list[Macro]:
        """The unit's macro expansions, listed on first use: walking them costs as much as
        the rest of the scan, and only units with assembly headers or a header macro need
        them."""
        if self._macros is None:
            self._macros = []
            for c in self.tu.cursor.get_children():
                if kind_of(c) == CK.MACRO_INSTANTIATION and c.extent.start.file is not None:
                    ref = c.referenced
                    def_file = ref.location.file.name if ref is not None and \
                        ref.location.file is not None else ""
                    self._macros.append((c.spelling, def_file, c.extent.start.file.name,
                                         c.extent.start.offset, c.extent.end.offset))
        return self._macros

    def is_record(self, t: ci.Type) -> bool:
        decl = t.get_canonical().get_declaration()
        if decl is not None and decl.get_usr() == self.usr:
            if self.record_type is None:
                self.record_type = t.get_canonical()
            return True
        return False

    def run(self) -> None:
        stack: list[tuple[ci.Cursor, int]] = [(c, 0) for c in
                                              reversed(children(self.tu.cursor))]
        ancestors: list[ci.Cursor] = []
        while stack:
            cur, depth = stack.pop()
            del ancestors[depth:]
            loc = cur.location
            if loc.file is not None and loc.is_in_system_header:
                continue
            self.visit(cur, ancestors)
            ancestors.append(cur)
            stack.extend((c, depth + 1) for c in reversed(children(cur)))
        self.out.constraints += self.mem.constraints
        self.out.refusals += self.mem.refusals
        self.out.flow = self.flow.facts

    def visit(self, c: ci.Cursor, ancestors: list[ci.Cursor]) -> None:
        k = kind_of(c)
        parent = ancestors[-1] if ancestors else None
        if k in _ARRAY_DECLS and c.type.get_canonical().kind == ci.TypeKind.CONSTANTARRAY:
            self._array_size_assert(c)
        if k in (CK.MEMBER_REF_EXPR, CK.MEMBER_REF):
            self.out.member_names.add(c.spelling)
        self.flow.visit(c, k, ancestors)
        if k == CK.CALL_EXPR:
            self.mem.call(c)
        elif k == CK.BINARY_OPERATOR and c.spelling == "-":
            self.mem.subtraction(c, parent)
        elif k in CAST_KINDS:
            con = cast_constraint(c, ancestors, self.record, self.is_record)
            if con is not None:
                self.out.constraints.append(con)
        elif k == CK.UNEXPOSED_EXPR:
            con = implicit_void_constraint(c, ancestors, self.record, self.is_record)
            if con is not None:
                self.out.constraints.append(con)
        elif k == CK.INIT_LIST_EXPR:
            self._init_list(c)
        elif k is None and c._kind_id == PAREN_LIST_INIT_ID and self.is_record(c.type):
            site = classify_list(c, self.usr, c.type, self.cxx)
            if site is not None:
                self.out.init_sites.append(site)
        elif k == CK.ASM_STMT:
            ref = asm_refusal(c, self.ev, self.name)
            if ref is not None:
                self.out.refusals.append(ref)
        elif k == CK.STATIC_ASSERT:
            con, ref = static_assert_pin(c, self.ev, self.name, self._asm_macros(),
                                         self.asm_headers, self.offsets_header)
            if con is not None:
                self.out.constraints.append(con)
            if ref is not None:
                self.out.refusals.append(ref)
            self.out.constraints += static_assert_size(c, self.ev, self.name)
        elif k == CK.CONSTRUCTOR and c.semantic_parent is not None and \
                c.semantic_parent.get_usr() == self.usr:
            self._constructor(c)
        elif k == CK.FIELD_DECL and c.semantic_parent is not None and \
                c.semantic_parent.get_usr() == self.usr:
            self._default_init(c)
        elif k in _RECORDS and c.is_definition() and c.get_usr() != self.usr:
            if k == CK.UNION_DECL:
                cons, refs = union_overlays(c, self.record, self.is_record)
                self.out.constraints += cons
                self.out.overlays += refs
            self._shared_header(c)
        elif k in _RECORDS and c.is_definition():
            site = definition_site(c, self.tu.spelling)
            if site is not None:
                self.out.definitions.append(site)

    def _asm_macros(self) -> list[Macro]:
        """What static_assert_pin needs: it looks at macros only for headers that assembly
        includes."""
        return self.macros if self.asm_headers else []

    def _array_size_assert(self, decl: ci.Cursor) -> None:
        """The pre-C11 static assertion: an array whose size is negative unless an offset
        of the record has a given value."""
        for size in children(decl):
            k = kind_of(size)
            if k is None or not k.is_expression():
                continue
            con, ref = static_assert_pin(decl, self.ev, self.name, self._asm_macros(),
                                         self.asm_headers, self.offsets_header, size)
            if con is not None:
                self.out.constraints.append(con)
            if ref is not None:
                self.out.refusals.append(ref)

    def _init_list(self, c: ci.Cursor) -> None:
        if self.is_record(c.type):
            site = classify_list(c, self.usr, c.type, self.cxx)
        else:
            site = elided_site(c, self.usr)
        if site is not None:
            self.out.init_sites.append(site)

    def _reads(self, expr: ci.Cursor) -> tuple[set[str], bool]:
        """Members of this object read by an initialiser, and whether it calls a method."""
        names: set[str] = set()
        calls = False
        stack = [expr]
        while stack:
            cur = stack.pop()
            k = kind_of(cur)
            if k == CK.MEMBER_REF_EXPR:
                kids = children(cur)
                implicit = not kids or kind_of(kids[0]) == CK.CXX_THIS_EXPR
                name = self.ev.field_name(cur.referenced)
                if implicit and name is not None:
                    names.add(name)
            elif k == CK.CALL_EXPR:
                ref = cur.referenced
                if ref is not None and kind_of(ref) == CK.CXX_METHOD and \
                        ref.semantic_parent is not None and \
                        ref.semantic_parent.get_usr() == self.usr and not ref.is_static_method():
                    calls = True
            stack.extend(children(cur))
        return names, calls

    def _depends(self, member: str, reads: set[str], calls: bool, where: ci.Cursor,
                 what: str) -> None:
        if member not in self.order:
            return
        earlier = [n for n in self.order if self.order[n] < self.order[member]]
        deps = set(earlier) if calls else {r for r in reads if r in earlier}
        loc = location(where)
        for dep in sorted(deps, key=lambda n: self.order[n]):
            self.out.constraints.append(OrderConstraint(
                "same_side", (member,), f"{what} of {member} reads {dep}, so {dep} must be "
                "initialised first", loc, dep))

    def _constructor(self, ctor: ci.Cursor) -> None:
        lst = find_list(ctor, self.ev.field_name)
        if lst is not None:
            self.out.ctor_lists.append(lst)
        current: str | None = None
        for k in children(ctor):
            kk = kind_of(k)
            if kk == CK.MEMBER_REF:
                current = self.ev.field_name(k.referenced)
                continue
            if kk in (CK.COMPOUND_STMT, CK.PARM_DECL, CK.TYPE_REF, CK.NAMESPACE_REF,
                      CK.TEMPLATE_REF):
                current = None
                continue
            if current is not None:
                reads, calls = self._reads(k)
                self._depends(current, reads, calls, k, "the constructor's initialiser")

    def _default_init(self, fdecl: ci.Cursor) -> None:
        name = fdecl.spelling
        for k in children(fdecl):
            kk = kind_of(k)
            if kk in (CK.TYPE_REF, CK.TEMPLATE_REF, CK.NAMESPACE_REF, CK.INTEGER_LITERAL) \
                    or kk is not None and kk.is_attribute():
                continue
            reads, calls = self._reads(k)
            self._depends(name, reads, calls, k, "the default member initialiser")

    def _shared_header(self, decl: ci.Cursor) -> None:
        if self.header_macro is None:
            return
        first = next((c for c in children(decl) if kind_of(c) == CK.FIELD_DECL), None)
        if first is None or first.extent.start.file is None:
            return
        f, off = first.extent.start.file.name, first.extent.start.offset
        for name, _def, exp_file, b, e in self.macros:
            if name == self.header_macro and exp_file == f and b <= off < max(e, b + 1):
                shared, after = self._shared_members(decl, exp_file, b, max(e, b + 1))
                if after:
                    self.out.constraints.append(OrderConstraint(
                        "pin", shared, f"{decl.type.spelling} also starts with the header "
                        f"{self.header_macro} and then the same members "
                        f"({', '.join(after)}); code may use one as the other",
                        location(decl)))
                    return
                head = self.record.fields[0].name
                self.out.constraints.append(OrderConstraint(
                    "first", (head,), f"{decl.type.spelling} also starts with the header "
                    f"{self.header_macro}; code may treat both through it", location(decl)))
                return

    def _shared_members(self, decl: ci.Cursor, exp_file: str, begin: int,
                        end: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The members `decl` (a record starting with the header macro, expanded at
        [begin, end) of `exp_file`) declares after the header like the record does: the
        longest prefix of the record's members with the same names, types and bit widths,
        when it goes past the header (Lua's `Udata0` repeats `Udata`'s nuvalue, len and
        metatable, and sizes a `Udata` without user values: its memory starts at
        `offsetof(Udata0, bindata)`), and those of them after the header (none when the
        two share the header only)."""
        theirs = [c for c in children(decl) if kind_of(c) == CK.FIELD_DECL]
        in_header = sum(1 for c in theirs if c.extent.start.file is not None
                        and c.extent.start.file.name == exp_file
                        and begin <= c.extent.start.offset < end)
        shared: list[str] = []
        for mine, other in zip(self.record.fields, theirs, strict=False):
            width = other.get_bitfield_width() if other.is_bitfield() else None
            if mine.anonymous_parent is not None or not other.spelling or \
                    (mine.name, mine.type, mine.bit_size) != \
                    (other.spelling, other.type.spelling, width):
                break
            shared.append(mine.name)
        return tuple(shared), tuple(shared[in_header:])


@dataclass(frozen=True)
class ScanQuery:
    """What a unit is scanned for: plain data, the same for every unit of one scan (it is
    sent to worker processes and is part of the scan cache's key)."""

    usr: str
    record: Record
    record_name: str
    header_macro: str | None = None
    offsets_header: str | None = None
    asm_headers: tuple[str, ...] = ()

    def describe(self) -> str:
        """A deterministic text of every part of the query (for the cache key)."""
        return repr(self)


def scan_unit(tu: ci.TranslationUnit, path: str, args: Sequence[str],
              query: ScanQuery) -> ScanResult:
    """What one parsed unit shows, before deduplication (`merge_results` does that)."""
    out = ScanResult()
    _UnitScan(tu, query.usr, query.record, query.record_name, is_cxx(path, args),
              query.header_macro, set(query.asm_headers), query.offsets_header, out).run()
    for loc in positional_lists(tu, record_names(tu, query.usr, query.record_name)):
        out.refusals.append(Refusal(
            f"{query.record_name} is initialised by position in code the preprocessor "
            "skipped with these flags (reordering would break that configuration)",
            "give it designators (.member = value) by hand: cachefit cannot rewrite "
            "code the preprocessor skipped", loc))
    out.units.append(path)
    return out


def merge_results(parts: Sequence[ScanResult]) -> ScanResult:
    """The units' results in the given order, deduplicated: the first of equal findings is
    kept, so the merge of the same parts is the same however they were computed."""
    out = ScanResult()
    for part in parts:
        out.constraints += part.constraints
        out.refusals += part.refusals
        out.init_sites += part.init_sites
        out.ctor_lists += part.ctor_lists
        out.units += part.units
        out.definitions += part.definitions
        out.overlays += part.overlays
        out.member_names |= part.member_names
        out.flow.merge(part.flow)
    out.refusals += [r for name, r in out.overlays if name in out.member_names]
    out.constraints = dedupe(out.constraints)
    seen: set[tuple[str, str]] = set()
    refusals = []
    for r in out.refusals:
        key = (r.what, str(r.location))
        if key not in seen:
            seen.add(key)
            refusals.append(r)
    out.refusals = refusals
    sites: dict[tuple[str, int], InitSite] = {}
    for s in out.init_sites:
        sites.setdefault(s.key, s)
    out.init_sites = list(sites.values())
    lists: dict[tuple[str, int], InitList] = {}
    for lst in out.ctor_lists:
        lists.setdefault(lst.key, lst)
    out.ctor_lists = list(lists.values())
    return out
