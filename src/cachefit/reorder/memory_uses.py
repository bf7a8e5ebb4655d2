"""Byte ranges of the record used by memory functions, I/O calls and offset arithmetic.

For `memset`/`memcpy`/`memmove`/`memcmp`/`bzero` calls, raw I/O calls (`fwrite`, `fread`,
`read`, `write`, `send`, `recv`, ..., `ioctl`) and free-standing differences of offsets
(`offsetof(T, b) - offsetof(T, a)`, `sizeof(T) - offsetof(T, a)`), this module works out
which byte range of the record is meant and turns it into order constraints: the members of
a range stay together and on the same side of its boundaries (`same_side` on the members
that bound it). Whole records copied between two records need nothing; a record read from
or written to a file, socket or device, or copied to or from a byte buffer as a whole, is a
`Refusal`. A range whose length is no form of the offsets (a count of elements) but that
starts at a member and runs past it, provably (the length's constant part exceeds the
member: jq's dtoa `Bcopy`, `memcpy(&x->sign, &y->sign, y->wds * sizeof(ULong) +
2 * sizeof(int))`) or because the member is a scalar, keeps that member and every member
after it at their offsets. It reads cursors only.
"""

from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

from cachefit.errors import Location
from cachefit.frontend.clang_util import CAST_KINDS, CK, children, kind_of, location, strip
from cachefit.reorder.constraints import OrderConstraint, Refusal
from cachefit.reorder.offset_forms import SIZE, Address, Form, OffsetEvaluator

# (pointer argument, length argument) pairs.
MEMORY_FUNCS: dict[str, list[tuple[int, int]]] = {
    "memset": [(0, 2)], "memcpy": [(0, 2), (1, 2)], "memmove": [(0, 2), (1, 2)],
    "memcmp": [(0, 2), (1, 2)], "bcmp": [(0, 2), (1, 2)], "bcopy": [(0, 2), (1, 2)],
    "bzero": [(0, 1)], "explicit_bzero": [(0, 1)], "mempcpy": [(0, 2), (1, 2)],
    "copy_to_user": [(0, 2), (1, 2)], "copy_from_user": [(0, 2), (1, 2)],
}
# Raw I/O: (pointer argument, length argument or None).
IO_FUNCS: dict[str, tuple[int, int | None]] = {
    "fwrite": (0, 1), "fread": (0, 1), "write": (1, 2), "read": (1, 2), "pwrite": (1, 2),
    "pread": (1, 2), "send": (1, 2), "recv": (1, 2), "sendto": (1, 2), "recvfrom": (1, 2),
    "ioctl": (2, None),
}


def callee_name(call: ci.Cursor) -> str:
    """`memset` for memset, std::memset, __builtin_memset and __builtin___memset_chk."""
    name = call.spelling or ""
    for prefix in ("__builtin___", "__builtin_", "__"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return name.removesuffix("_chk")


@dataclass(frozen=True)
class RangeMeaning:
    """What a byte range [start, end) of the record is."""

    kind: str                       # "whole", "member", "range", "outside", "unknown"
    constraints: tuple[OrderConstraint, ...] = ()


def fold_member_sizes(form: Form, sizes: dict[str, int]) -> Form:
    """`form` with each member size in it, end(m) - start(m) (`sizeof(p->m)`), replaced by
    its number of bytes: no order changes a member's size. redis copies its replication
    IDs with `memcpy(server.replid2, server.replid, sizeof(server.replid))`."""
    coef = dict(form.terms)
    const = form.const
    for (kind, name), k in form.terms:
        if kind != "end" or name not in sizes:
            continue
        start = coef.get(("start", name), 0)
        both = k if k * start < 0 and abs(start) >= abs(k) else 0
        if both:
            coef[("end", name)] -= both
            coef[("start", name)] += both
            const += both * sizes[name]
    return Form(tuple(sorted((s, c) for s, c in coef.items() if c)), const)


def range_meaning(start: Form, length: Form, reason: str, loc: Location | None,
                  offsets: dict[str, int], sizes: dict[str, int],
                  record_size: int, aligns: dict[str, int] | None = None) -> RangeMeaning:
    """Turn [start, start + length) into constraints: same_side on each bounding member.

    A range of constant bytes that ends at or before the record's first byte ("outside":
    Lua's `lua_getextraspace(L)`, `(char *)(L) - LUA_EXTRASPACE`, the header allocated
    right before each lua_State) is none of the record's bytes, whatever the order.
    Member sizes in the length count as numbers (`fold_member_sizes`).

    A constant number of bytes from member m was counted in the current layout: the members
    it covers stay together in order (`unit`) when that keeps the same bytes, i.e. it ends
    inside the last of them and the first has their largest alignment (`aligns`: where the
    group starts, the padding inside it is then what it is now). Otherwise (padding in the
    bytes after the last member, or a group that could start at another offset modulo its
    alignment and get other padding: 7 bytes from `char b` at 1 over `int c` at 4) the
    covered members keep their offsets (`pin`) and no member crosses either end of the
    range (`same_side` on both byte offsets)."""
    length = fold_member_sizes(length, sizes)
    end = start.plus(length)
    s, e = start.single(), end.single()
    if start.is_zero() and (e == SIZE or (not end.symbolic and end.const >= record_size)):
        return RangeMeaning("whole")
    if s is not None and e is not None and s[0] == "start" and e == ("end", s[1]):
        return RangeMeaning("member")
    if not length.symbolic:
        if length.const <= 0:
            return RangeMeaning("unknown")
        if not start.symbolic and start.const + length.const <= 0:
            return RangeMeaning("outside")      # bytes before the record (Lua's extra space)
        if start.is_zero():
            return RangeMeaning("range", (OrderConstraint("same_side", (), reason, loc,
                                                          length.const),))
        if s is None or s[0] != "start":
            return RangeMeaning("unknown")
        lo = offsets[s[1]]
        hi = lo + length.const
        covered = tuple(sorted((n for n in offsets
                                if offsets[n] < hi and offsets[n] + sizes[n] > lo),
                               key=lambda n: offsets[n]))
        inside = hi <= max(offsets[n] + sizes[n] for n in covered)
        if covered == (s[1],) and inside:
            return RangeMeaning("member")
        if inside and aligns is not None and all(n in aligns for n in covered) and \
                aligns[covered[0]] >= max(aligns[n] for n in covered):
            return RangeMeaning("range", (OrderConstraint("unit", covered, reason, loc),))
        sides = tuple(OrderConstraint("same_side", (), reason, loc, b) for b in (lo, hi) if b)
        return RangeMeaning("range", (OrderConstraint("pin", covered, reason, loc), *sides))
    out: list[OrderConstraint] = []
    if not start.is_zero():
        if s is None or s[0] not in ("start", "end"):
            return RangeMeaning("unknown")
        out.append(OrderConstraint("same_side", (), reason, loc, s[1]))
    if e is None or e[0] not in ("start", "end", "size"):
        return RangeMeaning("unknown")
    if e[0] != "size" and not (out and out[0].boundary == e[1]):
        out.append(OrderConstraint("same_side", (), reason, loc, e[1]))
    return RangeMeaning("range", tuple(out))


def length_lower_bound(ev: OffsetEvaluator, c: ci.Cursor) -> int:
    """The least value of a length that `OffsetEvaluator.int_form` cannot resolve, each
    unknown part counted as 0 (lengths are unsigned): sums and products of constants and
    unknowns, `y->wds * sizeof(ULong) + 2 * sizeof(int)` is at least 8. Anything else
    (a difference, a call) is at least 0."""
    form = ev.int_form(c)
    if form is not None:
        return 0 if form.symbolic else max(form.const, 0)
    k = kind_of(c)
    kids = children(c)
    if kids and (k == CK.PAREN_EXPR or (k == CK.UNEXPOSED_EXPR and len(kids) == 1) or
                 (k in CAST_KINDS and c.type.get_canonical().kind != ci.TypeKind.POINTER)):
        return length_lower_bound(ev, kids[-1])
    if k == CK.BINARY_OPERATOR and len(kids) == 2 and c.spelling in ("+", "*"):
        a, b = length_lower_bound(ev, kids[0]), length_lower_bound(ev, kids[1])
        return a + b if c.spelling == "+" else a * b
    return 0


AGGREGATE_KINDS = (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
                   ci.TypeKind.VARIABLEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY,
                   ci.TypeKind.RECORD, ci.TypeKind.VECTOR)


def addressed_member_is_scalar(arg: ci.Cursor) -> bool:
    """Whether a pointer argument is `&p->m` (through casts) with `m` of a scalar type: not
    an array (which decays without `&`), a struct or a union."""
    c = strip(arg, casts=True)
    if kind_of(c) != CK.UNARY_OPERATOR or not children(c):
        return False
    operand = strip(children(c)[-1])
    if kind_of(operand) != CK.MEMBER_REF_EXPR:
        return False
    return operand.type.get_canonical().kind not in AGGREGATE_KINDS


class MemoryUses:
    """Collects constraints and refusals from calls and offset arithmetic."""

    def __init__(self, ev: OffsetEvaluator, record_name: str, offsets: dict[str, int],
                 sizes: dict[str, int], record_size: int,
                 aligns: dict[str, int] | None = None) -> None:
        self.ev = ev
        self.aligns = aligns
        self.record_size = record_size
        self.name = record_name
        self.offsets = offsets
        self.sizes = sizes
        self.constraints: list[OrderConstraint] = []
        self.refusals: list[Refusal] = []
        self.seen_args: set[tuple[str, int]] = set()

    def _mark(self, c: ci.Cursor) -> None:
        stack = [c]
        while stack:
            cur = stack.pop()
            ext = cur.extent
            if ext.start.file is not None:
                self.seen_args.add((ext.start.file.name, ext.start.offset))
            stack.extend(children(cur))

    def call(self, call: ci.Cursor) -> None:
        name = callee_name(call)
        if name not in MEMORY_FUNCS and name not in IO_FUNCS:
            return
        args = list(call.get_arguments())
        loc = location(call)
        if name in IO_FUNCS:
            self._io(name, args, loc)
            return
        pairs = MEMORY_FUNCS[name]
        if any(max(p, n) >= len(args) for p, n in pairs):
            return
        addrs = [self.ev.address(args[p]) for p, _ in pairs]
        for (p, n), addr in zip(pairs, addrs, strict=True):
            if addr is None:
                continue
            length = self.ev.int_form(args[n])
            self._mark(args[n])
            if length is None:
                self._unresolved_length(name, addr, args[p], args[n], loc)
                continue
            others = [a for a in addrs if a is not addr]
            self._range(name, addr, length, others, loc, len(pairs) > 1)

    def _unresolved_length(self, func: str, addr: Address, pointer: ci.Cursor,
                           length: ci.Cursor, loc: Location | None) -> None:
        """A range from member m with a length that is no form of the offsets. Where it
        cannot stay inside m (its least length exceeds m's size, or m is a scalar) and m is
        not the last member (a flexible array or struct-hack tail is written past its end),
        it covers members after m that the code counted in its own terms: m and every member
        after it keep their offsets (`pin`), the members before m stay before it
        (`same_side`), so the bytes from m on are the same members in any order. Other
        unresolved lengths are the documented limit (docs/reorder.md, "Limits")."""
        s = addr.form.single()
        if s is None or s[0] != "start" or s[1] not in self.offsets:
            return
        member = s[1]
        order = sorted(self.offsets, key=lambda m: (self.offsets[m], m != member))
        tail = order[order.index(member):]
        if len(tail) < 2:
            return
        if not (length_lower_bound(self.ev, length) > self.sizes[member] or
                addressed_member_is_scalar(pointer)):
            return
        reason = (f"{func} of a byte range of {self.name} from {member} on, of a length "
                  f"cachefit cannot resolve to members (at least past {member})")
        self.constraints += [OrderConstraint("pin", tuple(tail), reason, loc),
                             OrderConstraint("same_side", (), reason, loc, member)]

    def _range(self, func: str, addr: Address, length: Form, others: list[Address | None],
               loc: Location | None, two_sided: bool) -> None:
        reason = f"{func} of a byte range of {self.name}"
        meaning = range_meaning(addr.form, length, reason, loc, self.offsets, self.sizes,
                                self.record_size, self.aligns)
        buffer_side = two_sided and any(o is None for o in others)
        if meaning.kind in ("member", "outside"):
            return
        if meaning.kind == "whole":
            if buffer_side:
                self.refusals.append(Refusal(
                    f"{self.name} is copied to or from a byte buffer as a whole ({func} with "
                    f"sizeof {self.name} as the length), so its layout is visible outside",
                    f"serialise the members one by one, or list {self.name} as ABI in "
                    "cachefit.toml and leave it alone", loc))
            return
        if meaning.kind == "unknown":
            self.refusals.append(Refusal(
                f"{func} uses a byte range of {self.name} that cachefit cannot resolve to "
                "members", "write the range with offsetof/sizeof of named members", loc))
            return
        cons = list(meaning.constraints)
        if buffer_side:
            covered = self._covered(addr.form, addr.form.plus(length))
            if len(covered) > 1:
                cons.append(OrderConstraint(
                    "unit", covered, f"{func} copies these members to or from a buffer "
                    "as bytes", loc))
        self.constraints += cons

    def _covered(self, start: Form, end: Form) -> tuple[str, ...]:
        order = sorted(self.offsets, key=lambda n: self.offsets[n])

        def pos(f: Form, is_end: bool) -> int | None:
            s = f.single()
            if f.is_zero():
                return 0
            if s == SIZE:
                return len(order)
            if s is None:
                return None
            i = order.index(s[1])
            return i + 1 if s[0] == "end" else i

        a, b = pos(start, False), pos(end, True)
        if a is None or b is None:
            return ()
        return tuple(order[a:b])

    def _io(self, name: str, args: list[ci.Cursor], loc: Location | None) -> None:
        p, n = IO_FUNCS[name]
        if p >= len(args):
            return
        addr = self.ev.address(args[p])
        if addr is None:
            return
        if n is not None and n < len(args):
            length = self.ev.int_form(args[n])
            self._mark(args[n])
            if length is not None and range_meaning(
                    addr.form, length, "", loc, self.offsets, self.sizes,
                    self.record_size).kind in ("member", "outside"):
                return
        where = "a device" if name == "ioctl" else "a file or socket"
        self.refusals.append(Refusal(
            f"{self.name} is passed to {name}() as raw bytes, so its layout is shared with "
            f"{where}", f"serialise the members explicitly, or list {self.name} as ABI in "
            "cachefit.toml ([reorder] abi = [...])", loc))

    def subtraction(self, c: ci.Cursor, parent: ci.Cursor | None) -> None:
        """`offsetof(T, b) - offsetof(T, a)` and the like, outside the calls above."""
        ext = c.extent
        if ext.start.file is not None and (ext.start.file.name, ext.start.offset) in \
                self.seen_args:
            return
        if parent is not None and kind_of(parent) == CK.BINARY_OPERATOR and \
                parent.spelling in ("+", "-"):
            return
        form = self.ev.int_form(c)
        if form is None or len(form.terms) < 2 or form.const:
            return
        pos = [s for s, k in form.terms if k == 1]
        neg = [s for s, k in form.terms if k == -1]
        if len(pos) != 1 or len(neg) != 1 or len(form.terms) != 2:
            return
        loc = location(c)
        meaning = range_meaning(Form.of(neg[0]), Form.of(pos[0]).plus(Form.of(neg[0]), -1),
                                f"a range of {self.name} computed from member offsets", loc,
                                self.offsets, self.sizes, self.record_size)
        if meaning.kind == "range":
            self.constraints += meaning.constraints
