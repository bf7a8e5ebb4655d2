"""Bytes of the record's memory used as raw bytes through another pointer: they stay put.

sqlite's page cache zeroes the first 8 bytes of every page's extra space,
`memset(pPgHdr->pExtra, 0, 8)`, and the b-tree later takes that space as its `MemPage`,
`(MemPage *)sqlite3PagerGetExtra(pDbPage)`, relying on `isInit` being among those bytes. No
expression there has the type `MemPage *`, so the typed detectors (memory_uses,
pointer_casts) see nothing. This module follows untyped pointers instead: an *access*, a
constant byte range [a, b) at the start of what a pointer that is not a pointer to the record
points to (`memset`/`memcpy`-like calls with a constant length, `((char *)p)[k]`, `*(u32 *)p`),
meets a *conversion*, where the same memory becomes the record or the record becomes
untyped (an explicit or implicit cast between a pointer to the record and a pointer that is
not to another record, except as the argument of a memory, I/O or free function). When both
may point to the same memory, the members that cover [a, b) are pinned (a range covering
the whole record, or lying after it, needs nothing; nor do members other constraints
already keep where they are).

Which pointers may point to the same memory is a small flow analysis over the whole code
base. Each unit's scan (code_scan) collects plain facts per function (`FlowCollector`): what
local variables, fields and globals are assigned, what functions return, their calls with
the arguments, the accesses and the conversions; each pointer expression is described as a
local variable, a parameter, a `void *` field, a `void *` global or a call's result.
`untyped_constraints` joins the facts of every unit. A pointer's *objects* are the places
it may come from: a local's are what it is assigned; a field is one object for all the
objects that have it (field-based), plus what the same function stores into it; a call's
result is its own object plus what the callee returns, renamed for that call (an
allocation inside `xmalloc` is a different object for each caller, so two callers' buffers
do not meet). Accesses and conversions inside a callee on its parameters or on what it
returns are carried into each caller, renamed the same way (sqlite's
`sqlite3PagerGetExtra` returns the field; a helper that zeroes its argument's first bytes
acts at each call). Left out for precision: `void *` fields converted to two or more record
types (a generic container's), `char *` and typed-pointer fields, accesses through plain
`char *` text, and what a pointer moved by arithmetic passes on, returns or is assigned to.

Not followed (documented in docs/reorder.md "Limits"): calls through function pointers,
pointer arithmetic (`p + 8`, `&buf[1]`), pointers stored in integers, and memory reached
through a pointer to a pointer. It reads cursors and plain facts only; it neither parses nor
edits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.frontend.clang_util import (
    BINARY_ASSIGN,
    CAST_KINDS,
    CK,
    FUNCTION_KINDS,
    UNARY_DEREF,
    UNARY_POST_DEC,
    UNARY_POST_INC,
    UNARY_PRE_DEC,
    UNARY_PRE_INC,
    binary_operator,
    children,
    evaluate_int,
    is_byte_type,
    kind_of,
    location,
    pointee,
    strip,
    unary_operator,
)
from cachefit.model import Record
from cachefit.reorder.constraints import OrderConstraint
from cachefit.reorder.memory_uses import IO_FUNCS, MEMORY_FUNCS, callee_name

Desc = tuple[str, ...]
"""A pointer expression: ("var", usr), ("param", index), ("field", usr), ("global", usr) or
("call", site)."""
Obj = tuple[str, ...]
"""Memory a pointer may point to: ("F", field usr), ("G", global usr), ("V", name of a local
variable), ("C", name of a call's result), ("P", function, index) for a parameter."""

_NOT_CONVERSIONS = {*MEMORY_FUNCS, *IO_FUNCS, "free", "realloc"}
_STEPS = (UNARY_POST_INC, UNARY_POST_DEC, UNARY_PRE_INC, UNARY_PRE_DEC)
MAX_DEPTH = 4
"""Calls deep that objects and accesses are followed into callees and renamed."""
_SCALARS = {ci.TypeKind.BOOL, ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.CHAR16,
            ci.TypeKind.CHAR32, ci.TypeKind.USHORT, ci.TypeKind.UINT, ci.TypeKind.ULONG,
            ci.TypeKind.ULONGLONG, ci.TypeKind.UINT128, ci.TypeKind.CHAR_S, ci.TypeKind.SCHAR,
            ci.TypeKind.WCHAR, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
            ci.TypeKind.LONGLONG, ci.TypeKind.INT128, ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE,
            ci.TypeKind.LONGDOUBLE, ci.TypeKind.POINTER, ci.TypeKind.ENUM}


@dataclass(frozen=True)
class Access:
    """Bytes [start, end) of what `target` points to, used as raw bytes at `location`."""

    target: Desc
    start: int
    end: int
    what: str
    location: Location | None


@dataclass(frozen=True)
class CallFact:
    callee: str | None
    args: tuple[Desc | None, ...]


@dataclass
class FunctionFacts:
    """One function's facts, in its own names (plain data, sent between processes)."""

    name: str
    flows: dict[str, list[Desc]] = field(default_factory=dict)     # local var -> values
    stores: dict[str, list[Desc]] = field(default_factory=dict)    # field/global -> values
    # local variables holding a pointer converted from another pointer type (a cast, or
    # from `void *`): accesses through them read memory as something else than it was
    reinterpreting: set[str] = field(default_factory=set)
    returns: list[Desc] = field(default_factory=list)
    calls: dict[str, CallFact] = field(default_factory=dict)       # site -> call
    accesses: list[Access] = field(default_factory=list)
    conversions: list[tuple[Desc, Location | None]] = field(default_factory=list)
    # variables and parameters moved by pointer arithmetic (`p++`, `p += n`, `p = q + n`):
    # what they point to is not the start of anything known, so accesses through them
    # are not followed
    moving: set[Desc] = field(default_factory=set)

    def merged(self, other: FunctionFacts) -> FunctionFacts:
        """These facts and those of another definition with the same USR, repeats once (a
        new object: the units' results stay as they were)."""
        def join(a: list[Any], b: list[Any]) -> list[Any]:
            return a + [v for v in b if v not in a]

        return FunctionFacts(
            self.name,
            flows={k: join(self.flows.get(k, []), other.flows.get(k, []))
                   for k in {**self.flows, **other.flows}},
            stores={k: join(self.stores.get(k, []), other.stores.get(k, []))
                    for k in {**self.stores, **other.stores}},
            reinterpreting=self.reinterpreting | other.reinterpreting,
            returns=join(self.returns, other.returns), calls={**other.calls, **self.calls},
            accesses=join(self.accesses, other.accesses),
            conversions=join(self.conversions, other.conversions),
            moving=self.moving | other.moving)


@dataclass
class FlowFacts:
    """A unit's (or, merged, the code base's) facts."""

    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    # `void *` field -> the record types (USRs) its value is converted to where it is read
    # (`ls = cycle->listening.elts`): a field converted to two or more is a generic
    # container's, and is not followed
    field_types: dict[str, set[str]] = field(default_factory=dict)

    def merge(self, other: FlowFacts) -> None:
        """Add another unit's facts. A function with the same USR in several units (a
        header's inline function, or `main` of several programs) has all their facts."""
        for usr, facts in other.functions.items():
            mine = self.functions.get(usr)
            if mine is None:
                self.functions[usr] = facts
            elif mine is not facts:
                self.functions[usr] = mine.merged(facts)
        for usr, types in other.field_types.items():
            self.field_types[usr] = self.field_types.get(usr, set()) | types


def _untyped(t: ci.Type) -> bool:
    """A `void *`, or an array of bytes: storage whose type the code does not say. Only
    such fields and globals are followed (all objects' field is one place, so what the
    field holds in one object is taken to be what it holds in all): a field holding
    `struct T2 *` holds T2 objects, and following it would make all the memory an
    allocator's free list threads through (sqlite's `LookasideSlot *pFree`) one object;
    a `char *` field holds text (sqlite's `Mem.z` is every value's string or blob, and
    the memory of an aggregate's context)."""
    c = t.get_canonical()
    if c.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        return is_byte_type(c.element_type)
    inner = pointee(c)
    return inner is not None and inner.kind == ci.TypeKind.VOID


def _chars(t: ci.Type) -> bool:
    """char, signed char or unsigned char (not void)."""
    return is_byte_type(t) and t.get_canonical().kind != ci.TypeKind.VOID


def _site(c: ci.Cursor) -> str:
    ext = c.extent.start
    return f"{ext.file.name if ext.file else ''}:{ext.offset}"


def _function_key(fn: ci.Cursor) -> str:
    return fn.get_usr() or f"@{_site(fn)}"


class FlowCollector:
    """Collects a unit's facts while code_scan walks it (`visit` is called on every
    cursor, with its ancestors)."""

    def __init__(self, is_record: Callable[[ci.Type], bool], record: Record) -> None:
        self.is_record = is_record
        self.size = record.size
        self.facts = FlowFacts()
        self._handlers: dict[CK | None, Callable[[ci.Cursor, Sequence[ci.Cursor]], None]] = {
            CK.CALL_EXPR: self._call, CK.VAR_DECL: self._var,
            CK.BINARY_OPERATOR: self._assign, CK.RETURN_STMT: self._return,
            CK.ARRAY_SUBSCRIPT_EXPR: self._subscript, CK.UNARY_OPERATOR: self._unary,
            CK.COMPOUND_ASSIGNMENT_OPERATOR: self._compound,
            **{kind: self._conversion for kind in CAST_KINDS}}

    def _function(self, ancestors: Sequence[ci.Cursor]
                  ) -> tuple[ci.Cursor, FunctionFacts] | None:
        """The function the cursor whose ancestors these are is in, and its facts."""
        for a in reversed(ancestors):
            if kind_of(a) in FUNCTION_KINDS:
                key = _function_key(a)
                facts = self.facts.functions.get(key)
                if facts is None:
                    facts = self.facts.functions[key] = FunctionFacts(a.spelling)
                return a, facts
        return None

    def describe(self, expr: ci.Cursor, fn: ci.Cursor) -> Desc | None:
        """What a pointer expression names, looking through parentheses and casts."""
        e = strip(expr, casts=True)
        k = kind_of(e)
        if k == CK.DECL_REF_EXPR:
            ref = e.referenced
            kr = kind_of(ref) if ref is not None else None
            if kr == CK.VAR_DECL:
                parent = ref.semantic_parent
                if parent is not None and kind_of(parent) in FUNCTION_KINDS:
                    return ("var", ref.get_usr() or _site(ref))
                return ("global", ref.get_usr() or _site(ref)) if _untyped(ref.type) \
                    else None
            if kr == CK.PARM_DECL:
                params = [c for c in children(fn) if kind_of(c) == CK.PARM_DECL]
                for i, p in enumerate(params):
                    if p == ref:
                        return ("param", str(i))
            return None
        if k == CK.MEMBER_REF_EXPR:
            ref = e.referenced
            if ref is not None and kind_of(ref) == CK.FIELD_DECL and _untyped(ref.type):
                return ("field", ref.get_usr() or _site(ref))
            return None
        if k == CK.CALL_EXPR:
            return ("call", _site(e))
        return None

    def visit(self, c: ci.Cursor, k: CK | None, ancestors: Sequence[ci.Cursor]) -> None:
        """Collect what cursor `c` (of kind `k`) says."""
        handler = self._handlers.get(k)
        if handler is not None:
            handler(c, ancestors)

    def _compound(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        self._moved(children(c)[:1], ancestors)

    def _call(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        where = self._function(ancestors)
        if where is None:
            return
        fn, facts = where
        ref = c.referenced
        name = callee_name(c)
        args = list(c.get_arguments())
        pointers = [pointee(a.type) is not None for a in args]
        if ref is not None and kind_of(ref) in FUNCTION_KINDS and (
                name in MEMORY_FUNCS or not ref.location.is_in_system_header):
            # a library function's body is never seen: its call's result is just itself
            descs = tuple(self.describe(a, fn) if ptr else None
                          for a, ptr in zip(args, pointers, strict=True))
            if any(descs) or pointee(c.type) is not None:
                facts.calls[_site(c)] = CallFact(ref.get_usr(), descs)
        else:
            descs = (None,) * len(args)
        if name not in _NOT_CONVERSIONS:
            for a, ptr in zip(args, pointers, strict=True):
                if ptr:
                    self._implicit(a, [*ancestors, c])
        for p, n in MEMORY_FUNCS.get(name, []):
            if max(p, n) >= len(args):
                continue
            target = pointee(strip(args[p]).type)
            length = evaluate_int(args[n])
            if target is None or not is_byte_type(target) or descs[p] is None or \
                    length is None or not self._converted(args[p], facts, fn):
                continue    # a typed pointer's object is copied as its type says
            self._access(facts, descs[p], 0, length, name, c)

    def _converted(self, expr: ci.Cursor, facts: FunctionFacts, fn: ci.Cursor) -> bool:
        """Whether the pointer `expr` reads memory as another type than the one it came
        with: it is written with a cast (`((u8 *)sqlite3PagerGetExtra(p))[0]`), it is a
        `void *` (memset's argument before its own conversion), or it is a variable that
        was given such a value. A `char *` that was always one (a string field, `z[0]`) is
        not: counting it would make every string of a field-based object a use of the
        record's bytes."""
        cur = expr
        while True:
            k = kind_of(cur)
            kids = children(cur)
            if k in CAST_KINDS and kids:
                to, frm = pointee(cur.type), pointee(kids[-1].type)
                if to is None or frm is None or not _chars(to) or not _chars(frm):
                    return True
                cur = kids[-1]      # (const char *) of an unsigned char *: still text
                continue
            if k == CK.PAREN_EXPR and kids or \
                    k == CK.UNEXPOSED_EXPR and len(kids) == 1 and \
                    kind_of(kids[0]) != CK.TYPE_REF:
                cur = kids[-1]
                continue
            break
        t = pointee(cur.type)
        if t is not None and t.kind == ci.TypeKind.VOID:
            return True
        d = self.describe(cur, fn)
        return d is not None and d[0] == "var" and d[1] in facts.reinterpreting

    def _access(self, facts: FunctionFacts, target: Desc, start: int, end: int, what: str,
                where: ci.Cursor) -> None:
        if start < 0 or end <= start or start >= self.size or (start == 0 and
                                                               end >= self.size):
            return      # outside the record, or all of it: no order changes what it means
        facts.accesses.append(Access(target, start, end, what, location(where)))

    def _scalar_access(self, pointer: ci.Cursor, index: int, where: ci.Cursor,
                       ancestors: Sequence[ci.Cursor]) -> None:
        t = pointee(strip(pointer).type)
        if t is None or t.kind not in _SCALARS:
            return
        size = t.get_size()
        if size <= 0:
            return
        where_fn = self._function(ancestors)
        if where_fn is None:
            return
        fn, facts = where_fn
        target = self.describe(pointer, fn)
        if target is not None and self._converted(pointer, facts, fn):
            self._access(facts, target, index * size, (index + 1) * size,
                         f"a {t.spelling} access", where)

    def _subscript(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        kids = children(c)
        if len(kids) != 2:
            return
        index = evaluate_int(kids[1])
        if index is not None:
            self._scalar_access(kids[0], index, c, ancestors)

    def _unary(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        """`*(u32 *)p` is an access; `p++`, `--p` move p."""
        op = unary_operator(c)
        if op not in _STEPS and op != UNARY_DEREF:
            return
        kids = children(c)
        if len(kids) != 1 or pointee(kids[0].type) is None:
            return
        if op == UNARY_DEREF:
            self._scalar_access(kids[0], 0, c, ancestors)
        else:
            self._moved(kids, ancestors)

    def _moved(self, operands: Sequence[ci.Cursor], ancestors: Sequence[ci.Cursor]) -> None:
        if not operands or pointee(operands[0].type) is None:
            return
        where = self._function(ancestors)
        if where is None:
            return
        fn, facts = where
        target = self.describe(operands[0], fn)
        if target is not None and target[0] in ("var", "param"):
            facts.moving.add(target)

    def _var(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        if pointee(c.type) is None:
            return
        init = [k for k in children(c) if (kind_of(k) or CK.TYPE_REF).is_expression()]
        if not init:
            return
        where = self._function(ancestors)
        if where is None:
            return      # a global's initialiser: not followed
        fn, facts = where
        self._implicit(init[-1], ancestors)
        value = self.describe(init[-1], fn)
        name = c.get_usr() or _site(c)
        if value is not None:
            facts.flows.setdefault(name, []).append(value)
        if self._converted(init[-1], facts, fn):
            facts.reinterpreting.add(name)

    def _assign(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        if binary_operator(c) != BINARY_ASSIGN:
            return
        kids = children(c)
        if len(kids) != 2 or pointee(kids[0].type) is None:
            return
        where = self._function(ancestors)
        if where is None:
            return
        fn, facts = where
        self._implicit(kids[1], ancestors)
        lhs = self.describe(kids[0], fn)
        value = self.describe(kids[1], fn)
        if lhs is not None and lhs[0] in ("var", "param") and \
                kind_of(strip(kids[1], casts=True)) == CK.BINARY_OPERATOR:
            facts.moving.add(lhs)
        if lhs is None or value is None:
            return
        if lhs[0] == "var":
            facts.flows.setdefault(lhs[1], []).append(value)
            if self._converted(kids[1], facts, fn):
                facts.reinterpreting.add(lhs[1])
        elif lhs[0] in ("field", "global"):
            facts.stores.setdefault(f"{lhs[0]}:{lhs[1]}", []).append(value)

    def _return(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        kids = children(c)
        if not kids or pointee(kids[0].type) is None:
            return
        where = self._function(ancestors)
        if where is None:
            return
        fn, facts = where
        self._implicit(kids[0], ancestors)
        value = self.describe(kids[0], fn)
        if value is not None:
            facts.returns.append(value)

    def _conversion(self, c: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        """An explicit cast between a pointer to the record and another pointer."""
        to = pointee(c.type)
        kids = children(c)
        if to is None or not kids:
            return
        user = next((a for a in reversed(ancestors) if kind_of(a) not in
                     (CK.PAREN_EXPR, CK.UNEXPOSED_EXPR) and kind_of(a) not in CAST_KINDS),
                    None)
        if user is not None and kind_of(user) == CK.CALL_EXPR and \
                callee_name(user) in _NOT_CONVERSIONS:
            return
        self._converts(to, kids[-1], ancestors)

    def _implicit(self, value: ci.Cursor, ancestors: Sequence[ci.Cursor]) -> None:
        """An implicit conversion between a pointer to the record and another pointer
        (C's `void *` to and from any pointer), where a value is used: initialised,
        assigned, passed or returned (the only places C converts so)."""
        if kind_of(value) != CK.UNEXPOSED_EXPR:
            return
        to = pointee(value.type)
        if to is None or to.kind not in (ci.TypeKind.RECORD, ci.TypeKind.VOID):
            return      # C converts implicitly only to and from `void *`
        kids = children(value)
        if len(kids) == 1:
            self._converts(to, kids[0], ancestors)

    def _converts(self, to: ci.Type, operand: ci.Cursor,
                  ancestors: Sequence[ci.Cursor]) -> None:
        frm = pointee(operand.type)
        if frm is None or to.kind != ci.TypeKind.RECORD and frm.kind != ci.TypeKind.RECORD:
            return
        probe = to.kind == ci.TypeKind.RECORD and frm.kind == ci.TypeKind.VOID
        # the other side untyped (not another record: `(uv_timer_t *)handle` reads a
        # handle as a timer, the typed rules' business, pointer_casts)
        mine = self.is_record(to) and frm.kind != ci.TypeKind.RECORD or \
            self.is_record(frm) and to.kind != ci.TypeKind.RECORD
        if not (probe or mine):
            return
        where = self._function(ancestors)
        if where is None:
            return
        fn, facts = where
        value = self.describe(operand, fn)
        if value is None:
            return
        if probe and value[0] == "field":
            usr = to.get_canonical().get_declaration().get_usr()
            if usr:
                self.facts.field_types.setdefault(value[1], set()).add(usr)
        if mine:
            facts.conversions.append((value, location(operand)))


@dataclass
class _Lifted:
    """An access or conversion as seen from one function: its objects there."""

    objects: frozenset[Obj]
    start: int
    end: int
    what: str
    location: Location | None


class _Flow:
    """The code base's facts, and the objects of pointers computed from them (memoised)."""

    def __init__(self, facts: FlowFacts) -> None:
        self.facts = facts
        self.generic = {usr for usr, types in facts.field_types.items() if len(types) > 1}
        self._memo: dict[tuple[str, Desc, int], frozenset[Obj]] = {}
        self._busy: set[object] = set()
        self._rets: dict[tuple[str, int], frozenset[Obj]] = {}
        self._lifted: dict[tuple[str, bool, int], list[_Lifted]] = {}

    def objects(self, desc: Desc, fn: str, depth: int = MAX_DEPTH,
                moved: bool = True) -> frozenset[Obj]:
        """What `desc` in function `fn` may point to. `moved` False: nothing for a
        variable or parameter that pointer arithmetic moves (its value, passed on, returned
        or assigned, is not known to be the start of anything)."""
        if not moved:
            facts = self.facts.functions.get(fn)
            if facts is not None and desc in facts.moving:
                return frozenset()
        key = (fn, desc, depth)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return frozenset()
        self._busy.add(key)
        out: set[Obj] = set()
        kind = desc[0]
        facts = self.facts.functions.get(fn)
        if kind == "param":
            out.add(("P", fn, desc[1]))
        elif kind == "var":
            out.add(("V", desc[1]))
            for value in facts.flows.get(desc[1], []) if facts else []:
                out |= self.objects(value, fn, depth, moved=False)
        elif kind in ("field", "global"):
            if kind == "global" or desc[1] not in self.generic:
                out.add(("F" if kind == "field" else "G", desc[1]))
            for value in facts.stores.get(f"{kind}:{desc[1]}", []) if facts else []:
                out |= self.objects(value, fn, depth, moved=False)
        elif kind == "call":
            site = desc[1]
            out.add(("C", site))
            call = facts.calls.get(site) if facts else None
            if call is not None and call.callee in self.facts.functions and depth > 0:
                out |= self._rename(self.returned(call.callee, depth - 1), call, site, fn,
                                    depth)
        self._busy.discard(key)
        result = frozenset(out)
        self._memo[key] = result
        return result

    def returned(self, fn: str, depth: int) -> frozenset[Obj]:
        key = (fn, depth)
        if key in self._rets:
            return self._rets[key]
        if key in self._busy:
            return frozenset()
        self._busy.add(key)
        out: set[Obj] = set()
        for value in self.facts.functions[fn].returns:
            out |= self.objects(value, fn, depth, moved=False)
        self._busy.discard(key)
        self._rets[key] = frozenset(out)
        return self._rets[key]

    def _rename(self, objs: frozenset[Obj], call: CallFact, site: str, fn: str,
                depth: int) -> set[Obj]:
        """A callee's objects as the caller `fn` sees them after the call at `site`: its
        parameters are the arguments, its locals renamed for this call, fields and globals
        the same."""
        out: set[Obj] = set()
        for o in objs:
            if o[0] == "P":
                if o[1] != call.callee:
                    continue
                i = int(o[2])
                arg = call.args[i] if i < len(call.args) else None
                if arg is not None:
                    out |= self.objects(arg, fn, depth - 1, moved=False)
            elif o[0] in ("V", "C"):
                out.add((o[0], f"{site}>{o[1]}"))
            else:
                out.add(o)
        return out

    def lifted(self, fn: str, conversions: bool, depth: int = MAX_DEPTH) -> list[_Lifted]:
        """The function's own accesses (or conversions) and those of its callees that act
        on its parameters or on what the callee returns, in `fn`'s names."""
        key = (fn, conversions, depth)
        if key in self._lifted:
            return self._lifted[key]
        if key in self._busy:
            return []
        self._busy.add(key)
        facts = self.facts.functions[fn]
        out: list[_Lifted] = []
        if conversions:
            for desc, loc in facts.conversions:
                out.append(_Lifted(self.objects(desc, fn), 0, 0, "", loc))
        else:
            for a in facts.accesses:
                if a.target in facts.moving:
                    continue
                out.append(_Lifted(self.objects(a.target, fn), a.start, a.end, a.what,
                                   a.location))
        if depth > 0:
            for site, call in sorted(facts.calls.items()):
                if call.callee not in self.facts.functions or call.callee == fn:
                    continue
                theirs = self.lifted(call.callee, conversions, depth - 1)
                if not theirs:
                    continue
                returned = self.returned(call.callee, depth - 1)
                for item in theirs:
                    carried = frozenset(o for o in item.objects if
                                        (o[0] == "P" and o[1] == call.callee) or
                                        (o[0] in "VC" and o in returned))
                    if not carried:
                        continue
                    objs = frozenset(self._rename(carried, call, site, fn, depth))
                    if objs:
                        out.append(_Lifted(objs, item.start, item.end, item.what,
                                           item.location))
        self._busy.discard(key)
        self._lifted[key] = out
        return out


def untyped_constraints(facts: FlowFacts, record: Record,
                        known: Sequence[OrderConstraint] = ()) -> list[OrderConstraint]:
    """The pins the code base's untyped accesses to the record's memory need (module
    doc), one per set of members, in a deterministic order; none for members that `known`
    constraints already keep where they are (a `pin`, or `first` for a member at offset 0:
    expat's `*(void **)(parser)` is also a read through the first member's type)."""
    at_zero = {f.name for f in record.fields if f.offset == 0}
    kept = {n for c in known if c.kind == "pin" for n in c.fields} | \
        {c.fields[0] for c in known if c.kind == "first" and c.fields[:1] and
         c.fields[0] in at_zero}
    if not any(f.conversions for f in facts.functions.values()):
        return []
    flow = _Flow(facts)
    became: dict[Obj, Location | None] = {}
    for fn in sorted(facts.functions):
        for conv in flow.lifted(fn, True):
            for o in sorted(conv.objects):
                if o[0] != "P":
                    became.setdefault(o, conv.location)
    if not became:
        return []
    found: dict[tuple[str, ...], list[tuple[_Lifted, Location | None]]] = {}
    seen: set[tuple[int, int, str]] = set()
    for fn in sorted(facts.functions):
        for acc in flow.lifted(fn, False):
            hit = next((o for o in sorted(acc.objects) if o in became), None)
            key = (acc.start, acc.end, str(acc.location))
            if hit is None or key in seen:
                continue
            seen.add(key)
            covering = tuple(f.name for f in record.fields
                             if f.offset < acc.end and f.end > acc.start)
            if covering and not set(covering) <= kept:
                found.setdefault(covering, []).append((acc, became[hit]))
    out: list[OrderConstraint] = []
    for covering, uses in found.items():
        acc, conv = uses[0]
        more = len(uses) - 1
        also = f"; {more} more place{'s' if more > 1 else ''} like it" if more else ""
        out.append(OrderConstraint(
            "pin", covering,
            f"bytes {acc.start}..{acc.end - 1} of memory that is also a {record.name} "
            f"(converted at {conv}) are used as raw bytes here ({acc.what}){also}",
            acc.location))
    return out

