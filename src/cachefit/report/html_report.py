"""The self-contained HTML report of a profile: a summary table; per type, the lines per
invocation of each kind of operation (when several kinds touched it), paper 000's
Figure 4 for the old and the new layout side by side for the heaviest sequences, and a
pahole-style heat map of each layout (offset, size, name, reads/writes, invocations touching
it, cache-line rows with their share of invocations, holes); for a multi-threaded
profile (issue 30), a threads section: the lines that change hands before and after, the
field pairs that cause them, the threads involved, and what each padding buys.

Presentation only: it receives computed `TypeReport`s and returns one HTML document with
inline CSS and SVG, no scripts and no external references. It writes no files.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from cachefit.model.profile import AccessSequence, Profile, TypeProfile
from cachefit.report.access_figure import FigureMark, access_svg
from cachefit.report.field_heat import field_heat, holes, line_heat
from cachefit.report.layout_view import LayoutView, place, touched_lines
from cachefit.report.profile_show import describe_access
from cachefit.report.sharing_report import SharingSection
from cachefit.report.type_report import SkippedType, TypeReport

STYLE = (
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:2px solid #ccc}"
    "h3{font-size:15px}.row{display:flex;gap:16px;flex-wrap:wrap;margin-bottom:12px}"
    ".fig{border:1px solid #ddd;padding:4px}"
    "table{border-collapse:collapse;font-size:12px}"
    "td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right}"
    "th{background:#f0f0f0}td.name,th.name{text-align:left}"
    "table.heat{font-family:monospace}"
    "tr.line td{background:#eef3fb;color:#234;font-style:italic;text-align:left}"
    "tr.hole td{color:#a33;text-align:left}"
    ".note{color:#555;font-size:13px}.warn{color:#a33;font-size:13px}"
    ".pred{color:#a60}")


def _marks(tp: TypeProfile, view: LayoutView, seq: AccessSequence) -> list[FigureMark]:
    marks = []
    for i, a in enumerate(seq.accesses):
        for piece in place(tp, view, a):
            marks.append(FigureMark(i, a.role, piece.offset, piece.size, a.mode,
                                    piece.field or describe_access(tp, a)))
    return marks


def _figure(r: TypeReport, view: LayoutView, seq: AccessSequence, rank: int) -> str:
    tp = r.profile
    lines = touched_lines(tp, view, seq.accesses, r.cache_line)
    dirty = touched_lines(tp, view, seq.accesses, r.cache_line, written_only=True)
    kind = "old layout" if view.label == "before" else "new layout"
    pred = " (predicted offsets)" if view.predicted else ""
    return access_svg(f"{r.name}, sequence {rank} (×{seq.count}): {kind}{pred}",
                      _marks(tp, view, seq), len(seq.accesses), view.size, r.cache_line,
                      subtitle=f"{lines} (object, line) pairs touched, {dirty} dirty; "
                               f"{view.size} bytes",
                      axis_size=max(r.before.size, r.after.size))


def _count(n: int, word: str, plural: str = "s") -> str:
    return f"{n} {word}{'' if n == 1 else plural}"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def _heat_table(r: TypeReport, view: LayoutView) -> str:
    tp = r.profile
    line = r.cache_line
    heat = field_heat(tp, view)
    per_line = {h.line: h for h in line_heat(tp, view, line)}
    gaps = holes(view)
    counted = tp.counted
    peak = max((h.reads + h.writes for h in heat), default=0) or 1
    items: list[tuple[int, int, str]] = []
    for ln, lh in per_line.items():
        items.append((ln * line, 0, f'<tr class="line"><td colspan="7">cache line {ln} '
                      f"(bytes {ln * line}–{min((ln + 1) * line, view.size) - 1}): touched "
                      f"in {_pct(lh.invocations, counted)} of invocations, written in "
                      f"{_pct(lh.written_invocations, counted)}</td></tr>"))
    for h in heat:
        share = (h.reads + h.writes) / peak
        colour = (f"rgba(214,39,40,{0.10 + 0.75 * share:.2f})" if h.reads + h.writes
                  else "#ffffff")
        items.append((h.offset, 1, f'<tr style="background:{colour}"><td>{h.offset}</td>'
                      f'<td>{h.size}</td><td class="name">{escape(h.name)}</td>'
                      f"<td>{h.reads}</td><td>{h.writes}</td>"
                      f"<td>{_pct(h.invocations, counted)}</td>"
                      f"<td>{h.offset // line}</td></tr>"))
    for g in gaps:
        items.append((g.offset, 2, f'<tr class="hole"><td>{g.offset}</td><td>{g.size}</td>'
                      f'<td colspan="5">XXX {g.size} byte hole</td></tr>'))
    items.sort(key=lambda t: (t[0], t[1]))
    pred = ' <span class="pred">(predicted offsets)</span>' if view.predicted else ""
    head = (f"<h3>{'Old' if view.label == 'before' else 'New'} layout{pred}: "
            f"{view.size} bytes, {len(gaps)} holes, {sum(g.size for g in gaps)} bytes of "
            "holes</h3>")
    return (f'<div>{head}<table class="heat"><tr><th>offset</th><th>size</th>'
            '<th class="name">field</th><th>reads</th><th>writes</th><th>invocations</th>'
            "<th>line</th></tr>" + "".join(t[2] for t in items) + "</table></div>")


def _summary(reports: Sequence[TypeReport]) -> str:
    rows = []
    for r in reports:
        mark = "*" if r.after.predicted else ""
        rows.append(f'<tr><td class="name">{escape(r.name)}</td><td>{r.before.size}</td>'
                    f"<td>{r.after.size}{mark}</td>"
                    f"<td>{r.lines_before:.2f}</td><td>{r.lines_after:.2f}{mark}</td>"
                    f"<td>{r.lines_lower_bound:.2f}</td><td>{r.dirty_before:.2f}</td>"
                    f"<td>{r.dirty_after:.2f}{mark}</td><td>{r.dirty_lower_bound:.2f}</td>"
                    f"<td>{len(r.profile.sequences)}</td><td>{r.profile.counted}</td></tr>")
    return ('<table class="summary"><tr><th class="name">type</th><th>size before</th>'
            "<th>size after</th><th>lines before</th><th>lines after</th>"
            "<th>lower bound</th><th>dirty before</th><th>dirty after</th>"
            "<th>dirty bound</th><th>sequences</th><th>invocations</th></tr>"
            + "".join(rows) + "</table><p class=\"note\">Lines and dirty lines are per "
            "invocation, averaged over the object start offsets of the placement model. "
            "* = predicted by the C placement model from the compiler's sizes and "
            "alignments, not read back from a compiled layout.</p>")


def _sharing_html(s: SharingSection) -> str:
    """The threads section of a type (issue 30)."""
    lost = f", {s.lost} lost" if s.lost else ""
    use = "".join(
        f"<tr><td>{u.thread}</td><td>{u.objects}</td>"
        f'<td class="name">{escape(", ".join(u.read))}</td>'
        f'<td class="name">{escape(", ".join(u.written))}</td></tr>' for u in s.thread_use)
    causes = "".join(
        f'<tr><td class="name">{escape(c.written)}</td><td class="name">{escape(c.touched)}'
        f"</td><td>{c.before:.2f}</td><td>{c.after:.2f}</td>"
        f'<td class="name">{", ".join(map(str, c.writers))}</td>'
        f'<td class="name">{", ".join(map(str, c.touchers))}</td></tr>' for c in s.causes)
    out = [f'<h3>Threads</h3><p class="note">{s.threads} threads; {s.shared_objects} '
           f"shared objects, {s.private_objects} private{lost}; granule {s.granule} bytes. "
           f"Lines changing hands per invocation {s.transfers_before:.2f} → "
           f"{s.transfers_after:.2f} ({s.handoffs} handoffs).</p>",
           '<table class="threads"><tr><th>thread</th><th>objects</th>'
           '<th class="name">read</th><th class="name">wrote</th></tr>' + use + "</table>"]
    if causes:
        out.append('<table class="causes"><tr><th class="name">written field</th>'
                   '<th class="name">touched field</th><th>before</th><th>after</th>'
                   '<th class="name">written by</th><th class="name">touched by</th></tr>'
                   + causes + '</table><p class="note">Lines changing hands per invocation '
                   "holding both fields (a line counts for every pair it holds).</p>")
    if s.padding:
        rows = "".join(f'<tr><td class="name">{escape(p.field)}</td><td>{p.size}</td>'
                       f"<td>{p.saved:.2f}</td><td>{p.saved_per_byte:.4f}</td></tr>"
                       for p in s.padding)
        out.append(f'<p class="note">Padding: {s.padding_bytes} bytes (size '
                   f"{s.size_before} → {s.size_after}).</p>"
                   '<table class="padding"><tr><th class="name">before field</th>'
                   "<th>bytes</th><th>lines changing hands saved</th><th>per byte</th></tr>"
                   + rows + "</table>")
    return "".join(out)


def _type_section(r: TypeReport, top: int) -> str:
    tp = r.profile
    body = [f'<h2 id="{escape(r.name)}">{escape(r.name)} ({tp.size} bytes)</h2>',
            f'<p class="note">Old layout: {escape(r.before.origin)}.<br>'
            f"New layout: {escape(r.after.origin)}.<br>New order: {escape(r.after_source)}."
            f"<br>Lines per invocation {r.lines_before:.2f} → {r.lines_after:.2f} (lower "
            f"bound {r.lines_lower_bound:.2f}); dirty lines {r.dirty_before:.2f} → "
            f"{r.dirty_after:.2f}.</p>"]
    body += [f'<p class="warn">warning: {escape(w)}</p>' for w in r.warnings]
    if r.has_kinds:
        mark = "*" if r.after.predicted else ""
        rows = "".join(
            f'<tr><td class="name">{escape(k.entry or "(no kind)")}</td>'
            f"<td>{k.invocations}</td><td>{k.lines_before:.2f}</td>"
            f"<td>{k.lines_after:.2f}{mark}</td><td>{k.lines_lower_bound:.2f}</td>"
            f"<td>{k.dirty_before:.2f}</td><td>{k.dirty_after:.2f}{mark}</td>"
            f"<td>{k.dirty_lower_bound:.2f}</td></tr>" for k in r.kinds)
        body.append('<h3>Per kind of operation</h3><table class="kinds"><tr>'
                    '<th class="name">entry</th><th>invocations</th><th>lines before</th>'
                    "<th>lines after</th><th>lower bound</th><th>dirty before</th>"
                    "<th>dirty after</th><th>dirty bound</th></tr>" + rows + "</table>")
    if r.sharing is not None:
        body.append(_sharing_html(r.sharing))
    for s in r.sequences[:top]:
        body.append(f"<h3>Sequence {s.rank}: ×{s.sequence.count} ({100 * s.share:.1f}% of "
                    f"invocations), {_count(len(s.sequence.accesses), 'access', 'es')}, "
                    f"{_count(s.sequence.roles, 'object')}</h3>")
        body.append('<div class="row">'
                    f'<div class="fig">{_figure(r, r.before, s.sequence, s.rank)}</div>'
                    f'<div class="fig">{_figure(r, r.after, s.sequence, s.rank)}</div>'
                    "</div>")
    if len(r.sequences) > top:
        body.append(f'<p class="note">{len(r.sequences) - top} lighter sequences not '
                    "drawn.</p>")
    body.append('<div class="row">' + _heat_table(r, r.before) + _heat_table(r, r.after)
                + "</div>")
    return "\n".join(body)


def render_html(profile: Profile, reports: Sequence[TypeReport],
                skipped: Sequence[SkippedType] = (), *, title: str, top: int = 4) -> str:
    """The whole report as one HTML document."""
    entry = ", ".join(str(e) for e in profile.metadata.get("entry", [])) or "?"
    line = reports[0].cache_line if reports else profile.cache_line
    body = [f"<h1>cachefit report: {escape(title)}</h1>",
            f'<p class="note">{profile.invocations} invocations of {escape(entry)}; cache '
            f"line {line} bytes.</p>", _summary(reports)]
    body += [f'<p class="warn">{escape(sk.name)}: not analysed: {escape(sk.reason)}</p>'
             for sk in skipped]
    body += [_type_section(r, top) for r in reports]
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>cachefit report: {escape(title)}</title><style>{STYLE}</style></head>"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")
