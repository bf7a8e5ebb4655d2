"""pahole-style text view of a `Record`: members with offset and size, holes, cache-line
boundaries and totals. Presentation only: it reads the model and computes nothing new."""

from __future__ import annotations

from cachefit.model import Record

_COL = 40


def _declarator(type_spelling: str, name: str) -> str:
    """`int[16]` + `buf` -> `int buf[16]` (array bounds follow the name, as in C)."""
    if type_spelling.endswith("]") and "[" in type_spelling and "(" not in type_spelling:
        head, _, dims = type_spelling.partition("[")
        return f"{head.rstrip()} {name}[{dims}"
    return f"{type_spelling} {name}"


def _member_line(decl: str, offset: str, size: int, indent: str = "\t") -> str:
    pad = max(1, _COL - len(decl))
    return f"{indent}{decl}{' ' * pad}/* {offset:>6} {size:>5} */"


def _boundary(offset: int, line: int) -> str:
    n = offset // line
    return f"\t/* --- cacheline {n} boundary ({n * line} bytes) --- */"


def format_layout(rec: Record, cache_line: int = 64) -> str:
    """The layout of `rec` as text, one member a line, like `pahole -C`."""
    out = [f"{rec.kind} {rec.name} {{"]
    items: list[tuple[int, int, str]] = []  # (offset, order, text)
    if rec.vptr_offset is not None:
        items.append((rec.vptr_offset, 0, _member_line("void * * _vptr;",
                                                       str(rec.vptr_offset), 8)))
    for b in rec.bases:
        virt = "virtual " if b.virtual else ""
        items.append((b.offset, 1, _member_line(f"/* {virt}base {b.name} */", str(b.offset),
                                                0 if b.empty else b.size)))
    for i, f in enumerate(rec.fields):
        if f.is_bitfield:
            assert f.bit_offset is not None
            decl = f"{_declarator(f.type, f.name)}:{f.bit_size};"
            off = f"{f.offset}:{f.bit_offset - f.offset * 8}"
        else:
            decl = f"{_declarator(f.type, f.name)};"
        if f.anonymous_parent:
            decl = f"{decl}  /* in {f.anonymous_parent} */"
        items.append((f.offset, 2 + i, _member_line(decl, off if f.is_bitfield else
                                                    str(f.offset), f.size)))
    for h in rec.holes():
        if h.offset + h.size < rec.size or h.offset == 0:
            items.append((h.offset, 10**9, f"\n\t/* XXX {h.size} byte{'s' if h.size != 1 else ''}"
                          f" hole, try to pack */\n"))
    items.sort()
    next_boundary = cache_line
    for offset, _, text in items:
        while offset >= next_boundary:
            out.append(_boundary(next_boundary, cache_line))
            next_boundary += cache_line
        out.append(text)
    # The totals add up to the size: members are the bytes some member covers (a byte
    # of overlapping union members or of several bit-fields counted once, a bit-field's
    # bytes those its bits touch), holes the uncovered bytes inside, padding those at the end.
    holes = rec.holes()
    tail = holes[-1].size if holes and holes[-1].offset + holes[-1].size == rec.size and \
        holes[-1].offset > 0 else 0
    inner = holes[:-1] if tail else holes
    members = len(rec.fields)
    sum_members = rec.size - sum(h.size for h in holes)
    out.append("")
    out.append(f"\t/* size: {rec.size}, cachelines: {rec.cache_lines(cache_line)}, "
               f"members: {members} */")
    out.append(f"\t/* sum members: {sum_members}, holes: {len(inner)}, "
               f"sum holes: {sum(h.size for h in inner)} */")
    if tail:
        out.append(f"\t/* padding: {tail} */")
    last = rec.size % cache_line
    if last:
        out.append(f"\t/* last cacheline: {last} bytes */")
    out.append("};")
    return "\n".join(out)

