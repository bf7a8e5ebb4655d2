"""Edit one preprocessed translation unit for a profile build, guided by libclang's AST.

Given the text the real compiler's preprocessor produced, this finds (with libclang,
never by matching source text):
  * definitions of the entry functions: a cleanup-scoped variable inserted at the top of
    the body begins the invocation and ends it on every return (and on C++ unwinding);
  * malloc/calloc/realloc/aligned_alloc/free calls, configured allocator/deallocator
    calls, and C++ new/delete expressions whose size is `sizeof(X)`, `n * sizeof(X)`
    or `sizeof(X) + extra` where X is, or contains, a target type: the call is
    redirected to the runtime, which registers the new objects;
  * typed allocation sites, without configuration: any other call of the project's
    code (a function, a function pointer, a member) whose pointer result is used as an
    `X *` (initialiser, assignment, return, explicit cast) and which has such a size
    argument with the same X is wrapped in `__cachefit_track` (never a stack address);
    so is a call whose result is the only value of a local variable of another pointer
    type that the function converts to X and to no other record, through a union member
    or casts (Lua's `GCObject *o = luaC_newobj(L, LUA_VTABLE, sizeof(Table)); Table *t =
    gco2t(o);`: cachefit.trace.local_views);
    a `free((char *)P - HDR)` of an unchanged pointer parameter P also forgets P (a free
    wrapper's caller got P from the matching allocation wrapper);
  * every allocation site of a traced type, registered or not, as a note in the unit's
    `.cachefit.sites` section (cachefit.trace.alloc_sites), for `cachefit trace`;
  * constructors and destructors of target classes: registration at the top of the
    body, a guard that forgets the object when the destructor ends;
  * calls of memcpy/memmove/memset (and their __builtin_ forms) in instrumented
    functions: redirected to the runtime, which reports the bytes copied or filled
    inside target objects (neither backend sees the loads and stores of these);
  * with `touch_filter`, which functions can touch a traced object at all
    (cachefit.trace.touch_filter: the profile build instruments only those);
  * with the clang backend (`struct_copies`), struct assignments in instrumented
    functions that clang would lower to an unseen llvm.memcpy, and with both backends
    (`by_value_copies`) copy-initialisations, by-value arguments and returns, whose copy
    neither sees whole: rewritten so the runtime records the copy
    (cachefit.trace.struct_copies decides which).
Edits are computed from AST extents and applied to the preprocessed bytes; code that
came from system headers is left alone. It never compiles, links or runs anything.
"""

from __future__ import annotations

import bisect
import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import clang.cindex as ci

from cachefit.errors import Location, ParseError, UserError
from cachefit.model.project_config import TraceConfig
from cachefit.model.record_fingerprint import fingerprint
from cachefit.model.type_names import definition_matches, split_definition, type_key
from cachefit.scratch import scratch_directory
from cachefit.trace.alloc_sites import PASSES, UNCONVERTED, UNSIZED, SiteNote, section_asm
from cachefit.trace.carve_sites import carved_value
from cachefit.trace.local_views import local_view
from cachefit.trace.struct_copies import CXX_HELPERS, NOTE_DECL, CopyEdit, CopyFinder, Skipped
from cachefit.trace.touch_filter import FilterResult, choose_functions

CK = ci.CursorKind
TK = ci.TypeKind
Lang = Literal["c", "c++"]

LIBC_ALLOC = {"malloc", "calloc", "realloc", "aligned_alloc", "free"}
MEMOPS = {"memcpy": "__cachefit_memcpy", "memmove": "__cachefit_memmove",
          "memset": "__cachefit_memset", "__builtin_memcpy": "__cachefit_memcpy",
          "__builtin_memmove": "__cachefit_memmove", "__builtin_memset": "__cachefit_memset"}
MAX_OCCURRENCES = 256
MAX_SITE_NOTES = 256      # allocation-site notes kept per unit (cachefit.trace.alloc_sites)

# Flags libclang needs to see the same layouts and language as the compiler.
_PARSE_PREFIXES = ("-std=", "--std=", "-m32", "-m64", "-mx32", "--target=", "-fpack-struct",
                   "-fshort-enums", "-fms-extensions", "-fno-exceptions", "-fexceptions",
                   "-fno-rtti", "-frtti", "-fchar8_t", "-fno-char8_t", "-fsigned-char",
                   "-funsigned-char", "-fgnu89-inline", "-fcoroutines", "-fmodules-ts",
                   "-malign-double", "-mms-bitfields", "-fopenmp", "-fcf-protection")


def libclang_flags(compiler_args: Sequence[str]) -> list[str]:
    """The subset of the compiler's options that matters to parsing and layout."""
    out: list[str] = []
    it = iter(range(len(compiler_args)))
    for i in it:
        a = compiler_args[i]
        if a == "-target" and i + 1 < len(compiler_args):
            out += [a, compiler_args[i + 1]]
            next(it, None)
        elif a.startswith(_PARSE_PREFIXES) and a != "-fopenmp-simd":
            out.append(a)
    return out


def configure_libclang() -> None:
    """Use the frontend's library choice when that module exists (one libclang per process)."""
    try:
        from cachefit.frontend.clang_parse import configure_libclang as shared
    except ImportError:
        shared = None
    if shared is not None:
        shared()
        return
    if not ci.Config.loaded:
        for candidate in ("/usr/lib/llvm-19/lib/libclang-19.so.1",
                          "/usr/lib/x86_64-linux-gnu/libclang-19.so.1"):
            if os.path.exists(candidate):
                ci.Config.set_library_file(candidate)
                break


@dataclass(frozen=True)
class Occurrence:
    """Objects of target type `type_name` inside an element: `count` of them, `elem`
    bytes each, `stride` apart, starting `offset` bytes into the element."""

    offset: int
    count: int
    elem: int
    stride: int
    type_name: str


@dataclass(frozen=True)
class Site:
    """What one rewritten allocation site or constructor allocates."""

    xsize: int
    single: bool
    has_dtor: bool
    occurrences: tuple[Occurrence, ...]
    heap_only: bool = False     # a typed call found without configuration: never the stack
    carve: bool = False         # carved out of a bigger block (cachefit.trace.carve_sites)
    # a new-expression: its constructors have run (and registered the objects of their
    # classes, a base class's among them) when the runtime sees the block
    constructed: bool = False


@dataclass
class _Edit:
    start: int
    end: int
    text: str
    closing: bool
    depth: int


@dataclass
class UnitReport:
    """What was done to a unit, for the wrapper's messages and for tests."""

    entries: list[str] = field(default_factory=list)
    allocation_sites: int = 0
    carves: int = 0             # objects carved out of a block (cachefit.trace.carve_sites)
    frees: int = 0
    constructors: int = 0
    destructors: int = 0
    memops: int = 0
    struct_copies: int = 0
    warnings: list[str] = field(default_factory=list)
    # Allocation sites of traced types, registered or not (carried to `cachefit trace`
    # in the object file: cachefit.trace.alloc_sites).
    site_notes: list[SiteNote] = field(default_factory=list)
    # The instrumented function with the most cursors (user code, as walked) and how many:
    # cachefit.trace.sancov_inline does not inline the checks into a unit with a huge one.
    largest_function: tuple[str, int] = ("", 0)
    # With the static filter (issue 31, cachefit.trace.touch_filter): which functions of
    # the unit can touch a traced object; None without it.
    functions: FilterResult | None = None

    @property
    def edited(self) -> bool:
        return bool(self.entries or self.allocation_sites or self.carves
                    or self.frees or self.constructors
                    or self.destructors or self.memops or self.struct_copies or self.site_notes)


class LineMap:
    """Maps byte offsets of preprocessed text to the original file and line, and tells
    which offsets came from system headers (GNU line markers with flag 3)."""

    def __init__(self, text: bytes) -> None:
        self.starts: list[int] = []
        self.files: list[str] = []
        self.lines: list[int] = []
        self.system: list[bool] = []
        offset = 0
        line_no_in_file = 1
        for raw in text.splitlines(keepends=True):
            if raw.startswith(b"# ") or raw.startswith(b"#line "):
                parts = raw.split(b'"')
                head = parts[0].split()
                if len(head) >= 2 and head[-1].isdigit() and len(parts) >= 3:
                    flags = parts[-1].split()
                    self.starts.append(offset + len(raw))
                    self.files.append(parts[1].decode(errors="replace"))
                    self.lines.append(int(head[-1]))
                    self.system.append(b"3" in flags)
                    line_no_in_file = 0
            offset += len(raw)
            line_no_in_file += 1
        self._text = text

    def _index(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def is_system(self, offset: int) -> bool:
        i = self._index(offset)
        return i >= 0 and self.system[i]

    def location(self, offset: int) -> Location:
        i = self._index(offset)
        if i < 0:
            return Location("<preprocessed>", 0)
        line = self.lines[i] + self._text.count(b"\n", self.starts[i], offset)
        col = offset - (self._text.rfind(b"\n", 0, offset) + 1) + 1
        return Location(self.files[i], line, col)


_TYPED_KINDS = {CK.VAR_DECL, CK.FIELD_DECL, CK.PARM_DECL, CK.CXX_NEW_EXPR, CK.CALL_EXPR,
                CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL, CK.CXX_UNARY_EXPR, CK.UNEXPOSED_EXPR,
                CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR}
_RECORD_KINDS = {CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL}
# The cursors find_targets looks at (besides _TYPED_KINDS for template instances).
_TARGET_KINDS = _RECORD_KINDS | {CK.CLASS_TEMPLATE, CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL}
_FUNCTION_DEFS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE, CK.CONSTRUCTOR,
                  CK.DESTRUCTOR}
# The cursors _struct_copy looks at.
_COPY_KINDS = {CK.BINARY_OPERATOR, CK.CALL_EXPR, CK.RETURN_STMT, CK.VAR_DECL}
# The cursors that give a call's result a pointer type (_destination): an initialised
# variable, an assignment, a return, an explicit cast.
_DEST_KINDS = {CK.VAR_DECL, CK.BINARY_OPERATOR, CK.RETURN_STMT, CK.CSTYLE_CAST_EXPR,
               CK.CXX_STATIC_CAST_EXPR, CK.CXX_REINTERPRET_CAST_EXPR}
_DEST_KIND_IDS = {k.value for k in _DEST_KINDS}
_FUNCTION_KINDS = {CK.FUNCTION_DECL, CK.CXX_METHOD, CK.FUNCTION_TEMPLATE}
_STORES = {CK.VAR_DECL, CK.BINARY_OPERATOR, CK.RETURN_STMT}
"""Cursors that store a value: an initialised declaration, an assignment, a return."""


_VISIT = ci.callbacks["cursor_visit"]
_CONTINUE, _RECURSE = 1, 2


def children(c: ci.Cursor) -> list[ci.Cursor]:
    """The children of `c`, as `c.get_children()` lists them, with less work per child
    (no check against the null cursor, which costs two more libclang calls): the walks of
    a big unit visit every one of its half million cursors."""
    kids: list[ci.Cursor] = []
    tu = c._tu

    def visit(child: ci.Cursor, _parent: ci.Cursor, _data: object) -> int:
        child._tu = tu
        kids.append(child)
        return _CONTINUE

    ci.conf.lib.clang_visitChildren(c, _VISIT(visit), kids)
    return kids


def descendants_of_kinds(c: ci.Cursor, kinds: set[ci.CursorKind]) -> list[ci.Cursor]:
    """The cursors of `kinds` among `c` and all its descendants, in the order of
    `c.walk_preorder()`: libclang walks the tree itself (one call, no list per cursor)
    and Python only looks at each cursor's kind number."""
    ids = {k.value for k in kinds}
    found: list[ci.Cursor] = [c] if c.kind in kinds else []
    tu = c._tu

    def visit(child: ci.Cursor, _parent: ci.Cursor, _data: object) -> int:
        if child._kind_id in ids:
            child._tu = tu
            found.append(child)
        return _RECURSE

    ci.conf.lib.clang_visitChildren(c, _VISIT(visit), found)
    return found


def _qualified_name(c: ci.Cursor) -> str:
    parts: list[str] = []
    cur: ci.Cursor | None = c
    while cur is not None and cur.kind != CK.TRANSLATION_UNIT:
        if cur.kind in (CK.NAMESPACE, CK.STRUCT_DECL, CK.CLASS_DECL, CK.UNION_DECL,
                        CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR, CK.DESTRUCTOR,
                        CK.FUNCTION_TEMPLATE, CK.CLASS_TEMPLATE) and cur.spelling:
            parts.append(cur.spelling)
        cur = cur.semantic_parent
    return "::".join(reversed(parts))


class UnitInstrumenter:
    """Analyse one parsed unit and produce the edited text."""

    def __init__(self, text: bytes, tu: ci.TranslationUnit, lang: Lang,
                 trace: TraceConfig, source: str = "<unit>", *,
                 struct_copies: bool = False, by_value_copies: bool = False,
                 touch_filter: bool = False) -> None:
        self.text = text
        self.touch_filter = touch_filter
        self.tu = tu
        self.lang = lang
        self.trace = trace
        self.lines = LineMap(text)
        self.edits: list[_Edit] = []
        self.sites: list[Site] = []
        self.site_ids: dict[Site, int] = {}
        self.report = UnitReport()
        self.target_usr: dict[str, str] = {}     # record USR -> configured type name
        # configured type name -> the name the unit's code registers it under: `dict@FP`,
        # FP the fingerprint of the unit's definition (cachefit.model.record_fingerprint)
        self.runtime_names: dict[str, str] = {}
        self._occ_cache: dict[str, tuple[Occurrence, ...] | None] = {}
        self._tokens_cache: dict[tuple[int, int], list[ci.Token]] = {}
        self.entry_index = {name: i for i, name in enumerate(trace.entry)}
        self.allocators = set(trace.allocators)
        self.deallocators = set(trace.deallocators)
        self.source = source
        # Enclosing function definitions while walking: is each one instrumented?
        self._fn_stack: list[bool] = []
        self._fn_cursors: list[ci.Cursor] = []
        self._fn_sizes: list[int] = []      # cursors walked in each of them so far
        # Calls whose result the code uses as a pointer (extent -> the pointee type).
        self._dest: dict[tuple[int, int], ci.Type] = {}
        # Of those, the calls whose result initialises or is assigned to a local variable
        # (extent -> the variable): `GCObject *o = luaC_newobj(...)` (_viewed_local).
        self._dest_var: dict[tuple[int, int], ci.Cursor] = {}
        # Calls whose result the code discards (a statement of its own, a `(void)` cast):
        # no object comes from them (Lua's `(*g->frealloc)(g->ud, fromstate(L),
        # sizeof(LG), 0);` frees), so they are not noted as missed allocation sites.
        self._discarded: set[tuple[int, int]] = set()
        self.copies = CopyFinder(lang, self._pure, self._tokens, self._src,
                                 lambda t: bool(self.occurrences(t))) \
            if struct_copies or by_value_copies else None
        self._assignments = struct_copies

    # ------------------------------------------------------------ targets

    def find_targets(self) -> None:
        wanted = set(self.trace.types)
        by_spelling: dict[str, list[tuple[str, str]]] = {}
        qualified_hits: dict[str, str] = {}
        # `dict@path[:line]` in [trace] types: that definition of `dict` only (issue 27)
        by_where: dict[str, list[tuple[str, str]]] = {}
        for w in wanted:
            base, where = split_definition(w)
            if where is not None:
                by_where.setdefault(base, []).append((w, where))
        definitions: dict[str, ci.Cursor] = {}      # record USR -> its definition
        # Class template instantiations are named with their arguments ("pool<int>",
        # "ns::pool<std::pair<int, int>>"), compared without spaces with the canonical
        # spelling of the types the user's code uses (libclang shows no cursor for an
        # implicit instantiation, so they are found through the types of declarations
        # and expressions).
        templated = {type_key(n): n for n in wanted if "<" in n}
        class_templates: set[str] = set()
        for c in descendants_of_kinds(self.tu.cursor,
                                      _TARGET_KINDS | (_TYPED_KINDS if templated else set())):
            kind = c.kind
            if templated and kind in _TYPED_KINDS:
                self._template_target(c.type, templated, qualified_hits)
            if kind == CK.CLASS_TEMPLATE and (c.spelling in wanted or
                                              _qualified_name(c) in wanted):
                class_templates.add(c.spelling if c.spelling in wanted else _qualified_name(c))
            if kind in _RECORD_KINDS and c.is_definition():
                q = _qualified_name(c)
                usr = c.get_usr()
                definitions.setdefault(usr, c)
                chosen = self._chosen_definition(c, by_where.get(q) or
                                                 by_where.get(c.spelling) or [])
                if chosen is not None:
                    qualified_hits[usr] = chosen
                elif q in wanted:
                    qualified_hits[usr] = q
                elif c.spelling in wanted:
                    by_spelling.setdefault(c.spelling, []).append((usr, q))
            elif kind in (CK.TYPEDEF_DECL, CK.TYPE_ALIAS_DECL) and (
                    c.spelling in wanted or _qualified_name(c) in wanted):
                name = c.spelling if c.spelling in wanted else _qualified_name(c)
                canon = c.underlying_typedef_type.get_canonical()
                decl = canon.get_declaration()
                if canon.kind == TK.RECORD and decl.kind != CK.NO_DECL_FOUND:
                    qualified_hits.setdefault(decl.get_usr(), name)
                    definitions.setdefault(decl.get_usr(), decl)
        self.target_usr.update(qualified_hits)
        found_names = set(qualified_hits.values())
        for name in sorted(class_templates - found_names - set(by_spelling)):
            self.report.warnings.append(
                f"[trace] types: {name} is a class template; name the instantiations to "
                f"trace, e.g. \"{name}<int>\" (each is a type of its own in the profile)")
        for name, hits in by_spelling.items():
            if name not in found_names:
                for usr, _q in hits:
                    self.target_usr.setdefault(usr, name)
        # C and C++ alike (a C++ class in an anonymous namespace, or a local class, may
        # have another definition of its name in another unit); a class template's
        # instances have no definition cursor here and keep their plain names
        for usr, name in self.target_usr.items():
            d = definitions.get(usr)
            if d is not None:
                self._refuse_local(d, name)
            if d is not None and split_definition(name)[1] is None:
                self.runtime_names[name] = f"{name}@{_fingerprint(d)}"

    def _refuse_local(self, record: ci.Cursor, name: str) -> None:
        """A traced record defined inside a function body (a local class, or a C struct
        declared in a block) is refused: the link step reads records at namespace or
        class scope of the debug information only, so its objects would have no layout
        and, with another record of the name, be filed under the name's other
        definition (issue 27: never by tag alone)."""
        fn = record.semantic_parent
        while fn is not None and fn.kind not in _FUNCTION_DEFS | {CK.LAMBDA_EXPR}:
            if fn.kind == CK.TRANSLATION_UNIT:
                return
            fn = fn.semantic_parent
        if fn is None:
            return
        where = self.lines.location(record.location.offset)
        raise UserError(f"[trace] types: {name} names a class defined inside the function "
                        f"{fn.spelling or 'a lambda'}, which cachefit cannot trace",
                        "define it outside the function or trace another type",
                        where)

    def _chosen_definition(self, c: ci.Cursor, keys: list[tuple[str, str]]) -> str | None:
        """The `[trace] types` entry `name@path[:line]` that names the record definition
        `c` (None: none does)."""
        if not keys:
            return None
        loc = self.lines.location(c.location.offset)
        for key, where in keys:
            if definition_matches(where, loc.file, loc.line):
                return key
        return None

    @staticmethod
    def _template_target(t: ci.Type, templated: dict[str, str],
                         hits: dict[str, str]) -> None:
        for _ in range(8):
            canon = t.get_canonical()
            if canon.kind in (TK.POINTER, TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
                t = canon.get_pointee()
            elif canon.kind in (TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY):
                t = canon.element_type
            else:
                break
        canon = t.get_canonical()
        if canon.kind != TK.RECORD:
            return
        name = templated.get(type_key(canon.spelling))
        if name is None:
            return
        decl = canon.get_declaration()
        if decl.kind != CK.NO_DECL_FOUND:
            hits.setdefault(decl.get_usr(), name)

    def _record_target(self, t: ci.Type) -> str | None:
        canon = t.get_canonical()
        if canon.kind != TK.RECORD:
            return None
        return self.target_usr.get(canon.get_declaration().get_usr())

    def occurrences(self, t: ci.Type) -> tuple[Occurrence, ...]:
        """Where objects of target types sit inside an object of type `t`."""
        canon = t.get_canonical()
        key = canon.spelling
        if key in self._occ_cache:
            return self._occ_cache[key] or ()
        self._occ_cache[key] = None  # recursion guard
        result = self._occurrences(canon)
        if result is not None and len(result) > MAX_OCCURRENCES:
            self.report.warnings.append(
                f"{canon.spelling} holds more than {MAX_OCCURRENCES} target objects in nested "
                "arrays; its allocations are not registered")
            result = ()
        self._occ_cache[key] = result
        return result or ()

    def runtime_name(self, name: str) -> str:
        """The type name the unit's code registers objects of `name` under."""
        return self.runtime_names.get(name, name)

    def _occurrences(self, canon: ci.Type) -> tuple[Occurrence, ...]:
        if canon.kind == TK.RECORD:
            size = canon.get_size()
            name = self.target_usr.get(canon.get_declaration().get_usr())
            if name is not None:
                return (Occurrence(0, 1, size, size, name),) if size > 0 else ()
            decl = canon.get_declaration()
            out: list[Occurrence] = []
            for f in decl.get_children():
                if f.kind != CK.FIELD_DECL or f.is_bitfield():
                    continue
                off_bits = f.get_field_offsetof()
                if off_bits < 0:
                    continue
                for o in self.occurrences(f.type):
                    out.append(Occurrence(o.offset + off_bits // 8, o.count, o.elem, o.stride,
                                          o.type_name))
            return tuple(out)
        if canon.kind == TK.CONSTANTARRAY:
            n = canon.element_count
            et = canon.element_type
            esize = et.get_size()
            inner = self.occurrences(et)
            out = []
            for o in inner:
                if o.count == 1:
                    out.append(Occurrence(o.offset, n, o.elem, esize, o.type_name))
                else:
                    out.extend(Occurrence(i * esize + o.offset, o.count, o.elem, o.stride,
                                          o.type_name) for i in range(n))
                if len(out) > MAX_OCCURRENCES:
                    break
            return tuple(out)
        return ()

    # ------------------------------------------------------------ helpers

    def _src(self, c: ci.Cursor) -> str:
        return self.text[c.extent.start.offset:c.extent.end.offset].decode(errors="replace")

    def _tokens(self, c: ci.Cursor) -> list[ci.Token]:
        key = (c.extent.start.offset, c.extent.end.offset)
        if key not in self._tokens_cache:
            self._tokens_cache[key] = list(c.get_tokens())
        return self._tokens_cache[key]

    def _user_code(self, c: ci.Cursor) -> bool:
        start = c.extent.start      # one location: it caches its file and offset
        return start.file is not None and not self.lines.is_system(start.offset)

    @staticmethod
    def _strip(c: ci.Cursor) -> ci.Cursor:
        """Look through parentheses and implicit or explicit casts."""
        while True:
            kids = list(c.get_children())
            if c.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) and len(kids) == 1:
                c = kids[0]
            elif c.kind in (CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR,
                            CK.CXX_FUNCTIONAL_CAST_EXPR) and kids:
                c = kids[-1]
            else:
                return c

    def _binary_op(self, c: ci.Cursor) -> str | None:
        kids = list(c.get_children())
        if len(kids) != 2:
            return None
        lhs_end = kids[0].extent.end.offset
        for tok in self._tokens(c):
            if tok.extent.start.offset >= lhs_end:
                return str(tok.spelling)
        return None

    def _sizeof_type(self, c: ci.Cursor) -> ci.Type | None:
        """The operand type of a `sizeof` expression (None for alignof and the like, and
        for type names with declarators such as `struct T *`)."""
        toks = self._tokens(c)
        if not toks or toks[0].spelling != "sizeof":
            return None
        kids = list(c.get_children())
        if not kids:
            return None
        first = kids[0]
        if first.kind.is_expression():
            return first.type
        refs = [k for k in kids if k.kind == CK.TYPE_REF]
        if not refs:
            return None
        last = refs[-1]
        after = [t.spelling for t in toks if t.extent.start.offset >= last.extent.end.offset]
        if after != [")"]:
            return None
        return last.type

    def _offsetof_last(self, c: ci.Cursor) -> ci.Type | None:
        """X when `c` is `offsetof(X, m)` (`__builtin_offsetof`) and m is X's last field:
        the size of an X whose trailing array holds what is added to it."""
        toks = self._tokens(c)
        if not toks or toks[0].spelling != "__builtin_offsetof":
            return None
        kids = list(c.get_children())
        if len(kids) != 2 or kids[0].kind != CK.TYPE_REF or kids[1].kind != CK.MEMBER_REF:
            return None
        xtype = kids[0].type
        decl = xtype.get_canonical().get_declaration()
        fields = [f for f in decl.get_children() if f.kind == CK.FIELD_DECL]
        if not fields or fields[-1].spelling != kids[1].spelling:
            return None
        return xtype

    def _size_of(self, arg: ci.Cursor, _seen: int = 0) -> tuple[ci.Type, bool] | None:
        """(X, single) when `arg` is sizeof(X), a product with sizeof(X) (single=False),
        a sum with sizeof(X) or with offsetof(X, last field) (one X with extra bytes,
        single=True), or a local variable every assignment of which is one of these
        forms with the same X (`n = offsetof(X, data) + len; alloc(n)`)."""
        c = self._strip(arg)
        if c.kind == CK.CXX_UNARY_EXPR:
            t = self._sizeof_type(c)
            return (t, False) if t is not None else None
        if c.kind == CK.DECL_REF_EXPR and _seen == 0:
            return self._size_of_local(c)
        if c.kind == CK.BINARY_OPERATOR:
            op = self._binary_op(c)
            kids = list(c.get_children())
            found: list[tuple[ci.Type, bool]] = []
            if op == "*":
                for k in kids:
                    got = self._size_of(k, _seen + 1)
                    if got is not None:
                        found.append(got)
            elif op == "+":
                for i, k in enumerate(kids):
                    sk = self._strip(k)
                    off = self._offsetof_last(sk)
                    got = (off, False) if off is not None else self._size_of(k, _seen + 1)
                    if got is None or got[1]:
                        continue
                    if off is None and sk.kind != CK.CXX_UNARY_EXPR and any(
                            self._sizes_other_type(o, got[0])
                            for j, o in enumerate(kids) if j != i):
                        # `sizeof(Hdr) + n * sizeof(X)`: the X array follows a header
                        # (SQLite's UnpackedRecord and its Mem array), no X at the start
                        continue
                    found.append((got[0], True))
            # `n * sizeof(char) + sizeof(X)`: the operand naming a target type counts.
            for got in found:
                if self.occurrences(got[0]):
                    return got
            return found[0] if found else None
        return None

    def _sizes_other_type(self, c: ci.Cursor, xtype: ci.Type) -> bool:
        """Whether `c` holds a `sizeof` of a type other than X and wider than a byte, or an
        `offsetof`: the size of something laid out next to the X array, maybe before it."""
        for d in c.walk_preorder():
            if d.kind == CK.CXX_UNARY_EXPR:
                t = self._sizeof_type(d)
                if t is not None and t.get_canonical().get_size() > 1 and \
                        not self._same_type(t, xtype):
                    return True
            elif d.kind == CK.UNEXPOSED_EXPR:
                toks = self._tokens(d)
                if toks and toks[0].spelling == "__builtin_offsetof":
                    return True
        return False

    def _size_of_local(self, ref: ci.Cursor) -> tuple[ci.Type, bool] | None:
        """The size form of a local variable of the function being walked: its
        initialiser and every plain assignment `v = E` must have one with the same X;
        its address taken, `++`/`--` or a compound assignment give None."""
        decl = ref.referenced
        fn = self._fn_cursors[-1] if self._fn_cursors else None
        if decl is None or decl.kind != CK.VAR_DECL or fn is None or \
                decl.semantic_parent is None or decl.semantic_parent != fn or \
                decl.storage_class == ci.StorageClass.STATIC:
            return None
        assigned = self._assigned_values(decl, fn)
        if assigned is None:
            return None
        values = [*(k for k in decl.get_children() if k.kind.is_expression()), *assigned]
        if not values:
            return None
        forms = [self._size_of(v, 1) for v in values]
        first = forms[0]
        if first is None or any(f is None or f[1] != first[1] or
                                f[0].get_canonical() != first[0].get_canonical()
                                for f in forms):
            return None
        return first

    def _pure(self, c: ci.Cursor) -> bool:
        """True when evaluating `c` twice is harmless: no calls, no assignments."""
        bad_kinds = {CK.CALL_EXPR, CK.CXX_NEW_EXPR, CK.CXX_DELETE_EXPR, CK.LAMBDA_EXPR,
                     CK.CXX_THROW_EXPR, CK.COMPOUND_STMT}
        for d in c.walk_preorder():
            if d.kind in bad_kinds:
                return False
        bad_tokens = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
                      "++", "--", ","}
        return not any(t.spelling in bad_tokens for t in self._tokens(c))

    def _site(self, xtype: ci.Type, single: bool, has_dtor: bool = False,
              heap_only: bool = False, carve: bool = False,
              constructed: bool = False, data_size: int | None = None) -> int | None:
        """The site allocating `xtype`; `data_size`: a constructor's object is registered
        that long (_data_size), not sizeof."""
        occ = self.occurrences(xtype)
        size = xtype.get_canonical().get_size()
        if not occ or size <= 0:
            return None
        if data_size is not None and len(occ) == 1 and occ[0].offset == 0:
            occ = (Occurrence(0, 1, data_size, data_size, occ[0].type_name),)
        site = Site(size, single, has_dtor, occ, heap_only, carve, constructed)
        if site not in self.site_ids:
            self.site_ids[site] = len(self.sites)
            self.sites.append(site)
        return self.site_ids[site]

    def _insert(self, offset: int, text: str, *, closing: bool, depth: int) -> None:
        self.edits.append(_Edit(offset, offset, text, closing, depth))

    def _replace(self, c: ci.Cursor, text: str, depth: int) -> None:
        self.edits.append(_Edit(c.extent.start.offset, c.extent.end.offset, text, False, depth))

    def _null(self) -> str:
        return "0"

    # ------------------------------------------------------------ walking

    def run(self) -> None:
        self.find_targets()
        if self.touch_filter:
            self.report.functions = choose_functions(self.tu, self.target_usr, self.lang,
                                                     self.lines.is_system)
        self._walk(self.tu.cursor, 0)

    def _walk(self, c: ci.Cursor, depth: int) -> None:
        for child in children(c):
            if self._user_code(child):
                self._visit(child, depth + 1)

    def _visit(self, c: ci.Cursor, depth: int) -> None:
        kind = c.kind
        if self._fn_sizes:
            self._fn_sizes[-1] += 1
        if kind in _FUNCTION_DEFS and c.is_definition():
            self._function(c, depth)
            instrumented = self._instrumented(c)
            self._fn_stack.append(instrumented)
            self._fn_cursors.append(c)
            self._fn_sizes.append(0)
            try:
                self._walk(c, depth)
            finally:
                self._fn_stack.pop()
                self._fn_cursors.pop()
                size = self._fn_sizes.pop()
            if instrumented and size > self.report.largest_function[1]:
                self.report.largest_function = (_qualified_name(c) or c.spelling, size)
            return
        if c._kind_id in _DEST_KIND_IDS:
            self._destination(c, kind)
            self._carve(c, kind, depth)
        elif kind == CK.COMPOUND_STMT:
            for stmt in children(c):
                call = self._under(stmt)
                if call is not None:
                    self._discarded.add((call.extent.start.offset, call.extent.end.offset))
        if kind in _COPY_KINDS and self.copies is not None and self._fn_stack and \
                self._fn_stack[-1] and self._struct_copy(c, kind, depth):
            return
        if kind == CK.CALL_EXPR:
            self._call(c, depth)
        elif kind == CK.CXX_NEW_EXPR:
            self._new(c, depth)
        elif kind == CK.CXX_DELETE_EXPR:
            self._delete(c, depth)
        self._walk(c, depth)

    def _struct_copy(self, c: ci.Cursor, kind: ci.CursorKind, depth: int) -> bool:
        """Rewrite a struct copy for the clang backend (`c` is of one of _COPY_KINDS);
        True when `c` was replaced whole (its operands are then side-effect free, so
        nothing inside needs an edit)."""
        assert self.copies is not None
        got: CopyEdit | Skipped | None = None
        by_value: list[CopyEdit | Skipped] = []
        if kind == CK.BINARY_OPERATOR and self.lang == "c" and self._assignments and \
                c.type.get_canonical().kind == TK.RECORD:
            got = self.copies.c_assignment(c, self._binary_op(c))
        elif kind == CK.CALL_EXPR:
            got = self.copies.cxx_assignment(c) if self._assignments else None
            if not isinstance(got, CopyEdit):
                by_value = self.copies.arguments(c)
        elif kind == CK.RETURN_STMT:
            got = self.copies.return_value(c)
        elif kind == CK.VAR_DECL:
            got = self.copies.initialisation(c)
        whole = isinstance(got, CopyEdit) and kind not in (CK.VAR_DECL, CK.RETURN_STMT)
        for one in [got, *by_value]:
            if isinstance(one, Skipped):
                self.report.warnings.append(
                    f"{self.lines.location(one.offset)}: struct copy not traced: {one.why}")
            elif one is not None:
                self.edits.append(_Edit(one.start, one.end, one.text, False, depth))
                self.report.struct_copies += 1
        return whole

    def _instrumented(self, fn: ci.Cursor) -> bool:
        """Whether the compiler instruments `fn`'s loads and stores: [trace] instrument
        (fnmatch patterns on the qualified or plain name, as the allowlist's `fun:`) and
        instrument_files; never constexpr functions (their calls must stay constant)."""
        body = self._body(fn)
        if body is None or self._is_constexpr(fn, body):
            return False
        files = self.trace.instrument_files
        if not any(fnmatch.fnmatch(self.source, f) or fnmatch.fnmatch(self.source, f"*{f}")
                   for f in files):
            return False
        names = self.trace.instrument
        if names is None:
            return True
        qname = _qualified_name(fn)
        return any(fnmatch.fnmatchcase(qname, n) or fnmatch.fnmatchcase(fn.spelling, n)
                   for n in names)

    def _memop(self, callee: ci.Cursor, decl: ci.Cursor | None, nargs: int,
               depth: int) -> bool:
        """Redirect memcpy/memmove/memset in an instrumented function to the runtime."""
        if decl is None or decl.kind != CK.FUNCTION_DECL or decl.spelling not in MEMOPS:
            return False
        if nargs != 3 or not self._fn_stack or not self._fn_stack[-1]:
            return False
        parent = decl.semantic_parent
        while parent is not None and parent.kind == CK.LINKAGE_SPEC:
            parent = parent.semantic_parent
        if not (parent is None or parent.kind == CK.TRANSLATION_UNIT or (
                parent.kind == CK.NAMESPACE and parent.spelling == "std")):
            return False
        self._replace(callee, MEMOPS[decl.spelling], depth)
        self.report.memops += 1
        return True

    def _body(self, fn: ci.Cursor) -> ci.Cursor | None:
        for k in fn.get_children():
            if k.kind == CK.COMPOUND_STMT:
                return k
        return None

    def _is_constexpr(self, fn: ci.Cursor, body: ci.Cursor) -> bool:
        # Only the tokens before the body: a big function's body has many thousands.
        body_start = body.extent.start
        head = ci.SourceRange.from_locations(fn.extent.start, body_start)
        return any(t.spelling in ("constexpr", "consteval") and
                   t.extent.start.offset < body_start.offset
                   for t in self.tu.get_tokens(extent=head))

    def _function(self, fn: ci.Cursor, depth: int) -> None:
        if fn.kind in (CK.CONSTRUCTOR, CK.DESTRUCTOR, CK.CXX_METHOD) and \
                (fn.is_default_method() or fn.is_deleted_method()):
            # `= default` has no braces to insert into (libclang may still show the
            # implicit body it synthesises when the function is used).
            return
        body = self._body(fn)
        if body is None:
            return
        if self._is_constexpr(fn, body):
            return
        open_brace = body.extent.start.offset + 1
        qname = _qualified_name(fn)
        index = self.entry_index.get(qname)
        if index is None and fn.kind != CK.CONSTRUCTOR and fn.kind != CK.DESTRUCTOR:
            index = self.entry_index.get(fn.spelling)
        if index is not None:
            self._insert(open_brace,
                         " __attribute__((cleanup(__cachefit_leave))) int __cachefit_scope = "
                         f"__cachefit_enter({index}, &__cachefit_scope);",
                         closing=False, depth=depth)
            self.report.entries.append(qname or fn.spelling)
        if self.lang != "c++" or fn.kind not in (CK.CONSTRUCTOR, CK.DESTRUCTOR):
            return
        cls = fn.semantic_parent
        if cls is None or cls.kind not in (CK.CLASS_DECL, CK.STRUCT_DECL, CK.UNION_DECL):
            return
        name = self.target_usr.get(cls.get_usr())
        if name is None:
            return
        if fn.kind == CK.CONSTRUCTOR:
            site = self._site(cls.type, True, has_dtor=self._has_user_dtor(cls),
                              data_size=_data_size(cls))
            if site is not None:
                self._insert(open_brace, f" __cachefit_ctor(this, &__cachefit_site_{site});",
                             closing=False, depth=depth)
                self.report.constructors += 1
        else:
            self._insert(open_brace,
                         f' __cachefit_dtor_guard __cachefit_g = '
                         f'{{this, "{self.runtime_name(name)}"}};',
                         closing=False, depth=depth)
            self.report.destructors += 1

    @staticmethod
    def _has_user_dtor(cls: ci.Cursor) -> bool:
        for k in cls.get_children():
            if k.kind == CK.DESTRUCTOR:
                return not (k.is_default_method() or k.is_deleted_method())
        return False

    def _callee(self, call: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor | None] | None:
        """(the callee expression, the declaration it names) of a call."""
        kids = list(call.get_children())
        if not kids:
            return None
        c = kids[0]
        while True:
            inner = list(c.get_children())
            if c.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) and len(inner) == 1:
                c = inner[0]
            elif c.kind == CK.UNARY_OPERATOR and len(inner) == 1 and \
                    self._tokens(c)[:1] and self._tokens(c)[0].spelling == "*":
                c = inner[0]
            else:
                break
        if c.kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR):
            return c, c.referenced
        return None

    def _call_args(self, call: ci.Cursor) -> list[ci.Cursor]:
        return list(call.get_arguments())

    def _is_libc(self, decl: ci.Cursor | None) -> bool:
        if decl is None or decl.kind != CK.FUNCTION_DECL or decl.spelling not in LIBC_ALLOC:
            return False
        parent = decl.semantic_parent
        while parent is not None and parent.kind == CK.LINKAGE_SPEC:
            parent = parent.semantic_parent
        return parent is None or parent.kind == CK.TRANSLATION_UNIT or (
            parent.kind == CK.NAMESPACE and parent.spelling == "std")

    def _call(self, call: ci.Cursor, depth: int) -> None:
        got = self._callee(call)
        close = call.extent.end.offset - 1
        if self.text[close:close + 1] != b")":
            return
        if got is None:
            # a callee such as `table[i].alloc` or `get_allocator()`
            self._typed_call(call, None, None, self._call_args(call), depth)
            return
        callee, decl = got
        args = self._call_args(call)
        if self._memop(callee, decl, len(args), depth):
            return
        if self._is_libc(decl):
            assert decl is not None
            fn = decl.spelling
            if fn == "free" and len(args) == 1:
                self._replace(callee, "__cachefit_free", depth)
                self._free_wrapper(args[0], depth)
                self.report.frees += 1
                return
            if fn == "realloc" and len(args) == 2:
                sized = self._size_of(args[1])
                site = self._site(*sized) if sized else None
                self._replace(callee, "__cachefit_realloc", depth)
                self._insert(close, f", {self._site_ref(site)}", closing=True, depth=depth)
                self.report.frees += 1
                if site is not None and sized is not None:
                    self.report.allocation_sites += 1
                    self._note(call, fn, sized[0], "malloc")
                return
            sized = None
            if fn == "malloc" and len(args) == 1:
                sized = self._size_of(args[0])
            elif fn == "calloc" and len(args) == 2:
                sized = self._size_of(args[1]) or self._size_of(args[0])
                if sized is not None:
                    sized = (sized[0], False)
            elif fn == "aligned_alloc" and len(args) == 2:
                sized = self._size_of(args[1])
            if sized is None:
                return
            site = self._site(*sized)
            if site is None:
                return
            self._replace(callee, f"__cachefit_{fn}", depth)
            self._insert(close, f", &__cachefit_site_{site}", closing=True, depth=depth)
            self.report.allocation_sites += 1
            self._note(call, fn, sized[0], "malloc")
            return
        name = callee.spelling
        if name in self.allocators:
            self._custom_alloc(call, args, depth)
        elif name in self.deallocators:
            ptr_args = [a for a in args if a.type.get_canonical().kind == TK.POINTER]
            if ptr_args:
                arg = ptr_args[-1]
                opener = "__cachefit_untrack_t(" if self.lang == "c++" else "__cachefit_untrack("
                self._insert(arg.extent.start.offset, opener, closing=False, depth=depth + 1)
                self._insert(arg.extent.end.offset, ")", closing=True, depth=depth + 1)
                self.report.frees += 1
        else:
            self._typed_call(call, callee, decl, args, depth)

    def _site_ref(self, site: int | None) -> str:
        return f"&__cachefit_site_{site}" if site is not None else "0"

    def _custom_alloc(self, call: ci.Cursor, args: list[ci.Cursor], depth: int) -> None:
        for a in args:
            sized = self._size_of(a)
            if sized is None:
                continue
            callee = self._callee(call)
            self._track_call(call, a, sized, depth, callee[0].spelling if callee else "",
                             "allocator")
            return

    def _track_call(self, call: ci.Cursor, a: ci.Cursor, sized: tuple[ci.Type, bool],
                    depth: int, callee: str, kind: str) -> bool:
        """Register what `call` returns as objects of the size argument `a` (X, single):
        the call is wrapped in `__cachefit_track`. A typed call found without
        configuration (`kind` "typed") registers nothing on the thread's stack."""
        xtype, single = sized
        site = self._site(xtype, single, heap_only=kind == "typed")
        if site is None:
            return False
        if single or self._pure(a):
            total = self._src(a) if not single else str(xtype.get_canonical().get_size())
        else:
            self.report.warnings.append(
                f"{self.lines.location(call.extent.start.offset)}: the size argument of "
                f"{self._src(call)[:60]} has side effects; registered as one object")
            total = str(xtype.get_canonical().get_size())
        self._track(call, f"({total})", site, depth)
        self.report.allocation_sites += 1
        self._note(call, callee, xtype, kind)
        return True

    # ------------------------------------------------------------ typed allocation sites

    def _stored(self, c: ci.Cursor, kind: ci.CursorKind, kids: list[ci.Cursor]
                ) -> tuple[ci.Cursor | None, ci.Type] | None:
        """The value a declaration's initialiser, the right side of a binary operator or a
        `return` stores (None: a declaration without one) and the type it is stored as;
        None when `c` stores nothing (a binary operator without two operands, a `return`
        outside a function)."""
        if kind == CK.VAR_DECL:
            return (kids[-1] if kids and kids[-1].kind.is_expression() else None), c.type
        if kind == CK.BINARY_OPERATOR:
            return (kids[1], kids[0].type) if len(kids) == 2 else None
        if not kids or not self._fn_cursors or \
                self._fn_cursors[-1].kind not in _FUNCTION_KINDS:
            return None
        return kids[0], self._fn_cursors[-1].result_type

    def _destination(self, c: ci.Cursor, kind: ci.CursorKind) -> None:
        """Note the pointer type that `c` (a variable's initialiser, the right of `=`, a
        returned value, an explicit cast) gives a call directly under it."""
        kids = children(c)
        got = self._stored(c, kind, kids) if kind in _STORES else \
            (kids[-1] if kids else None, c.type)
        if got is None or got[0] is None:
            return
        value, t = got
        value = self._under(value)
        if value is None:
            return
        canon = t.get_canonical()
        if canon.kind == TK.VOID and kind in (CK.CSTYLE_CAST_EXPR, CK.CXX_STATIC_CAST_EXPR):
            self._discarded.add((value.extent.start.offset, value.extent.end.offset))
            return
        if canon.kind != TK.POINTER:
            return
        if kind == CK.BINARY_OPERATOR and self._binary_op(c) != "=":
            return
        key = (value.extent.start.offset, value.extent.end.offset)
        self._dest[key] = canon.get_pointee()
        var = c if kind == CK.VAR_DECL else \
            self._strip(kids[0]).referenced if kind == CK.BINARY_OPERATOR and \
            self._strip(kids[0]).kind == CK.DECL_REF_EXPR else None
        if var is not None and var.kind == CK.VAR_DECL:
            self._dest_var[key] = var

    def _carve(self, c: ci.Cursor, kind: ci.CursorKind, depth: int) -> None:
        """An object carved out of a bigger block stored into a `T *` (initialiser, `=`,
        return; cachefit.trace.carve_sites decides): the value is wrapped in
        `__cachefit_track` with a carve site of T (registered at that address unless an
        object is there already; runtime/src/cf_alloc.c, cf_carve)."""
        got = self._stored(c, kind, children(c)) if kind in _STORES else None
        if got is None or kind == CK.BINARY_OPERATOR and self._binary_op(c) != "=":
            return
        value, t = got
        if value is None or value.kind == CK.INIT_LIST_EXPR or not carved_value(value, t):
            return
        pointee = t.get_canonical().get_pointee()
        site = self._site(pointee, True, heap_only=True, carve=True)
        if site is None or any(d.kind in (CK.COMPOUND_STMT, CK.LAMBDA_EXPR)
                               for d in value.walk_preorder()):
            return
        self._track(value, f"{pointee.get_canonical().get_size()}ul", site, depth)
        self.report.carves += 1
        self._note(value, "carve", pointee, "carve")

    def _track(self, expr: ci.Cursor, size: str, site: int, depth: int) -> None:
        """Wrap the pointer-valued `expr` so that, when it runs, the runtime registers an
        object of `size` bytes (C text) at the address it gives, noted at `site`."""
        start, end = expr.extent.start.offset, expr.extent.end.offset
        if self.lang == "c++":
            self._insert(start, "__cachefit_track_t(", closing=False, depth=depth)
            self._insert(end, f", {size}, &__cachefit_site_{site})", closing=True, depth=depth)
        else:
            original = self.text[start:end].decode(errors="replace")
            self._insert(start, f"((__typeof__({original}))__cachefit_track((", closing=False,
                         depth=depth)
            self._insert(end, f"), {size}, &__cachefit_site_{site}))", closing=True,
                         depth=depth)

    @staticmethod
    def _under(value: ci.Cursor) -> ci.Cursor | None:
        """The call that `value` is, through parentheses and implicit conversions."""
        while value.kind in (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR):
            inner = children(value)
            if len(inner) != 1:
                return None
            value = inner[0]
        return value if value.kind == CK.CALL_EXPR else None

    def _same_type(self, a: ci.Type, b: ci.Type) -> bool:
        ca, cb = a.get_canonical(), b.get_canonical()
        if ca.kind == TK.RECORD and cb.kind == TK.RECORD:
            return bool(ca.get_declaration().get_usr() == cb.get_declaration().get_usr())
        return bool(ca == cb)

    def _typed_call(self, call: ci.Cursor, callee: ci.Cursor | None, decl: ci.Cursor | None,
                    args: list[ci.Cursor], depth: int) -> None:
        """A call of the project's own code (a function, a function pointer, a member)
        returning a pointer that the code uses as `T *`, with a size argument naming T
        (`sizeof(T)`, `sizeof *p`, `n * sizeof(T)`, `offsetof(T, last) + n`), where T is
        or holds a traced type: the objects it returns are registered. Calls with a
        `sizeof(T)` size used otherwise, and calls used as `T *` without such a size, are
        noted (not registered) for `cachefit trace` to name."""
        args = self._fixed_args(call, args)
        if call.type.get_canonical().kind != TK.POINTER or not args:
            return
        if decl is not None and decl.kind in _FUNCTION_KINDS | {CK.CONSTRUCTOR} and \
                not self._project_decl(decl):
            return          # the C library's, a compiler builtin: memcpy returns its operand
        name = callee.spelling if callee is not None else ""
        dest = self._dest.get((call.extent.start.offset, call.extent.end.offset))
        if dest is None or not self.occurrences(dest):
            if not self._viewed_local(call, name, args, depth):
                self._unconverted(call, name, args)
            return
        for a in args:
            sized = self._size_of(a)
            if sized is None or not self._same_type(sized[0], dest):
                continue
            if any(self._points_to(b, dest) for b in args):
                # realloc-like or a copy that returns its operand: not a new object
                self._note(call, name, dest, PASSES)
                return
            if any(d.kind in (CK.COMPOUND_STMT, CK.LAMBDA_EXPR) for d in call.walk_preorder()):
                return      # the call's text is repeated in __typeof__ (C)
            if not self._track_call(call, a, sized, depth, name, "typed"):
                self._note(call, name, dest, UNSIZED)
            return
        if self._viewed_local(call, name, args, depth):
            return
        if self._returns_untyped(call):
            self._note(call, name, dest, UNSIZED)

    @staticmethod
    def _fixed_args(call: ci.Cursor, args: list[ci.Cursor]) -> list[ci.Cursor]:
        """The arguments of `call` that its callee's prototype declares: a variadic
        function's `...` arguments are no allocation size (Redis's `sdscatprintf(s,
        "robj:%d ", (int)sizeof(robj))` prints one)."""
        kids = list(call.get_children())
        t = kids[0].type.get_canonical() if kids else None
        if t is not None and t.kind == TK.POINTER:
            t = t.get_pointee().get_canonical()
        if t is None or t.kind != TK.FUNCTIONPROTO or not t.is_function_variadic():
            return args
        return args[:len(list(t.argument_types()))]

    def _viewed_local(self, call: ci.Cursor, name: str, args: list[ci.Cursor],
                      depth: int) -> bool:
        """A call whose result is the only value of a local pointer variable of another
        type, which the function converts to T and to no other record
        (cachefit.trace.local_views: Lua's `GCObject *o = luaC_newobj(L, LUA_VTABLE,
        sizeof(Table)); Table *t = gco2t(o);`), with a size argument naming that T in the
        call itself (`sizeof(T)`, `n * sizeof(T)`, `offsetof(T, last) + n`): the objects
        it returns are registered as T, like a typed allocation site. True when the call
        was registered or noted."""
        var = self._dest_var.get((call.extent.start.offset, call.extent.end.offset))
        fn = self._fn_cursors[-1] if self._fn_cursors else None
        if var is None or fn is None or var.semantic_parent != fn or \
                var.storage_class == ci.StorageClass.STATIC:
            return False
        # the size is in the call (no local size variable followed: each would cost a walk
        # of the function, for every call stored into a local)
        sizes = [self._size_of(a, 1) for a in args]
        if not any(s is not None and self.occurrences(s[0]) for s in sizes):
            return False
        assigned = self._assigned_values(var, fn)
        init = [k for k in var.get_children() if k.kind.is_expression()]
        if assigned is None or len(init) + len(assigned) != 1:
            return False        # another value could be what the function converts
        view = local_view(fn, var)
        if view is None:
            return False
        for a, got in zip(args, sizes, strict=True):
            if got is None or not self._same_type(got[0], view):
                continue
            if any(self._points_to(b, view) for b in args):
                self._note(call, name, view, PASSES)
                return True
            if any(d.kind in (CK.COMPOUND_STMT, CK.LAMBDA_EXPR) for d in call.walk_preorder()):
                return False    # the call's text is repeated in __typeof__ (C)
            return self._track_call(call, a, got, depth, name, "typed")
        return False

    def _returns_untyped(self, call: ci.Cursor) -> bool:
        """Whether the call returns `void *` or `char *` (memory, not an object) and is
        passed an integer (a size or a count): the shape of an allocator."""
        pointee = call.type.get_canonical().get_pointee()
        if pointee.kind not in (TK.VOID, TK.CHAR_S, TK.CHAR_U, TK.UCHAR, TK.SCHAR):
            return False
        return any(a.type.get_canonical().kind in (
            TK.INT, TK.UINT, TK.LONG, TK.ULONG, TK.LONGLONG, TK.ULONGLONG, TK.USHORT,
            TK.SHORT) for a in self._call_args(call))

    def _unconverted(self, call: ci.Cursor, name: str, args: list[ci.Cursor]) -> None:
        """Note a call with a `sizeof(X)` size argument (X traced or holding one) whose
        result is not used as an `X *`: naming it in `allocators` would register it. A
        call whose result is discarded allocates nothing the program uses (Lua frees its
        main block with `(*g->frealloc)(g->ud, fromstate(L), sizeof(LG), 0);`)."""
        if (call.extent.start.offset, call.extent.end.offset) in self._discarded:
            return
        for a in args:
            sized = self._size_of(a, 1)     # no local variables followed: every call
            if sized is not None and self.occurrences(sized[0]):
                self._note(call, name, sized[0], UNCONVERTED)
                return

    def _points_to(self, arg: ci.Cursor, t: ci.Type) -> bool:
        at = self._strip(arg).type.get_canonical()
        return at.kind == TK.POINTER and self._same_type(at.get_pointee(), t)

    def _project_decl(self, decl: ci.Cursor) -> bool:
        """Whether a function is declared in the project's own code (not a system header,
        not a builtin without a location)."""
        loc = decl.location
        return loc.file is not None and not self.lines.is_system(loc.offset)

    def _note(self, call: ci.Cursor, callee: str, xtype: ci.Type, kind: str) -> None:
        if len(self.report.site_notes) >= MAX_SITE_NOTES:
            return
        loc = self.lines.location(call.extent.start.offset)
        for name in sorted({o.type_name for o in self.occurrences(xtype)}):
            note = SiteNote(name, loc.file, loc.line, callee, kind,
                            self.runtime_names.get(name, ""))
            if note not in self.report.site_notes:
                self.report.site_notes.append(note)

    def _free_wrapper(self, arg: ci.Cursor, depth: int) -> None:
        """`free(E)` in a function whose pointer parameter P is never changed, where E is
        derived from P by a cast or an offset (`free((char *)ptr - HDR)`, directly or
        through a local variable): the function frees what its caller got from the
        matching allocation wrapper (Redis's zfree), so P is forgotten there too."""
        if not self._fn_cursors:
            return
        fn = self._fn_cursors[-1]
        param = self._derived_from(arg, fn, 0)
        if param is None or self._strip(arg).kind == CK.DECL_REF_EXPR and \
                self._strip(arg).referenced == param:
            return      # free(P) itself forgets P
        name = param.spelling
        if not name or self._assigned_values(param, fn) != [] or any(
                d.kind in (CK.VAR_DECL, CK.PARM_DECL) and d.spelling == name and d != param
                for d in fn.walk_preorder()):
            return      # changed, or its name could mean another variable here
        self._insert(arg.extent.start.offset, f"((void)__cachefit_untrack({name}), ",
                     closing=False, depth=depth + 1)
        self._insert(arg.extent.end.offset, ")", closing=True, depth=depth + 1)

    def _derived_from(self, e: ci.Cursor, fn: ci.Cursor, level: int) -> ci.Cursor | None:
        """The pointer parameter of `fn` that `e` is, up to casts and `+`/`-` of an
        integer, or a local variable every value of which is so derived from it."""
        c = self._strip(e)
        if c.kind == CK.DECL_REF_EXPR:
            d = c.referenced
            if d is None:
                return None
            if d.kind == CK.PARM_DECL and d.semantic_parent == fn and \
                    d.type.get_canonical().kind == TK.POINTER:
                return d
            if d.kind == CK.VAR_DECL and level == 0 and d.semantic_parent == fn and \
                    d.storage_class != ci.StorageClass.STATIC:
                values = self._assigned_values(d, fn)
                init = [k for k in d.get_children() if k.kind.is_expression()]
                if values is None or not init and not values:
                    return None
                found = {self._derived_from(v, fn, level + 1) for v in [*init, *values]}
                return found.pop() if len(found) == 1 else None
            return None
        if c.kind == CK.BINARY_OPERATOR and self._binary_op(c) in ("+", "-"):
            kids = children(c)
            ptrs = [k for k in kids if k.type.get_canonical().kind == TK.POINTER]
            if len(ptrs) == 1 and kids[0] == ptrs[0]:
                return self._derived_from(ptrs[0], fn, level)
        return None

    def _assigned_values(self, decl: ci.Cursor, fn: ci.Cursor) -> list[ci.Cursor] | None:
        """The right-hand sides of every `v = E` in `fn`; None when `v` is also changed
        otherwise (`+=`, `++`, `--`) or its address is taken."""

        def is_v(e: ci.Cursor) -> bool:
            e = self._strip(e)
            return e.kind == CK.DECL_REF_EXPR and e.referenced == decl

        values: list[ci.Cursor] = []
        for d in fn.walk_preorder():
            kids = list(d.get_children())
            if d.kind == CK.BINARY_OPERATOR and len(kids) == 2 and is_v(kids[0]):
                if self._binary_op(d) == "=":
                    values.append(kids[1])
            elif d.kind == CK.COMPOUND_ASSIGNMENT_OPERATOR and kids and is_v(kids[0]):
                return None
            elif d.kind == CK.UNARY_OPERATOR and kids and is_v(kids[0]):
                toks = [t.spelling for t in self._tokens(d)]
                if "&" in toks or "++" in toks or "--" in toks:
                    return None
        return values

    def _new(self, c: ci.Cursor, depth: int) -> None:
        if self.lang != "c++":
            return
        t = c.type
        if t.kind != TK.POINTER:
            return
        xtype = t.get_pointee()
        kids = list(c.get_children())
        toks = self._tokens(c)
        open_brackets = {tok.extent.end.offset for tok in toks if tok.spelling == "["}
        size_expr = None
        for k in kids:
            if k.kind.is_expression() and any(
                    self.text[o:k.extent.start.offset].strip() == b""
                    for o in open_brackets if o <= k.extent.start.offset):
                size_expr = k
                break
        if size_expr is not None and not self._pure(size_expr):
            self.report.warnings.append(
                f"{self.lines.location(c.extent.start.offset)}: array size of {self._src(c)[:60]} "
                "has side effects; the array is not registered")
            return
        site = self._site(xtype, size_expr is None, constructed=True)
        if site is None:
            return
        size = xtype.get_canonical().get_size()
        total = f"({self._src(size_expr)}) * {size}ul" if size_expr is not None else f"{size}ul"
        self._insert(c.extent.start.offset, "__cachefit_track_t(", closing=False, depth=depth)
        self._insert(c.extent.end.offset, f", {total}, &__cachefit_site_{site})", closing=True,
                     depth=depth)
        self.report.allocation_sites += 1
        self._note(c, "new", xtype, "new")

    def _delete(self, c: ci.Cursor, depth: int) -> None:
        if self.lang != "c++":
            return
        kids = [k for k in c.get_children() if k.kind.is_expression()]
        if not kids:
            return
        operand = kids[-1]
        t = operand.type.get_canonical()
        if t.kind != TK.POINTER or not self.occurrences(t.get_pointee()):
            return
        self._insert(operand.extent.start.offset, "__cachefit_untrack_t(", closing=False,
                     depth=depth + 1)
        self._insert(operand.extent.end.offset, ")", closing=True, depth=depth + 1)
        self.report.frees += 1

    # ------------------------------------------------------------ output

    def prologue(self) -> str:
        decls = [
            "struct __cachefit_occ { unsigned long off, count, elem, stride; const char *type; };",
            "struct __cachefit_site { unsigned long xsize, single, flags, nocc; "
            "const struct __cachefit_occ *occ; const char *const *defs; };",
        ]
        funcs = [
            "void *__cachefit_malloc(unsigned long, const struct __cachefit_site *);",
            "void *__cachefit_calloc(unsigned long, unsigned long, "
            "const struct __cachefit_site *);",
            "void *__cachefit_realloc(void *, unsigned long, const struct __cachefit_site *);",
            "void *__cachefit_aligned_alloc(unsigned long, unsigned long, "
            "const struct __cachefit_site *);",
            "void __cachefit_free(void *);",
            "void *__cachefit_track(const void *, unsigned long, const struct __cachefit_site *);",
            "void *__cachefit_untrack(const void *);",
            "void __cachefit_ctor(const void *, const struct __cachefit_site *);",
            "void __cachefit_dtor(const void *, const char *);",
            "int __cachefit_enter(int, void *);",
            "void *__cachefit_memcpy(void *, const void *, unsigned long);",
            "void *__cachefit_memmove(void *, const void *, unsigned long);",
            "void *__cachefit_memset(void *, int, unsigned long);",
            "void __cachefit_leave(int *);",
            NOTE_DECL,
        ]
        out = list(decls)
        if self.lang == "c++":
            out.append('extern "C" {')
            out.extend(funcs)
            out.append("}")
            out.extend(CXX_HELPERS)
            out.append("template <class P> static inline P __cachefit_track_t(P p, "
                       "unsigned long n, const struct __cachefit_site *s) "
                       "{ __cachefit_track(p, n, s); return p; }")
            out.append("template <class P> static inline P __cachefit_untrack_t(P p) "
                       "{ __cachefit_untrack(p); return p; }")
            out.append("struct __cachefit_dtor_guard { const void *p; const char *t; "
                       "~__cachefit_dtor_guard() { __cachefit_dtor(p, t); } };")
        else:
            out.extend(funcs)
        for i, site in enumerate(self.sites):
            occ = ", ".join(f'{{{o.offset}ul, {o.count}ul, {o.elem}ul, {o.stride}ul, '
                            f'"{o.type_name}"}}' for o in site.occurrences)
            out.append(f"static const struct __cachefit_occ __cachefit_occ_{i}[] = {{{occ}}};")
            # the name each occurrence's objects are registered under, when one is a
            # record's definition (issue 27, flag 8: `dict@FP`)
            defs = [self.runtime_name(o.type_name) for o in site.occurrences]
            named = defs != [o.type_name for o in site.occurrences]
            if named:
                out.append(f"static const char *const __cachefit_def_{i}[] = "
                           f"{{{', '.join(f'{chr(34)}{d}{chr(34)}' for d in defs)}}};")
            flags = int(site.has_dtor) | 2 * int(site.heap_only) | 4 * int(site.carve) | \
                8 * int(named) | 16 * int(site.constructed)
            out.append(f"static const struct __cachefit_site __cachefit_site_{i} = "
                       f"{{{site.xsize}ul, {int(site.single)}ul, {flags}ul, "
                       f"{len(site.occurrences)}ul, __cachefit_occ_{i}"
                       f", {f'__cachefit_def_{i}' if named else '0'}}};")
        if self.report.site_notes:
            out.append(section_asm(self.report.site_notes))
        return "\n".join(out) + "\n"

    def edited_text(self) -> bytes:
        if not self.report.edited:
            return self.text
        edits = sorted(self.edits, key=lambda e: (
            e.start, 0 if e.closing else 1, -e.depth if e.closing else e.depth))
        pieces: list[bytes] = [self.prologue().encode()]
        pos = 0
        for e in edits:
            if e.start < pos:
                raise ParseError("overlapping edits in a preprocessed unit",
                                 "report this as a cachefit bug",
                                 self.lines.location(e.start))
            pieces.append(self.text[pos:e.start])
            pieces.append(e.text.encode())
            pos = e.end
        pieces.append(self.text[pos:])
        return b"".join(pieces)


def _data_size(cls: ci.Cursor) -> int | None:
    """Where the data of a C++ class with a constructor ends when that is before its
    sizeof: the end of its last field. Such a class is no POD, so a class derived from it
    may place its own members in the tail padding (Itanium C++ ABI), and a base class's
    object its constructor registers must not hold them (issue 27: an access counts for
    every object holding it). None: sizeof (no field, a virtual base laid out after the
    fields, no tail padding)."""
    size = cls.type.get_size()
    end = 0
    for k in children(cls):
        if k.kind == CK.CXX_BASE_SPECIFIER and ci.conf.lib.clang_isVirtualBase(k):
            return None
        if k.kind == CK.FIELD_DECL:
            bits = k.get_field_offsetof()
            width = k.get_bitfield_width() if k.is_bitfield() else k.type.get_size() * 8
            if bits < 0 or width < 0:
                return None
            end = max(end, (bits + width + 7) // 8)
    return end if 0 < end < size else None


def _fingerprint(record: ci.Cursor) -> str:
    """The layout fingerprint of a record definition (cachefit.model.record_fingerprint): its
    size and its named fields with their byte offsets (none for a bit-field)."""
    members: list[tuple[str, int | None]] = []
    for k in children(record):
        if k.kind != CK.FIELD_DECL or not k.spelling:
            continue
        bits = k.get_field_offsetof()
        members.append((k.spelling, None if k.is_bitfield() or bits < 0 else bits // 8))
    return fingerprint(max(record.type.get_size(), 0), members)


def _parse(path: str, lang: Lang, flags: Sequence[str]) -> ci.TranslationUnit:
    configure_libclang()
    args = ["-x", "c++-cpp-output" if lang == "c++" else "cpp-output", "-ferror-limit=0",
            "-Wno-everything", *flags]
    try:
        return ci.Index.create().parse(path, args=args)
    except ci.TranslationUnitLoadError as exc:
        raise ParseError(f"libclang could not load {path}",
                         "check the compiler arguments") from exc


def _errors_in_user_code(tu: ci.TranslationUnit, lines: LineMap) -> Iterator[str]:
    for d in tu.diagnostics:
        if d.severity < ci.Diagnostic.Error:
            continue
        loc = d.location
        offset = loc.offset if loc.file is not None else -1
        if offset >= 0 and lines.is_system(offset):
            continue
        where = lines.location(offset) if offset >= 0 else Location("<unit>")
        yield f"{where}: error: {d.spelling}"


def instrument_preprocessed(text: bytes, lang: Lang, trace: TraceConfig,
                            compiler_args: Sequence[str] = (), *,
                            source: str = "<unit>",
                            struct_copies: bool = False,
                            by_value_copies: bool = False,
                            touch_filter: bool = False) -> tuple[bytes, UnitReport]:
    """Analyse preprocessed `text` and return the edited text and what was done;
    `struct_copies` (the clang backend) also rewrites struct assignments it cannot see,
    `by_value_copies` (both backends) initialisations, by-value arguments and returns;
    `touch_filter` also decides which functions can touch a traced object
    (UnitReport.functions, cachefit.trace.touch_filter). The edits are the same with or
    without it: memcpy and friends are redirected in every function, as with
    `instrument = "all"`."""
    with scratch_directory("cachefit-unit-") as tmp:
        path = str(Path(tmp) / ("unit.ii" if lang == "c++" else "unit.i"))
        Path(path).write_bytes(text)
        tu = _parse(path, lang, libclang_flags(compiler_args))
        inst = UnitInstrumenter(text, tu, lang, trace, source, struct_copies=struct_copies,
                                by_value_copies=by_value_copies or struct_copies,
                                touch_filter=touch_filter)
        errors = list(_errors_in_user_code(tu, inst.lines))
        if errors:
            raise ParseError(f"libclang cannot analyse {source} for the profile build",
                             "the unit must compile with clang; with gcc as the real compiler "
                             "use CACHEFIT_CC=clang-19 for units libclang rejects",
                             Location(source), errors[:5])
        inst.run()
        return inst.edited_text(), inst.report
