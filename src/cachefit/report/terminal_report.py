"""The terminal form of `cachefit report`: per type, where each layout came from, lines and
dirty lines per invocation before / after / lower bound (in total and, when several kinds
of operation touched the type, per kind), where the objects start (as the profile saw
them, with what line-aligned objects would save, issue 26), and the heaviest sequences with
field names (named as `cachefit profile show` names them) and the line each access falls in
before and after; for a multi-threaded profile (issue 30), the threads, the lines that
change hands and what the padding buys (`sharing_lines`). Formatting only: it takes
`TypeReport`s and returns text.
"""

from __future__ import annotations

from collections.abc import Sequence

from cachefit.model.profile import Profile
from cachefit.report.layout_view import place
from cachefit.report.profile_show import describe_access
from cachefit.report.sharing_report import SharingSection
from cachefit.report.type_report import SAVING_EPSILON, SkippedType, TypeReport


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _num(x: float) -> str:
    return f"{x:.2f}"


def _observed_starts(r: TypeReport) -> list[str]:
    """Where the profile saw the objects, and what line-aligned objects would save."""
    line = r.cache_line
    observed = r.alignment.observed if r.alignment is not None else {}
    total = sum(observed.values())
    if len(r.start_distribution) == 1:
        (mod,) = r.start_distribution
        seen = f"{total} objects touched" if total else "the objects"
        out = [f"  objects start at {mod} mod {line} (traced: {seen}): figures are for "
               "that start"]
    else:
        where = ", ".join(f"{m} ({100 * n / total:.1f}%)" for m, n in observed.items()) \
            if total else ", ".join(map(str, r.start_distribution))
        out = [f"  objects start at offsets mod {line} (traced: {where}): figures are "
               "expected over them"]
    a = r.alignment
    if a is None:
        return out
    if a.saving > SAVING_EPSILON:
        out.append(f"  {line}-byte aligned objects (aligned_alloc({line}, ...), "
                   f"alignas({line})) would save {_num(a.saving)} lines per invocation: "
                   f"{_num(r.lines_before)} before, {_num(r.lines_after)} after as traced; "
                   f"{_num(a.aligned_before)} before, {_num(a.aligned_after)} after aligned "
                   f"({a.aligned_after_source})")
    else:
        out.append(f"  {line}-byte aligned objects would save no lines per invocation: "
                   f"{_num(r.lines_after)} after as traced, at best "
                   f"{_num(a.aligned_after)} aligned ({a.aligned_after_source}); "
                   f"{_num(a.aligned_before)} before aligned")
    return out


def render_type_text(r: TypeReport, top: int) -> list[str]:
    tp = r.profile
    line = r.cache_line
    out = [f"type {r.name}: {tp.size} bytes, {_plural(len(tp.sequences), 'sequence')}, "
           f"{tp.counted} counted invocations",
           f"  layout before: {r.before.origin}",
           f"  layout after:  {r.after.origin}",
           f"  new order:     {r.after_source}"]
    if r.start_distribution:
        out += _observed_starts(r)
    elif r.start_offsets > 1:
        out.append(f"  objects aligned to {r.object_align} bytes: figures average "
                   f"{r.start_offsets} start offsets in a {line}-byte line")
    else:
        out.append(f"  objects start on a {line}-byte line boundary")
    after_head = "after*" if r.after.predicted else "after"
    before_head = "before*" if r.before.predicted else "before"
    out += ["",
            f"  {'':24}{before_head:>10}{after_head:>10}{'lower bound':>13}",
            f"  {'lines per invocation':24}{_num(r.lines_before):>10}"
            f"{_num(r.lines_after):>10}{_num(r.lines_lower_bound):>13}",
            f"  {'dirty lines per inv.':24}{_num(r.dirty_before):>10}"
            f"{_num(r.dirty_after):>10}{_num(r.dirty_lower_bound):>13}",
            f"  {'size (bytes)':24}{r.before.size:>10}{r.after.size:>10}"]
    if r.after.predicted or r.before.predicted:
        out.append("  * predicted offsets (not read back from a compiled layout)")
    if r.has_kinds:
        out += ["", f"  {'lines per invocation of':24}{'count':>10}{before_head:>10}"
                f"{after_head:>10}{'lower bound':>13}"]
        for k in r.kinds:
            name = k.entry if k.entry is not None else "(no kind)"
            out.append(f"  {name:24}{k.invocations:>10}{_num(k.lines_before):>10}"
                       f"{_num(k.lines_after):>10}{_num(k.lines_lower_bound):>13}")
    if r.sharing is not None:
        out += ["", *sharing_lines(r.sharing)]
    shown = r.sequences[:top]
    out += ["", "  heaviest sequences (lines with the object at a line start, "
            "before -> after):"]
    width = max((len(describe_access(tp, a)) for s in shown for a in s.sequence.accesses),
                default=4)
    for s in shown:
        seq = s.sequence
        kind = f"{seq.entry}, " if r.has_kinds and seq.entry is not None else ""
        what = (f"summary of {len(seq.accesses)} distinct "
                f"access{'' if len(seq.accesses) == 1 else 'es'}"
                if seq.hits is not None else
                f"{len(seq.accesses)} access{'' if len(seq.accesses) == 1 else 'es'}")
        out.append(f"  #{s.rank}  count {seq.count} ({100 * s.share:.1f}%), {kind}{what}, "
                   f"{_plural(seq.roles, 'object')}: "
                   f"lines {s.lines_before} -> {s.lines_after}, "
                   f"dirty {s.dirty_before} -> {s.dirty_after}")
        for a in seq.accesses:
            moved = place(tp, r.after, a)[0]
            out.append(f"      {a.role:>3} {a.mode}  {describe_access(tp, a):<{width}}  "
                       f"@{a.offset:<5} line {a.offset // line:<3} -> "
                       f"@{moved.offset:<5} line {moved.offset // line}")
    if len(r.sequences) > top:
        out.append(f"  ... {_plural(len(r.sequences) - top, 'more sequence')}")
    out += [f"  warning: {w}" for w in r.warnings]
    return out


def _threads(ts: tuple[int, ...]) -> str:
    return ", ".join(map(str, ts)) or "-"


def sharing_lines(s: SharingSection) -> list[str]:
    """The sharing section: threads, lines that change hands per invocation before and
    after and the field pairs that cause them, and the padding with what it buys."""
    lost = f", {s.lost} lost" if s.lost else ""
    out = [f"  threads: {s.threads} (numbered in the order they began); "
           f"{_plural(s.shared_objects, 'object')} shared, {s.private_objects} private"
           f"{lost}; granule {_plural(s.granule, 'byte')}"]
    for u in s.thread_use:
        out.append(f"    thread {u.thread}: {_plural(u.objects, 'object')}, read "
                   f"{', '.join(u.read) or '-'}; wrote {', '.join(u.written) or '-'}")
    out.append(f"  {'lines changing hands per inv.':32}{'before':>10}{'after':>10}")
    out.append(f"  {'in all':32}{_num(s.transfers_before):>10}{_num(s.transfers_after):>10}"
               f"   ({_plural(s.handoffs, 'handoff')})")
    for c in s.causes:
        pair = f"{c.written} / {c.touched}"
        out.append(f"    {pair:30}{_num(c.before):>10}{_num(c.after):>10}   written by "
                   f"{_threads(c.writers)}, touched by {_threads(c.touchers)}")
    if s.causes:
        out.append("    (written field / touched field on a line that changes hands; a line "
                   "counts for every pair it holds)")
    if s.padding:
        out.append(f"  padding: {s.padding_bytes} bytes (size {s.size_before} -> "
                   f"{s.size_after})")
        for p in s.padding:
            out.append(f"    {p.size} bytes before {p.field}: saves {_num(p.saved)} lines "
                       f"changing hands per invocation ({p.saved_per_byte:.4f} per byte)")
    return out


def render_text(profile: Profile, reports: Sequence[TypeReport],
                skipped: Sequence[SkippedType] = (), *, title: str, top: int) -> str:
    """The whole terminal report."""
    entry = ", ".join(str(e) for e in profile.metadata.get("entry", [])) or "?"
    line = reports[0].cache_line if reports else profile.cache_line
    out = [f"cachefit report: {title}: {profile.invocations} invocations of {entry}, "
           f"cache line {line} bytes"]
    for r in reports:
        out.append("")
        out += render_type_text(r, top)
    for sk in skipped:
        out += ["", f"type {sk.name}: not analysed: {sk.reason}"]
    return "\n".join(out) + "\n"
