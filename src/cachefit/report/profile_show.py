"""Render a profile as text: per type, its sequences heaviest first, with field names.

Used by `cachefit profile show` and the reports (`describe_access`). Offsets are turned
into field names from the layout the profile stored at trace time (``name`` for an access
that covers the field exactly,
``name+2`` inside a field, ``a..b`` across fields, ``<padding>`` between fields). A
sequence names its kind of operation (entry function) when the profile records kinds; a
summary of long invocations shows each distinct access once with its hits (``x4000``);
the objects' base addresses modulo the line are shown when recorded (``alignment``), and
the threads' sharing when recorded (issue 30: threads, shared and private objects, the
heaviest shared object patterns and handoffs with their byte ranges as field names).
`select` narrows a profile to some types and sequences (for `--json`). It only formats;
it never reads or writes files.
"""

from __future__ import annotations

from dataclasses import replace

from cachefit.model.profile import Access, Handoff, Profile, SharedObject, TypeProfile

SHOWN = 3
"""Shared object patterns and handoffs listed per type, heaviest first."""
LAST_THREAD = 15
"""The thread number that also stands for all later threads in shared object patterns."""


def describe_access(t: TypeProfile, a: Access) -> str:
    """Field name(s) an access touches."""
    first = t.field_at(a.offset)
    last = t.field_at(a.end - 1) if a.size else first
    if last is None and a.size:
        # Ending in padding (e.g. a memset of the whole object): the last field it covers.
        inside = [f for f in t.fields if a.offset <= f.offset < a.end]
        last = max(inside, key=lambda f: f.offset) if inside else None
    if first is None and last is None:
        return "<padding>" if a.offset < t.size else "<beyond the object>"
    if first is None:
        assert last is not None
        return f"<padding>..{last.name}"
    if last is None or last == first:
        rel = a.offset - first.offset
        if rel == 0 and a.size >= first.size:
            return first.name
        return f"{first.name}+{rel}" if rel else first.name
    rel = a.offset - first.offset
    head = f"{first.name}+{rel}" if rel else first.name
    return f"{head}..{last.name}"


def describe_alignment(alignment: dict[int, int], cache_line: int) -> str:
    """`alignment: base at 48 mod 64 for all 1000 objects touched` (objects touched
    counted once per invocation); with several offsets each with its share, heaviest
    first."""
    total = sum(alignment.values())
    parts = sorted(alignment.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(parts) == 1:
        mod, n = parts[0]
        return f"alignment: base at {mod} mod {cache_line} for all {n} objects touched"
    return (f"alignment: base mod {cache_line} of {total} objects touched: "
            + ", ".join(f"{mod} ({100 * n / total:.1f}%)" for mod, n in parts))


def describe_ranges(t: TypeProfile, ranges: tuple[tuple[int, int], ...]) -> str:
    """`count0, count1 (@0 +16)`: the fields overlapping (offset, size) byte ranges, then
    the ranges; `<padding>` when no field does."""
    names = ", ".join(f.name for f in t.fields_overlapping(ranges)) or "<padding>"
    return f"{names} ({', '.join(f'@{o} +{n}' for o, n in ranges)})"


def describe_shared(t: TypeProfile, o: SharedObject, threads: int = 0) -> str:
    """`t0 r config w count0; t1 r config w count1`: per thread the fields it read and
    wrote in a shared object pattern; `t15+` when more than 16 `threads` ran (threads 15
    and later are recorded as thread 15: docs/profile-format.md)."""
    parts = []
    for thread in o.threads():
        what = []
        for mode, triples in (("r", o.reads), ("w", o.writes)):
            ranges = tuple((off, n) for th, off, n in triples if th == thread)
            if ranges:
                what.append(f"{mode} " + (", ".join(
                    f.name for f in t.fields_overlapping(ranges)) or "<padding>"))
        plus = "+" if thread == LAST_THREAD and threads > LAST_THREAD + 1 else ""
        parts.append(f"t{thread}{plus} " + " ".join(what))
    return "; ".join(parts)


def describe_handoff(t: TypeProfile, h: Handoff) -> str:
    """`written count0 (@0 +8) -> touched config, count0 (@0 +24)`."""
    return (f"written {describe_ranges(t, h.written)} -> "
            f"touched {describe_ranges(t, h.touched)}")


def render_sharing(t: TypeProfile) -> list[str]:
    """The sharing section of a type (empty when it has none): threads, granule, shared
    and private objects, lost, then the heaviest patterns and handoffs."""
    s = t.sharing
    if s is None:
        return []
    s.sort()
    shared = s.shared_objects
    out = [f"  sharing: {s.threads} thread{'s' if s.threads != 1 else ''}, granule "
           f"{s.granule} byte{'s' if s.granule != 1 else ''}; objects: {shared} shared "
           f"({len(s.shared)} pattern{'s' if len(s.shared) != 1 else ''}), "
           f"{s.private_objects} private; {s.lost} lost"]
    for o in s.shared[:SHOWN]:
        out.append(f"    shared x{o.count}: {describe_shared(t, o, s.threads)}")
    if len(s.shared) > SHOWN:
        out.append(f"    ... {len(s.shared) - SHOWN} more shared object patterns")
    total = sum(h.count for h in s.handoffs)
    out.append(f"  handoffs: {total} ({len(s.handoffs)} pattern"
               f"{'s' if len(s.handoffs) != 1 else ''})")
    for i, h in enumerate(s.handoffs[:SHOWN], 1):
        out.append(f"    #{i}  count {h.count} ({100.0 * h.count / total:.1f}%): "
                   f"{describe_handoff(t, h)}")
    if len(s.handoffs) > SHOWN:
        out.append(f"    ... {len(s.handoffs) - SHOWN} more handoffs")
    return out


def render_type(t: TypeProfile, cache_line: int, top: int | None = None) -> list[str]:
    lines_of_obj = (t.size + cache_line - 1) // cache_line if t.size else 0
    counted = t.counted
    head = (f"type {t.name}: {t.size} bytes ({lines_of_obj} cache line"
            f"{'s' if lines_of_obj != 1 else ''}), {len(t.sequences)} sequence"
            f"{'s' if len(t.sequences) != 1 else ''}, {counted} counted; dropped: "
            f"{t.runaway} runaway, {t.outside_objects} outside objects")
    if t.table_full:
        head += f", {t.table_full} over the sequence limit"
    out = [head]
    if t.alignment:
        out.append("  " + describe_alignment(t.alignment, cache_line))
    out.extend(render_sharing(t))
    kinds = t.kinds()
    if any(k is not None for k in kinds):
        out.append("  kinds: " + ", ".join(f"{k or '?'} {n}" for k, n in kinds.items()))
    t.sort()
    shown = t.sequences if top is None else t.sequences[:top]
    width = max((len(describe_access(t, a)) for s in shown for a in s.accesses), default=4)
    for i, s in enumerate(shown, 1):
        share = 100.0 * s.count / counted if counted else 0.0
        roles = s.roles
        kind = f"{s.entry}, " if s.entry is not None else ""
        what = (f"summary: {len(s.accesses)} distinct accesses, {sum(s.hits)} in all"
                if s.hits is not None else f"{len(s.accesses)} accesses")
        out.append(f"  #{i}  count {s.count} ({share:.1f}%), {kind}{what}, "
                   f"{roles} object{'s' if roles != 1 else ''}")
        for k, a in enumerate(s.accesses):
            name = describe_access(t, a)
            line_no = a.offset // cache_line
            hits = f"  x{s.hits[k]}" if s.hits is not None else ""
            out.append(f"      {a.role:>3} {a.mode}  {name:<{width}}  "
                       f"@{a.offset} +{a.size}  line {line_no}{hits}")
    if top is not None and len(t.sequences) > top:
        out.append(f"  ... {len(t.sequences) - top} more sequences")
    return out


def render(profile: Profile, *, types: list[str] | None = None,
           top: int | None = None, title: str = "") -> str:
    """The whole profile as text."""
    meta = profile.metadata
    entry = ", ".join(str(e) for e in meta.get("entry", [])) or "?"
    head = f"{title or 'profile'}: {profile.invocations} invocations of {entry}"
    kinds = profile.kind_invocations()
    if kinds:
        head += " (" + ", ".join(f"{k} {n}" for k, n in kinds.items()) + ")"
    backend = meta.get("backend")
    if backend:
        head += f", backend {backend}"
    head += f", cache line {profile.cache_line} bytes"
    out = [head]
    names = types if types else sorted(profile.types)
    for name in names:
        out.append("")
        out.extend(render_type(profile.types[name], profile.cache_line, top))
    return "\n".join(out) + "\n"


def select(profile: Profile, *, types: list[str] | None = None,
           top: int | None = None) -> Profile:
    """The profile narrowed to `types` (all when None) and each type's `top` heaviest
    sequences (all when None); the input is not changed."""
    names = types if types else sorted(profile.types)
    picked = {}
    for name in names:
        t = profile.types[name]
        t.sort()
        picked[name] = replace(t, fields=list(t.fields),
                               sequences=list(t.sequences if top is None
                                              else t.sequences[:top]))
    return replace(profile, types=picked)
